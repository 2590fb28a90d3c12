package cli

// The fifth audit's newcomer defects, against the real binary and a private tmux server: notify
// without an id says which request it answered and what is still open.

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notify without --id answers the newest open request: it names it, and the others still open.
func TestE2ENotifyNamesWhatItAnswered(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker := w.catPane()
	first := w.send(orch, worker, "first task")
	second := w.send(orch, worker, "second task")
	third := w.send(orch, worker, "third task")

	r := w.in(worker, "notify", "--enter-delay", "50ms", "--", "third done")
	requireCode(t, 0, r)
	assert.Equal(t, third.Response+"\n", r.stdout, "stdout stays the response path")
	assert.Contains(t, r.stderr, "answered request "+third.ID+", the newest open one addressed to your pane; 2 others still open, newest first: "+
		second.ID+", "+first.ID)

	r = w.in(worker, "--json", "notify", "--enter-delay", "50ms", "--", "second done")
	requireCode(t, 0, r)
	var res struct {
		Exchange  struct{ ID string } `json:"exchange"`
		Newest    bool                `json:"newest"`
		StillOpen []string            `json:"still_open"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	assert.Equal(t, second.ID, res.Exchange.ID)
	assert.True(t, res.Newest)
	assert.Equal(t, []string{first.ID}, res.StillOpen)

	r = w.in(worker, "notify", "--enter-delay", "50ms", "--", "first done")
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "answered request "+first.ID+", the newest open one addressed to your pane; no other request is open")

	// Named by its id, the request needs no such words.
	fourth := w.send(orch, worker, "fourth task")
	r = w.in(worker, "notify", "--enter-delay", "50ms", "--id", fourth.ID, "--", "fourth done")
	requireCode(t, 0, r)
	assert.NotContains(t, r.stderr, "answered request")
}
