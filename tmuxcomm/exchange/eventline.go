package exchange

import "bytes"

// parseEventLine decodes one delivery log line as json.Unmarshal into an Event would, for the
// shape LogEvent writes: {"state":S,"at":T} with an optional ,"detail":{K:V,...}, compact, each
// string printable ASCII without an escape. ok is false for anything else (spaces, escapes,
// other keys or order, null, non-ASCII), which encoding/json then decodes: a history read from
// the files decodes some 50,000 such lines, and the reflective decoder was a fifth of its time.
func parseEventLine(line []byte) (ev Event, ok bool) {
	p := line
	if !eat(&p, `{"state":`) {
		return Event{}, false
	}
	if ev.State, ok = plainString(&p); !ok || !eat(&p, `,"at":`) {
		return Event{}, false
	}
	at, ok := quoted(&p)
	if !ok || ev.At.UnmarshalJSON(at) != nil { // as encoding/json decodes a time.Time
		return Event{}, false
	}
	if eat(&p, `,"detail":{`) {
		ev.Detail = map[string]string{}
		for first := true; !eat(&p, "}"); first = false {
			if !first && !eat(&p, ",") {
				return Event{}, false
			}
			k, ok := plainString(&p)
			if !ok || !eat(&p, ":") {
				return Event{}, false
			}
			v, ok := plainString(&p)
			if _, dup := ev.Detail[k]; !ok || dup {
				return Event{}, false
			}
			ev.Detail[k] = v
		}
	}
	if !eat(&p, "}") || len(p) != 0 {
		return Event{}, false
	}
	return ev, true
}

// eat consumes prefix from p, if p starts with it.
func eat(p *[]byte, prefix string) bool {
	if !bytes.HasPrefix(*p, []byte(prefix)) {
		return false
	}
	*p = (*p)[len(prefix):]
	return true
}

// quoted consumes a JSON string of printable ASCII without escapes and returns it with its quotes.
func quoted(p *[]byte) ([]byte, bool) {
	b := *p
	if len(b) < 2 || b[0] != '"' {
		return nil, false
	}
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			*p = b[i+1:]
			return b[:i+1], true
		case c < 0x20 || c > 0x7e || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

// plainString is quoted's string, unquoted.
func plainString(p *[]byte) (string, bool) {
	q, ok := quoted(p)
	if !ok {
		return "", false
	}
	return string(q[1 : len(q)-1]), true
}
