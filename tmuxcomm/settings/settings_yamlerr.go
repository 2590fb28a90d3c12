package settings

// What a settings file's YAML error says: file:line and what is wrong, in the words of the file
// (its keys, not Go's types), with the nearest known key for a misspelt one, and the line where
// a syntax error is, which yaml.v3 counts from 0 and names by the flow mapping around it.

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/wcomm/wcomm/messages/suggest"
	"go.yaml.in/yaml/v3"
)

var (
	// yamlLineRe finds yaml.v3's "line N: message" parts.
	yamlLineRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+): (.*)`) })
	yamlTypeRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(` in type [\w.]+`) })
	// unknownFieldRe is yaml.v3's words for a key the type does not have.
	unknownFieldRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^field (.+) not found in type ([\w.]+)$`) })
)

// configError turns yaml.v3's messages into "file:line: what is wrong" lines.
func configError(path string, data []byte, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		if line, msg, ok := syntaxError(data, err); ok {
			return fmt.Errorf("%s:%d: %s", path, line, msg)
		}
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		where := path + ": "
		if m := yamlLineRe().FindStringSubmatch(l); m != nil {
			where, l = path+":"+m[1]+": ", strings.TrimPrefix(m[2], "line "+m[1]+": ")
		}
		if m := unknownFieldRe().FindStringSubmatch(l); m != nil {
			l = "field " + m[1] + " not found" + nearestKey(m[1], m[2])
		}
		// yaml.v3 names Go types; the user wrote YAML.
		l = yamlTypeRe().ReplaceAllString(l, "")
		l = strings.ReplaceAll(l, "!!", "")
		parts = append(parts, where+l)
	}
	return fmt.Errorf("%s", strings.Join(parts, "; "))
}

// nearestKey is "; did you mean K?" for the keys of the settings type typeName nearest key, or "".
func nearestKey(key, typeName string) string {
	near := suggest.Nearest(key, settingsKeys()[typeName])
	switch len(near) {
	case 0:
		return ""
	case 1:
		return "; did you mean " + near[0] + "?"
	}
	return "; did you mean " + strings.Join(near[:len(near)-1], ", ") + " or " + near[len(near)-1] + "?"
}

// settingsKeys maps each struct type of the settings file, by the name yaml.v3 gives it
// (settings.relayFile), to its keys.
var settingsKeys = sync.OnceValue(func() map[string][]string {
	keys := map[string][]string{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		if _, done := keys[t.String()]; done {
			return
		}
		keys[t.String()] = nil
		var names []string
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			switch name {
			case "-":
				continue
			case "":
				name = strings.ToLower(f.Name)
			}
			names = append(names, name)
			walk(f.Type)
		}
		keys[t.String()] = names
	}
	walk(reflect.TypeOf(configFile{}))
	return keys
})

// parserProblems are the messages of yaml.v3's parser (not its scanner): it reports their line
// counted from 0, and of the collection being parsed when that starts below the first line, so
// a flow mapping's missing comma or brace is named at the mapping's first line less one.
var parserProblems = []string{
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"did not find expected '-' indicator",
	"did not find expected <document start>",
	"did not find expected key",
	"did not find expected node content",
}

// syntaxError finds the line of a parser error of data: the line yaml.v3 names is either where
// the problem is or where the collection around it starts, counted from 0. Parsed again from that
// line on, the collection starts on the first line, where yaml.v3 names the problem itself: the
// problem is as many lines further. When the shorter text does not fail the same way, the line
// named was the problem's own.
func syntaxError(data []byte, err error) (line int, msg string, ok bool) {
	at, msg := yamlProblem(err)
	if !slices.Contains(parserProblems, msg) {
		return 0, "", false
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if at >= len(lines) {
		return at + 1, msg, true
	}
	var n yaml.Node
	rest := bytes.Join(lines[at:], nil)
	if err := yaml.Unmarshal(rest, &n); err != nil {
		if at2, msg2 := yamlProblem(err); msg2 == msg {
			return at + at2 + 1, msg, true
		}
	}
	return at + 1, msg, true
}

// yamlProblem splits yaml.v3's "yaml: line N: message" into N (0 when it names none) and message.
func yamlProblem(err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLineRe().FindStringSubmatch(msg); m != nil && strings.HasPrefix(msg, "line ") {
		n, _ := strconv.Atoi(m[1])
		return n, m[2]
	}
	return 0, msg
}
