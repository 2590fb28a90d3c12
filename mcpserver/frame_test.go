package mcpserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustID(t *testing.T, v any) jsonrpc.ID {
	t.Helper()
	id, err := jsonrpc.MakeID(v)
	require.NoError(t, err)
	return id
}

func TestCheckFrameAccepts(t *testing.T) {
	tests := []struct {
		name  string
		frame string
		want  jsonrpc.Message
	}{
		{"request, integer id", `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`,
			&jsonrpc.Request{ID: mustID(t, 7.0), Method: "tools/list"}},
		{"request, string id and params", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"history"}}`,
			&jsonrpc.Request{ID: mustID(t, "a"), Method: "tools/call", Params: json.RawMessage(`{"name":"history"}`)}},
		{"integer written with an exponent", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`,
			&jsonrpc.Request{ID: mustID(t, 1000.0), Method: "ping"}},
		{"negative id", `{"jsonrpc":"2.0","id":-4,"method":"ping"}`,
			&jsonrpc.Request{ID: mustID(t, -4.0), Method: "ping"}},
		{"largest safe id", `{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}`,
			&jsonrpc.Request{ID: mustID(t, 9007199254740991.0), Method: "ping"}},
		{"null params read as none", `{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`,
			&jsonrpc.Request{ID: mustID(t, 1.0), Method: "ping"}},
		{"notification", ` {"method":"notifications/initialized","jsonrpc":"2.0"} `,
			&jsonrpc.Request{Method: "notifications/initialized"}},
		{"unknown members are ignored", `{"jsonrpc":"2.0","id":2,"method":"ping","extra":[1]}`,
			&jsonrpc.Request{ID: mustID(t, 2.0), Method: "ping"}},
		{"escaped member name", `{"jsonrpc":"2.0","id":3,"\u006dethod":"ping"}`,
			&jsonrpc.Request{ID: mustID(t, 3.0), Method: "ping"}},
		{"response", `{"jsonrpc":"2.0","id":4,"result":{"roots":[]}}`,
			&jsonrpc.Response{ID: mustID(t, 4.0), Result: json.RawMessage(`{"roots":[]}`)}},
		{"error response", `{"jsonrpc":"2.0","id":"s","error":{"code":-32601,"message":"no","data":{"x":1}}}`,
			&jsonrpc.Response{ID: mustID(t, "s"), Error: &jsonrpc.Error{Code: -32601, Message: "no", Data: json.RawMessage(`{"x":1}`)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, r := checkFrame([]byte(tt.frame))
			require.Nil(t, r, "refused: %+v", r)
			assert.Equal(t, tt.want, msg)
		})
	}
}

func TestCheckFrameRefuses(t *testing.T) {
	tests := []struct {
		name   string
		frame  string
		code   int64
		id     string
		silent bool
		reason string
	}{
		{"garbage", `garbage`, codeParseError, "null", false, "not one JSON value"},
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"ping"`, codeParseError, "null", false, "not one JSON value"},
		{"trailing NUL", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\x00", codeParseError, "null", false, "not one JSON value"},
		{"not UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc3\"}", codeParseError, "null", false, "UTF-8"},
		{"blank", ``, codeParseError, "null", false, "not one JSON value"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, codeInvalidRequest, "null", false, "batches"},
		{"string", `"ping"`, codeInvalidRequest, "null", false, "not a string"},
		{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, codeInvalidRequest, "null", false, `"id" appears twice`},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, codeInvalidRequest, "null", false, "not an object"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, codeInvalidRequest, "null", false, "not null"},
		{"2^53", `{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`, codeInvalidRequest, "9007199254740992", false, "between -2^53 and 2^53"},
		{"huge number", `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, codeInvalidRequest, "1e400", false, "not an integer"},
		{"no version", `{"id":"x","method":"ping"}`, codeInvalidRequest, `"x"`, false, `"jsonrpc" member is missing`},
		{"version 2", `{"jsonrpc":"2","id":"x","method":"ping"}`, codeInvalidRequest, `"x"`, false, `not "2"`},
		{"no method, an id", `{"jsonrpc":"2.0","id":5}`, codeInvalidRequest, "null", false, "needs a method"},
		{"method an object", `{"jsonrpc":"2.0","id":5,"method":{}}`, codeInvalidRequest, "5", false, "not an object"},
		{"request with an error", `{"jsonrpc":"2.0","id":5,"method":"ping","error":{}}`, codeInvalidRequest, "5", false, "no result or error"},
		{"params a number", `{"jsonrpc":"2.0","method":"x","params":1}`, codeInvalidRequest, "null", false, "not a number"},
		// Shaped as responses: dropped, never answered.
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, codeInvalidRequest, "null", true, "without an id"},
		{"response with null id", `{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}`, codeInvalidRequest, "null", true, "not null"},
		{"response with both", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`, codeInvalidRequest, "null", true, "not both"},
		{"error without message", `{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, codeInvalidRequest, "null", true, "a code and a message"},
		{"error code fractional", `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`, codeInvalidRequest, "null", true, "integer"},
		{"response version", `{"jsonrpc":"1.0","id":1,"result":{}}`, codeInvalidRequest, "null", true, `not "1.0"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, r := checkFrame([]byte(tt.frame))
			require.Nil(t, msg)
			require.NotNil(t, r)
			assert.Equal(t, tt.code, r.code)
			assert.Equal(t, tt.id, string(r.id))
			assert.Equal(t, tt.silent, r.silent)
			assert.Contains(t, r.reason, tt.reason)
		})
	}
}

// The reply to a refused frame is one JSON-RPC error response, on one line, with "id" present.
func TestRefusalReply(t *testing.T) {
	_, r := checkFrame([]byte("{\"a\":\"\u2028<\"}\n{"))
	require.NotNil(t, r)
	reply := r.reply()
	assert.NotContains(t, string(reply), "\n")
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"`+r.message()+`"}}`, string(reply))
	_, r = checkFrame([]byte(`{"jsonrpc":"2.0","id": "q" ,"method":7}`))
	require.NotNil(t, r)
	assert.Equal(t, `{"jsonrpc":"2.0","id":"q","error":{"code":-32600,"message":"invalid request: method must be a string, not a number"}}`, string(r.reply()))
}

// FuzzCheckFrame: any line is either a message the SDK reads the same way, or a refusal with the
// right code and a well-formed reply; never a panic.
func FuzzCheckFrame(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"show","arguments":{"ref":"x"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":4,"result":{}}`,
		`{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"m"}}`,
		`garbage`, `[]`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `null`, `1`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, `{"id":1,"method":"ping"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\x00", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"JSONRPC":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"method":"ping","method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"\u006dethod":"ping"}`, `{"jsonrpc":"2.0","id":9007199254740993,"method":"p"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		msg, r := checkFrame(line)
		if (msg == nil) == (r == nil) {
			t.Fatalf("checkFrame(%q) = %v, %+v: want a message or a refusal", line, msg, r)
		}
		isJSON := utf8.Valid(line) && json.Valid(line)
		if r != nil {
			want := int64(codeInvalidRequest)
			if !isJSON {
				want = codeParseError
			}
			if r.code != want {
				t.Fatalf("checkFrame(%q): code %d, want %d (%s)", line, r.code, want, r.reason)
			}
			var reply struct {
				JSONRPC string `json:"jsonrpc"`
				Error   struct {
					Code    int64  `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			var members map[string]json.RawMessage
			data := r.reply()
			if err := json.Unmarshal(data, &reply); err != nil || reply.JSONRPC != "2.0" || reply.Error.Code != r.code || reply.Error.Message == "" {
				t.Fatalf("checkFrame(%q): reply %s is not a JSON-RPC error response (%v)", line, data, err)
			}
			require.NoError(t, json.Unmarshal(data, &members))
			if k := kindOf(members["id"]); k != "null" && k != "a string" && k != "a number" {
				t.Fatalf("checkFrame(%q): reply %s: the id must be null, a string or a number", line, data)
			}
			if strings.ContainsAny(string(data), "\n\r") {
				t.Fatalf("checkFrame(%q): reply %q is more than one line", line, data)
			}
			return
		}
		if !isJSON {
			t.Fatalf("checkFrame(%q) accepted what is not JSON", line)
		}
		// The SDK reads an accepted frame as the same message (it refuses only what nests deeper
		// than its own limit, which it then answers as bad params).
		sdk, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			if !strings.Contains(err.Error(), "nesting depth") {
				t.Fatalf("checkFrame(%q) accepted what the SDK refuses: %v", line, err)
			}
			return
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			s, ok := sdk.(*jsonrpc.Request)
			if !ok || s.ID != m.ID || s.Method != m.Method {
				t.Fatalf("checkFrame(%q) = %+v; the SDK reads %+v", line, m, sdk)
			}
		case *jsonrpc.Response:
			s, ok := sdk.(*jsonrpc.Response)
			if !ok || s.ID != m.ID || (s.Error == nil) != (m.Error == nil) {
				t.Fatalf("checkFrame(%q) = %+v; the SDK reads %+v", line, m, sdk)
			}
		}
		if _, err := jsonrpc.EncodeMessage(msg); err != nil {
			t.Fatalf("checkFrame(%q): the message does not encode: %v", line, err)
		}
	})
}

// The id of a frame over the limit, from the two ends readFrame keeps (joined by a newline).
func TestOverID(t *testing.T) {
	pad := strings.Repeat("x", 100)
	for _, tc := range []struct{ name, head, tail, want string }{
		{"id first (Go SDK order)", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send","arguments":{"message":"` + pad, pad + `"}}}`, "7"},
		{"id last (TypeScript SDK order)", `{"method":"tools/call","params":{"arguments":{"message":"` + pad, pad + `"}},"jsonrpc":"2.0","id":42}`, "42"},
		{"string id last, spaced", `{"method":"tools/call","params":{"a":"` + pad, pad + `"} , "id" : "r-\"9\""` + " }\r", `"r-\"9\""`},
		{"both ends agree", `{"id":"a","params":{"x":"` + pad, pad + `"},"id":"a"}`, `"a"`},
		{"the ends disagree", `{"id":"a","params":{"x":"` + pad, pad + `"},"id":"b"}`, "null"},
		{"an id in a string is no member", `{"method":"m","params":{"x":"` + pad, pad + `\",\"id\":5}"}}`, "null"},
		{"an escaped quote before id", `{"method":"m","params":{"x":"` + pad, pad + `\"id\":5}`, "null"},
		{"a nested id at the start", `{"params":{"id":3,"x":"` + pad, pad + `"}}`, "null"},
		{"a fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"m","params":{"x":"` + pad, pad + `"}}`, "null"},
		{"an id past 2^53", `{"method":"m","params":{"x":"` + pad, pad + `"},"id":9007199254740993}`, "null"},
		{"a null id", `{"id":null,"method":"m","params":{"x":"` + pad, pad + `"}}`, "null"},
		{"shaped as a response", `{"jsonrpc":"2.0","id":3,"result":{"x":"` + pad, pad + `"}}`, "null"},
		{"no id", `{"jsonrpc":"2.0","method":"m","params":{"x":"` + pad, pad + `"}}`, "null"},
		{"not JSON", `AAAA` + pad, pad, "null"},
		{"an id twice at the start", `{"id":1,"id":2,"params":{"x":"` + pad, pad + `"}}`, "null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, string(overID([]byte(tc.head+"\n"+tc.tail))))
		})
	}
}

// FuzzOverID: whatever the two ends of a frame over the limit hold, the id told from them is null
// or an id a request may have, and a whole valid request's own id (or null) is what its ends tell.
func FuzzOverID(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}`,
		`{"method":"tools/call","params":{},"jsonrpc":"2.0","id":"x"}`,
		`{"a":"\",\"id\":5}"}`, `{"id":1,"result":{}}`, `}`, `"id":"\\"}`, "{\n\"id\":1}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, ends []byte) {
		id := overID(ends)
		if string(id) != "null" {
			if _, why := readID(id); why != "" {
				t.Fatalf("overID(%q) = %s: %s", ends, id, why)
			}
		}
		// A valid request frame cut nowhere: its ends are itself, twice.
		if bytes.IndexByte(ends, '\n') < 0 {
			if msg, r := checkFrame(ends); r == nil {
				if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
					if got := overID(append(append(bytes.Clone(ends), '\n'), ends...)); string(got) != "null" {
						want, _ := json.Marshal(req.ID.Raw())
						var g any
						_ = json.Unmarshal(got, &g)
						gb, _ := json.Marshal(g)
						if string(gb) != string(want) {
							t.Fatalf("overID of %q = %s, its id is %s", ends, got, want)
						}
					}
				}
			}
		}
	})
}

// decodedMembers is objectMembers as a json.Decoder reads the object: what objectMembers must
// find in every valid JSON object.
func decodedMembers(line []byte) (map[string]json.RawMessage, string, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if _, err := dec.Token(); err != nil {
		return nil, "", err
	}
	members := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, "", err
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, "", err
		}
		if _, seen := members[name]; seen {
			return nil, name, nil
		}
		members[name] = v
	}
	return members, "", nil
}

// FuzzObjectMembers: objectMembers, which walks a valid object by its delimiters, finds the
// members and the repeated name a json.Decoder finds.
func FuzzObjectMembers(f *testing.F) {
	for _, seed := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":1,"a":2}`, `{"id":1,"\u0069d":2}`, `{"a":"x\"}","b":[1,{"c":"]"}],"c":{}}`,
		`{"a" : true , "b":null,"c":-1.5e3}`, `{"\\":"\\\\","é":"\u00e9"}`, "{\"a\":\n[ 1 ,\t2 ]\r}",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"show","arguments":{"ref":"x"}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !utf8.Valid(line) || !json.Valid(line) || bytes.TrimLeft(line, " \t\r\n")[0] != '{' {
			return
		}
		got, gotDup, err := objectMembers(line)
		require.NoError(t, err, "%q", line)
		want, wantDup, err := decodedMembers(line)
		require.NoError(t, err, "%q", line)
		require.Equal(t, wantDup, gotDup, "%q", line)
		require.Equal(t, len(want), len(got), "%q", line)
		for k, v := range want {
			require.Equal(t, string(v), string(got[k]), "%q: member %q", line, k)
		}
	})
}

// TestResultLine: a successful response with a number for its id is written as the SDK's encoder
// writes it, byte for byte (a result with HTML's characters, escapes and text beyond ASCII
// among them), and every other message is left to the encoder.
func TestResultLine(t *testing.T) {
	results := []string{
		`{}`,
		`{"content":[{"type":"text","text":"<a & b> \"q\" \\ é\u2028 \u0001"}],"structuredContent":{"id":"x","n":-1.5e3,"ok":true,"v":null,"l":[]}}`,
	}
	id := func(v any) jsonrpc.ID {
		id, err := jsonrpc.MakeID(v)
		require.NoError(t, err)
		return id
	}
	for _, n := range []float64{0, 7, -3, 1 << 53} {
		for _, res := range results {
			msg := &jsonrpc.Response{ID: id(n), Result: json.RawMessage(res)}
			line, ok := resultLine(msg)
			require.True(t, ok)
			want, err := jsonrpc.EncodeMessage(msg)
			require.NoError(t, err)
			assert.Equal(t, string(want)+"\n", string(line))
			back, err := jsonrpc.DecodeMessage(bytes.TrimSuffix(line, []byte("\n")))
			require.NoError(t, err, "the line is a message the SDK reads back")
			assert.Equal(t, msg.ID, back.(*jsonrpc.Response).ID)
		}
	}
	others := []jsonrpc.Message{
		&jsonrpc.Response{ID: id("a"), Result: json.RawMessage(`{}`)},
		&jsonrpc.Response{ID: id(1.0), Error: &jsonrpc.Error{Code: -32602, Message: "bad"}},
		&jsonrpc.Response{ID: id(1.0), Result: json.RawMessage("{\n}")},
		&jsonrpc.Response{ID: id(1.0)},
		&jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(`{}`)},
	}
	for _, msg := range others {
		_, ok := resultLine(msg)
		assert.False(t, ok, "%#v", msg)
	}
}
