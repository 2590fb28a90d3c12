package messages

// The ANSWER block a worker reads, and answer validation by question type: which answers a
// question accepts and how to say so.

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// ErrInvalidAnswer is wrapped by MatchAnswer's errors: the answer does not fit the question's type.
var ErrInvalidAnswer = errors.New("invalid answer")

// Who decided an answer (the ANSWER block's DECIDED_BY).
const (
	DecidedByUser     = "user"         // a person or the orchestrator, through wcomm answer
	DecidedByTimeout  = "auto-timeout" // nobody answered in time; the first option was taken
	DecidedByCap      = "cap-exceeded" // too many questions for this task; the worker decides
	DecidedByDisabled = "relay-disabled"
)

// Answer is the ANSWER block a worker reads.
type Answer struct {
	Text      string
	Task      string
	DecidedBy string
	ID        string // question id; "" when the question was never stored
}

var decidedByRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`) })

// FormatAnswerBlock renders:
//
//	ANSWER: Use bcrypt (already in deps)
//	TASK: task-3
//	DECIDED_BY: user
//	ID: task-3.q1-a1b2
//
// Each field on one line, no trailing newline.
func FormatAnswerBlock(a Answer) string {
	s := "ANSWER: " + oneLine(a.Text) + "\nTASK: " + oneLine(a.Task) + "\nDECIDED_BY: " + oneLine(a.DecidedBy)
	if a.ID != "" {
		s += "\nID: " + oneLine(a.ID)
	}
	return s
}

var answerKeys = map[string]bool{"ANSWER": true, "TASK": true, "DECIDED_BY": true, "ID": true}

// ParseAnswerBlock finds the first ANSWER block in text and parses it. ANSWER, TASK and
// DECIDED_BY are required, ID is optional; TASK, DECIDED_BY and ID are validated.
func ParseAnswerBlock(text string) (Answer, error) {
	f, line, err := blockLines(text, "ANSWER", answerKeys)
	if err != nil {
		return Answer{}, err
	}
	for _, k := range []string{"ANSWER", "TASK", "DECIDED_BY"} {
		if _, ok := f[k]; !ok {
			return Answer{}, syntaxf("line %d: ANSWER block has no %s: line", line, k)
		}
	}
	a := Answer{Text: f["ANSWER"], Task: f["TASK"], DecidedBy: f["DECIDED_BY"], ID: f["ID"]}
	if err := ValidTaskID(a.Task); err != nil {
		return Answer{}, fmt.Errorf("line %d: TASK: %w", line, err)
	}
	if !decidedByRe().MatchString(a.DecidedBy) {
		return Answer{}, fmt.Errorf("line %d: DECIDED_BY %q: want a word such as user, auto-timeout or cap-exceeded: %w",
			line, SanitizeTaskID(a.DecidedBy), ErrSyntax)
	}
	if a.ID != "" {
		id, err := ParseQuestionID(a.ID)
		if err != nil {
			return Answer{}, fmt.Errorf("line %d: ID: %w", line, err)
		}
		if id.Task != a.Task {
			return Answer{}, syntaxf("line %d: ID %s does not belong to TASK %s", line, a.ID, a.Task)
		}
	}
	return a, nil
}

// Match is an accepted answer.
type Match struct {
	// Value is the answer as the worker reads it: the option's text, "yes"/"no", the fixed answer,
	// or the freeform text.
	Value string `json:"answer"`
	// Option is the chosen option's number (1-based); 0 for a freeform answer.
	Option int `json:"option,omitempty"`
	// Form is how the answer named it: number, letter, text, yes-no, fixed, freeform or permission.
	Form string `json:"form"`
	// Note is a permission deny's message for the model, "" for none.
	Note string `json:"note,omitempty"`
}

// MatchAnswer checks raw against the question's type and returns the accepted answer, or an
// ErrInvalidAnswer error that lists the accepted forms. Matching trims white space and ignores
// case, except for freeform text, which is kept as given (trimmed).
func MatchAnswer(q Question, raw string) (Match, error) {
	a := strings.TrimSpace(raw)
	invalid := func() (Match, error) {
		return Match{}, fmt.Errorf("answer %q does not fit this %s question; accepted: %s: %w",
			SanitizeTaskID(a), typeOf(q), AcceptedForms(q), ErrInvalidAnswer)
	}
	if a == "" || !utf8.ValidString(a) {
		return invalid()
	}
	switch typeOf(q) {
	case Numbered:
		if m, ok := byNumberOrLetter(q, a); ok {
			return m, nil
		}
		if i, ok := byText(q, a); ok {
			return Match{Value: q.Options[i], Option: i + 1, Form: "text"}, nil
		}
	case YesNo:
		word := strings.ToLower(a)
		switch word {
		case "y":
			word = "yes"
		case "n":
			word = "no"
		}
		for i, o := range q.Options {
			if strings.EqualFold(o, word) {
				return Match{Value: strings.ToLower(o), Option: i + 1, Form: "yes-no"}, nil
			}
		}
		if m, ok := byNumberOrLetter(q, a); ok {
			m.Value = strings.ToLower(m.Value)
			return m, nil
		}
	case Fixed:
		if i, ok := byText(q, a); ok {
			return Match{Value: q.Options[i], Option: i + 1, Form: "fixed"}, nil
		}
	case Permission:
		if len(a) > 4000 {
			return invalid()
		}
		if m, ok := matchPermission(q, a); ok {
			return m, nil
		}
	case Freeform:
		if len(a) > 4000 {
			return invalid()
		}
		if q.Pattern != "" {
			re, err := regexp.Compile(anchor(q.Pattern))
			if err != nil || !re.MatchString(a) {
				return invalid()
			}
		}
		return Match{Value: a, Form: "freeform"}, nil
	}
	return invalid()
}

func typeOf(q Question) QuestionType {
	if q.Type == "" {
		return Numbered
	}
	return q.Type
}

// byNumberOrLetter takes "2", "B", "b", "B)", "B." or "B: <exact text of B>".
func byNumberOrLetter(q Question, a string) (Match, bool) {
	if n, err := strconv.Atoi(a); err == nil {
		if n >= 1 && n <= len(q.Options) {
			return Match{Value: q.Options[n-1], Option: n, Form: "number"}, true
		}
		return Match{}, false
	}
	up := strings.ToUpper(a)
	if len(up) >= 1 && up[0] >= 'A' && up[0] <= 'Z' {
		i := int(up[0] - 'A')
		rest := a[1:]
		if i >= len(q.Options) {
			return Match{}, false
		}
		switch {
		case rest == "" || rest == ")" || rest == ".":
			return Match{Value: q.Options[i], Option: i + 1, Form: "letter"}, true
		case strings.HasPrefix(rest, ":") && strings.EqualFold(strings.TrimSpace(rest[1:]), q.Options[i]):
			return Match{Value: q.Options[i], Option: i + 1, Form: "letter"}, true
		}
	}
	return Match{}, false
}

func byText(q Question, a string) (int, bool) {
	for i, o := range q.Options {
		if strings.EqualFold(strings.TrimSpace(o), a) {
			return i, true
		}
	}
	return 0, false
}

// AcceptedForms says in words which answers a question takes, for an error and for the hint under
// a relayed question.
func AcceptedForms(q Question) string {
	n := len(q.Options)
	switch typeOf(q) {
	case Numbered:
		if n == 0 {
			return "nothing (the question has no options)"
		}
		return fmt.Sprintf("a letter A-%s, a number 1-%d, or an option's exact text", letter(n-1), n)
	case YesNo:
		return "yes or no (y, n, A or B)"
	case Fixed:
		quoted := make([]string, n)
		for i, o := range q.Options {
			quoted[i] = strconv.Quote(oneLine(o))
		}
		return "exactly one of " + strings.Join(quoted, ", ")
	case Permission:
		return "allow, always (this session's rule for it) or deny (optionally with a message: 'deny: why')"
	case Freeform:
		if q.Pattern != "" {
			return "any text that matches the pattern " + oneLine(q.Pattern) + " as a whole"
		}
		return "any non-empty text"
	}
	return "nothing (unknown question type)"
}

// AnswerHint is the line under a relayed QUESTION block that says how to answer it, e.g.
// "To answer: wcomm answer task-3.q1-a1b2 A (a letter A-B, a number 1-2, or an option's exact text)".
func AnswerHint(q Question, command string) string {
	example := "A"
	switch typeOf(q) {
	case YesNo:
		example = "yes"
	case Fixed:
		example = "'ANSWER'"
		if len(q.Options) > 0 {
			example = shellWord(oneLine(q.Options[0]))
		}
	case Freeform:
		example = "'YOUR ANSWER'"
	case Permission:
		example = "allow"
	}
	return "To answer: " + command + " answer " + q.ID + " " + example + "   (accepted: " + AcceptedForms(q) + ")"
}

// shellWord quotes s for a shell when it holds anything but safe characters.
func shellWord(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,:/@%+=", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
