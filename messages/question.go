package messages

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// The question relay's pure parts: task and question ids, the file names of a question's records,
// the QUESTION and ANSWER blocks (the shapes other relays paste, plus an ID line) and answer
// validation by question type.

// ErrInvalidAnswer is wrapped by MatchAnswer's errors: the answer does not fit the question's type.
var ErrInvalidAnswer = errors.New("invalid answer")

// MaxTaskIDLen bounds a task id: it becomes part of file names.
const MaxTaskIDLen = 64

// Limits of a question's fields. A context should be one or two sentences; counting
// sentences misfires on "requirements.txt" or "e.g.", so the rule is enforced as a length.
const (
	MaxQuestionLen = 2000
	MaxContextLen  = 500
	MaxOptionLen   = 300
	MaxDetailLen   = 400
	MaxOptions     = 26 // one letter each
	MaxPatternLen  = 500
)

var taskIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_-]+$`) })

// ValidTaskID checks a task id against ^[a-zA-Z0-9_-]+$ (at most 64 characters): it becomes part
// of file names, so it is checked before the id is put into any path.
func ValidTaskID(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty task id: %w", ErrSyntax)
	case len(s) > MaxTaskIDLen:
		return fmt.Errorf("task id %q is longer than %d characters: %w", SanitizeTaskID(s), MaxTaskIDLen, ErrSyntax)
	case !taskIDRe().MatchString(s):
		return fmt.Errorf("task id %q may hold only letters, digits, '_' and '-': %w", SanitizeTaskID(s), ErrSyntax)
	}
	return nil
}

// SanitizeTaskID shortens and strips a rejected id for an error message, so the message stays
// one readable line whatever the input held.
func SanitizeTaskID(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 80 {
			b.WriteString("...")
			break
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// QuestionID names one question across the whole root: "{task}.q{seq}-{tag}", e.g.
// "task-3.q1-a1b2". Task and Seq name its files in its session folder; Tag (4 lowercase hex
// digits) tells apart questions of the same task and number in other session folders.
type QuestionID struct {
	Task string
	Seq  int
	Tag  string
}

// MaxQuestionSeq bounds the per-task sequence number (6 digits).
const MaxQuestionSeq = 999999

var questionIDRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([a-zA-Z0-9_-]{1,64})\.q([1-9][0-9]{0,5})-([0-9a-f]{4})$`)
})

// String formats the id.
func (q QuestionID) String() string {
	return q.Task + ".q" + strconv.Itoa(q.Seq) + "-" + q.Tag
}

// Stem returns "{task}.q{seq}", the common part of the question's file names.
func (q QuestionID) Stem() string { return QuestionStem(q.Task, q.Seq) }

// ParseQuestionID parses an id made by QuestionID.String. Nothing else passes, so a parsed id is
// safe to build file names from.
func ParseQuestionID(s string) (QuestionID, error) {
	m := questionIDRe().FindStringSubmatch(s)
	if m == nil {
		return QuestionID{}, fmt.Errorf("question id %q is not of the form TASK.qN-xxxx (e.g. task-3.q1-a1b2): %w", SanitizeTaskID(s), ErrSyntax)
	}
	n, _ := strconv.Atoi(m[2])
	return QuestionID{Task: m[1], Seq: n, Tag: m[3]}, nil
}

// NewQuestionTag returns 4 lowercase hex digits from 2 bytes of r.
func NewQuestionTag(r io.Reader) (string, error) {
	var b [2]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("random question tag: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// The records of one question in its session folder, named "{task}.q{seq}.{suffix}".
const (
	SuffixQuestion = "question"      // the question (JSON)
	SuffixAnswer   = "answer"        // the accepted answer (JSON), claimed once
	SuffixLog      = "answers.jsonl" // every answer attempt and delivery event
	SuffixResolved = "resolved"      // closed without an answer (JSON)
)

// QuestionStem returns "{task}.q{seq}".
func QuestionStem(task string, seq int) string { return task + ".q" + strconv.Itoa(seq) }

// QuestionFileName returns "{task}.q{seq}.{suffix}".
func QuestionFileName(task string, seq int, suffix string) string {
	return QuestionStem(task, seq) + "." + suffix
}

// WaitLockName returns ".{task}.q{seq}.wait.lock", held by a waiting ask.
func WaitLockName(task string, seq int) string { return "." + QuestionStem(task, seq) + ".wait.lock" }

var questionFileRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([a-zA-Z0-9_-]{1,64})\.q([1-9][0-9]{0,5})\.(question|answer|answers\.jsonl|resolved|intent|dispatch|result|output)$`)
})

// ParseQuestionFileName parses a name made by QuestionFileName; ok is false for any other name.
func ParseQuestionFileName(name string) (task string, seq int, suffix string, ok bool) {
	m := questionFileRe().FindStringSubmatch(name)
	if m == nil {
		return "", 0, "", false
	}
	n, _ := strconv.Atoi(m[2])
	return m[1], n, m[3], true
}

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
	return "", fmt.Errorf("question type %q: want numbered, yes-no, fixed or freeform: %w", SanitizeTaskID(s), ErrSyntax)
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
	return "", fmt.Errorf("urgency %q: want blocking or non-blocking: %w", SanitizeTaskID(s), ErrSyntax)
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
			return fmt.Errorf("question id %s does not belong to task %s: %w", q.ID, q.Task, ErrSyntax)
		}
	}
	if err := checkText("question", q.Text, MaxQuestionLen); err != nil {
		return err
	}
	if err := checkText("--context", q.Context, MaxContextLen); err != nil {
		return fmt.Errorf("%w (one or two sentences: what you found and why it blocks)", err)
	}
	if _, err := ParseUrgency(string(q.Urgency)); err != nil || q.Urgency == "" {
		return fmt.Errorf("--urgency %q: want blocking or non-blocking: %w", SanitizeTaskID(string(q.Urgency)), ErrSyntax)
	}
	if t, err := ParseQuestionType(string(q.Type)); err != nil || t != q.Type {
		return fmt.Errorf("--type %q: want numbered, yes-no, fixed or freeform: %w", SanitizeTaskID(string(q.Type)), ErrSyntax)
	}
	switch q.Type {
	case Numbered, Fixed:
		if len(q.Options) < 2 {
			return fmt.Errorf("a %s question needs at least 2 options (--option A --option B); it has %d: %w", q.Type, len(q.Options), ErrSyntax)
		}
	case YesNo:
		if len(q.Options) != 2 || !(sameFold(q.Options[0], "yes") && sameFold(q.Options[1], "no") ||
			sameFold(q.Options[0], "no") && sameFold(q.Options[1], "yes")) {
			return fmt.Errorf("a yes-no question takes no options, or exactly yes and no in the order you prefer (the first is the default): %w", ErrSyntax)
		}
	case Freeform:
		if len(q.Options) > 0 {
			return fmt.Errorf("a freeform question takes no options (any text is an answer); use --type numbered for a choice: %w", ErrSyntax)
		}
	}
	if q.Pattern != "" {
		if q.Type != Freeform {
			return fmt.Errorf("--pattern narrows freeform answers only; this question is %s: %w", q.Type, ErrSyntax)
		}
		if len(q.Pattern) > MaxPatternLen {
			return fmt.Errorf("--pattern is longer than %d bytes: %w", MaxPatternLen, ErrSyntax)
		}
		if _, err := regexp.Compile(anchor(q.Pattern)); err != nil {
			return fmt.Errorf("--pattern: %v: %w", err, ErrSyntax)
		}
	}
	if len(q.Options) > MaxOptions {
		return fmt.Errorf("%d options; at most %d: %w", len(q.Options), MaxOptions, ErrSyntax)
	}
	seen := map[string]int{}
	for i, o := range q.Options {
		name := fmt.Sprintf("option %s", letter(i))
		if err := checkText(name, o, MaxOptionLen); err != nil {
			return err
		}
		if optionSepRe().MatchString(o) {
			return fmt.Errorf("%s holds %q, which would split the OPTIONS list; reword it: %w", name, optionSepRe().FindString(o), ErrSyntax)
		}
		if j, dup := seen[strings.ToLower(o)]; dup {
			return fmt.Errorf("options %s and %s are the same text %q; each option must differ: %w", letter(j), letter(i), o, ErrSyntax)
		}
		seen[strings.ToLower(o)] = i
	}
	if len(q.Details) > len(q.Options) {
		return fmt.Errorf("%d option descriptions for %d options: %w", len(q.Details), len(q.Options), ErrSyntax)
	}
	for i, d := range q.Details {
		if len([]rune(d)) > MaxDetailLen || !utf8.ValidString(d) {
			return fmt.Errorf("description of option %s is longer than %d characters or not UTF-8: %w", letter(i), MaxDetailLen, ErrSyntax)
		}
	}
	return nil
}

func checkText(name, s string, max int) error {
	switch {
	case strings.TrimSpace(s) == "":
		return fmt.Errorf("%s is empty: %w", name, ErrSyntax)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s is not valid UTF-8: %w", name, ErrSyntax)
	case utf8.RuneCountInString(s) > max:
		return fmt.Errorf("%s is %d characters; at most %d: %w", name, utf8.RuneCountInString(s), max, ErrSyntax)
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
		return nil, 0, fmt.Errorf("no %s: line: %w", first, ErrSyntax)
	}
	fields := map[string]string{}
	for i := start; i < len(lines); i++ {
		l := strings.TrimRight(strings.TrimLeft(lines[i], " \t"), "\r")
		key, val, ok := strings.Cut(l, ":")
		if !ok || !keys[key] {
			break
		}
		if _, dup := fields[key]; dup {
			return nil, start + 1, fmt.Errorf("line %d: %s: appears twice: %w", i+1, key, ErrSyntax)
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
			return Question{}, fmt.Errorf("line %d: QUESTION block has no %s: line: %w", line, k, ErrSyntax)
		}
	}
	q := Question{Text: f["QUESTION"], Task: f["TASK"], Context: f["CONTEXT"], Pattern: f["PATTERN"], ID: f["ID"]}
	if err := ValidTaskID(q.Task); err != nil {
		return Question{}, fmt.Errorf("line %d: TASK: %w", line, err)
	}
	if q.Urgency, err = ParseUrgency(f["URGENCY"]); err != nil || f["URGENCY"] == "" {
		return Question{}, fmt.Errorf("line %d: URGENCY %q: want blocking or non-blocking: %w", line, SanitizeTaskID(f["URGENCY"]), ErrSyntax)
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
			return Question{}, fmt.Errorf("line %d: ID %s does not belong to TASK %s: %w", line, q.ID, q.Task, ErrSyntax)
		}
	}
	return q, nil
}

// ParseOptions parses "[A: first, B: second]": the letters must run A, B, C... in order; an
// option runs to the next ", X: " with X the next letter. "[]" is no options.
func ParseOptions(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") || len(s) < 2 {
		return nil, fmt.Errorf("%q is not a list [A: ..., B: ...]: %w", SanitizeTaskID(s), ErrSyntax)
	}
	inner := s[1 : len(s)-1]
	if strings.TrimSpace(inner) == "" {
		return []string{}, nil
	}
	if !strings.HasPrefix(inner, "A: ") {
		return nil, fmt.Errorf("the list must start with \"A: \": %w", ErrSyntax)
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
			return nil, fmt.Errorf("option %s is empty: %w", letter(i), ErrSyntax)
		}
	}
	return opts, nil
}

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
			return Answer{}, fmt.Errorf("line %d: ANSWER block has no %s: line: %w", line, k, ErrSyntax)
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
			return Answer{}, fmt.Errorf("line %d: ID %s does not belong to TASK %s: %w", line, a.ID, a.Task, ErrSyntax)
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
	// Form is how the answer named it: number, letter, text, yes-no, fixed or freeform.
	Form string `json:"form"`
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
