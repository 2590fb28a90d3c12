package tmuxd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/tmuxtest"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
)

// testServer is a private tmux server for one test, with a paneops client of it.
type testServer struct {
	t   testing.TB
	srv *tmuxtest.Server
	c   *paneops.Client
	dir string
}

// startServer starts a private tmux server with no config file, killed when the test ends.
func startServer(t testing.TB) *testServer {
	t.Helper()
	srv := tmuxtest.New(t)
	srv.Start(t, tmuxtest.Options{Session: "main", Width: 160, Height: 48, Argv: []string{"sleep", "86400"}})
	t.Cleanup(func() { // before tmuxtest's own cleanup kills the server
		if out, err := srv.Run("list-buffers", "-F", "#{buffer_name}"); err == nil {
			assert.Empty(t, out, "tmux buffers left behind")
		}
	})
	return &testServer{t: t, srv: srv, c: &paneops.Client{Bin: srv.Bin, Server: paneops.Server{Socket: srv.Sock}}, dir: srv.Dir}
}

// tmux runs a tmux command that must succeed, by a client of its own, and returns its stdout.
func (s *testServer) tmux(args ...string) string {
	s.t.Helper()
	out, err := s.srv.Run(args...)
	require.NoError(s.t, err)
	return out
}

// newWindow opens a background window in session main running argv (no shell) and returns its pane.
func (s *testServer) newWindow(argv ...string) messages.PaneID {
	s.t.Helper()
	return messages.PaneID(strings.TrimSpace(s.tmux(append([]string{"new-window", "-d", "-t", "main:", "-P", "-F", "#{pane_id}"}, argv...)...)))
}

// delivery is a delivery into pane that locks as a send does, under the test's folder.
func (s *testServer) delivery(pane messages.PaneID, content string, submit bool) paneops.Delivery {
	s.t.Helper()
	info, err := s.c.ServerInfo(context.Background())
	require.NoError(s.t, err)
	return paneops.Delivery{Pane: pane, Content: []byte(content), Submit: submit, EnterDelay: 5 * time.Millisecond,
		LockDir: filepath.Join(s.dir, "locks"), LockKey: info.Key(), LockTimeout: time.Minute}
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t testing.TB, timeout time.Duration, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, timeout, 10*time.Millisecond)
}

// fencePrefix begins the pane option that fences a delivery's call (paneops/deliver_fence.go):
// the fake resident waits for it before it runs a late call.
const fencePrefix = "@wcomm-x-"
