package mailbox_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
)

// doorSession is a Claude Code session for pane %2 of the in-memory server (pane pid 1001): a
// session file, a key file and a socket that records every message written to it. Logic only:
// the real Claude Code is tested end to end.
type doorSession struct {
	home, sock string
	pid        int
	ln         net.Listener
	mu         sync.Mutex
	msgs       []string
}

func newDoorSession(t *testing.T, status string) *doorSession {
	t.Helper()
	base, err := os.MkdirTemp("", "route") // short: a socket path is at most 107 bytes
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	s := &doorSession{home: filepath.Join(base, "h"), sock: filepath.Join(base, "s.sock"), pid: 4242}
	dir := filepath.Join(s.home, ".claude", "sessions")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	s.ln, err = net.Listen("unix", s.sock)
	require.NoError(t, err)
	require.NoError(t, os.Chmod(s.sock, 0o600))
	t.Cleanup(func() { s.ln.Close() })
	go func() {
		for {
			c, err := s.ln.Accept()
			if err != nil {
				return
			}
			sc := bufio.NewScanner(c)
			sc.Buffer(nil, 1<<20)
			var lines []string
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			c.Close()
			if len(lines) == 2 {
				var u struct {
					Message struct{ Content string } `json:"message"`
				}
				if json.Unmarshal([]byte(lines[1]), &u) == nil {
					s.mu.Lock()
					s.msgs = append(s.msgs, u.Message.Content)
					s.mu.Unlock()
				}
			}
		}
	}()
	file := fmt.Sprintf(`{"pid":%d,"version":"2.1.331","peerProtocol":1,"kind":"interactive","tmux":"s:@1.%%2","messagingSocketPath":%q,"status":%q,"procStart":"777"}`,
		s.pid, s.sock, status)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "4242.json"), []byte(file), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "4242.k.key"), []byte(`{"peerToken":"00112233445566778899aabbccddeeff","procStart":"777"}`), 0o600))
	return s
}

// received is what the socket received, waiting up to a deadline for want messages.
func (s *doorSession) received(want int) []string {
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		got := append([]string(nil), s.msgs...)
		s.mu.Unlock()
		if len(got) >= want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond) // polling interval
	}
}

// closeSocket ends the session's socket (a Unix listener unlinks it as it closes).
func (s *doorSession) closeSocket(t *testing.T) {
	s.ln.Close()
	_, err := os.Lstat(s.sock)
	require.True(t, os.IsNotExist(err), "the socket is gone")
}

// doorWorld is a world whose pane %2 runs the session's process; procStart says what start time
// the process of a pid has (777: the session's own).
func doorWorld(t *testing.T, s *doorSession, procStart func(pid int) (uint64, error)) *world {
	w := newWorld(t)
	table := proc.NewProcTable([]proc.Process{
		{PID: 1001, PPID: 1, Comm: "bash"},
		{PID: s.pid, PPID: 1001, Comm: "claude.exe"},
	})
	w.cfg.Procs = func() (*proc.Table, error) { return table, nil }
	w.cfg.Door = door.Finder{
		Environ: func(pid int) ([]string, error) {
			if pid == s.pid {
				return []string{"HOME=" + s.home}, nil
			}
			return []string{"HOME=/nonexistent"}, nil
		},
		ProcStart: procStart,
	}
	return w
}

func itsOwn(int) (uint64, error) { return 777, nil }

// A session with a door gets its mail through it, whole and once, even while it is busy.
func TestMailGoesThroughTheAgentsDoor(t *testing.T) {
	s := newDoorSession(t, "busy")
	w := doorWorld(t, s, itsOwn)
	x, m := w.request("%2", "the task, whole")
	p, err := w.post(m)
	require.NoError(t, err)
	assert.Equal(t, messages.MailDelivered, p.Outcome)
	assert.Equal(t, exchange.ViaSocket, p.Via)
	assert.Empty(t, w.tmux.Delivered(), "nothing typed")
	got := s.received(1)
	require.Len(t, got, 1, "written once")
	assert.Contains(t, got[0], "the task, whole")
	x = state(x)
	assert.Equal(t, exchange.StateSubmitted, x.State)
	assert.Equal(t, exchange.ViaSocket, x.Via)
	assert.Equal(t, "claude", x.Profile)
	assert.Contains(t, x.Evidence, "messaging socket of Claude Code session 4242 (the session was busy)")
	o, err := w.outbox("%2").Outcome(p.Mail.ID)
	require.NoError(t, err)
	assert.Equal(t, exchange.ViaSocket, o.Via)
}

func TestDoorGoneIsTypedOnce(t *testing.T) {
	s := newDoorSession(t, "idle")
	w := doorWorld(t, s, itsOwn)
	s.closeSocket(t)
	x, m := w.request("%2", "task")
	_, err := w.post(m)
	require.NoError(t, err)
	assert.Len(t, w.pasted(), 1, "typed once")
	assert.Equal(t, exchange.ViaTyped, state(x).Via)
	assert.Empty(t, s.received(0))
}

// A session that ends between the look and the write: nothing reaches it, the message waits, and
// the next look (the session gone) types it once.
func TestSessionEndedBeforeTheWriteIsQueuedThenTypedOnce(t *testing.T) {
	s := newDoorSession(t, "idle")
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
	assert.Empty(t, s.received(0), "nothing reached the ended session")
	x = state(x)
	assert.Equal(t, exchange.StateSubmitted, x.State)
	assert.Equal(t, exchange.ViaTyped, x.Via)
}

// Where typing is the route, the session's own "busy" holds the message back.
func TestBusySessionWithoutSocketWaits(t *testing.T) {
	s := newDoorSession(t, "busy")
	w := doorWorld(t, s, itsOwn)
	s.closeSocket(t)
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
	s := newDoorSession(t, "idle")
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
	assert.Empty(t, s.received(0), "not written again")
	x = state(x)
	assert.Equal(t, exchange.StatusUndelivered, x.Status)
	assert.Contains(t, x.Evidence, "may have reached the agent")
	o, err := w.outbox("%2").Outcome(pend[0].ID)
	require.NoError(t, err)
	assert.Equal(t, messages.MailUndeliverable, o.State)
}

// A fail-fast delivery whose write through the door did not happen is typed at once instead.
func TestNoQueueDoorNotWrittenIsTyped(t *testing.T) {
	s := newDoorSession(t, "idle")
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
