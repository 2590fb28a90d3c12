package bridge

import (
	"testing"
	"time"

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
