package mcpserver

// The frame guard: the SDK's stdio transport ends the session on the first frame it cannot
// decode (a garbage line, a truncated object, an object as id, no "jsonrpc", a trailing NUL, a
// frame over its line limit, a batch under protocol 2025-06-18). A client's one bad line must not
// take the server away, so every line is checked here first, with the SDK's own decoder: a good
// one goes on to the SDK's transport unchanged, a bad one gets a JSON-RPC error reply (id null
// when it has no usable id) and the server goes on reading. The SDK's transport is wrapped, not
// copied: it still does all the rest.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxFrame bounds one line from the client: the SDK's own default limit.
const maxFrame = mcp.DefaultMaxLineLength

// guardedTransport is an mcp.Transport over a client's stdio whose incoming lines pass the frame
// guard before they reach the SDK's IOTransport.
type guardedTransport struct {
	in  io.ReadCloser
	out io.WriteCloser
	max int // 0: maxFrame
}

// Connect starts the guard and connects the SDK's transport to what passes it.
func (t *guardedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	limit := t.max
	if limit <= 0 {
		limit = maxFrame
	}
	pr, pw := io.Pipe()
	out := &frameWriter{w: t.out}
	go func() {
		err := guardFrames(t.in, pw, out, limit)
		pw.CloseWithError(err) // nil: EOF for the SDK, which ends the session
	}()
	return (&mcp.IOTransport{Reader: closeBoth{pr, t.in}, Writer: out, MaxLineLength: -1}).Connect(ctx)
}

// guardFrames copies the good lines of in to good, one write each, and answers each bad one on
// out. It returns nil at the end of in, or the error that stopped it.
func guardFrames(in io.Reader, good io.Writer, out io.Writer, limit int) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readFrame(r, limit)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			if msg, ok := checkFrame(line, tooLong, limit); ok {
				if _, werr := good.Write(append(line, '\n')); werr != nil {
					return werr
				}
			} else if _, werr := out.Write(msg); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readFrame reads one line without its end (\n or \r\n). A line longer than limit is read to its
// end and dropped: tooLong is set and line is empty.
func readFrame(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+2 { // +2: the line's end is not part of the frame
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) > limit {
			tooLong, line = true, nil
		}
		return line, tooLong, err
	}
}

// checkFrame decides one line: ok when the SDK can take it as it is, else the error reply to
// write.
func checkFrame(line []byte, tooLong bool, limit int) ([]byte, bool) {
	switch {
	case tooLong:
		return errorReply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("frame larger than %d bytes; it was dropped", limit)), false
	case !json.Valid(line):
		return errorReply(nil, jsonrpc.CodeParseError, "parse error: the line is not one JSON value (one JSON-RPC message per line)"), false
	}
	trimmed := bytes.TrimSpace(line)
	if trimmed[0] == '[' {
		// MCP 2025-06-18 removed batches, and the SDK ends the session on one then.
		return errorReply(nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported; send one message per line"), false
	}
	if trimmed[0] != '{' {
		return errorReply(nil, jsonrpc.CodeInvalidRequest, "invalid request: a message is a JSON object"), false
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return errorReply(usableID(line), jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error()), false
	}
	return nil, true
}

// usableID is the message's id when it is a string or a number, else nil (the reply's id is null).
func usableID(line []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(m.ID, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return m.ID
	}
	return nil
}

// errorReply is a JSON-RPC error response line; a nil id is written as null.
func errorReply(id json.RawMessage, code int, message string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	reply := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: int64(code), Message: message}}
	data, _ := json.Marshal(reply) // plain types: cannot fail
	return append(data, '\n')
}

// frameWriter makes each Write whole against the others: the SDK writes one message per Write
// under its own lock, and the guard's replies share the stream.
type frameWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *frameWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *frameWriter) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Close()
}

// closeBoth reads from the pipe the guard fills, and closes the client's stream with it, so a
// guard blocked in a read ends when the session does.
type closeBoth struct {
	*io.PipeReader
	in io.Closer
}

func (c closeBoth) Close() error { return errors.Join(c.PipeReader.Close(), c.in.Close()) }
