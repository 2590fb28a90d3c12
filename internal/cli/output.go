package cli

import (
	"flag"
	"io"

	"github.com/wcomm/wcomm/internal/safeout"
)

// foreignText names the commands whose output carries text other processes wrote: a worker's
// response, a person's answer, a pane's screen, a program's command line. A terminal acts on the
// escape sequences such text can hold (an OSC retitles the window, a CSI clears the screen), so
// those commands print it through safeout's writers (cleaned, or with --json escaped), unless --raw
// asks for the bytes as they are (for a pipeline).
var foreignText = map[string]bool{
	"panes": true, "find": true, "send": true, "await": true, "notify": true, "parse": true,
	"history": true, "show": true, "doctor": true, "inbox": true, "ask": true, "answer": true,
	"questions": true, "watch": true, "actions": true,
}

// outputFlags declares --raw on the commands that print foreign text.
func (c *cli) outputFlags(fs *flag.FlagSet, name string) {
	if foreignText[name] {
		fs.BoolVar(&c.raw, "raw", false, "print others' text as it is, escape sequences and all (for a pipeline, not a terminal)")
	}
}

// guardOutput puts the sanitisers between a command that prints foreign text and the streams:
// stdout is cleaned for a terminal (or, with --json, has the remaining control characters
// escaped), unless --raw; stderr, which only ever carries diagnostics, is always cleaned.
func (c *cli) guardOutput(name string) {
	if !foreignText[name] {
		return
	}
	c.stderr = safeout.Term{W: c.stderr}
	switch {
	case c.raw && !c.json:
	case c.json:
		c.stdout = safeout.JSON{W: c.stdout}
	default:
		c.stdout = safeout.Term{W: c.stdout}
	}
}

// buffered returns stdout with a buffer beneath its sanitiser, and the flush to call at the end.
func (c *cli) buffered() (io.Writer, func() error) { return safeout.Buffered(c.stdout) }
