package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/wcomm/wcomm/paneops/timerslack"
	"github.com/wcomm/wcomm/tmuxcomm"
)

func init() {
	register(&command{
		Name: "mcp", Args: "[--log-level debug|info|warn|error]", Role: "admin",
		Summary: "serve the protocol as MCP tools on stdin/stdout, for an agent to launch",
		Help: `Runs an MCP server on stdio: the agent that launches it gets find, panes, send, await,
notify, ask, answer, questions, history, show, inbox, cancel, spawn, stop and help as tools with typed arguments
and structured results (help gives each tool's result schema, which the tool list leaves out to stay
small). It runs as the pane it was started from ($TMUX, $TMUX_PANE), with the same -L/-S, --root,
environment and settings as any other command, and each tool does what the command of the same name
does: a failed call is a tool error with the command's words and exit-code class ({"error", "class",
"exit_code"}), after which the server goes on serving, as it does after a malformed line, which gets
its JSON-RPC error (parse error -32700, invalid request -32600). await is bounded (timeout_seconds,
default 50, at most 600): when it passes the result says "waiting" with the id, to call await again.
stdout carries only the protocol; diagnostics go to stderr. 'wcomm install-mcp' registers it with
Claude Code, Codex and Gemini CLI.`,
		Example: "wcomm mcp\nclaude mcp add wcomm -- wcomm mcp\nwcomm install-mcp --for claude,codex,gemini",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			level := fs.String("log-level", "info", "what the server logs on stderr (debug, info, warn, error)")
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("mcp takes no arguments: an agent launches it and talks to it on stdin and stdout")
				}
				var lv slog.Level
				if err := lv.UnmarshalText([]byte(strings.ToUpper(*level))); err != nil {
					return usagef("--log-level: %q is not debug, info, warn or error", *level)
				}
				log := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: lv}))
				if c.comp.MCP == nil {
					return c.execMCP(*level)
				}
				log.Info("wcomm mcp serving on stdio", "pane", string(c.self()), "root", c.rootDir())
				// A long-lived server keeps a tmux client of its own open for its reads and keys,
				// and hands the pastes to the root's resident client (or starts a client per call
				// when neither answers).
				d := c.newDoor()
				d.Tmux = c.tmux()
				if c.resident() == nil {
					ctl := c.tmux().ControlTyping("")
					defer ctl.Close()
					d.Tmux = ctl.Client()
				}
				return c.comp.MCP(c.ctx, MCPEnv{Door: d, Log: log, Version: reportedVersion(), In: c.stdin, Out: c.stdout})
			}
		},
	})
}

// MCPServe serves MCP on env's streams until the client closes them or ctx ends. wcomm-mcp
// (cmd/wcomm-mcp), the program that links the MCP SDK, passes it to Run (Companions.MCP); wcomm
// has none, and 'wcomm mcp' hands over to wcomm-mcp.
//
// They are two programs because the SDK brings net/http, TLS and a JSON Schema validator, and
// their package initialisation (page faults of a binary twice the size) adds about 1.3 ms to the
// start of every process that links them: 'wcomm version' took 3.3 ms with them and 1.9 ms without
// on the benchmark machine. Every send, await and notify is a fresh process, and a round trip
// starts two of them; only the long-running server needs the SDK.
type MCPServe func(ctx context.Context, env MCPEnv) error

// MCPEnv is what the MCP server takes from the command line that starts it.
type MCPEnv struct {
	// Door is the engine's front door, built from the command line's flags and environment as
	// for any command (its Relay reaches the declared hosts): every tool call builds its engine,
	// and reads the settings, through it.
	Door    *tmuxcomm.Door
	Log     *slog.Logger
	Version string
	In      io.Reader
	Out     io.Writer
}

// execMCP replaces this process with wcomm-mcp, found beside this binary or else on PATH, with
// the same global flags and environment: the agent that launched 'wcomm mcp' keeps talking to the
// same process id on the same stdin and stdout. The server starts with a server's timer slack
// (see paneops/timerslack).
func (c *cli) execMCP(level string) error {
	path, err := findProgram(mcpProgram, "the MCP server")
	if err != nil {
		return err
	}
	argv := []string{path}
	if c.socketName != "" {
		argv = append(argv, "-L", c.socketName)
	}
	if c.socketPath != "" {
		argv = append(argv, "-S", c.socketPath)
	}
	if c.root != "" {
		argv = append(argv, "--root", c.root)
	}
	argv = append(argv, "mcp", "--log-level", level)
	if err := timerslack.Exec(path, argv, os.Environ(), timerslack.Server); err != nil {
		return fmt.Errorf("start %s: %w", path, err)
	}
	return nil // not reached: Exec replaced this process
}
