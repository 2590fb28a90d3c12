package broadcast_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// printer is an await's output: it records what it is handed, and fails when two are handed at once.
type printer struct {
	mu   sync.Mutex
	seen []string
	busy atomic.Int32
	fail error
}

func (p *printer) out(pane string, x *exchange.Exchange) error {
	if p.busy.Add(1) != 1 {
		return errors.New("two answers handed over at once")
	}
	defer p.busy.Add(-1)
	time.Sleep(time.Millisecond) // give a second caller the chance to overlap
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, pane+"="+strings.TrimSpace(x.ResponseBody))
	return p.fail
}

func (p *printer) got() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// The await of a broadcast waits for every member at once, hands each answer over one at a time
// with its pane, and ends when all answered.
func TestAwaitAllOfABroadcast(t *testing.T) {
	w := newWorld(t)
	res, err := w.caster.Broadcast(context.Background(), opts("%2,%3,%4,box:%5"))
	require.NoError(t, err)
	for _, m := range res.Members {
		w.send.answer(m.Exchange, "yes from "+m.Label)
	}
	p := &printer{}
	got, err := w.caster.AwaitAll(context.Background(), []string{res.ID}, 10*time.Second, p.out)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"%2=yes from %2", "%3=yes from %3", "%4=yes from %4", "box:%5=yes from box:%5"}, p.got())
	assert.Len(t, got.Answered, 4)
	assert.Empty(t, got.Missing)
	assert.Equal(t, []string{res.ID}, got.Broadcasts)
}

func TestAwaitAllSaysWhoAnsweredWhenTheWaitEnds(t *testing.T) {
	w := newWorld(t)
	res, err := w.caster.Broadcast(context.Background(), opts("%2", "%3"))
	require.NoError(t, err)
	w.send.answer(res.Members[0].Exchange, "two says yes")
	p := &printer{}
	got, err := w.caster.AwaitAll(context.Background(), []string{res.ID}, time.Second, p.out) // long enough for the answer that is there
	require.ErrorIs(t, err, store.ErrTimeout)
	assert.Contains(t, err.Error(), "1 of 2 answered (%2)")
	assert.Contains(t, err.Error(), "no response yet from %3")
	assert.Contains(t, err.Error(), "wcomm await "+res.ID+" waits again")
	assert.Equal(t, []string{"%2=two says yes"}, p.got())
	require.Len(t, got.Missing, 1)
	assert.Equal(t, "%3", got.Missing[0].Pane)
	assert.True(t, got.Missing[0].TimedOut)
	assert.Equal(t, res.Members[1].Exchange.ID, got.Missing[0].ID)

	// Once %3 answers, the whole broadcast is answered; without its record too, from the
	// exchanges' own logs.
	w.send.answer(res.Members[1].Exchange, "three says no")
	require.NoError(t, os.Remove(filepath.Join(w.root(), store.BroadcastsDir, res.ID+".json")))
	p = &printer{}
	got, err = w.caster.AwaitAll(context.Background(), []string{res.ID}, 10*time.Second, p.out)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"%2=two says yes", "%3=three says no"}, p.got())
	assert.Len(t, got.Answered, 2)
}

// By the exchanges' own ids: the same one twice is awaited once; one that names nothing cannot be
// answered (not found), and the error says who answered; the retry names the ids still open.
func TestAwaitAllByIDs(t *testing.T) {
	w := newWorld(t)
	res, err := w.caster.Broadcast(context.Background(), opts("%2,%3"))
	require.NoError(t, err)
	a, b := res.Members[0].Exchange, res.Members[1].Exchange
	w.send.answer(a, "yes")
	p := &printer{}
	got, err := w.caster.AwaitAll(context.Background(), []string{a.ID, a.ID, "20200101-000000-abcd"}, 10*time.Second, p.out)
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Contains(t, err.Error(), "1 of 2 answered (%2)")
	assert.Contains(t, err.Error(), "no answer can come from 20200101-000000-abcd")
	assert.Len(t, p.got(), 1)
	assert.Len(t, got.Answered, 1)

	_, err = w.caster.AwaitAll(context.Background(), []string{a.ID, b.ID}, time.Second, p.out)
	require.ErrorIs(t, err, store.ErrTimeout)
	assert.Contains(t, err.Error(), "wcomm await "+b.ID+" waits again")
}

// A member that was never sent has nothing to wait for: it is missing at once, undelivered.
func TestAwaitAllOfABroadcastWithAMemberNeverSent(t *testing.T) {
	w := newWorld(t)
	w.send.refuse["%3"] = errors.New("tmux said no")
	res, err := w.caster.Broadcast(context.Background(), opts("%2,%3"))
	require.Error(t, err)
	w.send.answer(res.Members[0].Exchange, "yes")
	got, err := w.caster.AwaitAll(context.Background(), []string{res.ID}, 10*time.Second, (&printer{}).out)
	require.ErrorIs(t, err, store.ErrUndelivered)
	assert.Contains(t, err.Error(), "%3 (never sent: tmux said no)")
	require.Len(t, got.Missing, 1)
	assert.False(t, got.Missing[0].TimedOut)
}

// An output that fails keeps its answer out of the answered ones.
func TestAwaitAllOutputThatFails(t *testing.T) {
	w := newWorld(t)
	res, err := w.caster.Broadcast(context.Background(), opts("%2"))
	require.NoError(t, err)
	w.send.answer(res.Members[0].Exchange, "yes")
	p := &printer{fail: errors.New("stdout closed")}
	got, err := w.caster.AwaitAll(context.Background(), []string{res.ID}, 10*time.Second, p.out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stdout closed")
	assert.Empty(t, got.Answered)
}

// Interrupted, the await says so, not that its time ran out.
func TestAwaitAllInterrupted(t *testing.T) {
	w := newWorld(t)
	res, err := w.caster.Broadcast(context.Background(), opts("%2"))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err = w.caster.AwaitAll(ctx, []string{res.ID}, 0, (&printer{}).out)
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "interrupted while waiting for %2")
}

func TestAwaitAllOfAnUnknownBroadcast(t *testing.T) {
	w := newWorld(t)
	_, err := w.caster.AwaitAll(context.Background(), []string{"bc-20200101-000000-0123abcd"}, time.Second, (&printer{}).out)
	require.ErrorIs(t, err, store.ErrNotFound, "no root yet")
	_, err = w.caster.Broadcast(context.Background(), opts("%2"))
	require.NoError(t, err)
	_, err = w.caster.AwaitAll(context.Background(), []string{"bc-20200101-000000-0123abcd"}, time.Second, (&printer{}).out)
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Contains(t, err.Error(), "no broadcast bc-20200101-000000-0123abcd")
	_, err = w.caster.AwaitAll(context.Background(), []string{"bc-../../etc/passwd"}, time.Second, (&printer{}).out)
	require.Error(t, err, "an id that could name a path is refused")
	assert.Contains(t, err.Error(), "is not bc-YYYYMMDD-HHMMSS-xxxxxxxx")
}
