// Package safeout holds the writers that keep text other processes wrote (a worker's response, a
// person's answer, a pane's screen) from acting on the terminal it is printed to: an OSC retitles
// the window, a CSI clears the screen. Term cleans text through messages.SanitizeTerminal, JSON
// escapes the control characters left in encoded JSON through messages.EscapeJSON. It imports
// only messages.
package safeout

import (
	"bufio"
	"io"

	"github.com/wcomm/wcomm/messages"
)

// Term writes text through messages.SanitizeTerminal. Each Write is cleaned whole, and a cleaned
// piece holds no ESC or other control byte, so no two pieces can join into a sequence.
type Term struct{ W io.Writer }

func (t Term) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.W, messages.SanitizeTerminal(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteString cleans s without first copying it into bytes: a response of megabytes is printed
// with one copy at most (none when it holds nothing to clean).
func (t Term) WriteString(s string) (int, error) {
	if _, err := io.WriteString(t.W, messages.SanitizeTerminal(s)); err != nil {
		return 0, err
	}
	return len(s), nil
}

// JSON writes encoded JSON through messages.EscapeJSON: the same values, no raw control
// characters. Each Write must be whole JSON text (one encoded value or line), as json.Encoder writes.
type JSON struct{ W io.Writer }

func (j JSON) Write(p []byte) (int, error) {
	if _, err := j.W.Write(messages.EscapeJSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Buffered returns w with a buffer beneath its cleaner, and the flush to call at the end: a
// listing of thousands of lines is written in large pieces, while the cleaner still sees each of
// the writer's own writes whole (a piece of a buffer could split a character or a sequence).
func Buffered(w io.Writer) (io.Writer, func() error) {
	wrap := func(w io.Writer) *bufio.Writer { return bufio.NewWriterSize(w, 64<<10) }
	switch w := w.(type) {
	case Term:
		b := wrap(w.W)
		return Term{b}, b.Flush
	case JSON:
		b := wrap(w.W)
		return JSON{b}, b.Flush
	default:
		b := wrap(w)
		return b, b.Flush
	}
}
