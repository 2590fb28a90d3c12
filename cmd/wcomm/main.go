// Command wcomm lets agents in tmux panes exchange requests, responses and questions through
// sequenced files and guarded pastes. See README.md for the protocol and the command reference.
package main

import (
	"os"

	"github.com/wcomm/wcomm/internal/cli"
)

func main() { os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
