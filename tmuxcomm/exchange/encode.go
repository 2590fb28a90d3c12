package exchange

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// A history read from the files encodes every exchange it lists (for its index and its output):
// json.MarshalIndent's reflection and its second pass that indents were a fifth of the time of
// a history of 10,000 exchanges without its index. appendIndented writes the same bytes in one
// pass; TestAppendIndentedIsMarshalIndent holds it to that, every field set.

// indented is x's encoding as the index keeps it: json.MarshalIndent(x, indexElem, "  ").
func (x *Exchange) indented() ([]byte, error) {
	if b, ok := x.appendIndented(make([]byte, 0, 2048), indexElem); ok {
		return b, nil
	}
	return json.MarshalIndent(x, indexElem, "  ")
}

// appendIndented appends json.MarshalIndent(x, prefix, "  ")'s encoding of x to dst. ok is false
// where it does not know it would match (a time json cannot encode), and the caller then uses
// json.MarshalIndent.
func (x *Exchange) appendIndented(dst []byte, prefix string) ([]byte, bool) {
	e := indenter{b: dst, prefix: prefix, ok: true}
	e.open('{')
	e.str("session", x.Session)
	e.str("dir", x.Dir)
	e.key("seq")
	e.b = strconv.AppendInt(e.b, int64(x.Seq), 10)
	e.str("id", x.ID)
	e.str("started_at", x.StartedAt)
	e.str("orchestrator", string(x.Orchestrator))
	e.str("worker", string(x.Worker))
	e.strOmit("host", x.Host)
	e.strOmit("broadcast", x.Broadcast)
	e.str("capability", x.Capability)
	e.str("status", x.Status)
	e.str("state", x.State)
	e.strOmit("form", x.Form)
	e.strOmit("profile", x.Profile)
	e.strOmit("via", x.Via)
	if x.Verified {
		e.key("verified")
		e.b = append(e.b, "true"...)
	}
	e.strOmit("evidence", x.Evidence)
	e.str("summary", x.Summary)
	e.str("request_path", x.RequestPath)
	e.str("response_path", x.ResponsePath)
	e.key("sent_at")
	e.time(x.SentAt)
	if x.AnsweredAt != nil {
		e.key("answered_at")
		e.time(*x.AnsweredAt)
	}
	e.strOmit("request_body", x.RequestBody)
	e.strOmit("response_body", x.ResponseBody)
	if d := x.Delta; d != nil {
		e.key("delta")
		e.open('{')
		e.list("changes", d.Changes, false)
		e.list("risks", d.Risks, false)
		e.list("alternatives", d.Alternatives, false)
		e.key("needs_consult")
		e.b = strconv.AppendBool(e.b, d.NeedsConsult)
		e.close('}')
	}
	e.strOmit("integrity", x.Integrity)
	if x.Read {
		e.key("read")
		e.b = append(e.b, "true"...)
	}
	if len(x.Events) > 0 {
		e.key("events")
		e.open('[')
		for _, ev := range x.Events {
			e.elem()
			e.open('{')
			e.str("state", ev.State)
			e.key("at")
			e.time(ev.At)
			if len(ev.Detail) > 0 {
				e.key("detail")
				e.open('{')
				keys := make([]string, 0, len(ev.Detail))
				for k := range ev.Detail {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				for _, k := range keys {
					e.str(k, ev.Detail[k])
				}
				e.close('}')
			}
			e.close('}')
		}
		e.close(']')
	}
	e.list("problems", x.Problems, true)
	e.close('}')
	return e.b, e.ok
}

// indenter writes JSON as json.MarshalIndent lays it out: each member and element on a line of
// its own, the prefix and one indent a level before it, an empty object or array as {} or [].
type indenter struct {
	b      []byte
	prefix string
	depth  int
	// first says no member or element has been written at the current level yet.
	first bool
	ok    bool
}

func (e *indenter) open(c byte) {
	e.b = append(e.b, c)
	e.depth++
	e.first = true
}

func (e *indenter) close(c byte) {
	e.depth--
	if !e.first {
		e.newline()
	}
	e.b = append(e.b, c)
	e.first = false
}

func (e *indenter) newline() {
	e.b = append(e.b, '\n')
	e.b = append(e.b, e.prefix...)
	for range e.depth {
		e.b = append(e.b, "  "...)
	}
}

// elem starts a member or an element on its own line.
func (e *indenter) elem() {
	if !e.first {
		e.b = append(e.b, ',')
	}
	e.first = false
	e.newline()
}

func (e *indenter) key(k string) {
	e.elem()
	e.b = appendJSONString(e.b, k)
	e.b = append(e.b, ": "...)
}

func (e *indenter) str(k, v string) {
	e.key(k)
	e.b = appendJSONString(e.b, v)
}

func (e *indenter) strOmit(k, v string) {
	if v != "" {
		e.str(k, v)
	}
}

// list writes a list of strings: null when nil (unless omitted, as an empty one is).
func (e *indenter) list(k string, v []string, omitEmpty bool) {
	if omitEmpty && len(v) == 0 {
		return
	}
	e.key(k)
	if v == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.open('[')
	for _, s := range v {
		e.elem()
		e.b = appendJSONString(e.b, s)
	}
	e.close(']')
}

// time writes t as its MarshalJSON does; a year it refuses makes the whole encoding not ok.
func (e *indenter) time(t time.Time) {
	if y := t.Year(); y < 0 || y > 9999 {
		e.ok = false
		return
	}
	e.b = append(e.b, '"')
	e.b = t.AppendFormat(e.b, time.RFC3339Nano)
	e.b = append(e.b, '"')
}

// appendJSONString appends s quoted as encoding/json quotes it: printable ASCII other than the
// quote, the backslash and the HTML characters it escapes (<, >, &) goes as it is; anything else
// is left to encoding/json, so every escape is its own.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, err := json.Marshal(s)
			if err != nil { // a string always encodes
				return append(dst, `""`...)
			}
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
