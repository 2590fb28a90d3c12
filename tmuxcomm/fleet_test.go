package tmuxcomm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/paneops"
)

// agentScreen reads one of paneops' captured screens of a real agent TUI.
func agentScreen(t *testing.T, name string) paneops.Screen {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "paneops", "testdata", "screens", name+".screen"))
	require.NoError(t, err)
	first, rest, _ := strings.Cut(string(data), "\n")
	var x, y int
	_, err = fmt.Sscanf(first, "%d %d", &x, &y)
	require.NoError(t, err)
	return paneops.ParseScreen(rest, x, y)
}

func TestFleetPaneState(t *testing.T) {
	set := paneops.DefaultProfiles()
	det := func(name string) paneops.Detection {
		d, err := set.Force(name)
		require.NoError(t, err)
		return d
	}
	blank := paneops.Screen{}
	tests := []struct {
		name     string
		pane     paneops.Pane
		det      paneops.Detection
		screen   paneops.Screen
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
			paneops.ParseScreen("Do you want to proceed?\n❯ 1. Yes\n  2. No\n", 0, 1), true, PanePermission},
		{"screen not read", paneops.Pane{}, det("claude"), blank, false, PaneUnknown},
		{"dead pane", paneops.Pane{Dead: true}, det("claude"), blank, false, PaneGone},
		{"shell running a job", paneops.Pane{}, paneops.Detection{Job: "bash (pid 1) runs sleep (pid 2)"}, blank, false, PaneBusy},
		{"shell at its prompt", paneops.Pane{}, det("shell"), paneops.ParseScreen("$ \n", 2, 0), true, PaneIdle},
		{"shell with a typed line", paneops.Pane{}, det("shell"), paneops.ParseScreen("$ make dep\n", 10, 0), true, PaneTyping},
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

// RecentExchanges reads the most recently changed folders, newest request first, and stops once
// it has n: a root of many folders is not read whole.
func TestFleetRecentExchanges(t *testing.T) {
	root := t.TempDir()
	e := New(root, nil)
	old := time.Now().Add(-time.Hour)
	var dirs []string
	for i, name := range []string{"20260117-120000-o1-w2", "20260117-120100-o1-w3"} {
		dir := filepath.Join(root, name)
		require.NoError(t, os.Mkdir(dir, 0o700))
		for n := 1; n <= 5; n += 2 {
			body := fmt.Sprintf("[WORKER capability=READONLY id=20260117-12%02d00-000%d started_at=20260117-12%02d00 orchestrator=%%1 worker=%%%d]\nrequest %d of folder %d\n", i, n, i, i+2, n, i)
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%03d-request.md", n)), []byte(body), 0o600))
		}
		dirs = append(dirs, dir)
	}
	// The first folder changed last.
	require.NoError(t, os.Chtimes(dirs[1], old, old))
	xs, err := e.RecentExchanges(context.Background(), 2)
	require.NoError(t, err)
	require.Len(t, xs, 2)
	for _, x := range xs {
		assert.Equal(t, "20260117-120000-o1-w2", x.Session, "the folder changed last is read first")
	}
	assert.ElementsMatch(t, []int{5, 3}, []int{xs[0].Seq, xs[1].Seq}, "its newest requests")
	xs, err = e.RecentExchanges(context.Background(), 4)
	require.NoError(t, err)
	assert.Len(t, xs, 4, "then the next folder")
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
