package messages

// The QUESTION block a question is relayed as (the shape other relays paste, plus an ID line),
// and its option list.

import (
	"fmt"
	"strings"
)

// FormatOptions renders the option list as other relays paste it: "[A: first, B: second]" ("[]"
// for none).
func (q Question) FormatOptions() string {
	parts := make([]string, len(q.Options))
	for i := range q.Options {
		parts[i] = letter(i) + ": " + q.optionDisplay(i)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// FormatQuestionBlock renders the QUESTION block a worker's question is relayed as:
//
//	QUESTION: Should the auth module use bcrypt or argon2?
//	TASK: task-3
//	URGENCY: blocking
//	TYPE: yes-no              (only when not numbered)
//	OPTIONS: [A: Use bcrypt (already in deps), B: Use argon2 (stronger but new dep)]
//	PATTERN: [0-9]+           (only for a freeform question with a pattern)
//	CONTEXT: Task requires password hashing; the plan does not say which.
//	ID: task-3.q1-a1b2        (only once stored)
//
// Each field is put on one line. There is no trailing newline.
func FormatQuestionBlock(q Question) string {
	var b strings.Builder
	b.WriteString("QUESTION: " + oneLine(q.Text) + "\n")
	b.WriteString("TASK: " + oneLine(q.Task) + "\n")
	b.WriteString("URGENCY: " + oneLine(string(q.Urgency)) + "\n")
	if q.Type != "" && q.Type != Numbered {
		b.WriteString("TYPE: " + oneLine(string(q.Type)) + "\n")
	}
	b.WriteString("OPTIONS: " + q.FormatOptions() + "\n")
	if q.Pattern != "" {
		b.WriteString("PATTERN: " + oneLine(q.Pattern) + "\n")
	}
	b.WriteString("CONTEXT: " + oneLine(q.Context))
	if q.ID != "" {
		b.WriteString("\nID: " + oneLine(q.ID))
	}
	return b.String()
}

// blockLines finds the block that starts at the first line beginning with first+": " and returns
// its "KEY: value" lines, up to the first line that is not one of keys. Line numbers are 1-based
// in text. A key may appear once.
func blockLines(text, first string, keys map[string]bool) (map[string]string, int, error) {
	lines := strings.Split(text, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, " \t"), first+":") {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, 0, syntaxf("no %s: line", first)
	}
	fields := map[string]string{}
	for i := start; i < len(lines); i++ {
		l := strings.TrimRight(strings.TrimLeft(lines[i], " \t"), "\r")
		key, val, ok := strings.Cut(l, ":")
		if !ok || !keys[key] {
			break
		}
		if _, dup := fields[key]; dup {
			return nil, start + 1, syntaxf("line %d: %s: appears twice", i+1, key)
		}
		// A carriage return inside a value is a line break to a terminal: it reads as the space
		// the formatter writes for it (oneLine), so a block parses to what it formats to.
		fields[key] = strings.TrimSpace(strings.ReplaceAll(val, "\r", " "))
	}
	return fields, start + 1, nil
}

var questionKeys = map[string]bool{"QUESTION": true, "TASK": true, "URGENCY": true, "TYPE": true,
	"OPTIONS": true, "PATTERN": true, "CONTEXT": true, "ID": true}

// ParseQuestionBlock finds the first QUESTION block in text (other text around it is ignored) and
// parses it. QUESTION, TASK, URGENCY, OPTIONS and CONTEXT are required; TYPE (default numbered),
// PATTERN and ID are optional. Options are returned as the block shows them, a description
// included. The task id, the urgency, the type and an ID are validated.
func ParseQuestionBlock(text string) (Question, error) {
	f, line, err := blockLines(text, "QUESTION", questionKeys)
	if err != nil {
		return Question{}, err
	}
	for _, k := range []string{"QUESTION", "TASK", "URGENCY", "OPTIONS", "CONTEXT"} {
		if _, ok := f[k]; !ok {
			return Question{}, syntaxf("line %d: QUESTION block has no %s: line", line, k)
		}
	}
	q := Question{Text: f["QUESTION"], Task: f["TASK"], Context: f["CONTEXT"], Pattern: f["PATTERN"], ID: f["ID"]}
	if err := ValidTaskID(q.Task); err != nil {
		return Question{}, fmt.Errorf("line %d: TASK: %w", line, err)
	}
	if q.Urgency, err = ParseUrgency(f["URGENCY"]); err != nil || f["URGENCY"] == "" {
		return Question{}, syntaxf("line %d: URGENCY %q: want blocking or non-blocking", line, SanitizeTaskID(f["URGENCY"]))
	}
	if q.Type, err = ParseQuestionType(f["TYPE"]); err != nil {
		return Question{}, fmt.Errorf("line %d: TYPE: %w", line, err)
	}
	if q.Options, err = ParseOptions(f["OPTIONS"]); err != nil {
		return Question{}, fmt.Errorf("line %d: OPTIONS: %w", line, err)
	}
	if q.ID != "" {
		id, err := ParseQuestionID(q.ID)
		if err != nil {
			return Question{}, fmt.Errorf("line %d: ID: %w", line, err)
		}
		if id.Task != q.Task {
			return Question{}, syntaxf("line %d: ID %s does not belong to TASK %s", line, q.ID, q.Task)
		}
	}
	return q, nil
}

// ParseOptions parses "[A: first, B: second]": the letters must run A, B, C... in order; an
// option runs to the next ", X: " with X the next letter. "[]" is no options.
func ParseOptions(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") || len(s) < 2 {
		return nil, syntaxf("%q is not a list [A: ..., B: ...]", SanitizeTaskID(s))
	}
	inner := s[1 : len(s)-1]
	if strings.TrimSpace(inner) == "" {
		return []string{}, nil
	}
	if !strings.HasPrefix(inner, "A: ") {
		return nil, syntaxf("the list must start with \"A: \"")
	}
	rest := inner[len("A: "):]
	var opts []string
	for i := 1; ; i++ {
		if i >= MaxOptions {
			opts = append(opts, rest)
			break
		}
		sep := ", " + letter(i) + ": "
		j := strings.Index(rest, sep)
		if j < 0 {
			opts = append(opts, rest)
			break
		}
		opts = append(opts, rest[:j])
		rest = rest[j+len(sep):]
	}
	for i, o := range opts {
		opts[i] = strings.TrimSpace(o)
		if opts[i] == "" {
			return nil, syntaxf("option %s is empty", letter(i))
		}
	}
	return opts, nil
}
