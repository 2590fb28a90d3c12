package kit

// install-mcp's editor of JSON settings files (.mcp.json, ~/.claude.json, .gemini/settings.json):
// wcomm's entry under "mcpServers" is set by splicing bytes, so every other member, the key order
// and the indentation stay as they were; encoding/json would rewrite the whole file.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// jsonMember is one member of a JSON object, by byte offsets into the file.
type jsonMember struct {
	Key                        string
	KeyStart, ValStart, ValEnd int
}

// jsonObject is an object of the file: its braces and members, by byte offsets.
type jsonObject struct {
	Open, Close int
	Members     []jsonMember
}

// objectAt reads the object whose '{' is at data[open].
func objectAt(data []byte, open int) (jsonObject, error) {
	o := jsonObject{Open: open}
	dec := json.NewDecoder(bytes.NewReader(data[open:]))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return o, fmt.Errorf("offset %d: not an object", open)
	}
	prev := open + 1
	for dec.More() {
		start := prev
		for start < len(data) && (isJSONSpace(data[start]) || data[start] == ',') {
			start++
		}
		tok, err := dec.Token()
		if err != nil {
			return o, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return o, err
		}
		end := open + int(dec.InputOffset())
		o.Members = append(o.Members, jsonMember{Key: key, KeyStart: start, ValStart: end - len(raw), ValEnd: end})
		prev = end
	}
	if _, err := dec.Token(); err != nil {
		return o, err
	}
	o.Close = open + int(dec.InputOffset()) - 1
	return o, nil
}

// member returns the last member named key (the one a decoder keeps), or nil.
func (o jsonObject) member(key string) *jsonMember {
	for i := len(o.Members) - 1; i >= 0; i-- {
		if o.Members[i].Key == key {
			return &o.Members[i]
		}
	}
	return nil
}

func isJSONSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// jsonIndent guesses the file's indentation unit from its first indented line; "" for a file on
// one line, which stays compact.
func jsonIndent(data []byte) string {
	if !bytes.Contains(data, []byte("\n")) {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed == "" || len(trimmed) == len(line) {
			continue
		}
		return line[:len(line)-len(trimmed)]
	}
	return "  "
}

// lineIndent is the leading white space of the line holding data[pos].
func lineIndent(data []byte, pos int) string {
	start := bytes.LastIndexByte(data[:pos], '\n') + 1
	end := start
	for end < len(data) && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return string(data[start:end])
}

// renderJSON writes v as JSON at prefix with indentation unit ("" = compact); in every object the
// keys named in order come first, in that order, then any others by name.
func renderJSON(v any, prefix, unit string, order []string) string {
	m, ok := v.(map[string]any)
	if !ok {
		return marshalJSON(v, prefix, unit)
	}
	keys := append([]string(nil), order...)
	var rest []string
	for k := range m {
		if !contains(order, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	keys = append(keys, rest...)
	var b strings.Builder
	b.WriteString("{")
	n := 0
	for _, k := range keys {
		val, ok := m[k]
		if !ok {
			continue
		}
		if n > 0 {
			b.WriteString(",")
		}
		n++
		if unit != "" {
			b.WriteString("\n" + prefix + unit)
		}
		sep := ": "
		if unit == "" {
			sep = ":"
		}
		b.WriteString(marshalJSON(k, "", "") + sep + renderJSON(val, prefix+unit, unit, order))
	}
	if unit != "" && n > 0 {
		b.WriteString("\n" + prefix)
	}
	b.WriteString("}")
	return b.String()
}

func marshalJSON(v any, prefix, unit string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if unit != "" {
		enc.SetIndent(prefix, unit)
	}
	_ = enc.Encode(v)
	return strings.TrimSuffix(buf.String(), "\n")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// insertMember adds "key": value as the last member of object o.
func insertMember(data []byte, o jsonObject, key string, value any, unit string, order []string) []byte {
	var ins string
	var at, to int
	if n := len(o.Members); n > 0 {
		last := o.Members[n-1]
		wsStart := last.KeyStart
		for wsStart > 0 && isJSONSpace(data[wsStart-1]) {
			wsStart--
		}
		ws := string(data[wsStart:last.KeyStart])
		prefix := ws[strings.LastIndexByte(ws, '\n')+1:]
		sep := ": "
		if unit == "" {
			sep = ":"
		}
		ins = "," + ws + marshalJSON(key, "", "") + sep + renderJSON(value, prefix, unit, order)
		at, to = last.ValEnd, last.ValEnd
	} else {
		outer := lineIndent(data, o.Open)
		if unit == "" {
			ins = marshalJSON(key, "", "") + ":" + renderJSON(value, "", "", order)
		} else {
			ins = "\n" + outer + unit + marshalJSON(key, "", "") + ": " + renderJSON(value, outer+unit, unit, order) + "\n" + outer
		}
		at, to = o.Open+1, o.Close
	}
	return splice(data, at, to, ins)
}

func splice(data []byte, at, to int, s string) []byte {
	out := make([]byte, 0, len(data)+len(s))
	out = append(out, data[:at]...)
	out = append(out, s...)
	return append(out, data[to:]...)
}

// setJSONEntry puts wcomm's entry under "mcpServers" in a JSON settings file, changing only
// those bytes. changed is false when the entry already says what wcomm would write.
func setJSONEntry(old []byte, name string, entry []mcpKey) ([]byte, bool, error) {
	order := make([]string, len(entry))
	for i, kv := range entry {
		order[i] = kv.Name
	}
	if len(bytes.TrimSpace(old)) == 0 {
		// A new file: an empty object to add to, in the two-space layout the agents write.
		old = []byte("{\n}\n")
	}
	var doc any
	if err := json.Unmarshal(old, &doc); err != nil {
		return nil, false, fmt.Errorf("not valid JSON (%v); fix the file and run again", err)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, false, errors.New("the top level is not a JSON object; fix the file and run again")
	}
	var servers map[string]any
	if v, ok := root["mcpServers"]; ok {
		if servers, ok = v.(map[string]any); !ok {
			return nil, false, errors.New(`"mcpServers" is not an object; fix the file and run again`)
		}
	}
	var cur map[string]any
	if v, ok := servers[name]; ok {
		if cur, ok = v.(map[string]any); !ok {
			return nil, false, fmt.Errorf(`"mcpServers.%s" is not an object; fix the file and run again`, name)
		}
	}
	merged := mergeEntry(cur, entry)
	if cur != nil && sameJSON(cur, merged) {
		return old, false, nil
	}

	unit := jsonIndent(old)
	top, err := objectAt(old, bytes.IndexByte(old, '{'))
	if err != nil {
		return nil, false, fmt.Errorf("read the file's layout: %v", err)
	}
	var out []byte
	sm := top.member("mcpServers")
	switch {
	case sm == nil:
		out = insertMember(old, top, "mcpServers", map[string]any{name: merged}, unit, order)
	default:
		so, err := objectAt(old, sm.ValStart)
		if err != nil {
			return nil, false, fmt.Errorf("read the file's layout: %v", err)
		}
		if em := so.member(name); em != nil {
			out = splice(old, em.ValStart, em.ValEnd, renderJSON(merged, lineIndent(old, em.KeyStart), unit, order))
		} else {
			out = insertMember(old, so, name, merged, unit, order)
		}
	}
	// The edit must mean exactly the old file with wcomm's entry set, or nothing is written.
	if servers == nil {
		servers = map[string]any{}
		root["mcpServers"] = servers
	}
	servers[name] = merged
	var got any
	if err := json.Unmarshal(out, &got); err != nil || !sameJSON(got, root) {
		return nil, false, fmt.Errorf("could not edit the file in place (its layout is unusual); add the entry %s under \"mcpServers\" by hand", renderJSON(merged, "", "", order))
	}
	return out, true, nil
}
