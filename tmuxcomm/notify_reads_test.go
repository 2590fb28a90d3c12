package tmuxcomm

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/store"
	"github.com/wcomm/wcomm/tmuxcomm/store/storetest"
)

// TestNotifyReadsEachFileOnce: a notify reads the request once (and opens it to see whether an
// await holds its lock), never reads back the response it wrote, and reads the
// session's record once; what it reports is what loading the exchange again finds. The kernel
// tells every open in the session folder (inotify), so the count is of real opens.
func TestNotifyReadsEachFileOnce(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("question")})
	require.NoError(t, err)

	var res *NotifyResult
	opens := storetest.OpensIn(t, x.Dir, func() {
		var err error
		res, err = e.as("%2").Notify(context.Background(), NotifyOptions{Ref: x.ID, Body: []byte("the answer\nDELTA:\n  changes: [a.go]\n  risks: []\n  alternatives: []\n  needs_consult: no\n")})
		require.NoError(t, err)
	})
	assert.Equal(t, core.SignalPasted, res.Signal)

	request, response := filepath.Base(x.RequestPath), filepath.Base(x.ResponsePath)
	// Read once; opened twice more for its flock alone, the await's lock, which notify and then
	// the outbox, under its drain lock, each look at.
	assert.LessOrEqual(t, opens[request], 3, "the request (%v)", opens)
	assert.Zero(t, opens[response], "the response is written, never read back (%v)", opens)
	assert.LessOrEqual(t, opens[store.MetaName], 1, "the session's record (%v)", opens)

	again := exchange.LoadExchange(x.Dir, x.Seq, false)
	got := res.Exchange
	assert.Equal(t, again.Status, got.Status)
	assert.Equal(t, exchange.StateAnswered, got.State)
	assert.Equal(t, again.Integrity, got.Integrity)
	assert.Equal(t, again.Delta, got.Delta)
	assert.Equal(t, again.Problems, got.Problems)
	require.NotNil(t, got.AnsweredAt)
	assert.True(t, again.AnsweredAt.Equal(*got.AnsweredAt), "answered at the response file's time")
	require.NotNil(t, got.Response())
	assert.Equal(t, again.Response().Header, got.Response().Header)
	require.NotEmpty(t, got.Events)
	assert.Equal(t, exchange.StateAnswered, got.Events[len(got.Events)-1].State)
	assert.Empty(t, got.ResponseBody)
}
