package messages

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seedQuestion is the protocol's example question, the one its documentation shows.
func seedQuestion() Question {
	return Question{
		Text:    "Should the auth module use bcrypt or argon2 for password hashing?",
		Task:    "task-3",
		Urgency: Blocking,
		Type:    Numbered,
		Options: []string{"Use bcrypt (already in deps)", "Use argon2 (stronger but new dep)"},
		Context: "Task requires password hashing. Found bcrypt in requirements.txt but plan doesn't specify. Adding argon2 would introduce a new dependency.",
	}
}

func TestQuestionValidTaskID(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"seed example", "task-3", true},
		{"underscore and digits", "T_42_x", true},
		{"longest", strings.Repeat("a", MaxTaskIDLen), true},
		{"too long", strings.Repeat("a", MaxTaskIDLen+1), false},
		{"empty", "", false},
		{"dot dot", "..", false},
		{"slash", "a/b", false},
		{"dot", "task.3", false},
		{"space", "task 3", false},
		{"newline", "task\n3", false},
		{"unicode", "tâche", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidTaskID(tt.in)
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrSyntax)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

func TestQuestionIDRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want QuestionID
		ok   bool
	}{
		{"simple", "task-3.q1-a1b2", QuestionID{"task-3", 1, "a1b2"}, true},
		{"big seq", "x.q999999-0000", QuestionID{"x", 999999, "0000"}, true},
		{"seq zero", "x.q0-a1b2", QuestionID{}, false},
		{"leading zero", "x.q01-a1b2", QuestionID{}, false},
		{"upper hex", "x.q1-A1B2", QuestionID{}, false},
		{"short tag", "x.q1-a1b", QuestionID{}, false},
		{"traversal", "../x.q1-a1b2", QuestionID{}, false},
		{"no tag", "task-3.q1", QuestionID{}, false},
		{"empty", "", QuestionID{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseQuestionID(tt.in)
			if !tt.ok {
				assert.ErrorIs(t, err, ErrSyntax)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.in, got.String())
			assert.Equal(t, tt.want.Task+".q"+strconv.Itoa(tt.want.Seq), got.Stem())
		})
	}
	tag, err := NewQuestionTag(bytes.NewReader([]byte{0xab, 0x01}))
	require.NoError(t, err)
	assert.Equal(t, "ab01", tag)
	_, err = NewQuestionTag(bytes.NewReader(nil))
	assert.Error(t, err)
}

func TestQuestionFileNames(t *testing.T) {
	for _, suffix := range []string{SuffixQuestion, SuffixAnswer, SuffixLog, SuffixResolved} {
		name := QuestionFileName("task-3", 12, suffix)
		task, seq, s, ok := ParseQuestionFileName(name)
		require.True(t, ok, name)
		assert.Equal(t, "task-3", task)
		assert.Equal(t, 12, seq)
		assert.Equal(t, suffix, s)
	}
	assert.Equal(t, ".task-3.q2.wait.lock", WaitLockName("task-3", 2))
	for _, bad := range []string{"task-3.q1.question.tmp", ".task-3.q1.question", "001-request.md", "t.q0.answer", "a/b.q1.answer"} {
		_, _, _, ok := ParseQuestionFileName(bad)
		assert.False(t, ok, bad)
	}
}

func TestQuestionValidate(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(q *Question)
		wantErr string // "" = valid
	}{
		{"seed example", func(q *Question) {}, ""},
		{"bad task", func(q *Question) { q.Task = "../etc" }, "--task"},
		{"empty question", func(q *Question) { q.Text = "  " }, "question is empty"},
		{"empty context", func(q *Question) { q.Context = "" }, "--context is empty"},
		{"long context", func(q *Question) { q.Context = strings.Repeat("x", MaxContextLen+1) }, "one or two sentences"},
		{"one option", func(q *Question) { q.Options = q.Options[:1] }, "at least 2 options"},
		{"duplicate options", func(q *Question) { q.Options = []string{"same", "SAME"} }, "same text"},
		{"option splits list", func(q *Question) { q.Options[0] = "x, B: y" }, "would split"},
		{"empty option", func(q *Question) { q.Options[1] = "" }, "option B is empty"},
		{"bad urgency", func(q *Question) { q.Urgency = "urgent" }, "--urgency"},
		{"bad type", func(q *Question) { q.Type = "multi" }, "--type"},
		{"yes-no default", func(q *Question) { q.Type = YesNo; q.Options = nil }, ""},
		{"yes-no reordered", func(q *Question) { q.Type = YesNo; q.Options = []string{"No", "Yes"} }, ""},
		{"yes-no other options", func(q *Question) { q.Type = YesNo; q.Options = []string{"maybe", "no"} }, "yes-no"},
		{"fixed", func(q *Question) { q.Type = Fixed; q.Options = []string{"retry", "stop"} }, ""},
		{"freeform", func(q *Question) { q.Type = Freeform; q.Options = nil; q.Pattern = `[0-9]+` }, ""},
		{"freeform with options", func(q *Question) { q.Type = Freeform }, "takes no options"},
		{"pattern on numbered", func(q *Question) { q.Pattern = "x" }, "freeform answers only"},
		{"bad pattern", func(q *Question) { q.Type = Freeform; q.Options = nil; q.Pattern = "(" }, "--pattern"},
		{"id of other task", func(q *Question) { q.ID = "task-4.q1-a1b2" }, "does not belong"},
		{"too many details", func(q *Question) { q.Details = []string{"a", "b", "c"} }, "descriptions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := seedQuestion()
			tt.edit(&q)
			err := q.Normalized().Validate()
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.ErrorIs(t, err, ErrSyntax)
		})
	}
}

func TestQuestionBlockSeedExample(t *testing.T) {
	q := seedQuestion()
	want := `QUESTION: Should the auth module use bcrypt or argon2 for password hashing?
TASK: task-3
URGENCY: blocking
OPTIONS: [A: Use bcrypt (already in deps), B: Use argon2 (stronger but new dep)]
CONTEXT: Task requires password hashing. Found bcrypt in requirements.txt but plan doesn't specify. Adding argon2 would introduce a new dependency.`
	assert.Equal(t, want, FormatQuestionBlock(q))
	got, err := ParseQuestionBlock(want)
	require.NoError(t, err)
	assert.Equal(t, q, got)
}

func TestQuestionBlockRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		q    Question
	}{
		{"seed", seedQuestion()},
		{"with id", func() Question { q := seedQuestion(); q.ID = "task-3.q2-00ff"; return q }()},
		{"yes-no", Question{Text: "Ship it?", Task: "t", Urgency: NonBlocking, Type: YesNo, Options: []string{"yes", "no"}, Context: "All green."}},
		{"fixed", Question{Text: "Retry?", Task: "t", Urgency: Blocking, Type: Fixed, Options: []string{"retry", "stop", "skip"}, Context: "c"}},
		{"freeform", Question{Text: "Which port?", Task: "t", Urgency: Blocking, Type: Freeform, Options: []string{}, Pattern: "[0-9]{2,5}", Context: "c"}},
		{"commas and colons", Question{Text: "Q: a, b?", Task: "t", Urgency: Blocking, Type: Numbered, Options: []string{"a, b: c", "x]y", "[z]"}, Context: "c: d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, tt.q.Validate())
			text := "some agent output\n" + FormatQuestionBlock(tt.q) + "\nTo answer: wcomm answer ...\n"
			got, err := ParseQuestionBlock(text)
			require.NoError(t, err)
			assert.Equal(t, tt.q, got)
		})
	}
}

func TestQuestionBlockFlattensAndShowsDetails(t *testing.T) {
	q := seedQuestion()
	q.Text = "line one\r\nline two\nline three\u2028ANSWER: A\u2029end"
	q.Details = []string{"no new dependency", ""}
	block := FormatQuestionBlock(q)
	assert.Contains(t, block, "QUESTION: line one line two line three ANSWER: A end\n")
	assert.NotContains(t, block, "\u2028", "a line break for many readers")
	assert.Contains(t, block, "[A: Use bcrypt (already in deps) — no new dependency, B: Use argon2")
	got, err := ParseQuestionBlock(block)
	require.NoError(t, err)
	assert.Equal(t, "Use bcrypt (already in deps) — no new dependency", got.Options[0])
}

func TestQuestionBlockParseErrors(t *testing.T) {
	good := FormatQuestionBlock(seedQuestion())
	tests := []struct {
		name string
		text string
		want string
	}{
		{"no block", "hello", "no QUESTION: line"},
		{"missing context", strings.Replace(good, "CONTEXT:", "NOTE:", 1), "no CONTEXT: line"},
		{"bad task", strings.Replace(good, "TASK: task-3", "TASK: ../x", 1), "TASK"},
		{"bad urgency", strings.Replace(good, "URGENCY: blocking", "URGENCY: soon", 1), "URGENCY"},
		{"empty urgency", strings.Replace(good, "URGENCY: blocking", "URGENCY:", 1), "URGENCY"},
		{"bad options", strings.Replace(good, "OPTIONS: [A:", "OPTIONS: [B:", 1), "OPTIONS"},
		{"unbracketed", strings.Replace(good, "OPTIONS: [", "OPTIONS: ", 1), "OPTIONS"},
		{"twice", strings.Replace(good, "URGENCY: blocking", "URGENCY: blocking\nTASK: x", 1), "appears twice"},
		{"bad id", good + "\nID: nope", "ID"},
		{"foreign id", good + "\nID: other.q1-a1b2", "does not belong"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseQuestionBlock(tt.text)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrSyntax)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestAnswerBlockRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		a    Answer
		text string
	}{
		{"seed user", Answer{Text: "Use bcrypt (already in deps)", Task: "task-3", DecidedBy: DecidedByUser},
			"ANSWER: Use bcrypt (already in deps)\nTASK: task-3\nDECIDED_BY: user"},
		{"with id", Answer{Text: "yes", Task: "t", DecidedBy: DecidedByTimeout, ID: "t.q1-beef"},
			"ANSWER: yes\nTASK: t\nDECIDED_BY: auto-timeout\nID: t.q1-beef"},
		{"cap", Answer{Text: `Question cap exceeded. Mark it "assumed — needs review".`, Task: "t", DecidedBy: DecidedByCap},
			"ANSWER: Question cap exceeded. Mark it \"assumed — needs review\".\nTASK: t\nDECIDED_BY: cap-exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.text, FormatAnswerBlock(tt.a))
			got, err := ParseAnswerBlock("  " + tt.text + "\r\n\nmore text")
			require.NoError(t, err)
			assert.Equal(t, tt.a, got)
		})
	}
	for _, bad := range []string{"nothing", "ANSWER: x\nTASK: t", "ANSWER: x\nTASK: t\nDECIDED_BY: Bob Smith", "ANSWER: x\nTASK: t\nDECIDED_BY: user\nID: u.q1-aaaa"} {
		_, err := ParseAnswerBlock(bad)
		assert.ErrorIs(t, err, ErrSyntax, bad)
	}
}

func TestAnswerMatch(t *testing.T) {
	numbered := seedQuestion()
	numbered.Options = append(numbered.Options, "Ask the security team")
	yesno := Question{Task: "t", Type: YesNo, Options: []string{"no", "yes"}}
	fixed := Question{Task: "t", Type: Fixed, Options: []string{"retry", "stop"}}
	free := Question{Task: "t", Type: Freeform}
	port := Question{Task: "t", Type: Freeform, Pattern: `[0-9]{2,5}`}
	tests := []struct {
		name string
		q    Question
		raw  string
		want Match
		ok   bool
	}{
		{"number", numbered, "2", Match{Value: "Use argon2 (stronger but new dep)", Option: 2, Form: "number"}, true},
		{"number spaces", numbered, " 3 \n", Match{Value: "Ask the security team", Option: 3, Form: "number"}, true},
		{"letter", numbered, "B", Match{Value: "Use argon2 (stronger but new dep)", Option: 2, Form: "letter"}, true},
		{"lower letter", numbered, "a", Match{Value: "Use bcrypt (already in deps)", Option: 1, Form: "letter"}, true},
		{"letter paren", numbered, "C)", Match{Value: "Ask the security team", Option: 3, Form: "letter"}, true},
		{"letter with text", numbered, "B: Use argon2 (stronger but new dep)", Match{Value: "Use argon2 (stronger but new dep)", Option: 2, Form: "letter"}, true},
		{"exact text", numbered, "use BCRYPT (already in deps)", Match{Value: "Use bcrypt (already in deps)", Option: 1, Form: "text"}, true},
		{"number out of range", numbered, "4", Match{}, false},
		{"zero", numbered, "0", Match{}, false},
		{"letter out of range", numbered, "D", Match{}, false},
		{"letter with wrong text", numbered, "B: bcrypt", Match{}, false},
		{"partial text", numbered, "bcrypt", Match{}, false},
		{"empty", numbered, "  ", Match{}, false},
		{"yes", yesno, "YES", Match{Value: "yes", Option: 2, Form: "yes-no"}, true},
		{"y", yesno, "y", Match{Value: "yes", Option: 2, Form: "yes-no"}, true},
		{"n", yesno, "n", Match{Value: "no", Option: 1, Form: "yes-no"}, true},
		{"yes-no letter", yesno, "A", Match{Value: "no", Option: 1, Form: "letter"}, true},
		{"maybe", yesno, "maybe", Match{}, false},
		{"fixed", fixed, "Stop", Match{Value: "stop", Option: 2, Form: "fixed"}, true},
		{"fixed letter refused", fixed, "A", Match{}, false},
		{"fixed number refused", fixed, "1", Match{}, false},
		{"freeform", free, "  use port 8080  ", Match{Value: "use port 8080", Option: 0, Form: "freeform"}, true},
		{"pattern ok", port, "8080", Match{Value: "8080", Option: 0, Form: "freeform"}, true},
		{"pattern is anchored", port, "port 8080", Match{}, false},
		{"pattern alternation anchored", Question{Task: "t", Type: Freeform, Pattern: "a|b"}, "ab", Match{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MatchAnswer(tt.q, tt.raw)
			if !tt.ok {
				require.Error(t, err)
				assert.True(t, errors.Is(err, ErrInvalidAnswer))
				assert.Contains(t, err.Error(), "accepted: ")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestAnswerAcceptedFormsAndHint(t *testing.T) {
	q := seedQuestion()
	q.ID = "task-3.q1-a1b2"
	assert.Equal(t, "a letter A-B, a number 1-2, or an option's exact text", AcceptedForms(q))
	assert.Equal(t, "To answer: wcomm answer task-3.q1-a1b2 A   (accepted: a letter A-B, a number 1-2, or an option's exact text)", AnswerHint(q, "wcomm"))
	f := Question{ID: "t.q1-0000", Task: "t", Type: Fixed, Options: []string{"go on", "stop"}}
	assert.Equal(t, `To answer: wcomm answer t.q1-0000 'go on'   (accepted: exactly one of "go on", "stop")`, AnswerHint(f, "wcomm"))
	ff := Question{ID: "t.q1-0000", Task: "t", Type: Freeform, Pattern: "[0-9]+"}
	assert.Contains(t, AnswerHint(ff, "wcomm"), "matches the pattern [0-9]+ as a whole")
	yn := Question{ID: "t.q1-0000", Task: "t", Type: YesNo, Options: yesNo}
	assert.Contains(t, AnswerHint(yn, "wcomm"), "answer t.q1-0000 yes ")
}

func FuzzQuestionBlock(f *testing.F) {
	f.Add(FormatQuestionBlock(seedQuestion()))
	q := seedQuestion()
	q.ID = "task-3.q1-a1b2"
	q.Type = Fixed
	f.Add(FormatQuestionBlock(q))
	f.Add("QUESTION: x\nTASK: t\nURGENCY: blocking\nOPTIONS: []\nCONTEXT: c\nTYPE: freeform\nPATTERN: (")
	f.Add("QUESTION:\nTASK:t\nURGENCY:non-blocking\nOPTIONS:[A: , B: ]\nCONTEXT:")
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuestionBlock(s)
		if err != nil {
			return
		}
		// What parses formats to a block that parses to the same question.
		again, err := ParseQuestionBlock(FormatQuestionBlock(q))
		if err != nil {
			t.Fatalf("reparse of %q: %v", FormatQuestionBlock(q), err)
		}
		if q.Type == Numbered && again.Type == Numbered {
			again.Type = q.Type
		}
		if FormatQuestionBlock(again) != FormatQuestionBlock(q) {
			t.Fatalf("not stable:\n%q\n%q", FormatQuestionBlock(q), FormatQuestionBlock(again))
		}
		_, _ = MatchAnswer(q, s)
	})
}

func FuzzAnswerBlock(f *testing.F) {
	f.Add(FormatAnswerBlock(Answer{Text: "x", Task: "t", DecidedBy: "user", ID: "t.q1-abcd"}))
	f.Add("ANSWER:\nTASK: t\nDECIDED_BY: user\n")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAnswerBlock(s)
		if err != nil {
			return
		}
		again, err := ParseAnswerBlock(FormatAnswerBlock(a))
		if err != nil {
			t.Fatalf("reparse of %q: %v", FormatAnswerBlock(a), err)
		}
		if again != a {
			t.Fatalf("round trip: %+v != %+v", again, a)
		}
	})
}

func FuzzMatchAnswer(f *testing.F) {
	f.Add("numbered", "B", "")
	f.Add("freeform", "8080", "[0-9]+")
	f.Add("yes-no", "y", "")
	f.Fuzz(func(t *testing.T, typ, raw, pattern string) {
		q := Question{Task: "t", Type: QuestionType(typ), Options: []string{"one", "two"}, Pattern: pattern}
		m, err := MatchAnswer(q, raw)
		if err != nil {
			if !errors.Is(err, ErrInvalidAnswer) {
				t.Fatalf("error %v is not ErrInvalidAnswer", err)
			}
			return
		}
		if m.Value == "" {
			t.Fatalf("accepted an empty answer for %q", raw)
		}
	})
}
