package cli

// An exchange's answer and state, against the real binary and a real tmux server: the read state once
// an await returned, notify from a pane that is not the worker, notify without --id.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// history and show say "read" once an await has returned the response.
func TestE2EReadState(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker := w.catPane()
	s := w.send(orch, worker, "count the files")
	r := w.in(worker, "notify", "--enter-delay", "50ms", "--id", s.ID, "--", "12 files")
	requireCode(t, 0, r)

	r = w.in(orch, "history")
	requireCode(t, 0, r)
	assert.Regexp(t, s.ID+`\s+answered\s+answered\s`, r.stdout)

	r = w.in(orch, "await", s.ID, "--timeout", "10s")
	requireCode(t, 0, r)
	r = w.in(orch, "history")
	requireCode(t, 0, r)
	assert.Regexp(t, s.ID+`\s+answered\s+read\s`, r.stdout)
	r = w.in(orch, "show", s.ID)
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "status:        answered (read)")
}

// notify --id from a pane that is not the request's worker is refused, and the worker's own
// notify still goes through.
func TestE2ENotifyFromAnotherPane(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker := w.catPane()
	other := w.catPane()
	s := w.send(orch, worker, "review the plan")

	r := w.in(other, "notify", "--enter-delay", "50ms", "--id", s.ID, "--", "not my request")
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "addressed to pane "+worker+", not to your pane "+other)
	assert.NoFileExists(t, s.Response)

	r = w.in(worker, "notify", "--enter-delay", "50ms", "--id", s.ID, "--", "the plan is sound")
	requireCode(t, 0, r)
	assert.Contains(t, readString(t, s.Response), "the plan is sound")
}

// notify without --id answers the newest open request: it names it, and the others still open.
func TestE2ENotifyNamesWhatItAnswered(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker := w.catPane()
	first := w.send(orch, worker, "first task")
	second := w.send(orch, worker, "second task")
	third := w.send(orch, worker, "third task")

	// show says the delivery's state in the status line and its evidence on a line of its own,
	// never parentheses in parentheses.
	r := w.in(orch, "show", first.ID)
	requireCode(t, 0, r)
	assert.Regexp(t, `(?m)^status: +pending \(submitted, (un)?verified\)$`, r.stdout)
	assert.Regexp(t, `(?m)^evidence: +\S`, r.stdout)
	for _, line := range strings.Split(r.stdout[:strings.Index(r.stdout, "--- request")], "\n") {
		depth, deepest := 0, 0
		for _, c := range line {
			depth += map[rune]int{'(': 1, ')': -1}[c]
			deepest = max(deepest, depth)
		}
		assert.LessOrEqual(t, deepest, 1, "line %q", line)
	}

	r = w.in(worker, "notify", "--enter-delay", "50ms", "--", "third done")
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
