package tmuxcomm

import (
	"bufio"
	"context"
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
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// doorSession is a fake Claude Code session for pane %2 of the fake server (pane pid 1001): a
// session file, a key file and a socket that records every message written to it. Logic only:
// the real Claude Code is tested end to end (make e2e-agents).
type doorSession struct {
	home, sock string
	pid        int
	start      atomic.Uint64
	ln         net.Listener
	mu         sync.Mutex
	msgs       []string
}

func newDoorSession(t *testing.T, pane, status string) *doorSession {
	t.Helper()
	base, err := os.MkdirTemp("", "route")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	s := &doorSession{home: filepath.Join(base, "h"), sock: filepath.Join(base, "s.sock"), pid: 4242}
	s.start.Store(777)
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
	file := fmt.Sprintf(`{"pid":%d,"version":"2.1.331","peerProtocol":1,"kind":"interactive","tmux":"s:@1.%s","messagingSocketPath":%q,"status":%q,"procStart":"777"}`,
		s.pid, pane, s.sock, status)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "4242.json"), []byte(file), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "4242.k.key"), []byte(`{"peerToken":"00112233445566778899aabbccddeeff","procStart":"777"}`), 0o600))
	return s
}

// received is what the socket received, after a moment for the last connection to be read.
func (s *doorSession) received(t *testing.T, want int) []string {
	t.Helper()
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

// doorEngine is an engine whose pane panePID runs the fake session's process.
func doorEngine(t *testing.T, f *fakeTmux, self string, s *doorSession, panePID int) *Engine {
	e := newEngine(t, f, self)
	table := proc.NewProcTable([]proc.Process{
		{PID: panePID, PPID: 1, Comm: "bash"},
		{PID: s.pid, PPID: panePID, Comm: "claude.exe"},
	})
	e.cfg.Procs = func() (*proc.Table, error) { return table, nil }
	e.cfg.Door = door.Finder{
		Environ: func(pid int) ([]string, error) {
			if pid == s.pid {
				return []string{"HOME=" + s.home}, nil
			}
			return []string{"HOME=/nonexistent"}, nil
		},
		ProcStart: func(pid int) (uint64, error) { return s.start.Load(), nil },
	}
	return e
}
func TestNotifyGoesThroughTheOrchestratorsDoor(t *testing.T) {
	f := newFake("%1", "%2")
	s := newDoorSession(t, "%1", "idle")
	e := doorEngine(t, f, "%1", s, 1000)
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("task")})
	require.NoError(t, err)
	require.Len(t, f.Delivered(), 1, "the worker has no door: typed")
	res, err := e.as("%2").Notify(context.Background(), NotifyOptions{Ref: x.ResponsePath, Body: []byte("answer")})
	require.NoError(t, err)
	assert.Equal(t, core.SignalPasted, res.Signal)
	assert.Equal(t, exchange.ViaSocket, res.Via)
	assert.Len(t, f.Delivered(), 1, "the RESPONSE line was not typed")
	got := s.received(t, 1)
	require.Len(t, got, 1)
	assert.Equal(t, res.Line, got[0])
}

// An answer that no ask waits for goes through the worker's door, and the answer's result says
// so: it was written to the socket, not pasted.
func TestAnswerGoesThroughTheWorkersDoor(t *testing.T) {
	f := newFake("%1", "%2")
	s := newDoorSession(t, "%2", "idle")
	orch := doorEngine(t, f, "%1", s, 1001)
	x, err := orch.Send(context.Background(), SendOptions{To: "%2", Body: []byte("task")})
	require.NoError(t, err)
	s.received(t, 1)
	worker := orch.as("%2")
	res, err := worker.desk.Ask(context.Background(), questions.AskOptions{Exchange: x.ID, MaxQuestions: 3,
		Questions: []messages.Question{{Text: "May I?", Task: "t", Type: messages.YesNo, Urgency: messages.NonBlocking, Context: "Both work."}}})
	require.NoError(t, err)
	typed := len(f.Delivered())
	ar, err := orch.desk.Answer(context.Background(), questions.AnswerOptions{ID: res.Questions[0].ID, Raw: "yes"})
	require.NoError(t, err)
	assert.Equal(t, core.SignalPasted, ar.Signal)
	assert.Equal(t, exchange.ViaSocket, ar.Via)
	assert.Len(t, f.Delivered(), typed, "the ANSWER block was not typed")
	got := s.received(t, 2)
	require.Len(t, got, 2)
	assert.Contains(t, got[1], "ANSWER: yes")
	assert.Equal(t, "no ask was waiting: the ANSWER block was written to the messaging socket of worker pane %2 (via socket)", ar.Say())
}
