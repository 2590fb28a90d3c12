package tmuxcomm

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A notify's settle waits for the awaits its nudge woke, and says whether they all returned in
// the time given; with none woken there is nothing to wait for.
func TestNudgeSettleWaitsForTheAwaitsItWoke(t *testing.T) {
	a := &awaitNudges{m: map[string][]*awaitNudge{}}
	const path = "/root/s/002-response.md"
	woken := 0
	_, forget := a.add(path, func() { woken++ })
	assert.True(t, a.waiting(path))
	settle := a.wake(path)
	assert.Equal(t, 1, woken, "the await's watch was nudged")
	assert.False(t, settle(time.Millisecond), "the await has not returned")
	forget()
	assert.True(t, settle(time.Hour), "the await returned")
	assert.False(t, a.waiting(path))
	assert.True(t, a.wake("/root/s/004-response.md")(time.Hour), "no await woken: nothing to wait for")
}
