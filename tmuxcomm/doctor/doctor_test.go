package doctor

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/wcomm/wcomm/internal/tmuxtest"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// panes finds the one pane it knows, with the profile it is given.
type panes struct {
	pane paneops.Pane
	prof string
}

func (p panes) Resolve(_ context.Context, target string, _ paneops.Scope, _ bool) (paneops.Pane, error) {
	if target != string(p.pane.ID) {
		return paneops.Pane{}, fmt.Errorf("no pane %s: %w", target, store.ErrNotFound)
	}
	return p.pane, nil
}

func (p panes) Detect(context.Context, paneops.Pane, string) (profile.Detection, error) {
	return profile.Defaults().Force(p.prof)
}

func (p panes) Route(context.Context, paneops.Pane, profile.Detection) door.Finding {
	return door.Finding{Route: "typed", Why: "no door"}
}

func TestCheckWithoutTmux(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	r := Check(context.Background(), Options{Tmux: &paneops.Client{Bin: filepath.Join(t.TempDir(), "no-tmux")}, Root: root,
		Actions: []*actions.ActionStatus{{Status: actions.ActionApproved}}, SettingsErr: fmt.Errorf(".wcomm.yaml:3: field x not found"), Target: "%1"})
	assert.Contains(t, r.Problems, "tmux is not installed or not on PATH: install tmux")
	assert.Contains(t, r.Problems, ".wcomm.yaml:3: field x not found")
	assert.False(t, r.Tmux.Running)
	assert.Nil(t, r.Pane, "no server: no pane is looked at")
	assert.Contains(t, r.Actions, "1 approved and not yet run")
	assert.NotEmpty(t, r.Bugs, "the known bugs, each marked for the version or not")
}

func TestCheckPane(t *testing.T) {
	srv := tmuxtest.New(t)
	srv.Start(t, tmuxtest.Options{Session: "doc", Width: 120, Height: 30, Argv: []string{"sh", "-c", "PS1='$ ' exec sh -i"}})
	client := &paneops.Client{Server: paneops.Server{Socket: srv.Sock}, Bin: srv.Bin}
	ps, err := client.Panes(context.Background(), paneops.Scope{})
	require.NoError(t, err)
	require.Len(t, ps, 1)
	root := t.TempDir()
	require.NoError(t, os.Chmod(root, 0o700))
	o := Options{Tmux: client, Panes: panes{ps[0], "shell"}, Root: root, Target: string(ps[0].ID)}

	r := Check(context.Background(), o)
	require.NotNil(t, r.Pane, "problems: %v", r.Problems)
	assert.True(t, r.Tmux.Running)
	assert.Equal(t, srv.PID, r.Tmux.PID)
	assert.Equal(t, ps[0].ID, r.Pane.ID)
	assert.Equal(t, "shell", r.Pane.Detection.Name)
	assert.True(t, strings.HasPrefix(r.Pane.Form, "comment"), "a shell is typed only a comment line: %s", r.Pane.Form)
	assert.Len(t, r.Pane.Delay, 3, "the Enter delays of three sizes")
	assert.Equal(t, "typed", r.Pane.Route.Route)
	assert.NoError(t, r.PaneErr)

	o.Target = "%99"
	r = Check(context.Background(), o)
	assert.ErrorIs(t, r.PaneErr, store.ErrNotFound, "the face tells not found by it (exit 4)")
	assert.Nil(t, r.Pane)
	assert.Contains(t, strings.Join(r.Problems, "\n"), "pane %99: no pane %99")
}

func TestWriteText(t *testing.T) {
	prof := profile.Defaults().Lookup("shell")
	r := &Report{Tmux: Tmux{Binary: "/usr/bin/tmux", ClientVersion: "3.4"}, Root: store.RootReport{Path: "/r", Note: "ok"},
		Bugs:    []paneops.Bug{{ID: "b1", Versions: "3.4", Summary: "a bug", Mitigation: "worked around", Applies: true}},
		Actions: "approved actions: 1 stale or blocked; see 'wcomm actions'",
		Pane: &Pane{ID: "%7", Target: "s:1.0", Command: "sh", TTY: "/dev/pts/1", Profile: prof,
			Detection: profile.Detection{Name: "shell", Reason: "the foreground is sh"}, InputNote: "idle \x1b[2J",
			Delay: []SizedDelay{{"1 KiB", "0s"}}, Form: "comment", Route: door.Finding{Route: "typed", Why: "no door", Status: "busy"}, Suggested: "40ms"},
		Problems: []string{"pane %7 is dead"}}
	var b bytes.Buffer
	r.WriteText(&b, func(w io.Writer) { fmt.Fprintln(w, "channel:      more") })
	out := b.String()
	for _, want := range []string{
		"tmux:         /usr/bin/tmux (client 3.4)\n", "server:       not running\n", "  * b1 (3.4): a bug\n      wcomm: worked around\n",
		"root:         /r: ok\nchannel:      more\npane:         %7 (s:1.0)", "profile:      shell: the foreground is sh\n",
		"route:        typed: no door; the agent's session says busy\n", "enter delay:  1 KiB: 0s", "suggested:    --enter-delay 40ms",
		"actions:      approved actions: 1 stale or blocked", "problems:\n  ! pane %7 is dead\n",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "\x1b", "a pane's text never reaches the terminal raw")

	b.Reset()
	(&Report{}).WriteText(&b, nil)
	assert.Contains(t, b.String(), "tmux:         - (client -)\n")
	assert.True(t, strings.HasSuffix(b.String(), "problems:     none\n"))
}
