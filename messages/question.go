package messages

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// The question relay's pure parts: a worker's question, its type, urgency and validation (this
// file); task and question ids and file names (question_id.go); the QUESTION block
// (question_block.go); the ANSWER block and answer validation by question type (answer.go).

// QuestionType says which answers a question accepts.
type QuestionType string

// The answer types.
const (
	// Numbered: one of the options, by number (1), letter (A) or exact text.
	Numbered QuestionType = "numbered"
	// YesNo: yes or no (y, n; or the option's letter or number).
	YesNo QuestionType = "yes-no"
	// Fixed: one of the options' exact texts, nothing else.
	Fixed QuestionType = "fixed"
	// Freeform: any text, narrowed by the question's pattern when it has one.
	Freeform QuestionType = "freeform"
)

// ParseQuestionType accepts the four type names; "" means numbered.
func ParseQuestionType(s string) (QuestionType, error) {
	switch t := QuestionType(strings.ToLower(strings.TrimSpace(s))); t {
	case "":
		return Numbered, nil
	case Numbered, YesNo, Fixed, Freeform:
		return t, nil
	}
	return "", syntaxf("question type %q: want numbered, yes-no, fixed or freeform", SanitizeTaskID(s))
}

// Urgency says whether the asker waits.
type Urgency string

// The urgencies.
const (
	Blocking    Urgency = "blocking"
	NonBlocking Urgency = "non-blocking"
)

// ParseUrgency accepts blocking or non-blocking; "" means blocking.
func ParseUrgency(s string) (Urgency, error) {
	switch u := Urgency(strings.ToLower(strings.TrimSpace(s))); u {
	case "":
		return Blocking, nil
	case Blocking, NonBlocking:
		return u, nil
	}
	return "", syntaxf("urgency %q: want blocking or non-blocking", SanitizeTaskID(s))
}

// Question is one question of a worker.
type Question struct {
	ID      string       `json:"id,omitempty"` // QuestionID.String(); "" until stored
	Text    string       `json:"question"`
	Task    string       `json:"task_id"`
	Urgency Urgency      `json:"urgency"`
	Type    QuestionType `json:"type"`
	Options []string     `json:"options"`
	// Details are optional descriptions of the options (an envelope's option descriptions): shown
	// after the option in the QUESTION block, never part of the answer.
	Details []string `json:"details,omitempty"`
	Pattern string   `json:"pattern,omitempty"` // freeform only: a Go regexp the whole answer must match
	Context string   `json:"context"`
}

// yesNo are a yes-no question's options when the asker gives none.
var yesNo = []string{"yes", "no"}

// Normalized returns q with white space trimmed, the default type and urgency filled in, and a
// yes-no question's options set to [yes, no] when it has none.
func (q Question) Normalized() Question {
	q.Text = strings.TrimSpace(q.Text)
	q.Task = strings.TrimSpace(q.Task)
	q.Context = strings.TrimSpace(q.Context)
	q.Pattern = strings.TrimSpace(q.Pattern)
	if q.Type == "" {
		q.Type = Numbered
	}
	if q.Urgency == "" {
		q.Urgency = Blocking
	}
	opts := make([]string, len(q.Options))
	for i, o := range q.Options {
		opts[i] = strings.TrimSpace(o)
	}
	q.Options = opts
	if q.Type == YesNo && len(q.Options) == 0 {
		q.Options = append([]string(nil), yesNo...)
	}
	if len(q.Details) > 0 {
		d := make([]string, len(q.Details))
		for i, s := range q.Details {
			d[i] = strings.TrimSpace(s)
		}
		q.Details = d
	}
	return q
}

// optionSepRe finds what would split an option in the OPTIONS list: ", X: ".
var optionSepRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`, [A-Z]: `) })

// Validate checks a (normalized) question: task id, text, urgency, type, options for the type,
// pattern and context. The error names the field and what to do.
func (q Question) Validate() error {
	if err := ValidTaskID(q.Task); err != nil {
		return fmt.Errorf("--task: %w", err)
	}
	if q.ID != "" {
		id, err := ParseQuestionID(q.ID)
		if err != nil {
			return err
		}
		if id.Task != q.Task {
			return syntaxf("question id %s does not belong to task %s", q.ID, q.Task)
		}
	}
	if err := checkText("question", q.Text, MaxQuestionLen); err != nil {
		return err
	}
	if err := checkText("--context", q.Context, MaxContextLen); err != nil {
		return fmt.Errorf("%w (one or two sentences: what you found and why it blocks)", err)
	}
	if _, err := ParseUrgency(string(q.Urgency)); err != nil || q.Urgency == "" {
		return syntaxf("--urgency %q: want blocking or non-blocking", SanitizeTaskID(string(q.Urgency)))
	}
	// A permission question is asked by an agent's hook (PermissionQuestion), never by name.
	if t, err := ParseQuestionType(string(q.Type)); (err != nil || t != q.Type) && q.Type != Permission {
		return syntaxf("--type %q: want numbered, yes-no, fixed or freeform", SanitizeTaskID(string(q.Type)))
	}
	switch q.Type {
	case Numbered, Fixed:
		if len(q.Options) < 2 {
			return syntaxf("a %s question needs at least 2 options (--option A --option B); it has %d", q.Type, len(q.Options))
		}
	case YesNo:
		if len(q.Options) != 2 || !(sameFold(q.Options[0], "yes") && sameFold(q.Options[1], "no") ||
			sameFold(q.Options[0], "no") && sameFold(q.Options[1], "yes")) {
			return syntaxf("a yes-no question takes no options, or exactly yes and no in the order you prefer (the first is the default)")
		}
	case Freeform:
		if len(q.Options) > 0 {
			return syntaxf("a freeform question takes no options (any text is an answer); use --type numbered for a choice")
		}
	case Permission:
		if !permissionOptionsValid(q.Options) {
			return syntaxf("a permission question's options are allow, always and deny, in that order, allow and deny always among them")
		}
	}
	if q.Pattern != "" {
		if q.Type != Freeform {
			return syntaxf("--pattern narrows freeform answers only; this question is %s", q.Type)
		}
		if len(q.Pattern) > MaxPatternLen {
			return syntaxf("--pattern is longer than %d bytes", MaxPatternLen)
		}
		if _, err := regexp.Compile(anchor(q.Pattern)); err != nil {
			return syntaxf("--pattern: %v", err)
		}
	}
	if len(q.Options) > MaxOptions {
		return syntaxf("%d options; at most %d", len(q.Options), MaxOptions)
	}
	seen := map[string]int{}
	for i, o := range q.Options {
		name := fmt.Sprintf("option %s", letter(i))
		if err := checkText(name, o, MaxOptionLen); err != nil {
			return err
		}
		if optionSepRe().MatchString(o) {
			return syntaxf("%s holds %q, which would split the OPTIONS list; reword it", name, optionSepRe().FindString(o))
		}
		if j, dup := seen[strings.ToLower(o)]; dup {
			return syntaxf("options %s and %s are the same text %q; each option must differ", letter(j), letter(i), o)
		}
		seen[strings.ToLower(o)] = i
	}
	if len(q.Details) > len(q.Options) {
		return syntaxf("%d option descriptions for %d options", len(q.Details), len(q.Options))
	}
	for i, d := range q.Details {
		if len([]rune(d)) > MaxDetailLen || !utf8.ValidString(d) {
			return syntaxf("description of option %s is longer than %d characters or not UTF-8", letter(i), MaxDetailLen)
		}
	}
	return nil
}

func checkText(name, s string, max int) error {
	switch {
	case strings.TrimSpace(s) == "":
		return syntaxf("%s is empty", name)
	case !utf8.ValidString(s):
		return syntaxf("%s is not valid UTF-8", name)
	case utf8.RuneCountInString(s) > max:
		return syntaxf("%s is %d characters; at most %d", name, utf8.RuneCountInString(s), max)
	}
	return nil
}

func sameFold(a, b string) bool { return strings.EqualFold(a, b) }

// letter returns the option letter of index i: A, B, ...
func letter(i int) string {
	if i < 0 || i >= MaxOptions {
		return "?"
	}
	return string(rune('A' + i))
}

// OptionLetter returns the letter of option index i (0-based): "A", "B", ...
func OptionLetter(i int) string { return letter(i) }

func anchor(pattern string) string { return `^(?:` + pattern + `)$` }

// oneLine puts a field on one line: CR, LF and CRLF become one space, and so do NEL and the line
// and paragraph separators U+2028 and U+2029 (a line break for many readers: JavaScript, editors,
// some terminals); other white space at the ends is trimmed. The record keeps the original; only
// the block flattens it.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r\n", " ")
	s = lineBreaks.Replace(s)
	return strings.TrimSpace(s)
}

var lineBreaks = strings.NewReplacer("\n", " ", "\r", " ", "\u0085", " ", "\u2028", " ", "\u2029", " ")

// optionDisplay is an option as the QUESTION block shows it: its text, and its description after
// " — " when it has one.
func (q Question) optionDisplay(i int) string {
	o := oneLine(q.Options[i])
	if i < len(q.Details) && strings.TrimSpace(q.Details[i]) != "" {
		o += " — " + oneLine(q.Details[i])
	}
	return o
}
