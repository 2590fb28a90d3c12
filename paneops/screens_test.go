package paneops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
)

func TestScreensArgs(t *testing.T) {
	got := screensArgs([]messages.PaneID{"%1", "%22"})
	assert.Equal(t, []string{
		"display-message", "-p", "-t", "%1", screenMark + "%1 #{cursor_x} #{cursor_y} #{pane_width}", ";", "capture-pane", "-p", "-e", "-t", "%1", ";",
		"display-message", "-p", "-t", "%22", screenMark + "%22 #{cursor_x} #{cursor_y} #{pane_width}", ";", "capture-pane", "-p", "-e", "-t", "%22",
	}, got)
}

func TestParseScreens(t *testing.T) {
	out := screenMark + "%1 2 0 80\n$ \n\n" + screenMark + "%22 0 1\n\x1b[2mfaint\x1b[0m\n> hi\n"
	m, err := parseScreens(out)
	require.NoError(t, err)
	require.Len(t, m, 2)
	assert.Equal(t, 2, m["%1"].CursorX)
	assert.Equal(t, 80, m["%1"].Width)
	assert.Equal(t, 0, m["%22"].Width, "a header without the width")
	assert.Equal(t, "$ ", m["%1"].Lines[0].Text)
	assert.Equal(t, 1, m["%22"].CursorY)
	assert.Equal(t, "faint", m["%22"].Lines[0].Text)
	assert.Equal(t, "", m["%22"].Lines[0].Solid(0), "attributes are read as Screen reads them")
	assert.Equal(t, "> hi", m["%22"].Lines[1].Text)

	_, err = parseScreens("stray\n" + screenMark + "%1 0 0\n")
	assert.Error(t, err)
	_, err = parseScreens(screenMark + "%1 x y\n")
	assert.Error(t, err)
}

func TestPopupArgs(t *testing.T) {
	args, err := popupArgs(Popup{Pane: "%3", Dir: "/w", Env: []string{"NO_COLOR=1"}, Width: "90%", Height: "80%", Title: "t",
		Argv: []string{"/bin/wcomm", "ui", "--root", "/r; rm -rf /"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"display-popup", "-E", "-t", "%3", "-d", "/w", "-e", "NO_COLOR=1", "-w", "90%", "-h", "80%", "-T", "t",
		"--", "/bin/wcomm", "ui", "--root", "/r; rm -rf /"}, args)
	_, err = popupArgs(Popup{Pane: "%3", Argv: []string{"wcomm ui"}})
	assert.Error(t, err, "one argument would be run by a shell")
	_, err = popupArgs(Popup{Pane: "3", Argv: []string{"a", "b"}})
	assert.Error(t, err)
	_, err = popupArgs(Popup{Pane: "%3", Argv: []string{"wcomm", "--root", "/tmp/x;"}})
	assert.ErrorContains(t, err, "ends with ';'")
}

func TestParsePanesSigs(t *testing.T) {
	line := "%3\twork\t1\t0\t4242\tbash\ttitle\t/dev/pts/3\t0\t0\t0\t1\t80\t24\tbash -l"
	panes, sigs, err := parsePanesSigs(line + "\t7\t2\t1795600000\talpha\n" + line + "\t7\t2\t1795600000\tbad name\x1b[2J\n")
	require.NoError(t, err)
	require.Len(t, panes, 2)
	want, err := parsePane(line)
	require.NoError(t, err)
	assert.Equal(t, want, panes[0])
	assert.Equal(t, ScreenSig{CursorX: 7, CursorY: 2, Width: 80, Height: 24, Activity: 1795600000, Name: "alpha"}, sigs[0])
	assert.Empty(t, sigs[1].Name, "what is not a valid name is no name")

	for _, bad := range []string{line, line + "\tx\t2\t3\t", line + "\t1\t2\tsoon\t", "%3\t1\t2\t3\t"} {
		_, _, err := parsePanesSigs(bad + "\n")
		assert.Error(t, err, bad)
	}
}

// The cursor line of Client.Screen's call, then its rows.
func TestParseScreenOutput(t *testing.T) {
	s, err := parseScreenOutput("3 1 120\nab\ncd\n\n")
	require.NoError(t, err)
	assert.Equal(t, 120, s.Width)
	assert.Equal(t, 3, s.CursorX)
	assert.Equal(t, 1, s.CursorY)
	assert.Len(t, s.Lines, 3, "blank rows count: the cursor row is an index")
	_, err = parseScreenOutput("not a cursor\n")
	assert.Error(t, err)
}
