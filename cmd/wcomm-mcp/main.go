// Command wcomm-mcp is wcomm with its MCP server: 'wcomm mcp' hands over to it, and run without
// arguments it serves MCP on stdin and stdout. With arguments it runs them as wcomm would. It is a
// program of its own so that wcomm, started for every send, await and notify, does not pay for the
// MCP SDK's packages at each start (see internal/cli/cmd_mcp.go).
package main

import (
	"context"
	"io"
	"os"
	"runtime"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/wcomm/wcomm/internal/cli"
	"github.com/wcomm/wcomm/mcpserver"
	"github.com/wcomm/wcomm/paneops/timerslack"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 {
		args = []string{"mcp"}
	}
	if slices.Contains(args, "mcp") && !timerslack.Has(timerslack.Server) && os.Getenv(noSlackExec) == "" {
		// Started by something other than 'wcomm mcp', which sets it: once more, with the
		// slack a server runs with, before anything is read or opened. Marked, so a slack the
		// kernel does not keep never makes a loop.
		if self, err := os.Executable(); err == nil {
			_ = timerslack.Exec(self, os.Args, append(os.Environ(), noSlackExec+"=1"), timerslack.Server)
		}
	}
	os.Exit(cli.Main(cli.Companions{MCP: serve}, args, os.Stdin, os.Stdout, os.Stderr))
}

func serve(ctx context.Context, env cli.MCPEnv) error {
	// The collector paces itself on the live heap, which for a server between calls is a few
	// MB: it ran every few round trips, for about a tenth of the server's CPU (measured). A
	// pointer-free block counts as live but costs no marking and, never written, no memory of
	// its own: collections come a few times less often, for about 6 MB more resident memory
	// (the garbage between them), and a heap of any size at most 2 x gcBallastSize more before
	// one. GOGC set in the environment is left to rule.
	if os.Getenv("GOGC") == "" {
		ballast := make([]byte, gcBallastSize)
		defer func() { runtime.KeepAlive(ballast) }() // alive while the server serves
	}
	if os.Getenv("GOMAXPROCS") == "" {
		// One processor for the server's goroutines. A server answers one agent, whose calls are
		// mostly file and socket work that waits: a second processor bought no speed, only
		// hand-offs between threads (a round trip's futex wake-ups in the worker's server 14 ->
		// 10, the orchestrator's epoll waits 29 -> 12), for about 5-8 % more of the two servers'
		// CPU per trip, one pair or eight (measured). A call blocked in a system call still
		// lets the others run: the runtime hands its processor on. GOMAXPROCS set in the
		// environment is left to rule.
		runtime.GOMAXPROCS(1)
	}
	in, restore := pollableStdin(env.In)
	defer restore()
	cfg := mcpserver.Config{Door: env.Door, Log: env.Log, Version: env.Version}
	return mcpserver.Serve(ctx, cfg, io.NopCloser(in), nopWriteCloser{env.Out})
}

// pollableStdin is in, when it is this process's stdin and a pipe or a socket (as an agent
// starts its MCP servers), as a file the runtime's poller waits on. A read blocked in the kernel
// leaves its thread in a system call the runtime must take its processor back from, at every
// message, and keeps the runtime's monitor waking; parked in the poller it costs neither. A
// terminal or a file is left as it is: their blocking mode is shared with whoever else holds
// them (a shell reads its terminal again after the server ends). restore gives the descriptor
// back its blocking mode.
func pollableStdin(in io.Reader) (io.Reader, func()) {
	none := func() {}
	if in != io.Reader(os.Stdin) {
		return in, none
	}
	var st unix.Stat_t
	if err := unix.Fstat(0, &st); err != nil {
		return in, none
	}
	if kind := st.Mode & unix.S_IFMT; kind != unix.S_IFIFO && kind != unix.S_IFSOCK {
		return in, none
	}
	if err := unix.SetNonblock(0, true); err != nil {
		return in, none
	}
	f := os.NewFile(0, "/dev/stdin")
	return f, func() {
		_ = unix.SetNonblock(0, false)
		runtime.KeepAlive(f) // its finalizer would close descriptor 0
	}
}

// noSlackExec marks a wcomm-mcp started again by itself to take a server's timer slack.
const noSlackExec = "WCOMM_MCP_SLACK_EXEC"

// gcBallastSize is the block serve counts as live for the collector's pacing.
const gcBallastSize = 8 << 20

// nopWriteCloser lets the server close its output without closing the process's stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
