// Command wcomm-mcp is wcomm with its MCP server: 'wcomm mcp' hands over to it, and run without
// arguments it serves MCP on stdin and stdout. With arguments it runs them as wcomm would. It is a
// program of its own so that wcomm, started for every send, await and notify, does not pay for the
// MCP SDK's packages at each start (see internal/cli/cmd_mcp.go).
package main

import (
	"context"
	"io"
	"os"

	"github.com/wcomm/wcomm/internal/cli"
	"github.com/wcomm/wcomm/mcpserver"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 {
		args = []string{"mcp"}
	}
	os.Exit(cli.Run(cli.Companions{MCP: serve}, args, os.Stdin, os.Stdout, os.Stderr))
}

func serve(ctx context.Context, env cli.MCPEnv) error {
	cfg := mcpserver.Config{Door: env.Door, Log: env.Log, Version: env.Version}
	return mcpserver.Serve(ctx, cfg, io.NopCloser(env.In), nopWriteCloser{env.Out})
}

// nopWriteCloser lets the server close its output without closing the process's stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
