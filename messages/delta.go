package messages

import (
	"strings"
)

// Delta is the change report a worker ends a WRITABLE answer with:
//
//	DELTA:
//	  changes: [a, b]
//	  risks: [...]
//	  alternatives: [...]
//	  needs_consult: yes|no
type Delta struct {
	Changes      []string `json:"changes"`
	Risks        []string `json:"risks"`
	Alternatives []string `json:"alternatives"`
	NeedsConsult bool     `json:"needs_consult"`
}

const deltaLine = "DELTA:"

// ParseDelta finds the first "DELTA:" line in body and parses the indented lines under it. Lists are
// "[a, b]" (items trimmed, empty list "[]"; an item may be quoted with "..." to hold a comma) or, as
// an extension, YAML-style "- item" lines under the key. found is false when there is no DELTA: line.
// Errors read "line N: what is wrong" with N counted in body.
func ParseDelta(body string) (d Delta, found bool, err error) {
	lines := strings.Split(body, "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == deltaLine {
			start = i
			break
		}
	}
	if start < 0 {
		return Delta{}, false, nil
	}
	d, err = parseDeltaBlock(lines, start)
	if err != nil {
		return Delta{}, true, err
	}
	return d, true, nil
}

// parseDeltaBlock parses the lines under lines[start] ("DELTA:"): every following line indented
// deeper than it, up to a blank or a less indented line. Lists are never nil, so that JSON shows
// "[]" for an empty one.
func parseDeltaBlock(lines []string, start int) (Delta, error) {
	d := Delta{Changes: []string{}, Risks: []string{}, Alternatives: []string{}}
	lists := map[string]*[]string{"changes": &d.Changes, "risks": &d.Risks, "alternatives": &d.Alternatives}
	seen := map[string]bool{}
	hasConsult := false
	base := indent(lines[start])
	var cur *[]string // the list that "- item" lines add to
	curKey := ""      // the key of the last key line; "" before the first
	inline := false   // the last key line had a value on it
	for i := start + 1; i < len(lines); i++ {
		n := i + 1 // line number in body
		l := strings.TrimSuffix(lines[i], "\r")
		t := strings.TrimSpace(l)
		if t == "" || indent(l) <= base {
			break
		}
		if item, ok := cutItem(t); ok {
			switch {
			case curKey == "":
				return Delta{}, atLine(n, syntaxf("- item before any key"))
			case inline:
				return Delta{}, atLine(n, syntaxf("- item under %s, which already has a value on its line", curKey))
			case curKey == "needs_consult":
				return Delta{}, atLine(n, syntaxf("- item under needs_consult, which takes yes or no"))
			}
			if cur == nil { // an unknown key's items are skipped like the key
				continue
			}
			v, err := parseItem(item)
			if err != nil {
				return Delta{}, atLine(n, err)
			}
			*cur = append(*cur, v)
			continue
		}
		key, value, ok := strings.Cut(t, ":")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || key == "" {
			return Delta{}, atLine(n, syntaxf("%s is not \"key: value\" or \"- item\"", quote(t)))
		}
		if seen[key] {
			return Delta{}, atLine(n, syntaxf("%s appears twice in DELTA", key))
		}
		seen[key] = true
		curKey, inline, cur = key, value != "", nil
		switch key {
		case "needs_consult":
			b, err := parseYesNo(value)
			if err != nil {
				return Delta{}, atLine(n, err)
			}
			d.NeedsConsult, hasConsult = b, true
		case "changes", "risks", "alternatives":
			cur = lists[key]
			if value == "" {
				continue
			}
			items, err := parseList(value)
			if err != nil {
				return Delta{}, atLine(n, syntaxf("%s: %v", key, err))
			}
			*cur = append(*cur, items...)
		}
		// Unknown keys are skipped: a worker may add a field that a later version reads.
	}
	if !hasConsult {
		return Delta{}, atLine(start+1, syntaxf("DELTA has no indented \"needs_consult: yes\" or \"needs_consult: no\" line under it"))
	}
	return d, nil
}

// indent counts the leading spaces and tabs of l.
func indent(l string) int {
	return len(l) - len(strings.TrimLeft(l, " \t"))
}

// cutItem recognises a YAML-style "- item" line (t is trimmed).
func cutItem(t string) (string, bool) {
	if t == "-" {
		return "", true
	}
	if rest, ok := strings.CutPrefix(t, "- "); ok {
		return strings.TrimSpace(rest), true
	}
	if rest, ok := strings.CutPrefix(t, "-\t"); ok {
		return strings.TrimSpace(rest), true
	}
	return "", false
}

func parseYesNo(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "yes", "true":
		return true, nil
	case "no", "false":
		return false, nil
	}
	return false, syntaxf("needs_consult is %s; want yes or no", quote(v))
}

// parseItem parses one "- item" value: quoted or plain. A plain item is the trimmed rest of the
// line, commas included. Format writes a quoted item only when a plain one would read back
// differently.
func parseItem(s string) (string, error) {
	if !strings.HasPrefix(s, `"`) {
		return s, nil
	}
	v, rest, err := cutQuoted(s)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(rest) != "" {
		return "", syntaxf("text %s after the quoted item", quote(rest))
	}
	return v, nil
}

// cutQuoted reads a "..." item at the start of s ("\" escapes the next character) and returns it
// and what follows the closing quote.
func cutQuoted(s string) (v, rest string, err error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '"':
			return b.String(), s[i+1:], nil
		default:
			b.WriteByte(s[i])
		}
	}
	return "", "", syntaxf("quoted item %s has no closing quote", quote(s))
}

// parseList parses "[a, b, "c, d"]". Empty plain items ("[a, , b]", "[a,]") are dropped.
func parseList(v string) ([]string, error) {
	if !strings.HasPrefix(v, "[") || !strings.HasSuffix(v, "]") || len(v) < 2 {
		return nil, syntaxf("%s is not a list [a, b] (or put - item lines under the key)", quote(v))
	}
	s := v[1 : len(v)-1]
	items := []string{}
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return items, nil
		}
		var item string
		if s[0] == '"' {
			var rest string
			var err error
			item, rest, err = cutQuoted(s)
			if err != nil {
				return nil, err
			}
			rest = strings.TrimLeft(rest, " \t")
			if rest != "" && rest[0] != ',' {
				return nil, syntaxf("text %s after a quoted item; separate items with commas", quote(rest))
			}
			items = append(items, item)
			s = strings.TrimPrefix(rest, ",")
			continue
		}
		item, s, _ = strings.Cut(s, ",")
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
}

// format renders d as ParseDelta reads it. Delta has no exported Format (the API names none); tests
// and fuzz targets use this one to check the round trip.
func (d Delta) format() string {
	var b strings.Builder
	b.WriteString(deltaLine + "\n")
	for _, l := range []struct {
		key   string
		items []string
	}{{"changes", d.Changes}, {"risks", d.Risks}, {"alternatives", d.Alternatives}} {
		b.WriteString("  " + l.key + ": [")
		for i, it := range l.items {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(formatItem(it))
		}
		b.WriteString("]\n")
	}
	if d.NeedsConsult {
		b.WriteString("  needs_consult: yes\n")
	} else {
		b.WriteString("  needs_consult: no\n")
	}
	return b.String()
}

// formatItem writes an item plain when parseList reads it back unchanged, else quoted.
func formatItem(s string) string {
	if s != "" && s == strings.TrimSpace(s) && !strings.ContainsAny(s, ",\n") && s[0] != '"' {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}
