package bridge

// A question within ask's own limits is over every chat service's: what is posted is fitted to
// the service, the whole question stays one command or one thread away, and a post a service
// refuses for good is recorded and holds up no other question.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/bridge/chatfake"
	"github.com/wcomm/wcomm/messages"
)

// longQ is a question at ask's limits: 2,000 characters of text, 500 of context, 26 options of
// 300, with characters the markup escapes.
func longQ() messages.Question {
	q := messages.Question{Task: "task-7", Type: messages.Numbered,
		Text:    "Which <one> & why? " + strings.Repeat("x", messages.MaxQuestionLen-40) + " END-OF-TEXT",
		Context: strings.Repeat("c", messages.MaxContextLen-12) + " END-OF-CTX"}
	for i := 0; i < messages.MaxOptions; i++ {
		o := fmt.Sprintf("option %02d ", i) + strings.Repeat("o", messages.MaxOptionLen-20)
		q.Options = append(q.Options, o+fmt.Sprintf(" END-%02d", i))
	}
	require.NoError(nil, q.Normalized().Validate())
	return q
}

func TestLongQuestionFitsTelegramAndDetailsShowItWhole(t *testing.T) {
	f := chatfake.NewTelegram(t)
	eng := &fakeEngine{}
	long := eng.add(longQ(), "a1b2")
	eng.add(numberedQ, "c3d4")
	runTelegram(t, f, eng)
	m := questionMsg(t, f, "a1b2")
	assert.LessOrEqual(t, len([]rune(m.Text)), chatfake.TelegramMaxText)
	assert.Contains(t, m.Text, "Which <one> & why?")
	assert.Contains(t, m.Text, "/details_a1b2")
	assert.Len(t, flatten(m.Keyboard), messages.MaxOptions, "a button per option")
	questionMsg(t, f, "c3d4") // the next question is not held up

	n := len(f.SentMsgs())
	f.Say(777, f.Chat, "/details_a1b2", 0)
	var whole string
	eventually(t, "the whole question in the details", func() bool {
		var b strings.Builder
		for _, s := range f.SentMsgs()[n:] {
			b.WriteString(s.Text + "\n")
		}
		whole = b.String()
		return strings.Contains(whole, "END-25") && strings.Contains(whole, "Accepted:")
	})
	q := longQ()
	assert.Contains(t, whole, q.Text, "the text whole, as written")
	assert.Contains(t, whole, q.Context)
	for i, o := range q.Options {
		assert.Contains(t, whole, messages.OptionLetter(i)+") "+o)
	}
	assert.Greater(t, len(f.SentMsgs())-n, 1, "split into several messages")
	assert.Contains(t, whole, long)
}

func TestLongQuestionFitsSlackAndItsThreadHoldsItWhole(t *testing.T) {
	f := chatfake.NewSlack(t)
	eng := &fakeEngine{}
	eng.add(longQ(), "a1b2")
	eng.add(numberedQ, "c3d4")
	runSlack(t, f, eng)
	f.WaitConnected()
	p := slackQuestionPost(t, f, "a1b2")
	assert.Contains(t, p.Text, "Which &lt;one&gt; &amp; why?")
	assert.Len(t, p.Buttons, 25, "Slack takes at most 25 buttons; the 26th option is answered in the thread")
	slackQuestionPost(t, f, "c3d4") // the next question is not held up
	var whole string
	eventually(t, "the whole question in the post's thread", func() bool {
		posts, _, _ := f.Snapshot()
		var b strings.Builder
		for _, x := range posts {
			if x.ThreadTS == p.TS {
				b.WriteString(slackUnescape(x.Text) + "\n")
			}
		}
		whole = b.String()
		return strings.Contains(whole, "END-25") && strings.Contains(whole, "Accepted:")
	})
	q := longQ()
	assert.Contains(t, whole, q.Text)
	assert.Contains(t, whole, q.Context)
	for i, o := range q.Options {
		assert.Contains(t, whole, messages.OptionLetter(i)+") "+o)
	}
}

// A refusal for good (400) is recorded in the state and the log, shown by doctor's lines, and the
// next question is posted; the refused one is not tried again.
func TestTelegramRefusalIsRecordedAndHoldsUpNoOther(t *testing.T) {
	f := chatfake.NewTelegram(t)
	f.FailNext("sendMessage", http.StatusBadRequest)
	eng := &fakeEngine{}
	first := eng.add(numberedQ, "a1b2")
	eng.add(messages.Question{Text: "Ship it?", Task: "task-4", Type: messages.YesNo}, "c3d4")
	root := tempRoot(t)
	cfg, env := tgConfig(f)
	r := startHub(t, root, eng, cfg, env)
	t.Cleanup(func() { t.Log(r.log.String()) })
	questionMsg(t, f, "c3d4")
	assert.Zero(t, countPostsOf(f, "a1b2"), "the refused question is not posted")
	assert.Contains(t, r.log.String(), "telegram refused question "+first+" for good")
	r.stop()
	st, err := ReadState(root, "")
	require.NoError(t, err)
	require.NotNil(t, st.Posts["telegram"][first])
	assert.Contains(t, st.Posts["telegram"][first].Refused, "400")
	checks := Refusals(context.Background(), eng, root, "")
	require.Len(t, checks, 1)
	assert.Equal(t, "question "+first, checks[0].What)
	assert.False(t, checks[0].OK)

	// A restarted bridge does not try it again.
	calls := func() int { f.Mu.Lock(); defer f.Mu.Unlock(); return f.Calls["sendMessage"] }
	before := calls()
	eng.add(messages.Question{Text: "And this?", Task: "task-5", Type: messages.YesNo}, "e5f6")
	startHub(t, root, eng, cfg, env)
	questionMsg(t, f, "e5f6")
	assert.Equal(t, before+1, calls(), "only the new question was posted")
}

func countPostsOf(f *chatfake.Telegram, tok string) int {
	n := 0
	for _, m := range f.SentMsgs() {
		if strings.Contains(m.Text, tok) && len(m.Keyboard) > 0 {
			n++
		}
	}
	return n
}

// A question file that is not valid (as written by hand) and one that does not load are posted
// nowhere, recorded and told once; the valid one is posted.
func TestUnpostableQuestionsAreRecordedNotPosted(t *testing.T) {
	f := chatfake.NewTelegram(t)
	eng := &fakeEngine{problems: []string{"/root/s/x.q1.question is more than the 262144 bytes an ask writes; it is not read: too large"}}
	bad := eng.add(messages.Question{Text: strings.Repeat("y", 100000), Task: "task-6", Type: messages.Freeform}, "a1b2")
	eng.add(numberedQ, "c3d4")
	root := tempRoot(t)
	cfg, env := tgConfig(f)
	r := startHub(t, root, eng, cfg, env)
	questionMsg(t, f, "c3d4")
	assert.Zero(t, countPostsOf(f, "a1b2"))
	eventually(t, "both recorded", func() bool {
		var n int
		r.hub.st.view(func(s *State) { n = len(s.Unpostable) })
		return n == 2
	})
	assert.Equal(t, 1, strings.Count(r.log.String(), "question "+bad+" is posted nowhere"), "told once")
	assert.Equal(t, 1, strings.Count(r.log.String(), "a question file is posted nowhere"), "told once")
}

// The webhook posts at most maxWebhookBody bytes, and a 4xx refusal is recorded, not retried.
func TestWebhookBoundsItsPostsAndRecordsARefusal(t *testing.T) {
	var mu sync.Mutex
	var sizes []int
	var ids []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var p WebhookPayload
		_ = json.Unmarshal(data, &p)
		mu.Lock()
		defer mu.Unlock()
		sizes, ids = append(sizes, len(data)), append(ids, p.ID)
		if p.Token == "a1b2" {
			w.WriteHeader(http.StatusUnprocessableEntity)
		}
	}))
	defer srv.Close()
	eng := &fakeEngine{}
	refused := eng.add(numberedQ, "a1b2")
	q := longQ()
	for i := range q.Options {
		q.Options[i] = strings.Repeat("\x01", 290) + fmt.Sprint(i) // 6 bytes each in JSON
	}
	big := eng.add(q, "c3d4")
	root := tempRoot(t)
	r := startHub(t, root, eng, webhookConfig(srv.URL), envOf(nil))
	eventually(t, "both posted once", func() bool { mu.Lock(); defer mu.Unlock(); return len(ids) == 2 })
	r.stop()
	mu.Lock()
	assert.Equal(t, []string{refused, big}, ids, "each once: the refusal is not retried")
	for _, n := range sizes {
		assert.LessOrEqual(t, n, maxWebhookBody)
	}
	mu.Unlock()
	st, err := ReadState(root, "")
	require.NoError(t, err)
	assert.Contains(t, st.Posts["webhook"][refused].Refused, "HTTP 422")
	assert.NotEmpty(t, st.Posts["webhook"][big].Ref)
}
