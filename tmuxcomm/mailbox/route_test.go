package mailbox_test

import (
	"os"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/tmuxcomm/core/coretest"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
)

// doorWorld is a world whose pane %2 (pid 1001) runs the session's process; procStart says what
// start time the process of a pid has (777: the session's own).
func doorWorld(t *testing.T, s *coretest.ClaudeSession, procStart func(pid int) (uint64, error)) *world {
	w := newWorld(t)
	table := s.Procs(1001)
	w.cfg.Procs = func() (*proc.Table, error) { return table, nil }
	w.cfg.Door = s.Door(procStart)
	return w
}

func itsOwn(int) (uint64, error) { return 777, nil }

// A session with a door gets its mail through it, whole and once, even while it is busy.
func TestMailGoesThroughTheAgentsDoor(t *testing.T) {
	s := coretest.NewClaudeSession(t, "%2", "busy")
	w := doorWorld(t, s, itsOwn)
	x, m := w.request("%2", "the task, whole")
	p, err := w.post(m)
	require.NoError(t, err)
	assert.Equal(t, messages.MailDelivered, p.Outcome)
	assert.Equal(t, exchange.ViaSocket, p.Via)
	assert.Empty(t, w.tmux.Delivered(), "nothing typed")
	got := s.Received(1)
	require.Len(t, got, 1, "written once")
	assert.Contains(t, got[0], "the task, whole")
	x = state(x)
	assert.Equal(t, exchange.StateSubmitted, x.State)
	assert.Equal(t, exchange.ViaSocket, x.Via)
	assert.Equal(t, "claude", x.Profile)
	assert.Contains(t, x.Evidence, "messaging socket of Claude Code session 4242 (the session was busy)")
	noOutboxRecords(t, w, "%2")
}

func TestDoorGoneIsTypedOnce(t *testing.T) {
	s := coretest.NewClaudeSession(t, "%2", "idle")
	w := doorWorld(t, s, itsOwn)
	socketGone(t, s)
	x, m := w.request("%2", "task")
	_, err := w.post(m)
	require.NoError(t, err)
	assert.Len(t, w.pasted(), 1, "typed once")
	assert.Equal(t, exchange.ViaTyped, state(x).Via)
	assert.Empty(t, s.Received(0))
}

// A session that ends between the look and the write: nothing reaches it, the message waits, and
// the next look (the session gone) types it once.
func TestSessionEndedBeforeTheWriteIsQueuedThenTypedOnce(t *testing.T) {
	s := coretest.NewClaudeSession(t, "%2", "idle")
	var calls atomic.Int32
	w := doorWorld(t, s, func(pid int) (uint64, error) {
		if calls.Add(1) == 1 {
			return 777, nil // the look
		}
		return 778, nil // the write, and every later look: another process has the pid
	})
	x, m := w.request("%2", "task")
	p, err := w.post(m)
	require.NoError(t, err)
	assert.True(t, p.Queued)
	assert.Empty(t, w.pasted(), "nothing typed yet")
	assert.Equal(t, []messages.PaneID{"%2"}, w.spawns())
	assert.Equal(t, exchange.StateQueued, state(x).State)
	w.drain("%2")
	assert.Len(t, w.pasted(), 1, "typed once")
	assert.Empty(t, s.Received(0), "nothing reached the ended session")
	x = state(x)
	assert.Equal(t, exchange.StateSubmitted, x.State)
	assert.Equal(t, exchange.ViaTyped, x.Via)
}

// Where typing is the route, the session's own "busy" holds the message back.
func TestBusySessionWithoutSocketWaits(t *testing.T) {
	s := coretest.NewClaudeSession(t, "%2", "busy")
	w := doorWorld(t, s, itsOwn)
	socketGone(t, s)
	x, m := w.request("%2", "task")
	p, err := w.post(m)
	require.NoError(t, err)
	assert.True(t, p.Queued)
	assert.Empty(t, w.tmux.Delivered(), "not even tried")
	x = state(x)
	assert.Equal(t, exchange.StateQueued, x.State)
	assert.Contains(t, x.Evidence, "session says it is busy")
}

// A write through the door whose process stopped before recording it is not written again: it
// may have reached the agent.
func TestDoorInflightIsNotWrittenAgain(t *testing.T) {
	s := coretest.NewClaudeSession(t, "%2", "idle")
	var start atomic.Uint64
	start.Store(1) // no session matches for now
	w := doorWorld(t, s, func(int) (uint64, error) { return start.Load(), nil })
	w.setBusy("%2", true)
	x, m := w.request("%2", "task")
	_, err := w.post(m)
	require.NoError(t, err)
	pend, _ := w.outbox("%2").Pending()
	require.Len(t, pend, 1)
	require.NoError(t, w.outbox("%2").SetInflight(mailbox.Inflight{Mark: pend[0].ID, IDs: []string{pend[0].ID}, PID: 1, Route: exchange.ViaSocket}))
	start.Store(777)
	w.setBusy("%2", false)
	w.drain("%2")
	assert.Empty(t, w.pasted(), "not typed")
	assert.Empty(t, s.Received(0), "not written again")
	x = state(x)
	assert.Equal(t, exchange.StatusUndelivered, x.Status)
	assert.Contains(t, x.Evidence, "may have reached the agent")
	o, err := w.outbox("%2").Outcome(pend[0].ID)
	require.NoError(t, err)
	assert.Equal(t, messages.MailUndeliverable, o.State)
}

// A fail-fast delivery whose write through the door did not happen is typed at once instead.
func TestNoQueueDoorNotWrittenIsTyped(t *testing.T) {
	s := coretest.NewClaudeSession(t, "%2", "idle")
	var calls atomic.Int32
	w := doorWorld(t, s, func(pid int) (uint64, error) {
		if calls.Add(1) == 1 {
			return 777, nil
		}
		return 778, nil
	})
	w.cfg.NoQueue = true
	x, m := w.request("%2", "task")
	p, err := w.post(m)
	require.NoError(t, err)
	assert.Equal(t, messages.MailDelivered, p.Outcome)
	assert.Equal(t, exchange.ViaTyped, p.Via)
	assert.Len(t, w.pasted(), 1)
	assert.Equal(t, exchange.StateSubmitted, state(x).State)
}

// socketGone closes the session's messaging socket and checks that it is gone.
func socketGone(t *testing.T, s *coretest.ClaudeSession) {
	t.Helper()
	require.NoError(t, s.CloseSocket())
	_, lerr := os.Lstat(s.Sock)
	require.True(t, os.IsNotExist(lerr), "the socket is gone")
}
