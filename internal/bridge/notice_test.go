package bridge

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/bridge/chatfake"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
)

func tgNotices(f *chatfake.Telegram) []string {
	var out []string
	for _, m := range f.SentMsgs() {
		if strings.HasPrefix(m.Text, "📭") {
			out = append(out, m.Text)
		}
	}
	return out
}

// A dead letter is told once in the chat, restarts included, and one that ended before the
// bridge's state began is not told at all.
func TestTelegramTellsOfDeadLettersOnce(t *testing.T) {
	f := chatfake.NewTelegram(t)
	eng := &fakeEngine{}
	eng.deadLetter("1700000000000000000-aaaa", "20260117-110000-old1", time.Now().Add(-time.Hour))
	cfg, env := tgConfig(f)
	root := tempRoot(t)
	r := startHub(t, root, eng, cfg, env)
	eng.deadLetter("1700000000000000001-bbbb", "20260117-120000-a1b2", time.Now().Add(time.Second))
	eventually(t, "the dead letter told", func() bool { return len(tgNotices(f)) == 1 })
	n := tgNotices(f)[0]
	assert.Equal(t, "📭 not delivered (undeliverable): request 20260117-120000-a1b2 for pane %2 from %1: pane %2 no longer exists; re-send it with 'wcomm send --resend 20260117-120000-a1b2'", n)
	r.stop()

	r2 := startHub(t, root, eng, cfg, env)
	eng.deadLetter("1700000000000000002-cccc", "20260117-130000-c3d4", time.Now().Add(time.Second))
	eventually(t, "the second dead letter told", func() bool { return len(tgNotices(f)) == 2 })
	got := tgNotices(f)
	assert.Contains(t, got[1], "20260117-130000-c3d4")
	assert.Contains(t, got[0], "a1b2", "told once, restart included: %s", r2.log)
	for _, m := range got {
		assert.NotContains(t, m, "old1", "ended before the state began: not told")
	}
}

// The webhook gets one POST per dead letter, as it does per question, restarts included; a
// receiver that is down is tried again.
func TestWebhookPostsEachDeadLetterOnce(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		data, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(data))
	}))
	defer srv.Close()
	eng := &fakeEngine{}
	cfg := webhookConfig(srv.URL)
	root := tempRoot(t)
	r := startHub(t, root, eng, cfg, envOf(nil))
	eng.deadLetter("1700000000000000001-bbbb", "20260117-120000-a1b2", time.Now().Add(time.Second))
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(bodies) }
	eventually(t, "the dead letter posted", func() bool { return count() == 1 })
	r.stop()
	startHub(t, root, eng, cfg, envOf(nil))
	eng.deadLetter("1700000000000000002-cccc", "20260117-130000-c3d4", time.Now().Add(time.Second))
	eventually(t, "the second dead letter posted", func() bool { return count() == 2 })
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, bodies, 2)
	for _, want := range []string{`"event":"dead-letter"`, `"id":"1700000000000000001-bbbb"`, `"kind":"request"`, `"pane":"%2"`,
		`"exchange":"20260117-120000-a1b2"`, `"state":"undeliverable"`, `"reason":"pane %2 no longer exists"`, `--resend 20260117-120000-a1b2`} {
		assert.Contains(t, bodies[0], want)
	}
	assert.Contains(t, bodies[1], "20260117-130000-c3d4")
}

// A loop held is told in its own words, with the commands that release it.
func TestNoticeOfHeldLoop(t *testing.T) {
	n := noticeOf(mailbox.DeadLetter{ID: "1700000000000000001-bbbb", Kind: messages.MailRequest, Pane: "%4", From: "%3",
		Exchange: "20260117-120000-a1b2", State: exchange.StateHeld, Detail: "request chain 20260117-115900-c0de is 11 requests deep, past loops.chain_depth 10"})
	assert.Equal(t, "held", n.Event)
	assert.Equal(t, "held: request 20260117-120000-a1b2 for pane %4 from %3: request chain 20260117-115900-c0de is 11 requests deep, past loops.chain_depth 10; "+
		"agents may be messaging each other in a loop; release it with 'wcomm release 20260117-120000-a1b2', or all held for that pane with "+
		"'wcomm release --all --to %4' (more held of it are not told again)", n.Words())
}
