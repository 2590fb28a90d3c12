package coretest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/paneops/proc"
)

// ClaudeSession is a stand-in for a Claude Code session of one pane, as its door sees it: a session
// file and a key file under Home, and a socket that records every message written to it. Its
// process is PID (4242), started at 777. Logic only: the real Claude Code is tested end to end.
type ClaudeSession struct {
	Home, Sock string
	PID        int
	ln         net.Listener
	mu         sync.Mutex
	msgs       []string
}

// NewClaudeSession starts a session of pane whose status is status ("idle", "busy", ...).
func NewClaudeSession(t testing.TB, pane messages.PaneID, status string) *ClaudeSession {
	t.Helper()
	base, err := os.MkdirTemp("", "route") // short: a socket path is at most 107 bytes
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	s := &ClaudeSession{Home: filepath.Join(base, "h"), Sock: filepath.Join(base, "s.sock"), PID: 4242}
	dir := filepath.Join(s.Home, ".claude", "sessions")
	must(t, os.MkdirAll(dir, 0o700))
	s.ln, err = net.Listen("unix", s.Sock)
	must(t, err)
	must(t, os.Chmod(s.Sock, 0o600))
	t.Cleanup(func() { s.ln.Close() })
	go s.serve()
	file := fmt.Sprintf(`{"pid":%d,"version":"2.1.331","peerProtocol":1,"kind":"interactive","tmux":"s:@1.%s","messagingSocketPath":%q,"status":%q,"procStart":"777"}`,
		s.PID, pane, s.Sock, status)
	must(t, os.WriteFile(filepath.Join(dir, "4242.json"), []byte(file), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "4242.k.key"), []byte(`{"peerToken":"00112233445566778899aabbccddeeff","procStart":"777"}`), 0o600))
	return s
}

// serve records the message of each connection: a hello line, then the message.
func (s *ClaudeSession) serve() {
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
}

// Received is what the socket received, waiting up to a deadline for want messages.
func (s *ClaudeSession) Received(want int) []string {
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

// CloseSocket ends the session's socket (a Unix listener unlinks it as it closes).
func (s *ClaudeSession) CloseSocket() error { return s.ln.Close() }

// Procs is a process table where the pane's process panePID runs the session's process.
func (s *ClaudeSession) Procs(panePID int) *proc.Table {
	return proc.NewProcTable([]proc.Process{
		{PID: panePID, PPID: 1, Comm: "bash"},
		{PID: s.PID, PPID: panePID, Comm: "claude.exe"},
	})
}

// Door finds the session's door: its process's HOME is Home, and procStart says what start time
// the process of a pid has (777: the session's own).
func (s *ClaudeSession) Door(procStart func(pid int) (uint64, error)) door.Finder {
	return door.Finder{
		Environ: func(pid int) ([]string, error) {
			if pid == s.PID {
				return []string{"HOME=" + s.Home}, nil
			}
			return []string{"HOME=/nonexistent"}, nil
		},
		ProcStart: procStart,
	}
}

// must stops the test on err.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
