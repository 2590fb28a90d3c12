//go:build bench

package cli

// The answer channels' rows of `make bench`: how long a question takes to reach the chat, and an
// answer given there to wake the waiting ask, against a fake Telegram Bot API on loopback. The
// bound beside each is the 250 ms.

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/bridge/lockfile"
)

func (b *bxBench) benchBridge() {
	c := newChannelWorld(b.t)
	c.send(c.orch, c.worker, "bench the answer channels")
	reps := b.n(20, 5)
	var toChat, stored, toAsk []time.Duration
	var cold time.Duration
	for i := 0; i < reps; i++ {
		if i == 1 {
			// From the second ask on a bridge already runs (the first ask started it): the
			// steady state. The first ask's figure includes starting the bridge.
			require.True(b.t, lockfile.Running(c.root, c.key()))
		}
		marker := fmt.Sprintf("bench question %d?", i)
		start := time.Now()
		ask := c.startAs(c.worker, nil, "ask", "--task", fmt.Sprintf("bench-%d", i), "--type", "yes-no", "--timeout", "60s", "--context", "A benchmark question.", "--", marker)
		m, tok := c.post(marker)
		d := m.At.Sub(start)
		// The bridge's own share: from the question's record (its asked_at, written as the ask
		// stores it) to the chat.
		var asked time.Time
		for _, j := range c.questions(false) {
			if j.Question == marker {
				asked = j.AskedAt
			}
		}
		if i == 0 {
			cold = d
		} else {
			toChat = append(toChat, d)
			stored = append(stored, m.At.Sub(asked))
		}
		exited := make(chan time.Time, 1)
		go func() { <-ask.finished; exited <- time.Now() }()
		id := c.tg.Press(777, c.tg.Chat, m.ID, "a:"+tok+":1")
		var end time.Time
		select {
		case end = <-exited:
		case <-time.After(30 * time.Second):
			b.t.Fatalf("the ask did not end after the answer: %s", ask.wait(b.t, time.Second))
		}
		r := ask.wait(b.t, time.Second)
		require.Equal(b.t, 0, r.code, "%s", r)
		require.True(b.t, strings.HasPrefix(r.stdout, "ANSWER: yes"), "%s", r)
		c.tg.Mu.Lock()
		served := c.tg.Served[id]
		c.tg.Mu.Unlock()
		toAsk = append(toAsk, end.Sub(served))
	}
	b.rowFloor("question reaches the chat (ask start → sendMessage served), bridge running", "time",
		bxMedian(toChat), math.NaN(), 0.25, "bound 250 ms", fmt.Sprintf("%d asks; p90 %s", len(toChat), bxFmt("time", bxPct(toChat, 0.9))))
	b.rowFloor("… of which the bridge (question stored → sendMessage served)", "time",
		bxMedian(stored), math.NaN(), 0.25, "bound 250 ms", fmt.Sprintf("%d asks; p90 %s", len(stored), bxFmt("time", bxPct(stored, 0.9))))
	b.rowFloor("question reaches the chat, the ask starting the bridge", "time",
		cold.Seconds(), math.NaN(), 0.25, "bound 250 ms", "1 ask (process start, settings, getMe)")
	b.rowFloor("chat answer wakes the ask (update served by getUpdates → ask exits)", "time",
		bxMedian(toAsk), math.NaN(), 0.25, "bound 250 ms", fmt.Sprintf("%d answers; p90 %s", len(toAsk), bxFmt("time", bxPct(toAsk, 0.9))))
	b.params = append(b.params, "answer channels: a fake Telegram Bot API on loopback (internal/bridge/chatfake); the ask runs in a worker pane of a private tmux server and pastes its question into a recorder pane as well")
}
