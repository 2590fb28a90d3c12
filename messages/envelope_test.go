package messages

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seedEnvelope is the openQuestions envelope as an agent's final message carries it.
const seedEnvelope = "I need two decisions before I write the design.\n\n```json\n" + `{
"openQuestions": [
{
"question": "How should rate limiting be enforced for unauthenticated requests?",
"header": "Rate limit",
"options": [
{ "label": "Token bucket per IP (Recommended)", "description": "Simple, no shared state. Trade-off: NAT'd users share a bucket." },
{ "label": "Sliding window per IP", "description": "More accurate burst handling. Trade-off: needs Redis." },
{ "label": "No limit on unauthenticated path", "description": "Smallest change. Trade-off: leaves DoS surface open." }
]
}
]
}` + "\n```\n"

func envelopeOf(n int) string {
	var qs []string
	for i := 0; i < n; i++ {
		qs = append(qs, fmt.Sprintf(`{"question": "Question %d?", "options": [{"label": "yes %d"}, {"label": "no %d", "description": "d"}]}`, i, i, i))
	}
	return "text\n```json\n{\"openQuestions\": [" + strings.Join(qs, ",\n") + "]}\n```\n"
}

func TestEnvelopeSeedExample(t *testing.T) {
	env, err := ParseEnvelope(seedEnvelope)
	require.NoError(t, err)
	require.NotNil(t, env)
	assert.Equal(t, 3, env.Line)
	require.Len(t, env.Questions, 1)
	q := env.Questions[0]
	assert.Equal(t, "Rate limit", q.Header)
	assert.Equal(t, OpenOption{Label: "Sliding window per IP", Description: "More accurate burst handling. Trade-off: needs Redis."}, q.Options[1])

	qs, err := env.ToQuestions("task-7", Blocking, "")
	require.NoError(t, err)
	require.Len(t, qs, 1)
	assert.Equal(t, "Rate limit: How should rate limiting be enforced for unauthenticated requests?", qs[0].Text)
	assert.Equal(t, []string{"Token bucket per IP (Recommended)", "Sliding window per IP", "No limit on unauthenticated path"}, qs[0].Options)
	assert.Equal(t, "Question 1 of 1 from the agent's openQuestions envelope.", qs[0].Context)
	m, err := MatchAnswer(qs[0], "sliding window per ip")
	require.NoError(t, err)
	assert.Equal(t, 2, m.Option)
}

func TestEnvelopeFinding(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		wantNone bool
		wantLine int
		wantQ    int
	}{
		{"no fence", "just prose, nothing to ask", true, 0, 0},
		{"summary only", "```json\n{\"summary\": \"done\"}\n```", true, 0, 0},
		{"other language", "```yaml\nopenQuestions: []\n```", true, 0, 0},
		{"top-level array skipped", "```json\n[{\"openQuestions\": []}]\n```\n" + envelopeOf(1), false, 5, 1},
		{"summary first, envelope second", "```json\n{\"summary\": 1}\n```\n" + envelopeOf(2), false, 5, 2},
		{"envelope first wins over later", envelopeOf(1) + envelopeOf(3), false, 2, 1},
		{"broken non-envelope json skipped", "```json\n{oops\n```\n" + envelopeOf(1), false, 5, 1},
		{"json inside a text fence is content", "````text\n```json\n{\"openQuestions\": [1]}\n```\n````\n" + envelopeOf(1), false, 7, 1},
		{"indented fence and JSON info case", "   ```JSON\n" + strings.TrimPrefix(envelopeOf(1), "text\n```json\n"), false, 1, 1},
		{"tilde fence", "~~~json\n{\"openQuestions\": [{\"question\": \"q\", \"options\": [{\"label\": \"a\"}, {\"label\": \"b\"}]}]}\n~~~", false, 1, 1},
		{"unclosed fence runs to the end", "```json\n{\"openQuestions\": [{\"question\": \"q\", \"options\": [{\"label\": \"a\"}, {\"label\": \"b\"}]}]}", false, 1, 1},
		{"crlf", strings.ReplaceAll(envelopeOf(4), "\n", "\r\n"), false, 2, 4},
		{"four", envelopeOf(4), false, 2, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := ParseEnvelope(tt.doc)
			require.NoError(t, err)
			if tt.wantNone {
				assert.Nil(t, env)
				return
			}
			require.NotNil(t, env)
			assert.Equal(t, tt.wantLine, env.Line)
			assert.Len(t, env.Questions, tt.wantQ)
		})
	}
}

func TestEnvelopeErrors(t *testing.T) {
	one := func(body string) string { return "intro\n```json\n" + body + "\n```\n" }
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"five questions", envelopeOf(5), `line 2: openQuestions: 5 questions; at most 4 per envelope (split them, or defer the rest to a "## Open questions (deferred)" section)`},
		{"empty array", one(`{"openQuestions": []}`), "line 2: openQuestions: the array is empty; omit the envelope when there is nothing to ask"},
		{"not an array", one(`{"openQuestions": {"question": "q"}}`), "line 2: openQuestions: want an array, got an object"},
		{"item not object", one(`{"openQuestions": ["q"]}`), "line 2: openQuestions[0]: want an object, got a string"},
		{"missing question", one(`{"openQuestions": [{"options": []}]}`), `line 2: openQuestions[0]: missing "question"`},
		{"empty question", one(`{"openQuestions": [{"question": " ", "options": []}]}`), "line 2: openQuestions[0].question: is empty"},
		{"question number", one(`{"openQuestions": [{"question": 3}]}`), "line 2: openQuestions[0].question: want a string, got a number"},
		{"header type", one(`{"openQuestions": [{"question": "q", "header": null, "options": []}]}`), "line 2: openQuestions[0].header: want a string, got null"},
		{"missing options", one(`{"openQuestions": [{"question": "q"}]}`), `line 2: openQuestions[0]: missing "options"`},
		{"one option", one(`{"openQuestions": [{"question": "q", "options": [{"label": "a"}]}]}`), "line 2: openQuestions[0].options: 1 option(s); at least 2"},
		{"missing label", one(`{"openQuestions": [{"question": "q", "options": [{"label": "a"}, {"label": "b"}]}, {"question": "r", "options": [{"label": "a"}, {"label": "b"}, {"description": "no label"}]}]}`),
			`line 2: openQuestions[1].options[2]: missing "label" (the user has nothing to pick)`},
		{"empty label", one(`{"openQuestions": [{"question": "q", "options": [{"label": ""}, {"label": "b"}]}]}`), "line 2: openQuestions[0].options[0].label: is empty"},
		{"label type", one(`{"openQuestions": [{"question": "q", "options": [{"label": true}, {"label": "b"}]}]}`), "line 2: openQuestions[0].options[0].label: want a string, got a boolean"},
		{"description type", one(`{"openQuestions": [{"question": "q", "options": [{"label": "a", "description": 1}, {"label": "b"}]}]}`), "line 2: openQuestions[0].options[0].description: want a string, got a number"},
		{"duplicate label", one(`{"openQuestions": [{"question": "q", "options": [{"label": "a"}, {"label": "A"}]}]}`), `line 2: openQuestions[0].options[1].label: "A" repeats the label of option 0`},
		{"malformed json", one("{\"openQuestions\": [\n  {\"question\": \"q\",,}\n]}"), "line 4: malformed JSON: invalid character ',' looking for beginning of object key string"},
		{"truncated json", one("{\"openQuestions\": [\n  {\"question\": \"q\""), "line 4: malformed JSON: the JSON ends before the value is complete"},
		{"trailing text", one(`{"openQuestions": [{"question": "q", "options": [{"label": "a"}, {"label": "b"}]}]} extra`), "line 3: malformed JSON: invalid character 'e' looking for beginning of value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := ParseEnvelope(tt.doc)
			require.Error(t, err)
			assert.Nil(t, env)
			assert.Equal(t, tt.want, err.Error())
			assert.ErrorIs(t, err, ErrSyntax)
			var ee *EnvelopeError
			assert.True(t, errors.As(err, &ee))
		})
	}
}

func TestEnvelopeToQuestionsErrors(t *testing.T) {
	env, err := ParseEnvelope("```json\n" + `{"openQuestions": [{"question": "q", "options": [{"label": "a, B: b"}, {"label": "c"}]}]}` + "\n```")
	require.NoError(t, err)
	_, err = env.ToQuestions("task-1", Blocking, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 1: openQuestions[0]: option A holds")
	_, err = envelopeMust(t, envelopeOf(1)).ToQuestions("bad/task", Blocking, "ctx")
	assert.Contains(t, err.Error(), "--task")
}

func envelopeMust(t *testing.T, doc string) *Envelope {
	env, err := ParseEnvelope(doc)
	require.NoError(t, err)
	require.NotNil(t, env)
	return env
}

func FuzzEnvelope(f *testing.F) {
	f.Add(seedEnvelope)
	f.Add(envelopeOf(4))
	f.Add(envelopeOf(5))
	f.Add("```json\n{\"openQuestions\": [{\"question\": \"q\", \"options\": [{\"label\": \"a\"}, {}]}]}\n```")
	f.Add("````\n```json\n{}\n````")
	f.Fuzz(func(t *testing.T, doc string) {
		env, err := ParseEnvelope(doc)
		if err != nil {
			var ee *EnvelopeError
			if !errors.As(err, &ee) || ee.Line < 1 {
				t.Fatalf("error %v is not an *EnvelopeError with a line", err)
			}
			return
		}
		if env == nil {
			return
		}
		if n := len(env.Questions); n < 1 || n > MaxEnvelopeQuestions {
			t.Fatalf("%d questions accepted", n)
		}
		for _, q := range env.Questions {
			if strings.TrimSpace(q.Question) == "" || len(q.Options) < 2 {
				t.Fatalf("accepted %+v", q)
			}
			for _, o := range q.Options {
				if strings.TrimSpace(o.Label) == "" {
					t.Fatalf("accepted an option without a label: %+v", q)
				}
			}
		}
		if qs, err := env.ToQuestions("task", Blocking, ""); err == nil {
			for _, q := range qs {
				if err := q.Validate(); err != nil {
					t.Fatalf("ToQuestions returned an invalid question: %v", err)
				}
			}
		}
	})
}
