package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A frame is one line of the stdio stream. checkFrame decides what it is: a JSON-RPC 2.0 message
// as MCP defines it, which goes on to the SDK, or a refusal, which the transport answers itself.
// The SDK's own reader ends the session on the first line it cannot use, so nothing it is given may
// be one; and the message is built here from the members checked here, so the SDK never reads the
// line a second way (case-folded or repeated member names) that this check did not see.

// JSON-RPC 2.0's codes for a frame that is refused (jsonrpc.org/specification, "Error object").
const (
	codeParseError     = jsonrpc.CodeParseError     // not JSON text
	codeInvalidRequest = jsonrpc.CodeInvalidRequest // JSON, but not a valid request
)

// maxSafeID is the largest integer id every peer reads exactly: the SDK, like JavaScript, reads a
// number as a float64, which holds integers exactly up to 2^53.
const maxSafeID = 1 << 53

// refusal is a frame that does not reach the SDK, and what the transport does instead.
type refusal struct {
	code int64
	// id is the id to answer with: the request's own when the frame is a request whose id can be
	// told, else null, as JSON-RPC 2.0 requires.
	id json.RawMessage
	// reason says what is wrong, for the reply and the log.
	reason string
	// silent marks a frame shaped as a response: it gets no answer, since a peer that answers
	// a bad answer with an error could be answered in turn, forever. It is logged and dropped.
	silent bool
}

var null = json.RawMessage("null")

// message is the text of the error reply.
func (r *refusal) message() string {
	if r.code == codeParseError {
		return "parse error: " + r.reason
	}
	return "invalid request: " + r.reason
}

// reply is the JSON-RPC error response to the refused frame, without its newline.
func (r *refusal) reply() []byte {
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	// The SDK's message types leave out a null id; a reply to a frame whose id cannot be told
	// must carry "id": null.
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", r.id, wireError{r.code, r.message()}})
	if err != nil { // only an id that is not JSON could fail, and ids come from valid JSON
		panic(fmt.Sprintf("marshal a frame's error reply: %v", err))
	}
	return data
}

func parseError(format string, a ...any) *refusal {
	return &refusal{code: codeParseError, id: null, reason: fmt.Sprintf(format, a...)}
}

func invalid(id json.RawMessage, format string, a ...any) *refusal {
	return &refusal{code: codeInvalidRequest, id: id, reason: fmt.Sprintf(format, a...)}
}

// checkFrame reads one frame (a line without its line break) as one JSON-RPC 2.0 message: a
// request, a notification or a response, following JSON-RPC 2.0 and MCP's rules for each (MCP
// 2025-06-18 and later: no batches; ids are strings or integers, never null; params an object).
// It returns the message, or why the frame is refused.
func checkFrame(line []byte) (jsonrpc.Message, *refusal) {
	if !utf8.Valid(line) {
		return nil, parseError("the line is not UTF-8 text")
	}
	if !json.Valid(line) {
		var v json.RawMessage
		err := json.Unmarshal(line, &v)
		if err == nil { // json.Valid and Unmarshal disagree: not expected, still not JSON here
			err = errors.New("not one JSON value")
		}
		return nil, parseError("the line is not one JSON value (%v); send one JSON-RPC message per line", err)
	}
	switch trimmed := bytes.TrimLeft(line, " \t\r\n"); trimmed[0] {
	case '{':
	case '[':
		return nil, invalid(null, "batches are not part of MCP since its 2025-06-18 revision; send each message on a line of its own")
	default:
		return nil, invalid(null, "a message is a JSON object, not %s", kind(trimmed))
	}
	members, dup, err := objectMembers(line)
	if err != nil { // json.Valid said it is JSON: not expected, and still not usable
		return nil, parseError("the line is not one JSON object (%v)", err)
	}
	if dup != "" {
		return nil, invalid(null, "member %q appears twice", dup)
	}

	rawID, hasID := members["id"]
	method, hasMethod := members["method"]
	result, hasResult := members["result"]
	wireErr, hasError := members["error"]
	if !hasMethod && (hasResult || hasError) {
		return checkResponse(members, rawID, hasID, result, hasResult, wireErr, hasError)
	}

	// A request or a notification, or nothing at all. Its own id goes into the reply when it can
	// be told, so the client knows which of its requests failed.
	replyID := null
	var id jsonrpc.ID
	if hasID {
		var why string
		if id, why = readID(rawID); why != "" {
			if kindOf(rawID) == "a number" && hasMethod {
				replyID = rawID
			}
			return nil, invalid(replyID, "%s", why)
		}
		if hasMethod {
			replyID = rawID
		}
	}
	if why := checkVersion(members); why != "" {
		return nil, invalid(replyID, "%s", why)
	}
	if !hasMethod {
		return nil, invalid(null, "a message needs a method (a request or notification) or a result or error (a response)")
	}
	name, ok := jsonString(method)
	if !ok {
		return nil, invalid(replyID, "method must be a string, not %s", kindOf(method))
	}
	if hasResult || hasError {
		return nil, invalid(replyID, "a request has no result or error member")
	}
	params := members["params"]
	switch kindOf(params) {
	case "", "null": // absent: a null is read as absent, as the SDK reads it
		params = nil
	case "an object":
	default:
		return nil, invalid(replyID, "params must be an object, not %s", kindOf(params))
	}
	return &jsonrpc.Request{ID: id, Method: name, Params: params}, nil
}

// checkResponse checks a frame that answers one of the server's requests. A bad one is dropped,
// never answered (see refusal.silent).
func checkResponse(members map[string]json.RawMessage, rawID json.RawMessage, hasID bool, result json.RawMessage, hasResult bool, wireErr json.RawMessage, hasError bool) (jsonrpc.Message, *refusal) {
	drop := func(format string, a ...any) (jsonrpc.Message, *refusal) {
		r := invalid(null, format, a...)
		r.silent = true
		return nil, r
	}
	if why := checkVersion(members); why != "" {
		return drop("a response: %s", why)
	}
	if !hasID {
		return drop("a response without an id")
	}
	id, why := readID(rawID)
	if why != "" {
		// A null id is lawful in an error response to a request the peer could not read; there
		// is nothing to match it to, so it is logged and dropped all the same.
		return drop("a response: %s", why)
	}
	if hasResult == hasError {
		return drop("a response has a result or an error, not both")
	}
	resp := &jsonrpc.Response{ID: id, Result: result}
	if hasError {
		var e struct {
			Code    json.Number     `json:"code"`
			Message *string         `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if kindOf(wireErr) != "an object" || json.Unmarshal(wireErr, &e) != nil || e.Message == nil {
			return drop("a response's error must be an object with a code and a message")
		}
		code, err := e.Code.Int64()
		if err != nil {
			return drop("a response's error code must be an integer")
		}
		resp.Result = nil
		resp.Error = &jsonrpc.Error{Code: code, Message: *e.Message, Data: e.Data}
	}
	return resp, nil
}

// checkVersion says what is wrong with the frame's "jsonrpc" member, or "".
func checkVersion(members map[string]json.RawMessage) string {
	v, ok := members["jsonrpc"]
	if !ok {
		return `the "jsonrpc" member is missing; it must be "2.0"`
	}
	if s, ok := jsonString(v); !ok || s != "2.0" {
		return fmt.Sprintf(`"jsonrpc" must be "2.0", not %s`, v)
	}
	return ""
}

// readID reads a request's or response's id: a string, or an integer that every peer reads
// exactly. It says what is wrong otherwise.
func readID(raw json.RawMessage) (jsonrpc.ID, string) {
	switch kindOf(raw) {
	case "a string":
		s, _ := jsonString(raw)
		id, err := jsonrpc.MakeID(s)
		if err != nil {
			return jsonrpc.ID{}, err.Error()
		}
		return id, ""
	case "a number":
		f, err := json.Number(raw).Float64()
		// 2^53 itself is refused: 2^53+1 reads as 2^53, so that id would be answered as another.
		if err != nil || f != math.Trunc(f) || math.Abs(f) >= maxSafeID {
			return jsonrpc.ID{}, fmt.Sprintf("id %s is not an integer between -2^53 and 2^53", raw)
		}
		id, err := jsonrpc.MakeID(f)
		if err != nil {
			return jsonrpc.ID{}, err.Error()
		}
		return id, ""
	default:
		return jsonrpc.ID{}, fmt.Sprintf("id must be a string or an integer, not %s", kindOf(raw))
	}
}

// objectMembers returns the members of the JSON object line, and the name of a member that
// appears twice, if any: readers differ on which of two to take. line must be valid JSON (checkFrame
// has json.Valid say so), so the object is walked by its delimiters alone: a json.Decoder's tokens
// cost a call of every frame about twenty allocations and most of this check's time (measured).
// The values are parts of line, not copies: each frame is read into its own buffer.
func objectMembers(line []byte) (members map[string]json.RawMessage, dup string, err error) {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return nil, "", errors.New("not a JSON object")
	}
	members = make(map[string]json.RawMessage, 4)
	for i = skipSpace(line, i+1); i < len(line) && line[i] != '}'; i = skipSpace(line, i) {
		if line[i] == ',' {
			i = skipSpace(line, i+1)
		}
		end := skipString(line, i)
		if end < 0 {
			return nil, "", errors.New("a member's name is not a string")
		}
		name, err := memberName(line[i:end])
		if err != nil {
			return nil, "", err
		}
		i = skipSpace(line, end)
		if i >= len(line) || line[i] != ':' {
			return nil, "", errors.New("a member's name is not followed by a colon")
		}
		i = skipSpace(line, i+1)
		end = skipValue(line, i)
		if end < 0 {
			return nil, "", errors.New("a member's value does not end")
		}
		if _, seen := members[name]; seen {
			return nil, name, nil
		}
		members[name] = line[i:end]
		i = end
	}
	if i >= len(line) {
		return nil, "", errors.New("the object does not end")
	}
	return members, "", nil
}

// memberName reads a member's name, quoted: as it is between its quotes, unless an escape in
// it ("\u0069d" is "id") needs decoding.
func memberName(quoted []byte) (string, error) {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1]), nil
	}
	var name string
	err := json.Unmarshal(quoted, &name)
	return name, err
}

// skipSpace returns the index of the first byte at or after i that is not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the index just past the JSON string that starts at i, -1 when none does.
func skipString(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++ // the escaped byte is never the closing quote
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index just past the JSON value that starts at i in valid JSON, -1 when
// it does not end.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end := skipString(b, i)
				if end < 0 {
					return -1
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	default: // a number, true, false or null: up to the next delimiter
		for ; i < len(b); i++ {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return i
			}
		}
		return i
	}
}

// jsonString reads raw as a JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	if kindOf(raw) != "a string" {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// kindOf names the JSON type of the value raw (valid JSON), "" when it is absent.
func kindOf(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return ""
	}
	return kind(raw)
}

func kind(v []byte) string {
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// overID is the id to answer a frame over the limit with, told from its two ends (the first and
// last bytes kept, joined by a newline; see readFrame): a client that waits for its request's reply
// by id waits for ever on a reply with a null id. The id is taken from the members at the frame's
// start, read until the first one cut off (clients that write the id before the params), else from
// a last member "id" that ends the frame (clients that write it after them). It is null when
// neither tells one, when the two tell different ones, or when the frame is shaped as a response
// (a result or error member seen), which is never answered with an id.
func overID(ends []byte) json.RawMessage {
	head, tail, _ := bytes.Cut(ends, []byte("\n"))
	first, response := headID(head)
	last := tailID(tail)
	switch {
	case response:
		return null
	case first != nil && last != nil && !bytes.Equal(first, last):
		return null
	case first != nil:
		return first
	case last != nil:
		return last
	}
	return null
}

// headID reads the members at the start of a frame until the first that is cut off: the id among
// them when it is one a request may have, and whether a member makes the frame a response.
func headID(head []byte) (id json.RawMessage, response bool) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		name, _ := tok.(string)
		if name == "result" || name == "error" {
			return nil, true
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		if name == "id" {
			if seen[name] {
				return nil, false // twice: readers differ on which to take
			}
			if _, why := readID(v); why == "" {
				id = v
			}
		}
		seen[name] = true
	}
	return id, false
}

// tailID reads a last member "id" that ends the frame: `,"id":VALUE}`, white space aside, VALUE a
// string or an integer a request may have. The quote before id follows a comma, so it is no
// escaped quote inside a string, and the brace ends the frame's object when the frame is JSON.
func tailID(tail []byte) json.RawMessage {
	t := bytes.TrimRight(tail, " \t\r\n")
	if len(t) == 0 || t[len(t)-1] != '}' {
		return nil
	}
	t = bytes.TrimRight(t[:len(t)-1], " \t\r\n")
	if len(t) == 0 {
		return nil
	}
	var start int
	switch c := t[len(t)-1]; {
	case c == '"':
		start = -1
		for i := len(t) - 2; i >= 0; i-- {
			if t[i] != '"' {
				continue
			}
			bs := 0
			for j := i - 1; j >= 0 && t[j] == '\\'; j-- {
				bs++
			}
			if bs%2 == 0 {
				start = i
				break
			}
		}
		if start < 0 {
			return nil
		}
	case c >= '0' && c <= '9':
		start = len(t) - 1
		for start > 0 && bytes.IndexByte([]byte("0123456789+-.eE"), t[start-1]) >= 0 {
			start--
		}
	default:
		return nil
	}
	value := t[start:]
	rest := bytes.TrimRight(t[:start], " \t\r\n")
	rest, ok := bytes.CutSuffix(rest, []byte(":"))
	if !ok {
		return nil
	}
	rest, ok = bytes.CutSuffix(bytes.TrimRight(rest, " \t\r\n"), []byte(`"id"`))
	if !ok {
		return nil
	}
	if rest = bytes.TrimRight(rest, " \t\r\n"); len(rest) == 0 || (rest[len(rest)-1] != ',' && rest[len(rest)-1] != '{') {
		return nil
	}
	if !json.Valid(value) {
		return nil
	}
	if _, why := readID(value); why != "" {
		return nil
	}
	return bytes.Clone(value)
}
