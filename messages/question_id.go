package messages

// Task and question ids and the file names of a question's records.

import (
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

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
		return syntaxf("empty task id")
	case len(s) > MaxTaskIDLen:
		return syntaxf("task id %q is longer than %d characters", SanitizeTaskID(s), MaxTaskIDLen)
	case !taskIDRe().MatchString(s):
		return syntaxf("task id %q may hold only letters, digits, '_' and '-'", SanitizeTaskID(s))
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
		return QuestionID{}, syntaxf("question id %q is not of the form TASK.qN-xxxx (e.g. task-3.q1-a1b2)", SanitizeTaskID(s))
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
