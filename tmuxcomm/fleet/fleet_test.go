package fleet

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/profile"
)

// agentScreen reads one of paneops' captured screens of a real agent TUI.
func agentScreen(t *testing.T, name string) profile.Screen {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "paneops", "profile", "testdata", "screens", name+".screen"))
	require.NoError(t, err)
	first, rest, _ := strings.Cut(string(data), "\n")
	var x, y int
	_, err = fmt.Sscanf(first, "%d %d", &x, &y)
	require.NoError(t, err)
	return profile.ParseScreen(rest, x, y)
}

func TestFleetPaneState(t *testing.T) {
	set := profile.Defaults()
	det := func(name string) profile.Detection {
		d, err := set.Force(name)
		require.NoError(t, err)
		return d
	}
	blank := profile.Screen{}
	tests := []struct {
		name     string
		pane     paneops.Pane
		det      profile.Detection
		screen   profile.Screen
		captured bool
		want     string
	}{
		{"claude idle after a turn", paneops.Pane{}, det("claude"), agentScreen(t, "claude-ready-after-turn"), true, PaneIdle},
		{"claude busy", paneops.Pane{}, det("claude"), agentScreen(t, "claude-busy"), true, PaneBusy},
		{"claude with a person's text", paneops.Pane{}, det("claude"), agentScreen(t, "claude-human"), true, PaneTyping},
		{"codex busy", paneops.Pane{}, det("codex"), agentScreen(t, "codex-busy"), true, PaneBusy},
		{"codex with a person's text", paneops.Pane{}, det("codex"), agentScreen(t, "codex-human"), true, PaneTyping},
		{"gemini starting", paneops.Pane{}, det("gemini"), agentScreen(t, "gemini-starting"), true, PaneStarting},
		{"gemini idle", paneops.Pane{}, det("gemini"), agentScreen(t, "gemini-ready-fresh"), true, PaneIdle},
		{"agent without its box on screen: a menu", paneops.Pane{}, det("claude"),
			profile.ParseScreen("Do you want to proceed?\n❯ 1. Yes\n  2. No\n", 0, 1), true, PanePermission},
		{"screen not read", paneops.Pane{}, det("claude"), blank, false, PaneUnknown},
		{"dead pane", paneops.Pane{Dead: true}, det("claude"), blank, false, PaneGone},
		{"shell running a job", paneops.Pane{}, profile.Detection{Job: "bash (pid 1) runs sleep (pid 2)"}, blank, false, PaneBusy},
		{"shell at its prompt", paneops.Pane{}, det("shell"), profile.ParseScreen("$ \n", 2, 0), true, PaneIdle},
		{"shell with a typed line", paneops.Pane{}, det("shell"), profile.ParseScreen("$ make dep\n", 10, 0), true, PaneTyping},
		{"line reader", paneops.Pane{}, det("reader"), blank, false, PaneIdle},
		{"unknown program", paneops.Pane{}, det("generic"), blank, false, PaneUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := PaneStateOf(tt.pane, tt.det, tt.screen, tt.captured)
			assert.Equal(t, tt.want, got, why)
			assert.NotEmpty(t, why, "every state says why")
		})
	}
}

func TestFleetShotFresh(t *testing.T) {
	sig := paneops.ScreenSig{CursorX: 2, CursorY: 5, Width: 80, Height: 24, Activity: 99}
	sh := fleetShot{sig: sig, pid: 7, at: 100}
	assert.True(t, sh.fresh(7, sig), "no output since the capture's second")
	for name, tt := range map[string]struct {
		pid int
		sig paneops.ScreenSig
	}{
		"output in the capture's second": {7, paneops.ScreenSig{CursorX: 2, CursorY: 5, Width: 80, Height: 24, Activity: 100}},
		"output later":                   {7, paneops.ScreenSig{CursorX: 2, CursorY: 5, Width: 80, Height: 24, Activity: 101}},
		"the cursor moved":               {7, paneops.ScreenSig{CursorX: 3, CursorY: 5, Width: 80, Height: 24, Activity: 99}},
		"resized":                        {7, paneops.ScreenSig{CursorX: 2, CursorY: 5, Width: 100, Height: 24, Activity: 99}},
		"another process":                {8, sig},
	} {
		assert.False(t, sh.fresh(tt.pid, tt.sig), name)
	}
}
