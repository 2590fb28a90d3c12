package kit

// install-mcp's editor of Codex's config.toml: wcomm's [mcp_servers.wcomm] table is set line by
// line, so comments, other tables and their order stay; a TOML encoder would drop the comments.

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// tomlHeader matches a table header line and captures its key.
var tomlHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$`) })

// tomlKeyLine matches a "key = value" line and captures the key.
var tomlKeyLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*([A-Za-z0-9_-]+)\s*=`) })

// tomlValue writes a value of wcomm's entry as TOML.
func tomlValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = tomlValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	default:
		return fmt.Sprint(x)
	}
}

// setTOMLEntry puts wcomm's [mcp_servers.NAME] table into a TOML file: the table's keys wcomm
// owns are set line by line, the user's other keys, comments, tables and order stay.
func setTOMLEntry(old []byte, name string, entry []mcpKey) ([]byte, bool, error) {
	doc := map[string]any{}
	if _, err := toml.Decode(string(old), &doc); err != nil {
		return nil, false, fmt.Errorf("not valid TOML (%v); fix the file and run again", err)
	}
	var cur map[string]any
	if servers, ok := doc["mcp_servers"]; ok {
		sm, ok := servers.(map[string]any)
		if !ok {
			return nil, false, errors.New("mcp_servers is not a table; fix the file and run again")
		}
		if v, ok := sm[name]; ok {
			if cur, ok = v.(map[string]any); !ok {
				return nil, false, fmt.Errorf("mcp_servers.%s is not a table; fix the file and run again", name)
			}
		}
	}
	merged := mergeEntry(cur, entry)
	if cur != nil && sameJSON(cur, merged) {
		return old, false, nil
	}

	text := string(old)
	lines := strings.Split(text, "\n")
	header := -1
	for i, l := range lines {
		if m := tomlHeader().FindStringSubmatch(l); m != nil {
			key := strings.ReplaceAll(strings.ReplaceAll(m[1], " ", ""), `"`, "")
			if key == "mcp_servers."+name {
				header = i
			}
		}
	}
	var out string
	switch {
	case header < 0 && cur != nil:
		return nil, false, fmt.Errorf("mcp_servers.%s is written in a form wcomm does not edit (dotted keys or an inline table); make it a [mcp_servers.%s] table by hand", name, name)
	case header < 0:
		var b strings.Builder
		b.WriteString(text)
		if text != "" && !strings.HasSuffix(text, "\n") {
			b.WriteString("\n")
		}
		if strings.TrimSpace(text) != "" {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[mcp_servers.%s]\n", name)
		for _, kv := range entry {
			fmt.Fprintf(&b, "%s = %s\n", kv.Name, tomlValue(kv.Value))
		}
		out = b.String()
	default:
		end := len(lines)
		for i := header + 1; i < len(lines); i++ {
			if strings.HasPrefix(strings.TrimSpace(lines[i]), "[") {
				end = i
				break
			}
		}
		body := append([]string(nil), lines[header+1:end]...)
		last := -1
		for i, l := range body {
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
				last = i
			}
		}
		for _, kv := range entry {
			line := kv.Name + " = " + tomlValue(kv.Value)
			found := false
			for i, l := range body {
				if m := tomlKeyLine().FindStringSubmatch(l); m != nil && m[1] == kv.Name {
					body[i] = line
					found = true
				}
			}
			if !found {
				body = append(body[:last+1], append([]string{line}, body[last+1:]...)...)
				last++
			}
		}
		out = strings.Join(append(append(append([]string(nil), lines[:header+1]...), body...), lines[end:]...), "\n")
	}
	// The edit must mean exactly the old file with wcomm's table set, or nothing is written.
	var got map[string]any
	if _, err := toml.Decode(out, &got); err != nil {
		return nil, false, fmt.Errorf("could not edit the file in place (%v); set [mcp_servers.%s] by hand", err, name)
	}
	servers, _ := doc["mcp_servers"].(map[string]any)
	if servers == nil {
		servers = map[string]any{}
		doc["mcp_servers"] = servers
	}
	servers[name] = merged
	if !sameJSON(got, doc) {
		return nil, false, fmt.Errorf("could not edit the file in place (its layout is unusual); set [mcp_servers.%s] by hand", name)
	}
	return []byte(out), true, nil
}
