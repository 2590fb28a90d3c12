package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stdio transport: newline-delimited JSON-RPC frames, as MCP's stdio transport defines them.
// It replaces the SDK's IOTransport, whose reader ends the session, unanswered, on the first frame
// it cannot use (a line that is not JSON, a batch, an id of the wrong type, a frame over its limit):
// one bad line from a client would take every tool away from the agent. Here each frame is read
// with a bounded reader and checked (checkFrame); a bad one is answered with its JSON-RPC error by
// the transport itself, and only valid messages reach the SDK.

// maxFrame is the largest frame read: the SDK's own default limit. A longer one is read to its
// newline and discarded as it goes, so it costs no memory beyond this.
const maxFrame = mcp.DefaultMaxLineLength

// stdioTransport is an mcp.Transport over a client's stdin and stdout.
type stdioTransport struct {
	in    io.ReadCloser
	out   io.WriteCloser
	log   *slog.Logger
	limit int
}

// Connect starts reading frames; it is called once, by the server.
func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &frameConn{
		in:       t.in,
		out:      t.out,
		log:      t.log,
		incoming: make(chan frameRead),
		closed:   make(chan struct{}),
	}
	limit := t.limit
	if limit <= 0 {
		limit = maxFrame
	}
	go c.readLoop(limit)
	return c, nil
}

// frameRead is what the read loop hands to Read: a valid message, or the end of the stream.
type frameRead struct {
	msg jsonrpc.Message
	err error
}

// frameConn is the connection: Read takes valid messages from the read loop, and Write and the
// read loop's error replies share one lock, so that no two writers interleave within a line.
type frameConn struct {
	in  io.ReadCloser
	out io.WriteCloser
	log *slog.Logger

	incoming chan frameRead

	writeMu sync.Mutex

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// readLoop reads frames until the stream ends or fails, answering bad ones itself. It runs in its
// own goroutine so that Close can end a Read that waits for input (stdin cannot be unblocked; the
// goroutine ends at the next line or the end of the stream).
func (c *frameConn) readLoop(limit int) {
	br := bufio.NewReaderSize(c.in, 64<<10)
	for {
		line, size, over, err := readFrame(br, limit)
		frame := bytes.TrimSuffix(line, []byte("\r"))
		var r *refusal
		switch {
		case over:
			// line is the frame's two ends: the request's id, when they tell it, lets the
			// caller that waits for it know (a reply with a null id answers nobody).
			r = invalid(overID(line), "the message is over %d MiB (%d bytes) and was discarded unread; send smaller messages", limit>>20, size)
		case len(bytes.Trim(frame, " \t\r")) == 0: // a blank line is no frame
		default:
			var msg jsonrpc.Message
			if msg, r = checkFrame(frame); r == nil && !c.deliver(frameRead{msg: msg}) {
				return
			}
		}
		if r != nil {
			if werr := c.refuse(r, size); werr != nil {
				err = werr // the client's end is gone: the session ends as it would on a failed write
			}
		}
		if err != nil {
			c.deliver(frameRead{err: err})
			return
		}
	}
}

// deliver hands a read to Read; false when the connection closed first.
func (c *frameConn) deliver(r frameRead) bool {
	select {
	case c.incoming <- r:
		return true
	case <-c.closed:
		return false
	}
}

// refuse logs a refused frame (never its text: it may be large, or carry what should not be
// logged) and answers it unless it is silent.
func (c *frameConn) refuse(r *refusal, size int) error {
	if r.silent {
		c.log.Warn("dropped a frame shaped as a response", "reason", r.reason, "bytes", size)
		return nil
	}
	c.log.Warn("refused a frame", "code", r.code, "reason", r.reason, "bytes", size)
	if err := c.writeLine(r.reply()); err != nil {
		return fmt.Errorf("answer a refused frame: %w", err)
	}
	return nil
}

// frameEnd is how much of each end of a frame over the limit is kept: enough for the members
// that come before the params (jsonrpc, id, method) or after them.
const frameEnd = 4 << 10

// readFrame reads one line from br. A line up to limit bytes (its line break aside) is returned
// whole; a longer one is read to its end and dropped as it is read (over), but for its first and
// last frameEnd bytes, which are returned joined by a newline (a byte no JSON text holds raw in a
// string, so nothing read from them spans the two). size counts every byte of the line, its break
// included. err is the stream's error (io.EOF at its end) after the line.
//
// The line is kept as the reader's chunks and joined once at its end: a slice grown by append
// would leave a trail of outgrown copies, several times the line, for the collector to find.
func readFrame(br *bufio.Reader, limit int) (line []byte, size int, over bool, err error) {
	var chunks [][]byte
	var head, tail []byte
	for {
		chunk, err := br.ReadSlice('\n')
		size += len(chunk)
		content := chunk
		if len(content) > 0 && content[len(content)-1] == '\n' {
			content = content[:len(content)-1]
		}
		if !over && size-(len(chunk)-len(content)) > limit {
			over = true
			head, tail = ends(chunks)
			chunks = nil
		}
		if over {
			if len(head) < frameEnd {
				head = append(head, content[:min(len(content), frameEnd-len(head))]...)
			}
			tail = append(tail, content...)
			if len(tail) > frameEnd {
				tail = append(tail[:0], tail[len(tail)-frameEnd:]...)
			}
		} else {
			chunks = append(chunks, bytes.Clone(chunk))
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if over {
			return append(append(head, '\n'), tail...), size, true, err
		}
		if len(chunks) == 1 {
			line = chunks[0]
		} else {
			line = bytes.Join(chunks, nil)
		}
		return bytes.TrimSuffix(line, []byte("\n")), size, false, err
	}
}

// ends returns the first and the last frameEnd bytes of the line kept as chunks.
func ends(chunks [][]byte) (head, tail []byte) {
	for _, c := range chunks {
		if len(head) >= frameEnd {
			break
		}
		head = append(head, c[:min(len(c), frameEnd-len(head))]...)
	}
	n := 0
	i := len(chunks)
	for i > 0 && n < frameEnd {
		i--
		n += len(chunks[i])
	}
	for _, c := range chunks[i:] {
		tail = append(tail, c...)
	}
	return head, tail[max(0, len(tail)-frameEnd):]
}

// Read returns the next valid message.
func (c *frameConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-c.incoming:
		return r.msg, r.err
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write writes one message as one line.
func (c *frameConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if line, ok := resultLine(msg); ok {
		return c.write(line)
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode a message for the client: %w", err)
	}
	return c.writeLine(data)
}

// resultLine is the line of a successful response whose id is a number, the answer to nearly
// every call, put together from its parts: the SDK's encoder marshals the result, which the SDK
// has just marshaled (a tool's result with a response's text in it), once more, checking and
// copying each of its bytes, for about 2 % of a server's CPU over 8 pairs (measured). The
// result is the SDK's own compact JSON; one with a newline in it (so not compact, and no line
// of its own) and any other message go through the encoder. The bytes are the encoder's:
// {"jsonrpc":"2.0","id":N,"result":RESULT}.
func resultLine(msg jsonrpc.Message) ([]byte, bool) {
	r, ok := msg.(*jsonrpc.Response)
	if !ok || r.Error != nil || len(r.Result) == 0 || bytes.IndexByte(r.Result, '\n') >= 0 {
		return nil, false
	}
	id, ok := r.ID.Raw().(int64)
	if !ok {
		return nil, false
	}
	line := make([]byte, 0, len(r.Result)+48)
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = strconv.AppendInt(line, id, 10)
	line = append(line, `,"result":`...)
	line = append(line, r.Result...)
	return append(line, "}\n"...), true
}

// writeLine writes data and its newline in one write, under the lock every writer takes.
func (c *frameConn) writeLine(data []byte) error {
	line := make([]byte, 0, len(data)+1)
	return c.write(append(append(line, data...), '\n'))
}

// write writes a whole line, under the lock every writer takes.
func (c *frameConn) write(line []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	_, err := c.out.Write(line)
	return err
}

// Close closes both streams; it may be called more than once, and concurrently.
func (c *frameConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.closeErr = errors.Join(c.in.Close(), c.out.Close())
	})
	return c.closeErr
}

// SessionID is empty: a stdio stream is one session.
func (c *frameConn) SessionID() string { return "" }
