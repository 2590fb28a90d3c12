package cli

// The MCP server as a client meets it, against the real binaries: malformed frames answered with an
// error while it goes on serving, and the version the build was given.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestE2EMCPBadFrames: the MCP server answers every malformed line with a JSON-RPC error and
// goes on serving: a garbage line, a truncated object, a batch, an object as id, a message
// without "jsonrpc", a trailing NUL, a frame over 16 MiB. Before, each one ended the server
// without a reply.
func TestE2EMCPBadFrames(t *testing.T) {
	t.Parallel()
	var stdin io.WriteCloser
	_, stdout, stderr := rawMCP(t, func(cmd *exec.Cmd) {
		var err error
		stdin, err = cmd.StdinPipe()
		require.NoError(t, err)
	})
	lines := bufio.NewReaderSize(stdout, 1<<20)
	type reply struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	roundTrip := func(frame []byte) reply {
		t.Helper()
		_, err := stdin.Write(append(frame, '\n'))
		require.NoError(t, err, "the server is gone; its stderr:\n%s", stderr)
		got := make(chan []byte, 1)
		go func() { line, _ := lines.ReadBytes('\n'); got <- line }()
		select {
		case line := <-got:
			var r reply
			require.NoError(t, json.Unmarshal(line, &r), "%q; stderr:\n%s", line, stderr)
			return r
		case <-time.After(30 * time.Second):
			t.Fatalf("no reply to %.60q; stderr:\n%s", frame, stderr)
			return reply{}
		}
	}
	r := roundTrip([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"audit","version":"1"}}}`))
	require.Nil(t, r.Error)
	_, err := stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	require.NoError(t, err)

	big := append(append([]byte(`{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"pad":"`), bytes.Repeat([]byte("a"), 17<<20)...), `"}}`...)
	for _, tt := range []struct {
		name  string
		frame []byte
		code  int
		id    string
	}{
		{"garbage", []byte("garbage"), -32700, "null"},
		{"truncated object", []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"`), -32700, "null"},
		{"batch", []byte(`[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`), -32600, "null"},
		{"object id", []byte(`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`), -32600, "null"},
		{"no jsonrpc", []byte(`{"id":5,"method":"tools/list"}`), -32600, "5"},
		{"trailing NUL", []byte("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\"}\x00"), -32700, "null"},
		{"over 16 MiB", big, -32600, "8"}, // its id, read from its start
	} {
		r := roundTrip(tt.frame)
		require.NotNil(t, r.Error, "%s: an error reply", tt.name)
		assert.Equal(t, tt.code, r.Error.Code, tt.name)
		assert.Equal(t, tt.id, string(r.ID), tt.name)
		// And it goes on serving.
		r = roundTrip([]byte(`{"jsonrpc":"2.0","id":"after","method":"tools/list"}`))
		require.Nil(t, r.Error, "after %s", tt.name)
		assert.Contains(t, string(r.Result), `"tools"`, "after %s", tt.name)
	}
}

// TestKitMCPVersionE2E: the MCP server tells its client the version the build was given, as
// 'wcomm version' prints it, not "devel".
func TestKitMCPVersionE2E(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	build := exec.Command("go", "build", "-ldflags", "-X github.com/wcomm/wcomm/internal/buildinfo.version=v9.8.7 -X github.com/wcomm/wcomm/internal/buildinfo.commit=feedc0de",
		"-o", dir+string(filepath.Separator), wcommPkg, wcommMCPPkg)
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	cmd := exec.Command(filepath.Join(dir, "wcomm"), "mcp")
	cmd.Env = append(cleanEnv(), "WCOMM_ROOT="+filepath.Join(t.TempDir(), "root"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "wcomm-e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()
	assert.Equal(t, "v9.8.7", cs.InitializeResult().ServerInfo.Version)
}

// TestE2EMCPStdinWaitsParked: a server whose stdin is a pipe waits for the next message in the
// runtime's poller, with no thread blocked in read(2) on its stdin, and gives the pipe back its
// blocking mode when it ends (whoever else holds the pipe's end reads it as before).
func TestE2EMCPStdinWaitsParked(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	cmd, stdout, stderr := rawMCP(t, func(cmd *exec.Cmd) { cmd.Stdin = r })
	lines := bufio.NewReader(stdout)
	_, err = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"audit","version":"1"}}}` + "\n"))
	require.NoError(t, err)
	got := make(chan []byte, 1)
	go func() { line, _ := lines.ReadBytes('\n'); got <- line }()
	select {
	case line := <-got:
		require.Contains(t, string(line), `"result"`, "stderr:\n%s", stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("no reply to initialize; stderr:\n%s", stderr)
	}

	// The server waits for the next line: sampled for a while, none of its threads is in read(2)
	// on descriptor 0 (its task's syscall file starts with the call's number and that argument).
	want := fmt.Sprintf("%d 0x0 ", unix.SYS_READ)
	inRead, looked := 0, 0
	for range 100 {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", cmd.Process.Pid))
		require.NoError(t, err, "the server ended; stderr:\n%s", stderr)
		for _, task := range tasks {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/syscall", cmd.Process.Pid, task.Name()))
			if err != nil {
				continue // a thread that ended meanwhile
			}
			looked++
			if strings.HasPrefix(string(b), want) {
				inRead++
			}
		}
		time.Sleep(2 * time.Millisecond) // the sampling's pace; nothing is waited for
	}
	require.NotZero(t, looked, "no thread's syscall file could be read")
	assert.Zero(t, inRead, "samples of a thread blocked in read(2) on the server's stdin")

	require.NoError(t, w.Close())
	require.NoError(t, cmd.Wait(), "the server ends at the end of its input; stderr:\n%s", stderr)
	// Read through the raw descriptor: Fd would itself set the blocking mode.
	rc, err := r.SyscallConn()
	require.NoError(t, err)
	var flags int
	require.NoError(t, rc.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) }))
	require.NoError(t, err)
	assert.Zero(t, flags&unix.O_NONBLOCK, "the pipe is left in blocking mode")
}

// rawMCP starts the real `wcomm mcp` in a root of its own, its stdin set by stdin, for a test that
// speaks JSON-RPC to it line by line; it is killed at the end of the test.
func rawMCP(t *testing.T, stdin func(*exec.Cmd)) (*exec.Cmd, io.Reader, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(wcommBin(t), "mcp")
	cmd.Env = append(cleanEnv(), "WCOMM_ROOT="+filepath.Join(t.TempDir(), "root"))
	stdin(cmd)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, stdout, stderr
}
