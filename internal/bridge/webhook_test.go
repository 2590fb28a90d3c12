package bridge

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/bridge/chatfake"
	"github.com/wcomm/wcomm/messages"
)

// A webhook receiver that fails its first call with 503 and records the rest.
type hookRecv struct {
	mu     sync.Mutex
	bodies []map[string]any
	calls  int
}

func TestWebhookPostsEachQuestionOnceAcrossRestartsAndFailures(t *testing.T) {
	rec := &hookRecv{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		rec.calls++
		if rec.calls == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		data, _ := io.ReadAll(r.Body)
		var m map[string]any
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(data, &m) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		rec.bodies = append(rec.bodies, m)
	}))
	defer srv.Close()
	eng := &fakeEngine{}
	id := eng.add(numberedQ, "a1b2")
	cfg := &messages.ChannelsConfig{Webhook: &messages.WebhookConfig{URL: srv.URL + "/my-topic"}}
	root := tempRoot(t)
	r := startHub(t, root, eng, cfg, envOf(nil))
	count := func() int { rec.mu.Lock(); defer rec.mu.Unlock(); return len(rec.bodies) }
	eventually(t, "the webhook post", func() bool { return count() == 1 })
	r.stop()
	r2 := startHub(t, root, eng, cfg, envOf(nil))
	id2 := eng.add(yesNoQ, "c3d4")
	eventually(t, "the second question's post", func() bool { return count() == 2 })
	r2.stop()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Len(t, rec.bodies, 2, "one POST per question, restarts included")
	b := rec.bodies[0]
	assert.Equal(t, id, b["id"])
	assert.Equal(t, numberedQ.Text, b["question"])
	assert.Equal(t, []any{"Store<User> & co", "old cache"}, b["options"])
	assert.Equal(t, "%5", b["worker"])
	assert.Equal(t, "task-3", b["task"])
	assert.Equal(t, id2, rec.bodies[1]["id"])
	assert.Contains(t, r.log.String(), "HTTP 503")
}

func TestStateForgetsQuestionsGoneFromTheRoot(t *testing.T) {
	f := chatfake.NewTelegram(t)
	eng := &fakeEngine{}
	id := eng.add(yesNoQ, "c3d4")
	r := runTelegram(t, f, eng)
	questionMsg(t, f, "c3d4")
	eventually(t, "the post recorded", func() bool { return r.hub.PostRef("telegram", id) != "" })
	eng.mu.Lock()
	eng.qs = nil // its session folder removed
	eng.mu.Unlock()
	eventually(t, "the post closed and the state pruned", func() bool {
		var n int
		r.hub.st.view(func(s *State) { n = len(s.Tokens) + len(s.Posts["telegram"]) })
		return n == 0
	})
	f.Mu.Lock()
	defer f.Mu.Unlock()
	require.Len(t, f.Sent, 1, "nothing posted again")
	m := f.Sent[0]
	assert.Equal(t, 1, m.Edits)
	assert.Contains(t, m.Text, "gone:", "the post says the question is gone before it is forgotten")
	assert.NotContains(t, m.Text, id, "compact: the token names it")
}
