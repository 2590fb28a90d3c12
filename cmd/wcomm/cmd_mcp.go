package main

import (
	"flag"
	"io"
	"log/slog"
	"strings"

	"github.com/wcomm/wcomm/mcpserver"
)

func init() {
	register(&command{
		Name: "mcp", Args: "[--log-level debug|info|warn|error]", Role: "admin",
		Summary: "serve the protocol as MCP tools on stdin/stdout, for an agent to launch",
		Help: `Runs an MCP server on stdio: the agent that launches it gets find, panes, send, await, notify, ask,
answer, questions, history and show as tools with typed arguments and structured results. It runs
as the pane it was started from ($TMUX, $TMUX_PANE), with the same -L/-S, --root, environment and
settings as any other command, and each tool does what the command of the same name does: a failed
call is a tool error with the command's words and exit-code class ({"error", "class",
"exit_code"}), after which the server goes on serving. await is bounded (timeout_seconds, default
50, at most 600): when it passes the result says "waiting" with the id, to call await again.
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
				cfg := mcpserver.Config{
					Engine:   c.engine,
					Settings: c.settings,
					ExitCode: exitCode,
					Log:      log,
					Version:  version,
				}
				log.Info("wcomm mcp serving on stdio", "pane", string(c.self()), "root", c.rootDir())
				return mcpserver.Serve(c.ctx, cfg, io.NopCloser(c.stdin), nopWriteCloser{c.stdout})
			}
		},
	})
}

// nopWriteCloser lets the server close its output without closing the process's stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
