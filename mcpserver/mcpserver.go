// Package mcpserver offers wcomm's protocol to agents as MCP tools over one stream (stdio, as
// agents launch local servers): find, panes, send, await, notify, ask, answer, questions, history,
// show, inbox and help (ToolNames lists them). It owns the tool list, each tool's description and schemas, and the mapping of an
// engine's result or error to a tool result; it owns no protocol step. Every call runs on an engine
// built by the engine's front door (tmuxcomm.Door), as the command line builds its own, so a tool
// and the matching command do the same thing and fail with the same words and exit-code class. A call
// that fails or panics is a tool error and the server goes on; it logs to Config.Log, never to the
// stream, whose output is the protocol.
package mcpserver

import (
	"context"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// Config is what the server needs from the command that starts it.
type Config struct {
	// Door is the engine's front door, built by the command that starts the server from its flags
	// (-L, -S, --root) and environment ($TMUX, $TMUX_PANE, WCOMM_*) exactly as for any command.
	// Every call builds its engine through it, settings file included (read again per call, so an
	// edited file applies to the next call as to the next command; a file that does not load stops
	// the call as it stops a command). Its Relay, when set, takes a send to HOST:TARGET to the
	// declared host, as the command line's does.
	Door *tmuxcomm.Door
	// Log takes the server's diagnostics (nil: discarded). Never stdout: stdout is the protocol.
	Log *slog.Logger
	// Version is reported to the client in the handshake.
	Version string
}

type server struct {
	cfg Config
	log *slog.Logger
}

// logger is cfg's logger, or one that discards.
func (cfg Config) logger() *slog.Logger {
	if cfg.Log == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return cfg.Log
}

// New returns the MCP server with every tool registered.
func New(cfg Config) *mcp.Server {
	s := &server{cfg: cfg, log: cfg.logger()}
	version := cfg.Version
	if version == "" {
		version = "devel"
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "wcomm", Title: "wcomm: requests, responses and questions between agents in tmux panes", Version: version},
		&mcp.ServerOptions{Logger: s.log, Instructions: instructions})
	for _, t := range s.tools() {
		srv.AddTool(t.def, t.handler)
	}
	return srv
}

// engine builds one call's engine through the front door. Settings that do not load stop the call.
func (s *server) engine() (*tmuxcomm.Engine, settings.Values, error) {
	return s.cfg.Door.Engine()
}

// tools is the tool list, in the order clients show it. A tool is one constructor in this list
// and its function in a tools_*.go file; help, last, tells of the others.
func (s *server) tools() []tool {
	list := []tool{
		s.findTool(),
		s.panesTool(),
		s.sendTool(),
		s.awaitTool(),
		s.notifyTool(),
		s.askTool(),
		s.answerTool(),
		s.questionsTool(),
		s.historyTool(),
		s.showTool(),
		s.inboxTool(),
		s.cancelTool(),
		s.spawnTool(),
		s.stopTool(),
	}
	return append(list, s.helpTool(list))
}

// Serve runs the server on in and out (a client's stdio) until the client closes the stream or ctx
// ends. A malformed frame is answered with its JSON-RPC error and the server goes on (transport.go).
func Serve(ctx context.Context, cfg Config, in io.ReadCloser, out io.WriteCloser) error {
	// A server lives on, writing into the same sessions call after call: the files of its next
	// request or response are made while it waits (store.KeepSpares).
	defer store.KeepSpares()()
	// The RESPONSE lines sends held back for an await (AwaitHold) go out before the server ends.
	defer tmuxcomm.EndHolds()
	return New(cfg).Run(ctx, &stdioTransport{in: in, out: out, log: cfg.logger()})
}

// instructions tell the client's model what the tools are for and how they fit together.
const instructions = `wcomm lets agents in tmux panes work together: this server runs as the pane it was started
from. As an orchestrator: find or panes to see who runs where, send a request to a worker's pane,
then await its response (await is bounded: when it returns status "waiting", call await again with
the same id). A pane that is busy gets its messages later, exactly once (state "queued"); inbox
takes what waits for your own pane. As a worker: notify answers the request you were sent; ask puts a question to your
orchestrator and returns its answer. answer and questions handle workers' questions; history and
show read every exchange on disk; help gives the fields of each tool's result. A failed call returns {"error", "class", "exit_code"}: class
usage (fix the arguments), failure, timed_out or not_found (check the pane or id).`
