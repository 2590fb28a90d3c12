package cli

// `wcomm mcp` driven by a real MCP client (the official Go SDK's) over stdio: the built binary as a
// subprocess, running as a pane of a private tmux server, while the worker pane answers with the CLI.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/timerslack"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// syncBuffer collects the server's stderr while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// mcpClient is a client session with `wcomm mcp` running as pane, and the tools' result schemas
// (the help tool gives them), against which every structured result is checked.
type mcpClient struct {
	t       *testing.T
	cs      *mcp.ClientSession
	stderr  *syncBuffer
	outputs map[string]*jsonschema.Resolved
}

func (w *world) mcpClient(pane string, env ...string) *mcpClient {
	w.t.Helper()
	cmd := exec.Command(w.bin, "mcp")
	cmd.Env = append(append(cleanEnv(), "WCOMM_ROOT="+w.root, "WCOMM_ENTER_DELAY=50ms",
		fmt.Sprintf("TMUX=%s,%d,0", w.sock, w.pid), "TMUX_PANE="+pane), env...)
	cmd.Dir = w.work
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "wcomm-e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(w.t, err, "connect to wcomm mcp; its stderr:\n%s", stderr)
	w.t.Cleanup(func() { _ = cs.Close() })
	return &mcpClient{t: w.t, cs: cs, stderr: stderr, outputs: map[string]*jsonschema.Resolved{}}
}

// call calls a tool and checks its structured content against the tool's output schema.
func (c *mcpClient) call(name string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(c.t, err, "call %s: a protocol error, not a tool result; server stderr:\n%s", name, c.stderr)
	require.NotNil(c.t, res.StructuredContent, "call %s: no structured content", name)
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(c.t, err)
	var v any
	require.NoError(c.t, json.Unmarshal(data, &v))
	if schema, ok := c.outputs[name]; ok {
		require.NoError(c.t, schema.Validate(v), "call %s: structured content %s does not match the result schema", name, data)
	}
	require.NotEmpty(c.t, res.Content, "call %s: no text content", name)
	m, _ := v.(map[string]any)
	return res, m
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestE2EMCP(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.catPane()
	worker := w.catPane()
	c := w.mcpClient(orch)

	// The handshake: the server names itself and offers tools.
	init := c.cs.InitializeResult()
	require.NotNil(t, init)
	assert.Equal(t, "wcomm", init.ServerInfo.Name)
	require.NotNil(t, init.Capabilities.Tools, "the server offers tools")
	assert.Contains(t, init.Instructions, "await")

	// The tool list: every tool with a description and an object schema for its input; the help
	// tool gives the schemas of their results.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := c.cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		assert.GreaterOrEqual(t, len(tl.Description), 80, "tool %s needs a description an agent can act on", tl.Name)
		in := schemaOf(t, tl.InputSchema)
		assert.Equal(t, "object", in.Type, "tool %s input schema", tl.Name)
		_, err := in.Resolve(nil)
		require.NoError(t, err, "tool %s input schema", tl.Name)
	}
	assert.ElementsMatch(t, []string{"find", "panes", "send", "await", "notify", "ask", "answer", "questions", "history", "show", "inbox", "cancel", "help", "spawn", "stop"}, names)
	_, helped := c.call("help", nil)
	tools, _ := helped["tools"].([]any)
	require.Len(t, tools, len(names)-1, "help tells of every other tool")
	for _, th := range tools {
		m, _ := th.(map[string]any)
		out := schemaOf(t, m["result_schema"])
		assert.Equal(t, "object", out.Type, "tool %s result schema", m["name"])
		resolved, err := out.Resolve(nil)
		require.NoError(t, err, "tool %s result schema", m["name"])
		c.outputs[m["name"].(string)] = resolved
	}
	var send *mcp.Tool
	for _, tl := range list.Tools {
		if tl.Name == "send" {
			send = tl
		}
	}
	require.NotNil(t, send)
	sendIn := schemaOf(t, send.InputSchema)
	assert.ElementsMatch(t, []string{"message"}, sendIn.Required, "to, targets or all: one of them names the workers")
	assert.Contains(t, sendIn.Properties, "capability")

	// find: the worker by its program; this server's own pane never matches.
	res, out := c.call("find", map[string]any{"agent": "cat"})
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, worker, out["pane_id"])

	// send through MCP: the request is delivered into the worker's pane.
	res, out = c.call("send", map[string]any{"to": worker, "message": "count the files"})
	require.False(t, res.IsError, "%s", text(res))
	id, _ := out["id"].(string)
	require.NotEmpty(t, id)
	assert.Equal(t, orch, out["orchestrator"])
	assert.Equal(t, worker, out["worker"])
	assert.Equal(t, "submitted", out["state"])
	w.waitScreen(worker, id)
	lock := awaitLockOf(t, out["request_path"].(string))

	// await bounded: no answer yet is a normal result saying "waiting", with the id.
	res, out = c.call("await", map[string]any{"id": id, "timeout_seconds": 0.3})
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, "waiting", out["status"])
	assert.Equal(t, id, out["id"])
	assert.Contains(t, text(res), "call await again")

	// await again while the worker answers with the CLI: the await wakes on the response.
	type called struct {
		res *mcp.CallToolResult
		out map[string]any
	}
	done := make(chan called, 1)
	go func() {
		r, o := c.call("await", map[string]any{"id": id, "timeout_seconds": 30})
		done <- called{r, o}
	}()
	waitFor(t, 10*time.Second, func() bool { return flocked(lock) }, "the MCP await to wait on %s", id)
	r := w.in(worker, "notify", "--id", id, "--enter-delay", "50ms", "Seven files.")
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "no line pasted", "the waiting MCP await was the signal")
	var got called
	select {
	case got = <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("the MCP await did not return after notify; server stderr:\n%s", c.stderr)
	}
	require.False(t, got.res.IsError, "%s", text(got.res))
	assert.Equal(t, "answered", got.out["status"])
	assert.Equal(t, "Seven files.", strings.TrimSpace(got.out["response"].(string)))
	assert.True(t, strings.HasPrefix(text(got.res), "Seven files."), "the text starts with the response: %q", text(got.res))

	// The await's result is about the size of the answer: the response (in the text and the
	// structured content) and what names it, not the request's body and delivery log beside it.
	res, out = c.call("send", map[string]any{"to": worker, "message": strings.Repeat("q", 1024)})
	require.False(t, res.IsError, "%s", text(res))
	big, _ := out["id"].(string)
	w.waitScreen(worker, big)
	lock = awaitLockOf(t, out["request_path"].(string))
	go func() {
		r, o := c.call("await", map[string]any{"id": big, "timeout_seconds": 30})
		done <- called{r, o}
	}()
	waitFor(t, 10*time.Second, func() bool { return flocked(lock) }, "the MCP await to wait on %s", big)
	requireCode(t, 0, w.in(worker, "notify", "--id", big, strings.Repeat("r", 1024)))
	select {
	case got = <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("the MCP await did not return after notify; server stderr:\n%s", c.stderr)
	}
	res, out = got.res, got.out
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, "answered", out["status"])
	assert.Equal(t, worker, out["worker"])
	assert.Equal(t, strings.Repeat("r", 1024), strings.TrimSpace(out["response"].(string)))
	assert.NotEmpty(t, out["response_path"])
	raw, err := json.Marshal(res)
	require.NoError(t, err)
	assert.Less(t, len(raw), 3*1024, "the result of a 1 KiB answer: %s", raw)

	// An unknown pane: a tool error with the CLI's words and exit-code class...
	res, out = c.call("send", map[string]any{"to": "%999", "message": "anyone there?"})
	require.True(t, res.IsError, "%s", text(res))
	assert.Equal(t, "not_found", out["class"])
	assert.Equal(t, float64(exitNotFound), out["exit_code"])
	cli := w.in(orch, "send", "--to", "%999", "anyone there?")
	requireCode(t, exitNotFound, cli)
	assert.Equal(t, "wcomm send: "+out["error"].(string)+"\n", cli.stderr, "the same words as the command line")

	// ...and a bad argument is a usage error; after both the server keeps serving.
	res, out = c.call("await", map[string]any{"id": id, "timeout_seconds": 3600})
	require.True(t, res.IsError)
	assert.Equal(t, "usage", out["class"])
	assert.Equal(t, float64(exitUsage), out["exit_code"])
	res, out = c.call("show", map[string]any{"ref": id})
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, "answered", out["status"])
	res, out = c.call("history", map[string]any{})
	require.False(t, res.IsError, "%s", text(res))
	assert.Len(t, out["sessions"], 1)
	// cancel: an answered request is not withdrawn, an unknown one is not found.
	res, out = c.call("cancel", map[string]any{"ref": id})
	require.True(t, res.IsError, "%s", text(res))
	assert.Equal(t, "failure", out["class"])
	res, out = c.call("cancel", map[string]any{"ref": "20200101-000000-dead"})
	require.True(t, res.IsError, "%s", text(res))
	assert.Equal(t, "not_found", out["class"])

	// inbox: a RESPONSE line that waits because the orchestrator's pane is in copy mode is taken
	// through MCP, and then never typed into the pane. The send held the line back for an await
	// (AwaitHold); with none come, it is posted, and queued.
	res, out = c.call("send", map[string]any{"to": worker, "message": "one more"})
	require.False(t, res.IsError, "%s", text(res))
	second := out["id"].(string)
	w.tmux("copy-mode", "-t", orch)
	r = w.in(worker, "notify", "--id", second, "Done.")
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "held the response for the await")
	waitFor(t, 20*time.Second, func() bool { return slices.Contains(w.exchangeEvents(second), "notify-queued") }, "the held line of %s to be queued", second)
	res, out = c.call("inbox", map[string]any{})
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, float64(1), out["taken"])
	items := out["items"].([]any)
	require.Len(t, items, 1)
	assert.Contains(t, items[0].(map[string]any)["text"], "[RESPONSE ")
	w.tmux("send-keys", "-t", orch, "-X", "cancel")
	waitNoDeliverer(t, w.root)
	assert.NotContains(t, w.capture(orch), "[RESPONSE ", "taken through MCP: never typed in")

	// The log went to stderr; stdout carried only the protocol, or the client would have failed.
	assert.Contains(t, c.stderr.String(), "wcomm mcp serving on stdio")
}

// schemaOf reads a tool's schema as the client received it.
func schemaOf(t *testing.T, v any) *jsonschema.Schema {
	t.Helper()
	require.NotNil(t, v)
	data, err := json.Marshal(v)
	require.NoError(t, err)
	var s jsonschema.Schema
	require.NoError(t, json.Unmarshal(data, &s))
	return &s
}

// TestE2EMCPPrograms: wcomm-mcp alone is the server; wcomm without wcomm-mcp says what to install;
// wcomm itself does not link the MCP SDK, which is why the two are apart.
func TestE2EMCPPrograms(t *testing.T) {
	bin := wcommBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	t.Run("wcomm-mcp without arguments serves MCP", func(t *testing.T) {
		cmd := exec.Command(filepath.Join(filepath.Dir(bin), mcpProgram))
		cmd.Env = append(cleanEnv(), "WCOMM_ROOT="+t.TempDir())
		client := mcp.NewClient(&mcp.Implementation{Name: "wcomm-e2e", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		require.NoError(t, err)
		defer cs.Close()
		tools, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		var names []string
		for _, tl := range tools.Tools {
			names = append(names, tl.Name)
		}
		assert.Contains(t, names, "send")
		assert.Contains(t, names, "inbox")
	})

	// The server, the runtime's monitor thread among its threads, sleeps with a server's timer
	// slack, whether 'wcomm mcp' started it or it was started alone.
	for _, start := range [][]string{{bin, "mcp"}, {filepath.Join(filepath.Dir(bin), mcpProgram)}} {
		t.Run("timer slack of "+filepath.Base(start[0]), func(t *testing.T) {
			cmd := exec.Command(start[0], start[1:]...)
			cmd.Env = append(cleanEnv(), "WCOMM_ROOT="+t.TempDir())
			client := mcp.NewClient(&mcp.Implementation{Name: "wcomm-e2e", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			require.NoError(t, err)
			defer cs.Close()
			_, err = cs.ListTools(ctx, nil)
			require.NoError(t, err)
			assert.Equal(t, serverSlack, timerSlack(t, cmd.Process.Pid))
		})
	}

	t.Run("wcomm mcp without wcomm-mcp beside it or on PATH", func(t *testing.T) {
		alone := filepath.Join(t.TempDir(), "wcomm")
		data, err := os.ReadFile(bin)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(alone, data, 0o755))
		cmd := exec.Command(alone, "mcp")
		cmd.Env = append(cleanEnv(), "PATH=/usr/bin:/bin")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, exitFailure, ee.ExitCode())
		assert.Empty(t, stdout.String(), "stdout is the protocol's: nothing else goes there")
		assert.Contains(t, stderr.String(), "wcomm-mcp")
		assert.Contains(t, stderr.String(), "go install github.com/wcomm/wcomm/cmd/...")

		// install-mcp still writes the entries, and warns that they wait for wcomm-mcp.
		dir := t.TempDir()
		cmd = exec.Command(alone, "install-mcp", "--dir", dir, "--for", "gemini")
		cmd.Env = append(cleanEnv(), "PATH=/usr/bin:/bin")
		stdout.Reset()
		stderr.Reset()
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "%s", &stderr)
		assert.Contains(t, stdout.String(), "created")
		assert.Contains(t, stderr.String(), "warning: 'wcomm mcp' will fail until then")
		assert.FileExists(t, filepath.Join(dir, ".gemini", "settings.json"))
	})

	t.Run("wcomm links no MCP SDK, no net/http and no terminal UI library", func(t *testing.T) {
		out, err := exec.Command("go", "list", "-deps", wcommPkg).Output()
		require.NoError(t, err)
		deps := strings.Fields(string(out))
		assert.NotContains(t, deps, "net/http")
		assert.NotContains(t, deps, "github.com/modelcontextprotocol/go-sdk/mcp")
		// Lip Gloss runs 'tmux info' when its package loads: only wcomm-ui links it.
		assert.NotContains(t, deps, "charm.land/lipgloss/v2")
		assert.NotContains(t, deps, "charm.land/bubbletea/v2")
		out, err = exec.Command("go", "list", "-deps", wcommUIPkg).Output()
		require.NoError(t, err)
		assert.Contains(t, strings.Fields(string(out)), "charm.land/bubbletea/v2")
		out, err = exec.Command("go", "list", "-deps", wcommMCPPkg).Output()
		require.NoError(t, err)
		assert.Contains(t, strings.Fields(string(out)), "github.com/modelcontextprotocol/go-sdk/mcp")
	})
}

// TestE2EMCPNotify: the notify tool, in the worker's own server, saves the response and says how
// the orchestrator learns of it, in a result about the size of what a worker needs: not the whole
// exchange (the request's summary, its delivery log), which show returns.
func TestE2EMCPNotify(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.catPane()
	worker := w.catPane()
	s := w.send(orch, worker, strings.Repeat("q", 1024))
	c := w.mcpClient(worker)

	res, out := c.call("notify", map[string]any{"response": s.Response, "message": strings.Repeat("r", 1024)})
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, s.ID, out["id"])
	assert.Equal(t, "answered", out["status"])
	assert.Equal(t, orch, out["orchestrator"])
	assert.Equal(t, s.Response, out["response_path"])
	assert.Equal(t, "pasted", out["signal"], "%s", text(res))
	assert.NotContains(t, out, "exchange", "the whole exchange is show's")
	assert.Contains(t, text(res), "response saved at "+s.Response)
	data, err := os.ReadFile(s.Response)
	require.NoError(t, err)
	assert.Contains(t, string(data), strings.Repeat("r", 1024))
	raw, err := json.Marshal(res)
	require.NoError(t, err)
	assert.Less(t, len(raw), 2*1024, "the result of a notify: %s", raw)

	// The first response stands: a second notify is a failure, and says so.
	res, out = c.call("notify", map[string]any{"response": s.Response, "message": "again"})
	require.True(t, res.IsError, "%s", text(res))
	assert.Equal(t, "failure", out["class"])
}

// awaitLockOf is the await lock of the request at path.
func awaitLockOf(t *testing.T, path string) string {
	t.Helper()
	n, kind, ok := messages.ParseSeqFileName(filepath.Base(path))
	require.True(t, ok, "%s is a request's file", path)
	require.Equal(t, messages.KindRequest, kind)
	return awaitLockIn(filepath.Dir(path), n)
}

// TestE2EMCPSendResult: the send tool's result is what an orchestrator needs of its request (the
// id to await, the worker, how far delivery went, the files), about the size of those and not of
// the whole exchange with its delivery log, which show returns; a queued request says why.
func TestE2EMCPSendResult(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.catPane()
	worker := w.catPane()
	c := w.mcpClient(orch)

	res, out := c.call("send", map[string]any{"to": worker, "message": strings.Repeat("q", 1024)})
	require.False(t, res.IsError, "%s", text(res))
	id, _ := out["id"].(string)
	require.NotEmpty(t, id)
	assert.Equal(t, worker, out["worker"])
	assert.Equal(t, orch, out["orchestrator"])
	assert.Equal(t, "submitted", out["state"])
	assert.Equal(t, string(tmuxcomm.DefaultCapability), out["capability"])
	reqPath, _ := out["request_path"].(string)
	data, err := os.ReadFile(reqPath)
	require.NoError(t, err, "request_path names the request")
	assert.Contains(t, string(data), "id="+id)
	respPath, _ := out["response_path"].(string)
	assert.Equal(t, filepath.Dir(reqPath), filepath.Dir(respPath))
	for _, k := range []string{"events", "summary", "dir", "session", "seq", "sent_at", "started_at", "evidence"} {
		assert.NotContains(t, out, k, "the whole exchange is show's")
	}
	assert.Contains(t, text(res), "call await with id \""+id+"\"")
	raw, err := json.Marshal(res)
	require.NoError(t, err)
	assert.Less(t, len(raw), 1536, "the result of a 1 KiB request: %s", raw)
	w.waitScreen(worker, id)

	// A pane not ready: the request is queued and the result says why.
	w.tmux("copy-mode", "-t", worker)
	res, out = c.call("send", map[string]any{"to": worker, "message": "wait for me"})
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, "queued", out["state"])
	assert.NotEmpty(t, out["reason"], "%v", out)
	w.tmux("send-keys", "-t", worker, "-X", "cancel")
	w.waitScreen(worker, out["id"].(string))
}

// tempFilesIn lists the temp files in dir.
func tempFilesIn(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), store.TempPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestE2EMCPSparesLeaveNothing: a server that sends into a session keeps the files of its next
// request and log made ahead there (hidden temp files, which no listing shows), and removes
// them when its client closes it.
func TestE2EMCPSparesLeaveNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.catPane()
	worker := w.catPane()
	c := w.mcpClient(orch)
	var dir string
	for i := range 2 {
		res, out := c.call("send", map[string]any{"to": worker, "message": fmt.Sprintf("spares %d", i)})
		require.False(t, res.IsError, "%s", text(res))
		dir = filepath.Dir(out["request_path"].(string))
		w.waitScreen(worker, out["id"].(string))
	}
	waitFor(t, 10*time.Second, func() bool { return len(tempFilesIn(t, dir)) > 0 }, "the spares made ahead")
	r := w.in(orch, "history", "--json")
	require.Equal(t, 0, r.code, r.String())
	assert.NotContains(t, r.stdout, store.TempPrefix, "no listing shows a spare")

	require.NoError(t, c.cs.Close())
	waitFor(t, 10*time.Second, func() bool { return len(tempFilesIn(t, dir)) == 0 }, "the spares removed as the server ends")
}

// TestE2EMCPSendHoldsResponseForAwait: a send through MCP keeps the RESPONSE line back for the
// await its client calls next (mcpserver.AwaitHold). A worker that answers before that await
// types nothing into the orchestrator's pane, and the await returns the response; a client that
// never awaits gets the line once the hold ends, once; so does one whose server ends first.
func TestE2EMCPSendHoldsResponseForAwait(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.catPane()
	worker := w.catPane()
	c := w.mcpClient(orch)
	sendAndAnswer := func(msg string) (id, resp string) {
		t.Helper()
		res, out := c.call("send", map[string]any{"to": worker, "message": msg})
		require.False(t, res.IsError, "%s", text(res))
		id, _ = out["id"].(string)
		resp, _ = out["response_path"].(string)
		w.waitScreen(worker, id)
		r := w.in(worker, "notify", "--json", "--response", resp, "--", "answer to "+msg)
		requireCode(t, 0, r)
		var n map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &n), "%s", r.stdout)
		assert.Equal(t, "await", n["signal"], "the send's hold stands for the await: %s", r.stdout)
		return id, resp
	}

	// Answered before the await: the await has it, and no line is typed.
	id1, resp1 := sendAndAnswer("one")
	res, out := c.call("await", map[string]any{"id": id1, "timeout_seconds": 30})
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, "answered", out["status"])
	assert.Contains(t, out["response"], "answer to one")

	// Never awaited: the line comes once the hold ends, after the notify said await-woken.
	id2, resp2 := sendAndAnswer("two")
	w.waitScreen(orch, resp2)
	waitFor(t, 30*time.Second, func() bool { return slices.Contains(w.exchangeEvents(id2), "notified") }, "the held line of %s", id2)
	assert.Equal(t, []string{"written", "pasted", "submitted", "answered", "await-woken", "notified"}, w.exchangeEvents(id2))

	// The server ends while it holds one: the line goes out before it does.
	id3, resp3 := sendAndAnswer("three")
	require.NoError(t, c.cs.Close())
	w.waitScreen(orch, resp3)
	waitFor(t, 30*time.Second, func() bool { return slices.Contains(w.exchangeEvents(id3), "notified") }, "the held line of %s", id3)

	// cat's pane shows a line typed once twice: the terminal's echo, and cat's copy.
	screen := w.capture(orch)
	assert.NotContains(t, screen, resp1, "the awaited response's line was never typed")
	assert.Equal(t, 2, strings.Count(screen, resp2), "one line for the second:\n%s", screen)
	assert.Equal(t, 2, strings.Count(screen, resp3), "one line for the third:\n%s", screen)
	assert.Equal(t, []string{"written", "pasted", "submitted", "answered", "await-woken", "notified"}, w.exchangeEvents(id3))
	assert.Equal(t, []string{"written", "pasted", "submitted", "answered", "await-woken", "read"}, w.exchangeEvents(id1))
}

// serverSlack is a server's timer slack (timerslack.Server) as proc(5) shows it.
var serverSlack = strconv.FormatInt(timerslack.Server.Nanoseconds(), 10)

// timerSlack is the timer slack of process pid's first thread (proc(5) shows no other's: every
// thread the runtime makes after it starts with its slack).
func timerSlack(t *testing.T, pid int) string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/timerslack_ns", pid))
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EPERM) {
		if os.Getenv("REQUIRE_TMUX") != "" {
			t.Fatal("reading another process's timer slack takes CAP_SYS_NICE, which CI's run as root has")
		}
		t.Skip("reading another process's timer slack takes CAP_SYS_NICE")
	}
	require.NoError(t, err)
	return strings.TrimSpace(string(data))
}
