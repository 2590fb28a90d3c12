package bridge

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/bridge/chatfake"
)

// TestQuestionHeardFromTheFeed: with its full looks an hour apart, the bridge posts a question
// asked while it runs, and its answer's follow-up, from the engine's feed alone: no look of its own.
func TestQuestionHeardFromTheFeed(t *testing.T) {
	hubRescan = time.Hour
	defer func() { hubRescan = 0 }()
	f := chatfake.NewTelegram(t)
	eng := &fakeEngine{}
	r := runTelegram(t, f, eng)
	eng.add(yesNoQ, "e5f6")
	m := questionMsg(t, f, "e5f6")
	eng.add(numberedQ, "a7b8")
	questionMsg(t, f, "a7b8")

	f.Press(777, f.Chat, m.ID, "a:e5f6:1")
	f.WaitFor("the post of e5f6 marked answered", func() bool {
		for _, s := range f.Sent {
			if s.ID == m.ID && s.Edits > 0 {
				return true
			}
		}
		return false
	})
	r.stop()
}

// TestFullLookFollowsAPaneChange: a bridge told of the panes' changes asks tmux which panes live
// (a full look) when a pane changed while a question waits, not every Rescan: a bridge beside
// idle agents sleeps.
func TestFullLookFollowsAPaneChange(t *testing.T) {
	hubPanes = make(chan struct{}, 1)
	defer func() { hubPanes = nil }()
	f := chatfake.NewTelegram(t)
	eng := &fakeEngine{}
	r := runTelegram(t, f, eng)
	defer r.stop()
	eng.add(yesNoQ, "e5f6")
	questionMsg(t, f, "e5f6")
	fulls := func() int {
		eng.mu.Lock()
		defer eng.mu.Unlock()
		return eng.fulls
	}
	// The pane change the hub was started with (none was known) is judged once, then nothing.
	waitFull := func(after int) int {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for fulls() <= after {
			require.True(t, time.Now().Before(deadline), "no full look after a pane change")
			time.Sleep(5 * time.Millisecond) // polling the fake's count
		}
		return fulls()
	}
	n := waitFull(1)
	time.Sleep(300 * time.Millisecond) // thirty Rescans of the test's hub: none is a full look
	assert.Equal(t, n, fulls(), "full looks while no pane changed")
	hubPanes <- struct{}{}
	waitFull(n)
}
