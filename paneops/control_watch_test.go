package paneops

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRealControlChanges hears of the panes' changes from the control client, in its own session
// and in another one: a pane's output, a pane opened in another session, a pane killed. The poll
// is an hour, so what is heard comes from tmux, not from a timer.
func TestRealControlChanges(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.tmux("new-session", "-d", "-s", "other", "sleep", "86400")
	ctl := s.c.Control("main")
	defer ctl.Close()
	changes := ctl.Changes(ctx, time.Hour)
	// heard waits until the panes have been quiet for a moment, then until f's change is heard.
	heard := func(what string, f func()) {
		t.Helper()
		for quiet := false; !quiet; {
			select {
			case <-changes:
			case <-time.After(2500 * time.Millisecond): // longer than tmux's one-second check
				quiet = true
			}
		}
		f()
		select {
		case <-changes:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s was not heard", what)
		}
	}
	select {
	case <-changes:
	case <-time.After(20 * time.Second):
		t.Fatal("the client's start was not told")
	}
	p := s.newWindow("bash", "--norc", "--noprofile")
	heard("a pane's output", func() { s.tmux("send-keys", "-t", string(p), "echo hello", "Enter") })
	var other string
	heard("a window opened in another session", func() {
		other = s.tmux("new-window", "-d", "-t", "other:", "-P", "-F", "#{pane_id}", "sleep", "86400")
	})
	heard("a pane killed in another session", func() { s.tmux("kill-pane", "-t", other[:len(other)-1]) })
	require.True(t, ctl.Running())
}
