package cli

import (
	"bufio"
	"flag"
	"io"

	"github.com/wcomm/wcomm/messages"
)

// foreignText names the commands whose output carries text other processes wrote: a worker's
// response, a person's answer, a pane's screen, a program's command line. A terminal acts on the
// escape sequences such text can hold (an OSC retitles the window, a CSI clears the screen), so
// those commands print it through messages.SanitizeTerminal, or with --json escaped, unless --raw
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
	c.stderr = termWriter{c.stderr}
	switch {
	case c.raw && !c.json:
	case c.json:
		c.stdout = jsonWriter{c.stdout}
	default:
		c.stdout = termWriter{c.stdout}
	}
}

// buffered returns stdout with a buffer beneath its sanitiser, and the flush to call at the end:
// a listing of thousands of lines is written in large pieces, while the sanitiser still sees each
// of the command's own writes whole (a piece of a buffer could split a character or a sequence).
func (c *cli) buffered() (io.Writer, func() error) {
	wrap := func(w io.Writer) *bufio.Writer { return bufio.NewWriterSize(w, 64<<10) }
	switch w := c.stdout.(type) {
	case termWriter:
		b := wrap(w.w)
		return termWriter{b}, b.Flush
	case jsonWriter:
		b := wrap(w.w)
		return jsonWriter{b}, b.Flush
	default:
		b := wrap(w)
		return b, b.Flush
	}
}

// termWriter writes text through messages.SanitizeTerminal. Each Write is cleaned whole, and a
// cleaned piece holds no ESC or other control byte, so no two pieces can join into a sequence.
type termWriter struct{ w io.Writer }

func (t termWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.w, messages.SanitizeTerminal(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteString cleans s without first copying it into bytes: a response of megabytes is printed
// with one copy at most (none when it holds nothing to clean).
func (t termWriter) WriteString(s string) (int, error) {
	if _, err := io.WriteString(t.w, messages.SanitizeTerminal(s)); err != nil {
		return 0, err
	}
	return len(s), nil
}

// jsonWriter writes encoded JSON through messages.EscapeJSON: the same values, no raw control
// characters. Each Write must be whole JSON text (one encoded value or line), as json.Encoder writes.
type jsonWriter struct{ w io.Writer }

func (j jsonWriter) Write(p []byte) (int, error) {
	if _, err := j.w.Write(messages.EscapeJSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
