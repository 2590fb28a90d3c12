package messages

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The openQuestions envelope: an agent ends its final message with a fenced json
// block whose top-level object holds an "openQuestions" array of 1 to 4 questions, each with
// options that carry a label and, optionally, a description. The first fenced json block whose
// top-level object has that key is the envelope; other blocks (a summary) are ignored.

// MaxEnvelopeQuestions is how many questions one envelope may hold: more than 4 at once is more
// than a person answers well between two turns.
const MaxEnvelopeQuestions = 4

// OpenOption is one option of an envelope question.
type OpenOption struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

// OpenQuestion is one entry of an envelope.
type OpenQuestion struct {
	Question string       `json:"question"`
	Header   string       `json:"header,omitempty"`
	Options  []OpenOption `json:"options"`
}

// Envelope is a parsed openQuestions envelope.
type Envelope struct {
	// Line is the 1-based line of the message where the envelope's fence opens.
	Line      int            `json:"line"`
	Questions []OpenQuestion `json:"openQuestions"`
}

// EnvelopeError is an envelope that is there but malformed. Its text is meant to be handed back to
// the agent verbatim: "line 12: openQuestions[0].options[1]: missing \"label\"".
type EnvelopeError struct {
	Line int    // 1-based line in the message
	Path string // JSON path of the offending value, "" for a syntax error
	Msg  string
}

func (e *EnvelopeError) Error() string {
	s := fmt.Sprintf("line %d: ", e.Line)
	if e.Path != "" {
		s += e.Path + ": "
	}
	return s + e.Msg
}

// Unwrap makes an envelope error an ErrSyntax.
func (e *EnvelopeError) Unwrap() error { return ErrSyntax }

// fence is one fenced code block of a markdown text.
type fence struct {
	line int    // 1-based line of the opening fence
	info string // first word of the info string, lowercased
	body string
}

// fences returns the fenced code blocks of a markdown text in order, as CommonMark reads them:
// an opening line of 3+ backticks or tildes indented at most 3 spaces, closed by a line of at
// least as many of the same character and nothing else; an unclosed block runs to the end.
// Fences inside another block are content, so a ```json line inside a ```text block is not a block.
func fences(doc string) []fence {
	lines := strings.Split(doc, "\n")
	var out []fence
	for i := 0; i < len(lines); i++ {
		ch, n, info, ok := openFence(lines[i])
		if !ok {
			continue
		}
		f := fence{line: i + 1, info: info}
		var body []string
		j := i + 1
		for ; j < len(lines); j++ {
			if closesFence(lines[j], ch, n) {
				break
			}
			body = append(body, strings.TrimSuffix(lines[j], "\r"))
		}
		f.body = strings.Join(body, "\n")
		out = append(out, f)
		i = j
	}
	return out
}

func fenceIndent(line string) (string, bool) {
	line = strings.TrimSuffix(line, "\r")
	k := 0
	for k < len(line) && line[k] == ' ' {
		k++
	}
	if k > 3 {
		return "", false
	}
	return line[k:], true
}

func openFence(line string) (ch byte, n int, info string, ok bool) {
	s, ok := fenceIndent(line)
	if !ok || len(s) < 3 || (s[0] != '`' && s[0] != '~') {
		return 0, 0, "", false
	}
	ch = s[0]
	for n < len(s) && s[n] == ch {
		n++
	}
	if n < 3 {
		return 0, 0, "", false
	}
	rest := strings.TrimSpace(s[n:])
	if ch == '`' && strings.ContainsRune(rest, '`') {
		return 0, 0, "", false
	}
	if word, _, _ := strings.Cut(rest, " "); word != "" {
		info = strings.ToLower(word)
	}
	return ch, n, info, true
}

func closesFence(line string, ch byte, n int) bool {
	s, ok := fenceIndent(line)
	if !ok {
		return false
	}
	k := 0
	for k < len(s) && s[k] == ch {
		k++
	}
	return k >= n && strings.TrimSpace(s[k:]) == ""
}

// ParseEnvelope finds the envelope in an agent's message. It returns nil and no error when the
// message holds none (nothing to ask). A fenced json block that fails to parse as JSON but
// mentions openQuestions is taken for a broken envelope and reported; one that does not is
// skipped like any other block. Errors are *EnvelopeError and name the line and the JSON path:
// 1 to 4 questions, each with a non-empty "question" and at least 2 options, each option with a
// non-empty "label"; a missing "description" is the empty string; unknown keys are ignored.
func ParseEnvelope(doc string) (*Envelope, error) {
	for _, f := range fences(doc) {
		if f.info != "json" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(f.body))
		dec.UseNumber()
		var v any
		err := dec.Decode(&v)
		if err == nil {
			if _, err2 := dec.Token(); err2 != io.EOF {
				err = fmt.Errorf("unexpected text after the JSON value")
				if err2 != nil {
					err = err2
				}
			}
		}
		if err != nil {
			if !strings.Contains(f.body, "openQuestions") {
				continue
			}
			return nil, syntaxError(f, err)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			continue
		}
		raw, ok := obj["openQuestions"]
		if !ok {
			continue
		}
		qs, eerr := envelopeQuestions(raw)
		if eerr != nil {
			eerr.Line = f.line
			return nil, eerr
		}
		return &Envelope{Line: f.line, Questions: qs}, nil
	}
	return nil, nil
}

func syntaxError(f fence, err error) *EnvelopeError {
	line := f.line + 1
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		off := int(se.Offset)
		if off > len(f.body) {
			off = len(f.body)
		}
		line += strings.Count(f.body[:off], "\n")
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		line += strings.Count(f.body, "\n")
		err = fmt.Errorf("the JSON ends before the value is complete")
	}
	return &EnvelopeError{Line: line, Msg: "malformed JSON: " + err.Error()}
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func envErr(path, format string, a ...any) *EnvelopeError {
	return &EnvelopeError{Path: path, Msg: fmt.Sprintf(format, a...)}
}

// str reads an optional string member; present reports whether the key was there.
func str(obj map[string]any, key, path string) (s string, present bool, err *EnvelopeError) {
	v, ok := obj[key]
	if !ok {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", true, envErr(path+"."+key, "want a string, got %s", jsonKind(v))
	}
	return s, true, nil
}

func envelopeQuestions(raw any) ([]OpenQuestion, *EnvelopeError) {
	arr, ok := raw.([]any)
	if !ok {
		return nil, envErr("openQuestions", "want an array, got %s", jsonKind(raw))
	}
	switch {
	case len(arr) == 0:
		return nil, envErr("openQuestions", "the array is empty; omit the envelope when there is nothing to ask")
	case len(arr) > MaxEnvelopeQuestions:
		return nil, envErr("openQuestions", "%d questions; at most %d per envelope (split them, or defer the rest to a \"## Open questions (deferred)\" section)",
			len(arr), MaxEnvelopeQuestions)
	}
	out := make([]OpenQuestion, 0, len(arr))
	for i, item := range arr {
		path := fmt.Sprintf("openQuestions[%d]", i)
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, envErr(path, "want an object, got %s", jsonKind(item))
		}
		var q OpenQuestion
		text, present, err := str(obj, "question", path)
		switch {
		case err != nil:
			return nil, err
		case !present:
			return nil, envErr(path, "missing \"question\"")
		case strings.TrimSpace(text) == "":
			return nil, envErr(path+".question", "is empty")
		}
		q.Question = text
		if q.Header, _, err = str(obj, "header", path); err != nil {
			return nil, err
		}
		rawOpts, ok := obj["options"]
		if !ok {
			return nil, envErr(path, "missing \"options\"")
		}
		opts, ok := rawOpts.([]any)
		if !ok {
			return nil, envErr(path+".options", "want an array, got %s", jsonKind(rawOpts))
		}
		if len(opts) < 2 {
			return nil, envErr(path+".options", "%d option(s); at least 2", len(opts))
		}
		if len(opts) > MaxOptions {
			return nil, envErr(path+".options", "%d options; at most %d", len(opts), MaxOptions)
		}
		seen := map[string]int{}
		for j, o := range opts {
			opath := fmt.Sprintf("%s.options[%d]", path, j)
			oobj, ok := o.(map[string]any)
			if !ok {
				return nil, envErr(opath, "want an object, got %s", jsonKind(o))
			}
			label, present, err := str(oobj, "label", opath)
			switch {
			case err != nil:
				return nil, err
			case !present:
				return nil, envErr(opath, "missing \"label\" (the user has nothing to pick)")
			case strings.TrimSpace(label) == "":
				return nil, envErr(opath+".label", "is empty")
			}
			key := strings.ToLower(strings.TrimSpace(label))
			if k, dup := seen[key]; dup {
				return nil, envErr(opath+".label", "%q repeats the label of option %d", label, k)
			}
			seen[key] = j
			desc, _, err := str(oobj, "description", opath)
			if err != nil {
				return nil, err
			}
			q.Options = append(q.Options, OpenOption{Label: label, Description: desc})
		}
		out = append(out, q)
	}
	return out, nil
}

// ToQuestions turns the envelope into numbered questions for task: each question's text is led by
// its header, options are the labels, descriptions ride along as Details. context is shared by
// all; when empty, a context saying where the questions came from is used. Errors name the
// envelope path of the offending question.
func (e *Envelope) ToQuestions(task string, urgency Urgency, context string) ([]Question, error) {
	out := make([]Question, 0, len(e.Questions))
	for i, oq := range e.Questions {
		text := strings.TrimSpace(oq.Question)
		if h := strings.TrimSpace(oq.Header); h != "" && !strings.HasPrefix(strings.ToLower(text), strings.ToLower(h)) {
			text = h + ": " + text
		}
		ctx := context
		if strings.TrimSpace(ctx) == "" {
			ctx = fmt.Sprintf("Question %d of %d from the agent's openQuestions envelope.", i+1, len(e.Questions))
		}
		q := Question{Text: text, Task: task, Urgency: urgency, Type: Numbered, Context: ctx}
		for _, o := range oq.Options {
			q.Options = append(q.Options, o.Label)
			q.Details = append(q.Details, o.Description)
		}
		q = q.Normalized()
		if err := q.Validate(); err != nil {
			return nil, &EnvelopeError{Line: e.Line, Path: fmt.Sprintf("openQuestions[%d]", i), Msg: strings.TrimSuffix(err.Error(), ": "+ErrSyntax.Error())}
		}
		out = append(out, q)
	}
	return out, nil
}
