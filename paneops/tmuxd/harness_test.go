package tmuxd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/tmuxtest"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
)

// testServer is a private tmux server for one test.
type testServer struct {
	t   testing.TB
	c   *paneops.Client
	dir string
	key string // ServerInfo.Key(), the lock key of its deliveries
}

// startServer starts a private tmux server with no config file, killed when the test ends.
func startServer(t testing.TB) *testServer {
	t.Helper()
	srv := tmuxtest.New(t)
	srv.Start(t, tmuxtest.Options{Session: "main", Width: 160, Height: 48, Argv: []string{"sleep", "86400"}})
	s := &testServer{t: t, c: &paneops.Client{Bin: srv.Bin, Server: paneops.Server{Socket: srv.Sock}}, dir: srv.Dir}
	info, err := s.c.ServerInfo(context.Background())
	require.NoError(t, err)
	s.key = info.Key()
	return s
}

// tmux runs a tmux command that must succeed and returns its stdout.
func (s *testServer) tmux(args ...string) string {
	s.t.Helper()
	out, err := s.c.Run(context.Background(), nil, args...)
	require.NoError(s.t, err)
	return out
}

// newWindow opens a background window in session main running argv (no shell) and returns its pane.
func (s *testServer) newWindow(argv ...string) messages.PaneID {
	s.t.Helper()
	args := append([]string{"new-window", "-d", "-t", "main:", "-P", "-F", "#{pane_id}"}, argv...)
	return messages.PaneID(strings.TrimSpace(s.tmux(args...)))
}

// delivery fills in the lock settings of a test delivery.
func (s *testServer) delivery(pane messages.PaneID, content string, submit bool) paneops.Delivery {
	return paneops.Delivery{Pane: pane, Content: []byte(content), Submit: submit, EnterDelay: 5 * time.Millisecond,
		LockDir: filepath.Join(s.dir, "locks"), LockKey: s.key, LockTimeout: time.Minute}
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t testing.TB, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition still false after %v", timeout)
		}
		time.Sleep(10 * time.Millisecond) // the polling interval, not a wait for a result
	}
}

// direct is c without its routes: every call starts a tmux client of its own.
func direct(c *paneops.Client) *paneops.Client { return &paneops.Client{Server: c.Server, Bin: c.Bin} }

// fencePrefix begins the pane option that fences a delivery's call (paneops/deliver_fence.go):
// the fake resident waits for it before it runs a late call.
const fencePrefix = "@wcomm-x-"
