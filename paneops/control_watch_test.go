package paneops

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
	s.tmux("set-option", "-g", "remain-on-exit", "on")
	var shell string
	heard("a pane opened by a split in another session", func() {
		shell = strings.TrimSpace(s.tmux("split-window", "-d", "-t", "other:", "-P", "-F", "#{pane_id}", "bash", "--norc", "--noprofile"))
	})
	heard("a pane's output in another session", func() { s.tmux("send-keys", "-t", shell, "echo hello", "Enter") })
	heard("a pane's process ending in another session", func() { s.tmux("send-keys", "-t", shell, "exit", "Enter") })
	require.True(t, ctl.Running())
}

// TestRealControlChangesLetTheServerSleep watches the panes of two sessions and checks that the
// tmux server sleeps while nothing changes: a watch that asked it each second (a subscription,
// looked at by the server once a second) would wake it at least once a second.
func TestRealControlChangesLetTheServerSleep(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.tmux("new-session", "-d", "-s", "other", "sleep", "86400")
	for range 3 {
		s.newWindow("sleep", "86400")
	}
	pid := strings.TrimSpace(s.tmux("display-message", "-p", "#{pid}"))
	ctl := s.c.Control("main")
	defer ctl.Close()
	changes := ctl.Changes(ctx, time.Hour)
	for quiet := false; !quiet; {
		select {
		case <-changes:
		case <-time.After(2500 * time.Millisecond): // longer than a subscription's first check
			quiet = true
		}
	}
	require.True(t, ctl.Running())
	wakes := func() int {
		data, err := os.ReadFile("/proc/" + pid + "/status")
		require.NoError(t, err)
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				require.NoError(t, err)
				return n
			}
		}
		t.Fatal("no voluntary_ctxt_switches in /proc/PID/status")
		return 0
	}
	before := wakes()
	time.Sleep(4 * time.Second) // the span looked at, not a wait for a result
	assert.LessOrEqual(t, wakes()-before, 1, "the tmux server woke while nothing changed")
	select {
	case <-changes:
		t.Fatal("a change was told while nothing changed")
	default:
	}
}
