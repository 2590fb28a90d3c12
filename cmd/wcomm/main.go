// Command wcomm lets agents in tmux panes exchange requests, responses and questions through
// sequenced files and guarded pastes. 'wcomm help' lists the commands and the topics of the
// reference (docs/).
package main

import (
	"os"

	"github.com/wcomm/wcomm/internal/cli"
)

func main() { os.Exit(cli.Main(cli.Companions{}, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
