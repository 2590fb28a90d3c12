package cli

// The companion programs: wcomm-mcp (the MCP server), wcomm-bridge (the answer channels) and
// wcomm-ui (the console) are wcomm with one more part linked in. They are programs of their own
// because what that part brings (the MCP SDK; net/http and TLS; terminal libraries that look at the
// terminal as they load) would add to the start of every send, await and notify. Each program's
// main passes the parts it links to Run in a Companions value; a part wcomm lacks is handed over to
// its program, found beside this binary or else on PATH.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/wcomm/wcomm/internal/launch"
)

// The companion programs' names.
const (
	mcpProgram    = "wcomm-mcp"
	bridgeProgram = "wcomm-bridge"
	uiProgram     = "wcomm-ui"
)

// Companions are the parts of the companion programs that the running program links; wcomm
// passes none.
type Companions struct {
	// MCP serves MCP for 'mcp' (wcomm-mcp); nil: 'mcp' replaces this process with wcomm-mcp.
	MCP MCPServe
	// Bridge runs and checks the answer channels (wcomm-bridge); without it 'bridge' hands over to
	// wcomm-bridge, an ask starts one, and doctor asks one for the channels' checks.
	Bridge Bridge
	// UI runs the console on a terminal (wcomm-ui); nil: 'ui' hands over to wcomm-ui.
	UI UIConsole
}

// Bridge is what wcomm-bridge links: Run runs the channels until ctx ends (or, with IdleExit,
// until nothing is pending); Check checks each channel without posting.
type Bridge struct {
	Run   func(ctx context.Context, env BridgeEnv) error
	Check func(ctx context.Context, env BridgeEnv) ([]ChannelCheck, error)
}

// findProgram returns the path of a companion program: beside this binary, else on PATH.
func findProgram(name, what string) (string, error) { return launch.Find(name, what) }

// companionArgv is a program's command line for a command of this invocation: the command, the
// root and the server, never a token (they stay in the environment or their files).
func (c *cli) companionArgv(path string, args ...string) ([]string, error) {
	root, err := filepath.Abs(c.rootDir())
	if err != nil {
		return nil, err
	}
	argv := append([]string{path, args[0], "--root", root}, c.serverArgs()...)
	return append(argv, args[1:]...), nil
}

// serverArgs names this invocation's tmux server to a program it starts.
func (c *cli) serverArgs() []string {
	if c.socketPath != "" {
		return []string{"-S", c.socketPath}
	} else if c.socketName != "" {
		return []string{"-L", c.socketName}
	}
	return nil
}

// execCompanion replaces this process with a companion program (wcomm-bridge, wcomm-ui) running
// args, with this invocation's root and server.
func (c *cli) execCompanion(name, what string, args ...string) error {
	path, err := findProgram(name, what)
	if err != nil {
		return err
	}
	argv, err := c.companionArgv(path, args...)
	if err != nil {
		return err
	}
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("start %s: %w", path, err)
	}
	return nil // not reached
}
