package remote

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/wcomm/wcomm/messages"
)

// What the remote end of a call writes is read through bounded writers: a host that prints without
// end (a hostile wcomm, a shell start-up file gone wrong) is refused at the bound, the call is
// ended, and nothing beyond the bound is held.

const (
	// maxReply bounds what a call reads on stdout: the reply line and whatever a login shell's
	// start-up files print before it. A reply without responses (hello, send, panes, find) holds
	// names, paths and a pane listing: a few KiB, 16 MiB for tens of thousands of panes.
	maxReply = 16 << 20
	// maxResponses bounds the bodies of one poll reply; the remote puts no more in one (the rest
	// come at the next poll), and a single response is at most the engine's own file bound.
	maxResponses = 256 << 20
	// maxPollReply is maxResponses as JSON carries bytes (base64, 4 bytes for 3), and room besides.
	maxPollReply = maxResponses/3*4 + maxReply
	// maxStderr bounds what a call reads on stderr: ssh's and the remote shell's messages.
	maxStderr = 1 << 20
)

// errTooMuch is the cause a call is cancelled with when its host wrote past a bound.
var errTooMuch = errors.New("the host wrote past the bound")

// replyWriter takes what the remote writes on stdout and keeps only the last line that may be the
// reply (its first non-blank byte is '{'; see replyLine): other lines are dropped as they come, and
// a later reply-like line drops the one before. Past max bytes in all it fails every write and
// calls over once.
type replyWriter struct {
	max  int64
	n    int64
	over func()
	// line is the reply-like line being read, started that its '{' was seen, skip that the
	// current line is not reply-like; last is the last whole reply-like line.
	line    []byte
	started bool
	skip    bool
	last    []byte
}

func (w *replyWriter) Write(p []byte) (int, error) {
	if w.n+int64(len(p)) > w.max {
		if w.n <= w.max {
			w.n = w.max + 1
			w.line, w.last = nil, nil
			w.over()
		}
		return 0, errTooMuch
	}
	w.n += int64(len(p))
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		seg := p
		if i >= 0 {
			seg = p[:i]
		}
		w.take(seg)
		if i < 0 {
			break
		}
		w.endLine()
		p = p[i+1:]
	}
	return n, nil
}

// take adds a piece of the current line.
func (w *replyWriter) take(seg []byte) {
	if w.skip || len(seg) == 0 {
		return
	}
	if !w.started {
		t := bytes.TrimLeft(seg, " \t\r\v\f")
		if len(t) == 0 {
			return
		}
		if t[0] != '{' {
			w.skip = true
			return
		}
		// A new reply-like line: the one before it is no longer the last.
		w.started, w.line, w.last = true, nil, nil
		seg = t
	}
	w.line = append(w.line, seg...)
}

// endLine ends the current line.
func (w *replyWriter) endLine() {
	if w.started {
		w.last = bytes.TrimSpace(w.line)
	}
	w.line, w.started, w.skip = nil, false, false
}

// reply is the last reply-like line, nil when there was none.
func (w *replyWriter) reply() []byte {
	if w.started {
		w.endLine()
	}
	return w.last
}

// boundedBuffer keeps what is written up to max bytes; past it, it fails every write and calls over
// once. It has no ReadFrom (as an embedded bytes.Buffer would give it), which io.Copy would call
// instead of Write, past the bound.
type boundedBuffer struct {
	buf  bytes.Buffer
	max  int
	over func()
	done bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if b.done || b.buf.Len()+len(p) > b.max {
		if !b.done {
			b.done = true
			b.over()
		}
		return 0, errTooMuch
	}
	return b.buf.Write(p)
}

func (b *boundedBuffer) String() string { return b.buf.String() }

// tooMuch is the error of a call whose host wrote past a bound on stream ("stdout" or "stderr").
func (c *Client) tooMuch(stream string, bound int64, stderr string) error {
	what := "its reply"
	if stream == "stderr" {
		what = "its messages"
	}
	msg := ""
	if s := lastLines(messages.SanitizeField(stderr)); stream == "stdout" && stderr != "" {
		msg = " (" + s + ")"
	}
	return fmt.Errorf("host %s wrote more than %d MiB on %s, more than %s can be: the call was ended and nothing was kept%s; check what runs as hosts.%s.wcomm (%s) and what the host's shell start-up files print",
		c.Host.Name, bound>>20, stream, what, msg, c.Host.Name, messages.SanitizeField(c.Host.Wcomm))
}
