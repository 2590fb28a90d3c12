package door

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeAppServer is a Codex app-server on a Unix socket: the WebSocket upgrade, JSON-RPC without
// "jsonrpc", a notification before every reply (as the real one sends them at any time), the
// loaded threads and a log of every request. Logic only: the real daemon is tested end to end.
type fakeAppServer struct {
	home, sock, link string
	pid              int
	start            time.Time
	cwd              string

	mu      sync.Mutex
	threads []map[string]any
	calls   []rpcLogged
	// turnReply: "ok" (the default), "error" (an error reply) or "none" (no reply at all).
	turnReply string
	// resumeErr, when set, is the error thread/resume gets ("no rollout found ...").
	resumeErr string
	conns     []*fakeConn
	nextReq   int
	requests  map[int]*fakeRequest
	replies   []json.RawMessage // the clients' replies to the server's requests
	pongs     int
}

// fakeConn is one client's connection; a follower's is subscribed to the thread.
type fakeConn struct {
	mu         sync.Mutex
	c          *websocket.Conn
	subscribed bool
}

func (fc *fakeConn) write(v any) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	_ = fc.c.WriteJSON(v)
}

// fakeRequest is an approval the server asked, and its decision once one came.
type fakeRequest struct {
	method   string
	params   map[string]any
	decision string
}

type rpcLogged struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	HasID  bool
}

func newFakeAppServer(t *testing.T) *fakeAppServer {
	t.Helper()
	// A short folder: a socket path is bounded to about 100 bytes.
	base, err := os.MkdirTemp("", "cx")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	s := &fakeAppServer{home: filepath.Join(base, "h", ".codex"), pid: 5307, cwd: "/home/u/project",
		start: time.Unix(1795739499, 0)}
	daemonDir := filepath.Join(base, "d")
	require.NoError(t, os.MkdirAll(daemonDir, 0o700))
	s.sock = filepath.Join(daemonDir, "47d30fa7")
	ln, err := net.Listen("unix", s.sock)
	require.NoError(t, err)
	require.NoError(t, os.Chmod(s.sock, 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(s.home, "app-server-control"), 0o755))
	s.link = filepath.Join(s.home, "app-server-control", "app-server-control.sock")
	require.NoError(t, os.Symlink(s.sock, s.link))
	s.threads = []map[string]any{s.thread("th-mine", nil)}
	srv := &http.Server{Handler: http.HandlerFunc(s.serve)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

// thread is a thread of the TUI's folder made 8 s after it started, changed by mutate.
func (s *fakeAppServer) thread(id string, mutate func(map[string]any)) map[string]any {
	th := map[string]any{"id": id, "cwd": s.cwd, "originator": "codex-tui", "ephemeral": false,
		"createdAt": s.start.Unix() + 8, "cliVersion": "0.169.0", "status": map[string]any{"type": "idle"},
		"turns": []any{}}
	if mutate != nil {
		mutate(th)
	}
	return th
}

func (s *fakeAppServer) serve(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{}
	c, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer c.Close()
	fc := &fakeConn{c: c}
	c.SetPongHandler(func(string) error {
		s.mu.Lock()
		s.pongs++
		s.mu.Unlock()
		return nil
	})
	s.mu.Lock()
	s.conns = append(s.conns, fc)
	s.mu.Unlock()
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			return
		}
		var m struct {
			ID      *int            `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
			Result  json.RawMessage `json:"result"`
			JSONRPC *string         `json:"jsonrpc"`
		}
		if json.Unmarshal(data, &m) != nil || m.JSONRPC != nil {
			return // the real server closes the connection
		}
		if m.Method == "" && m.ID != nil {
			// A reply to one of the server's requests.
			var r struct {
				Decision string `json:"decision"`
			}
			_ = json.Unmarshal(m.Result, &r)
			s.mu.Lock()
			s.replies = append(s.replies, json.RawMessage(data))
			s.mu.Unlock()
			s.decide(*m.ID, r.Decision)
			continue
		}
		s.mu.Lock()
		s.calls = append(s.calls, rpcLogged{Method: m.Method, Params: m.Params, HasID: m.ID != nil})
		threads, turnReply, resumeErr := s.threads, s.turnReply, s.resumeErr
		s.mu.Unlock()
		if m.ID == nil {
			continue
		}
		fc.write(map[string]any{"method": "thread/status/changed", "params": map[string]any{"threadId": "x"}})
		var result any
		var rpcErr any
		switch m.Method {
		case "initialize":
			result = map[string]any{"userAgent": "codex-tui/0.169.0 (test)", "codexHome": s.home}
		case "thread/loaded/list":
			ids := []string{}
			for _, th := range threads {
				ids = append(ids, th["id"].(string))
			}
			result = map[string]any{"data": ids, "nextCursor": nil}
		case "thread/read":
			var p threadID
			_ = json.Unmarshal(m.Params, &p)
			rpcErr = map[string]any{"code": -32600, "message": "thread not loaded: " + p.ThreadID}
			for _, th := range threads {
				if th["id"] == p.ThreadID {
					result, rpcErr = map[string]any{"thread": th}, nil
				}
			}
		case "thread/resume":
			var p threadID
			_ = json.Unmarshal(m.Params, &p)
			if resumeErr != "" {
				rpcErr = map[string]any{"code": -32600, "message": resumeErr + p.ThreadID}
				break
			}
			result = map[string]any{"thread": threads[0]}
			// A request pending now is replayed at once; here before the reply, the harder order.
			s.mu.Lock()
			fc.subscribed = true
			var pending []map[string]any
			for id, r := range s.requests {
				if r.decision == "" {
					pending = append(pending, map[string]any{"id": id, "method": r.method, "params": r.params})
				}
			}
			s.mu.Unlock()
			for _, p := range pending {
				fc.write(p)
			}
		case "turn/start":
			switch turnReply {
			case "none":
				continue
			case "error":
				rpcErr = map[string]any{"code": -32600, "message": "thread is closing"}
			default:
				result = map[string]any{"turn": map[string]any{"id": "turn-1", "status": "inProgress", "items": []any{}}}
			}
		default:
			rpcErr = map[string]any{"code": -32601, "message": "unknown method"}
		}
		reply := map[string]any{"id": *m.ID}
		if rpcErr != nil {
			reply["error"] = rpcErr
		} else {
			reply["result"] = result
		}
		fc.write(reply)
	}
}

// broadcast sends v to every client that resumed the thread.
func (s *fakeAppServer) broadcast(v any) {
	s.mu.Lock()
	conns := append([]*fakeConn(nil), s.conns...)
	s.mu.Unlock()
	for _, fc := range conns {
		fc.mu.Lock()
		sub := fc.subscribed
		fc.mu.Unlock()
		if sub {
			fc.write(v)
		}
	}
}

// ask sends an approval request to the thread's clients, as Codex does when a command needs one;
// it returns the request's id.
func (s *fakeAppServer) ask(method string, params map[string]any) int {
	s.mu.Lock()
	if s.requests == nil {
		s.requests = map[int]*fakeRequest{}
	}
	id := s.nextReq
	s.nextReq++
	s.requests[id] = &fakeRequest{method: method, params: params}
	s.mu.Unlock()
	s.broadcast(map[string]any{"id": id, "method": method, "params": params})
	return id
}

// decide is the first answer to request id, from a client or the TUI: resolved, then the item's
// end. A later answer is dropped without a word, as the real server drops it.
func (s *fakeAppServer) decide(id int, decision string) {
	if tell := s.decideQuietly(id, decision); tell != nil {
		tell()
	}
}

// decideQuietly is decide with the clients told only when the returned func is called (nil: the
// request was decided already): an answer on its way while another client answers.
func (s *fakeAppServer) decideQuietly(id int, decision string) func() {
	s.mu.Lock()
	r := s.requests[id]
	if r == nil || r.decision != "" {
		s.mu.Unlock()
		return nil
	}
	r.decision = decision
	s.mu.Unlock()
	return func() { s.tellDecided(r, id, decision) }
}

func (s *fakeAppServer) tellDecided(r *fakeRequest, id int, decision string) {
	status := "completed"
	if decision == "decline" || decision == "cancel" {
		status = "declined"
	}
	thread := r.params["threadId"]
	s.broadcast(map[string]any{"method": "serverRequest/resolved", "params": map[string]any{"threadId": thread, "requestId": id}})
	s.broadcast(map[string]any{"method": "item/completed", "params": map[string]any{"threadId": thread,
		"item": map[string]any{"type": "commandExecution", "id": r.params["itemId"], "status": status}}})
}

// commandApproval is the params of a command's approval as Codex 0.169.0 sends them.
func commandApproval(thread, item, cmd string) map[string]any {
	return map[string]any{"kind": "command", "threadId": thread, "turnId": "turn-1", "itemId": item,
		"reason": "scripted test needs to write", "command": "/bin/bash -lc '" + cmd + "'", "cwd": "/home/u/project",
		"commandActions":     []any{map[string]any{"type": "unknown", "command": cmd}},
		"availableDecisions": []any{"accept", map[string]any{"acceptWithExecpolicyAmendment": map[string]any{"execpolicy_amendment": []string{"touch"}}}, "cancel"}}
}

func (s *fakeAppServer) clientReplies() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.replies {
		out = append(out, string(r))
	}
	return out
}

func (s *fakeAppServer) logged() []rpcLogged {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]rpcLogged(nil), s.calls...)
}

func (s *fakeAppServer) methods() []string {
	var out []string
	for _, c := range s.logged() {
		out = append(out, c.Method)
	}
	return out
}

// finder sees pid 100 (the npm launcher, node), then the TUI s.pid, and no other Codex TUI.
func (s *fakeAppServer) finder() Finder {
	return Finder{
		Args: func(pid int) ([]string, error) {
			switch pid {
			case s.pid:
				return []string{"/opt/codex/bin/codex", "--dangerously-bypass-approvals-and-sandbox"}, nil
			case 100:
				return []string{"node", "/opt/node_modules/.bin/codex"}, nil
			}
			return nil, errors.New("no such process")
		},
		Environ: func(pid int) ([]string, error) {
			return []string{"PATH=/bin", "CODEX_HOME=" + s.home, "HOME=/elsewhere"}, nil
		},
		Cwd:       func(pid int) (string, error) { return s.cwd, nil },
		ProcStart: func(pid int) (uint64, error) { return 220074, nil },
		StartTime: func(pid int) (time.Time, error) { return s.start, nil },
		CodexTUIs: func() ([]CodexProc, error) { return []CodexProc{{PID: s.pid, Home: s.home, Cwd: s.cwd}}, nil },
	}
}

func TestCodexFindMatchesTheTUIsThread(t *testing.T) {
	s := newFakeAppServer(t)
	s.threads = []map[string]any{
		s.thread("th-title", func(th map[string]any) { th["ephemeral"] = true }),
		s.thread("th-other-folder", func(th map[string]any) { th["cwd"] = "/home/u/other" }),
		s.thread("th-before", func(th map[string]any) { th["createdAt"] = s.start.Unix() - 600 }), // an exited TUI's
		s.thread("th-mine", func(th map[string]any) { th["status"] = map[string]any{"type": "active", "activeFlags": []string{}} }),
	}
	fd := s.finder().FindFor(context.Background(), CodexAppServer, "%3", []int{100, s.pid})
	require.Equal(t, RouteSocket, fd.Route, fd.Why)
	assert.Equal(t, CodexAppServer, fd.Door)
	assert.Equal(t, "th-mine", fd.Thread)
	assert.Equal(t, s.sock, fd.Socket, "the link resolved")
	assert.Equal(t, s.pid, fd.PID)
	assert.Equal(t, StatusBusy, fd.Status, "an active thread is busy")
	assert.Equal(t, "0.169.0", fd.Version)
	assert.Contains(t, fd.Why, "shows thread th-mine")
	assert.Contains(t, fd.Evidence(), "thread th-mine of Codex TUI 5307")
	assert.NotContains(t, s.methods(), "turn/start", "finding starts nothing")
	assert.NotContains(t, s.methods(), "thread/resume", "finding subscribes to nothing")
}

func TestCodexFindTyped(t *testing.T) {
	tests := []struct {
		name    string
		change  func(s *fakeAppServer, f *Finder)
		matched bool // the thread was matched: its state counts, though typed
		want    string
	}{
		{name: "started with --no-daemon", want: "without its app-server daemon", change: func(s *fakeAppServer, f *Finder) {
			f.Args = func(int) ([]string, error) { return []string{"codex", "--no-daemon"}, nil }
		}},
		{name: "a client of a remote app-server", want: "remote app-server", change: func(s *fakeAppServer, f *Finder) {
			f.Args = func(int) ([]string, error) { return []string{"codex", "--remote", "ws://h:1"}, nil }
		}},
		{name: "no Codex TUI in the pane", want: "no Codex TUI process", change: func(s *fakeAppServer, f *Finder) {
			f.Args = func(int) ([]string, error) { return []string{"/x/bin/codex", "app-server", "--listen", "unix://"}, nil }
		}},
		{name: "no daemon has run", want: "gone", change: func(s *fakeAppServer, f *Finder) { os.Remove(s.link) }},
		{name: "the daemon has stopped", want: "its daemon has stopped", change: func(s *fakeAppServer, f *Finder) { os.Remove(s.sock) }},
		{name: "socket folder others may enter", want: "may be entered by others", change: func(s *fakeAppServer, f *Finder) {
			os.Chmod(filepath.Dir(s.sock), 0o755)
		}},
		{name: "socket others may use", want: "others may connect", change: func(s *fakeAppServer, f *Finder) { os.Chmod(s.sock, 0o666) }},
		{name: "only a thread of an exited TUI", want: "no thread of /home/u/project made since the TUI started", change: func(s *fakeAppServer, f *Finder) {
			s.threads = []map[string]any{s.thread("th-old", func(th map[string]any) { th["createdAt"] = s.start.Unix() - 60 })}
		}},
		{name: "two threads of the folder since the start", want: "2 threads of /home/u/project", change: func(s *fakeAppServer, f *Finder) {
			s.threads = append(s.threads, s.thread("th-new", nil))
		}},
		{name: "another TUI of the same home and folder", want: "Codex TUI 6000 runs with the same home", change: func(s *fakeAppServer, f *Finder) {
			f.CodexTUIs = func() ([]CodexProc, error) {
				return []CodexProc{{PID: s.pid, Home: s.home, Cwd: s.cwd}, {PID: 6000, Home: s.home, Cwd: s.cwd}}, nil
			}
		}},
		{name: "an older Codex", matched: true, want: "older than 0.169.0", change: func(s *fakeAppServer, f *Finder) {
			s.threads = []map[string]any{s.thread("th-mine", func(th map[string]any) { th["cliVersion"] = "0.168.2" })}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFakeAppServer(t)
			f := s.finder()
			tt.change(s, &f)
			fd := f.FindFor(context.Background(), CodexAppServer, "%3", []int{100, s.pid})
			assert.Equal(t, RouteTyped, fd.Route)
			assert.Contains(t, fd.Why, tt.want)
			if tt.matched {
				assert.Equal(t, StatusIdle, fd.Status)
			} else {
				assert.Empty(t, fd.Status)
			}
			assert.NotContains(t, s.methods(), "turn/start")
		})
	}
}

func TestCodexWriteStartsOneTurn(t *testing.T) {
	s := newFakeAppServer(t)
	f := s.finder()
	fd := f.FindFor(context.Background(), CodexAppServer, "%3", []int{s.pid})
	require.True(t, fd.UsesSocket(), fd.Why)
	text := "a request \"quoted\"\nsecond line <b>& ünïcode\x1b[31m"
	require.NoError(t, f.Write(context.Background(), fd, text))
	var turns []rpcLogged
	for _, c := range s.logged() {
		if c.Method == "turn/start" {
			turns = append(turns, c)
		}
	}
	require.Len(t, turns, 1, "one turn")
	assert.True(t, turns[0].HasID, "a request, answered")
	var p turnStartParams
	require.NoError(t, json.Unmarshal(turns[0].Params, &p))
	assert.Equal(t, turnStartParams{ThreadID: "th-mine", Input: []userInput{{Type: "text", Text: text}}}, p)
	assert.NotContains(t, s.methods(), "thread/resume")
	// Every connection began with initialize and initialized.
	assert.Equal(t, []string{"initialize", "initialized"}, s.methods()[:2])
	// As the TUI: the daemon's first client names the originator of everything it does.
	var ini initializeParams
	require.NoError(t, json.Unmarshal(s.logged()[0].Params, &ini))
	assert.Equal(t, "codex-tui", ini.ClientInfo.Name)
}

func TestCodexWriteNotWritten(t *testing.T) {
	tests := []struct {
		name  string
		after func(s *fakeAppServer, f *Finder)
		want  string
		tried bool // turn/start was sent and refused
	}{
		{name: "the TUI has exited", want: "Codex TUI 5307 has ended", after: func(s *fakeAppServer, f *Finder) {
			f.ProcStart = func(int) (uint64, error) { return 0, errors.New("no such process") }
		}},
		{name: "pid reused", want: "has ended", after: func(s *fakeAppServer, f *Finder) {
			f.ProcStart = func(int) (uint64, error) { return 999, nil }
		}},
		{name: "the daemon has stopped", want: "gone", after: func(s *fakeAppServer, f *Finder) { os.Remove(s.sock) }},
		{name: "the thread was unloaded", want: "thread not loaded", after: func(s *fakeAppServer, f *Finder) {
			s.mu.Lock()
			s.threads = nil
			s.mu.Unlock()
		}},
		{name: "the thread moved to another folder", want: "no longer the one", after: func(s *fakeAppServer, f *Finder) {
			s.mu.Lock()
			s.threads = []map[string]any{s.thread("th-mine", func(th map[string]any) { th["cwd"] = "/elsewhere" })}
			s.mu.Unlock()
		}},
		{name: "the server refuses the turn", want: "thread is closing", tried: true, after: func(s *fakeAppServer, f *Finder) {
			s.mu.Lock()
			s.turnReply = "error"
			s.mu.Unlock()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFakeAppServer(t)
			f := s.finder()
			fd := f.FindFor(context.Background(), CodexAppServer, "%3", []int{s.pid})
			require.True(t, fd.UsesSocket(), fd.Why)
			tt.after(s, &f)
			err := f.Write(context.Background(), fd, "hello")
			require.ErrorIs(t, err, ErrNotWritten)
			assert.Contains(t, err.Error(), tt.want)
			if !tt.tried {
				assert.NotContains(t, s.methods(), "turn/start")
			}
		})
	}
}

// A turn/start written whole with no reply may have started a turn: not ErrNotWritten, so the
// message is never written again.
func TestCodexWriteUnknownOutcome(t *testing.T) {
	s := newFakeAppServer(t)
	f := s.finder()
	fd := f.FindFor(context.Background(), CodexAppServer, "%3", []int{s.pid})
	require.True(t, fd.UsesSocket(), fd.Why)
	s.mu.Lock()
	s.turnReply = "none"
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err := f.Write(ctx, fd, "hello")
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrNotWritten)
	assert.Contains(t, err.Error(), "it may have started a turn")
	assert.Contains(t, s.methods(), "turn/start")
}

func TestIsCodexTUI(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want bool
	}{
		{[]string{"/opt/codex/bin/codex"}, true},
		{[]string{"codex", "--dangerously-bypass-approvals-and-sandbox"}, true},
		{[]string{"codex", "resume", "--last"}, true},
		{[]string{"node", "/x/.bin/codex"}, false},
		{[]string{"/h/.codex/packages/app-server-daemon/releases/0.169.0/bin/codex", "app-server", "--listen", "unix://"}, false},
		{[]string{"codex", "exec", "do it"}, false},
		{nil, false},
	} {
		assert.Equal(t, tt.want, isCodexTUI(tt.args), "%q", tt.args)
	}
}
