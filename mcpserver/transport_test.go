package mcpserver

// The stdio transport against the real wcomm-mcp program: every malformed frame gets its JSON-RPC
// error and the server answers the next valid request; a frame over the limit is answered the same
// way and costs the server no memory in proportion to its size.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/testhome"
)

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// TestMain runs the tests with a scratch HOME and XDG folders (testhome: never the user's
// settings), then removes the program they built.
func TestMain(m *testing.M) {
	cleanup, err := testhome.Isolate()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// mcpBin builds wcomm-mcp once per test run, on first use.
func mcpBin(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "wcomm-mcp-bin"); binErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", binDir, "github.com/wcomm/wcomm/cmd/wcomm-mcp").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build wcomm-mcp: %w\n%s", err, out)
		}
	})
	require.NoError(t, binErr)
	return filepath.Join(binDir, "wcomm-mcp")
}

// rawServer is wcomm-mcp run over pipes, spoken to line by line.
type rawServer struct {
	t       *testing.T
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	replies chan json.RawMessage // each line the server wrote; closed when stdout ends
	stderr  *bytes.Buffer
	nextID  int
}

// startRaw builds wcomm-mcp and starts it with a private root and no tmux in its environment
// (initialize, ping and tools/list need none), then completes the handshake.
func startRaw(t *testing.T) *rawServer {
	t.Helper()
	bin := mcpBin(t)
	root := filepath.Join(t.TempDir(), "root")
	require.NoError(t, os.Mkdir(root, 0o700))
	cmd := exec.Command(bin)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "TMUX" || k == "TMUX_PANE" || strings.HasPrefix(k, "WCOMM_") {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, "WCOMM_ROOT="+root)
	s := &rawServer{t: t, cmd: cmd, replies: make(chan json.RawMessage, 64), stderr: &bytes.Buffer{}}
	cmd.Stderr = &lockedBuffer{b: s.stderr}
	var err error
	s.stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = s.stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	go func() {
		defer close(s.replies)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			s.replies <- json.RawMessage(bytes.Clone(sc.Bytes()))
		}
	}()

	s.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"frames","version":"1"}}}`)
	init := s.until(`"init"`)
	var res struct {
		Result mcp.InitializeResult `json:"result"`
	}
	require.NoError(t, json.Unmarshal(init[len(init)-1], &res), "%s", init[len(init)-1])
	require.Equal(t, "wcomm", res.Result.ServerInfo.Name)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

// send writes one frame and its newline.
func (s *rawServer) send(frame string) {
	s.t.Helper()
	_, err := io.WriteString(s.stdin, frame+"\n")
	require.NoError(s.t, err, "write to the server: it has ended; its stderr:\n%s", s)
}

// until reads replies until the one whose id is wantID (raw JSON) and returns them all, that one
// last. The server ending or going quiet fails the test.
func (s *rawServer) until(wantID string) []json.RawMessage {
	s.t.Helper()
	var got []json.RawMessage
	deadline := time.After(20 * time.Second)
	for {
		select {
		case r, ok := <-s.replies:
			require.True(s.t, ok, "the server ended before answering id %s; it wrote %s; its stderr:\n%s", wantID, got, s)
			got = append(got, r)
			var m struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
			}
			require.NoError(s.t, json.Unmarshal(r, &m), "the server wrote a line that is not JSON: %q", r)
			if string(m.ID) == wantID && m.Result != nil {
				return got
			}
		case <-deadline:
			s.t.Fatalf("no answer to id %s; the server wrote %s; its stderr:\n%s", wantID, got, s)
		}
	}
}

// ping sends a valid request after a bad frame and returns what came before its answer.
func (s *rawServer) ping() []json.RawMessage {
	s.t.Helper()
	s.nextID++
	id := strconv.Itoa(1000 + s.nextID)
	method := "ping"
	if s.nextID%2 == 0 {
		method = "tools/list"
	}
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q}`, id, method))
	got := s.until(id)
	return got[:len(got)-1]
}

func (s *rawServer) String() string {
	w := s.cmd.Stderr.(*lockedBuffer)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// errorReply is a JSON-RPC error response as the test reads it.
type errorReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// oneError asserts that replies hold exactly one error reply, with code and id, and returns it.
func oneError(t *testing.T, replies []json.RawMessage, frame string, code int64, id string) errorReply {
	t.Helper()
	require.Len(t, replies, 1, "frame %q: one error reply before the next request's answer, got %s", frame, replies)
	var e errorReply
	require.NoError(t, json.Unmarshal(replies[0], &e))
	require.NotNil(t, e.Error, "frame %q: %s is not an error reply", frame, replies[0])
	assert.Equal(t, "2.0", e.JSONRPC, "frame %q", frame)
	assert.Equal(t, code, e.Error.Code, "frame %q: %s", frame, replies[0])
	assert.Equal(t, id, string(e.ID), "frame %q: %s", frame, replies[0])
	assert.NotEmpty(t, e.Error.Message, "frame %q", frame)
	// The reply names the member "id" even when it is null, as JSON-RPC 2.0 requires.
	assert.Contains(t, string(replies[0]), `"id":`, "frame %q", frame)
	return e
}

// Each malformed frame gets one error reply (parse error -32700 with id null for what is not
// JSON; invalid request -32600 for JSON that is no valid request, with the request's id where one
// can be told) and the server answers the request after it.
func TestServeAnswersMalformedFrames(t *testing.T) {
	t.Parallel()
	s := startRaw(t)
	tests := []struct {
		name  string
		frame string
		code  int64
		id    string
	}{
		{"garbage line", `garbage`, -32700, "null"},
		{"truncated object", `{"jsonrpc":"2.0","id":5,"method":"ping"`, -32700, "null"},
		{"trailing NUL", "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\x00", -32700, "null"},
		{"two objects on a line", `{"jsonrpc":"2.0","id":10,"method":"ping"}{"jsonrpc":"2.0","id":11,"method":"ping"}`, -32700, "null"},
		{"not UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"p\xffing\"}", -32700, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":6,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"ping"}]`, -32600, "null"},
		{"empty batch", `[]`, -32600, "null"},
		{"number", `42`, -32600, "null"},
		{"null", `null`, -32600, "null"},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, "null"},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600, "null"},
		{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, "null"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, "null"},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, "1.5"},
		{"id past 2^53", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, -32600, "9007199254740993"},
		{"no jsonrpc", `{"id":13,"method":"ping"}`, -32600, "13"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":"a","method":"ping"}`, -32600, `"a"`},
		{"jsonrpc a number", `{"jsonrpc":2.0,"id":14,"method":"ping"}`, -32600, "14"},
		{"method a number", `{"jsonrpc":"2.0","id":15,"method":1}`, -32600, "15"},
		{"method null", `{"jsonrpc":"2.0","id":16,"method":null}`, -32600, "16"},
		{"params a string", `{"jsonrpc":"2.0","id":17,"method":"ping","params":"bar"}`, -32600, "17"},
		{"params an array", `{"jsonrpc":"2.0","id":18,"method":"ping","params":[1]}`, -32600, "18"},
		{"notification with bad params", `{"jsonrpc":"2.0","method":"notifications/initialized","params":3}`, -32600, "null"},
		{"request with a result", `{"jsonrpc":"2.0","id":19,"method":"ping","result":{}}`, -32600, "19"},
		{"duplicate member", `{"jsonrpc":"2.0","id":20,"method":"ping","method":"tools/list"}`, -32600, "null"},
		{"case-folded member", `{"JSONRPC":"2.0","id":21,"method":"ping"}`, -32600, "21"},
		{"empty object", `{}`, -32600, "null"},
		{"id without method", `{"jsonrpc":"2.0","id":22}`, -32600, "null"},
	}
	for _, tt := range tests {
		s.send(tt.frame)
		oneError(t, s.ping(), tt.frame, tt.code, tt.id)
	}

	// What needs no answer gets none, and the next request is still served: blank lines, a
	// notification, and a response to nothing the server asked (the server drops it; answering a
	// response could start two peers answering each other's answers forever).
	for _, frame := range []string{
		``, "   \t", "\r",
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`,
		`{"jsonrpc":"2.0","id":77,"result":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
		`{"jsonrpc":"2.0","id":78,"result":{},"error":{"code":1,"message":"both"}}`,
	} {
		s.send(frame)
		assert.Empty(t, s.ping(), "frame %q needs no answer", frame)
	}
	// A frame ended by CRLF is a frame.
	s.send("{\"jsonrpc\":\"2.0\",\"id\":\"crlf\",\"method\":\"ping\"}\r")
	assert.Len(t, s.until(`"crlf"`), 1)
	assert.Contains(t, s.String(), "refused a frame", "each refusal is logged on stderr")
}

// A frame over 16 MiB is read to its newline and discarded, answered with invalid request (with
// its id, read from its start), and the request after it is served; the server's peak memory stays far below the frame's size.
func TestServeDiscardsOversizedFrame(t *testing.T) {
	t.Parallel()
	s := startRaw(t)
	before := vmHWM(t, s.cmd.Process.Pid)

	const size = 8 * mcp.DefaultMaxLineLength // 128 MiB
	head := `{"jsonrpc":"2.0","id":"big","method":"ping","params":{"x":"`
	chunk := bytes.Repeat([]byte("A"), 1<<20)
	written := 0
	_, err := io.WriteString(s.stdin, head)
	require.NoError(t, err)
	written += len(head)
	for written+len(chunk) < size {
		_, err := s.stdin.Write(chunk)
		require.NoError(t, err, "the server stopped reading; its stderr:\n%s", s)
		written += len(chunk)
	}
	_, err = io.WriteString(s.stdin, `"}}`+"\n")
	require.NoError(t, err)

	e := oneError(t, s.ping(), "128 MiB frame", -32600, `"big"`)
	assert.Contains(t, e.Error.Message, "16 MiB")
	after := vmHWM(t, s.cmd.Process.Pid)
	t.Logf("peak RSS: %d KiB after the handshake, %d KiB after a %d MiB frame", before, after, size>>20)
	// Holding the frame would take at least its size; reading it takes about the limit (16 MiB).
	assert.Less(t, after-before, int64(2*mcp.DefaultMaxLineLength>>10),
		"the server's peak memory grew by %d KiB for a %d MiB frame", after-before, size>>20)

	// A frame just under the limit is still a request.
	pad := strings.Repeat("B", mcp.DefaultMaxLineLength-200)
	s.send(`{"jsonrpc":"2.0","id":"under","method":"ping","params":{"_meta":{"pad":"` + pad + `"}}}`)
	assert.Len(t, s.until(`"under"`), 1)
}

// TestServeAnswersOversizedCallByID: a tools/call over the limit (a 17 MiB send) is answered with
// an error that carries the request's id, whether the client writes the id before the params (as
// the Go SDK does) or after them (as the TypeScript SDK does): the caller that waits for that id
// learns why, where it once waited for ever. The server serves the frames after it.
func TestServeAnswersOversizedCallByID(t *testing.T) {
	t.Parallel()
	s := startRaw(t)
	message := strings.Repeat("m", 17<<20)
	for _, c := range []struct{ name, frame, id string }{
		{"id first", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send","arguments":{"to":"%1","message":"` + message + `"}}}`, "7"},
		{"id last", `{"method":"tools/call","params":{"name":"send","arguments":{"to":"%1","message":"` + message + `"}},"jsonrpc":"2.0","id":"call-8"}`, `"call-8"`},
		{"no id to tell", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"send","arguments":{"to":"%1","message":"` + message + `"}},"x":1}`, "null"},
	} {
		s.send(c.frame)
		e := oneError(t, s.ping(), c.name, -32600, c.id)
		assert.Contains(t, e.Error.Message, "over 16 MiB", c.name)
	}
}

// vmHWM is a process's peak resident set size in KiB, from /proc/PID/status.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err, line)
			return n
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// lockedBuffer is the server's stderr, written by exec's copier while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
