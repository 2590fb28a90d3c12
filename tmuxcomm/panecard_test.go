package tmuxcomm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
)

func TestPaneCard(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "sock")
	require.NoError(t, os.WriteFile(sock, nil, 0o600))
	// Live processes stand in for the pane's and the server's: this test and its parent.
	pane := paneops.Pane{ID: "%3", PID: os.Getppid(), TTY: "/dev/pts/9", Session: "s"}
	srv := paneops.ServerInfo{PID: os.Getpid(), StartTime: 1, Version: "3.3a", Socket: sock}
	setup := func(t *testing.T) (*Engine, string) {
		e := newEngine(t, newFake("%1", "%3"), "%1")
		e.cfg.CardKey = fleet.CardKey(sock, "", "", "")
		root, err := e.cfg.RootDir(true)
		require.NoError(t, err)
		e.finder.RecordPane(root, pane, srv)
		return e, root
	}

	t.Run("read back", func(t *testing.T) {
		e, root := setup(t)
		p, s, ok := e.finder.CachedPane(root, "%3")
		require.True(t, ok)
		assert.Equal(t, pane, p)
		assert.Equal(t, srv, s)
		info, err := os.Stat(e.finder.CardPath(root, "%3"))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	})
	for _, tt := range []struct {
		name   string
		target string
		change func(t *testing.T, e *Engine, root string)
	}{
		{"another pane", "%4", nil},
		{"a target that is not a pane id", "s:1.0", nil},
		{"another server's flags", "%3", func(t *testing.T, e *Engine, root string) { e.cfg.CardKey = fleet.CardKey("", "other", "", "") }},
		{"fail-fast mode", "%3", func(t *testing.T, e *Engine, root string) { e.cfg.NoQueue = true }},
		{"cards off", "%3", func(t *testing.T, e *Engine, root string) { e.cfg.CardKey = "" }},
		{"a new socket file on the same path", "%3", func(t *testing.T, e *Engine, root string) {
			require.NoError(t, os.Remove(sock))
			require.NoError(t, os.WriteFile(sock+".new", nil, 0o600))
			require.NoError(t, os.Rename(sock+".new", sock))
		}},
		{"the pane's process ended", "%3", func(t *testing.T, e *Engine, root string) {
			cmd := exec.Command("true")
			require.NoError(t, cmd.Run())
			e.finder.RecordPane(root, paneops.Pane{ID: "%3", PID: cmd.Process.Pid}, srv) // not recorded: gone
			p, _, ok := e.finder.CachedPane(root, "%3")
			require.True(t, ok, "the earlier card stands")
			require.Equal(t, pane.PID, p.PID)
			data, err := os.ReadFile(e.finder.CardPath(root, "%3"))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(e.finder.CardPath(root, "%3"), []byte(replaceOnce(t, string(data), `"pid":`+itoa(pane.PID), `"pid":`+itoa(cmd.Process.Pid))), 0o600))
		}},
		{"another start time", "%3", func(t *testing.T, e *Engine, root string) {
			data, err := os.ReadFile(e.finder.CardPath(root, "%3"))
			require.NoError(t, err)
			start, err := proc.ProcStart(pane.PID)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(e.finder.CardPath(root, "%3"), []byte(replaceOnce(t, string(data), `"pane_start":`+utoa(start), `"pane_start":`+utoa(start+1))), 0o600))
		}},
		{"a damaged card", "%3", func(t *testing.T, e *Engine, root string) {
			require.NoError(t, os.WriteFile(e.finder.CardPath(root, "%3"), []byte(`{"key":`), 0o600))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, root := setup(t)
			if tt.change != nil {
				tt.change(t, e, root)
			}
			_, _, ok := e.finder.CachedPane(root, tt.target)
			assert.False(t, ok)
		})
	}
	t.Run("a dead pane is not recorded", func(t *testing.T) {
		e := newEngine(t, newFake("%1", "%3"), "%1")
		e.cfg.CardKey = fleet.CardKey(sock, "", "", "")
		root, err := e.cfg.RootDir(true)
		require.NoError(t, err)
		dead := pane
		dead.Dead = true
		e.finder.RecordPane(root, dead, srv)
		assert.NoFileExists(t, e.finder.CardPath(root, "%3"))
	})
	assert.Equal(t, fleet.CardKey("", "", "/tmp/tmux-0/default,123,0", ""), fleet.CardKey("", "", "/tmp/tmux-0/default,456,1", ""),
		"$TMUX names the socket by its first field")
	assert.NotEqual(t, fleet.CardKey("/a", "", "", ""), fleet.CardKey("", "/a", "", ""))
}

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	i := strings.Index(s, old)
	require.GreaterOrEqual(t, i, 0, "%q not in %s", old, s)
	return s[:i] + new + s[i+len(old):]
}

func itoa(n int) string    { return strconv.Itoa(n) }
func utoa(n uint64) string { return strconv.FormatUint(n, 10) }
