package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/paneops/proc"
)

// lookupOf is how send found the worker's pane for an exchange: "tmux" or "record" (its card).
func (w *world) lookupOf(id string) string {
	w.t.Helper()
	for _, ev := range w.exchangeLog(id) {
		if ev.State == "written" {
			return ev.Detail["lookup"]
		}
	}
	w.t.Fatalf("exchange %s has no written event", id)
	return ""
}

// recordedPastes counts the pastes submitted with Enter in a recorder's log that hold text.
func recordedPastes(t *testing.T, log, text string) int {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev struct {
			Paste string `json:"paste"`
			Enter bool   `json:"enter"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Enter && strings.Contains(ev.Paste, text) {
			n++
		}
	}
	return n
}

// TestE2EPaneCard: a send to a pane id uses the record of the last lookup instead of asking tmux,
// and only while the pane and the server are the ones looked up: a respawned pane, a record that
// lies about the pane's process and a restarted server each end where a lookup would have sent
// the message, exactly once.
func TestE2EPaneCard(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	rec, log := w.recorderPane()
	wait := func(log, text string) {
		t.Helper()
		waitFor(t, 15*time.Second, func() bool { return recordedPastes(t, log, text) >= 1 }, "%q to reach the recorder", text)
		assert.Equal(t, 1, recordedPastes(t, log, text), "%q pasted once", text)
	}

	first := w.send(orch, rec, "card-first")
	assert.Equal(t, "tmux", w.lookupOf(first.ID))
	wait(log, "card-first")
	second := w.send(orch, rec, "card-second")
	assert.Equal(t, "record", w.lookupOf(second.ID), "the second send reads the pane's card")
	wait(log, "card-second")

	// The pane's process is replaced: /proc no longer has the recorded one.
	script, err := filepath.Abs(recorderPy)
	require.NoError(t, err)
	log2 := filepath.Join(w.work, "respawned.jsonl")
	w.tmux("respawn-pane", "-k", "-t", rec, "python3", script, log2)
	w.waitScreen(rec, "RECORDER READY")
	third := w.send(orch, rec, "card-third")
	assert.Equal(t, "tmux", w.lookupOf(third.ID))
	wait(log2, "card-third")
	assert.Equal(t, 0, recordedPastes(t, log, "card-third"))

	// A card that names another live process as the pane's passes /proc; the paste's own guard
	// refuses it, and the message waits for the deliverer, which looks the pane up.
	cards, err := filepath.Glob(filepath.Join(w.root, ".panes", "*-p"+rec[1:]+".json"))
	require.NoError(t, err)
	require.Len(t, cards, 1)
	var card map[string]any
	require.NoError(t, json.Unmarshal([]byte(readString(t, cards[0])), &card))
	start, err := proc.ProcStart(w.pid)
	require.NoError(t, err)
	card["pane"].(map[string]any)["pid"] = w.pid
	card["pane_start"] = start
	data, err := json.Marshal(card)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cards[0], data, 0o600))
	r := w.in(orch, "send", "--to", rec, "--enter-delay", "50ms", "--", "card-fourth")
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "queued", "%s", r)
	fourth := parseSent(t, r.stdout)
	assert.Equal(t, "record", w.lookupOf(fourth.ID))
	wait(log2, "card-fourth")
	waitFor(t, 10*time.Second, func() bool {
		evs := w.exchangeEvents(fourth.ID)
		return len(evs) > 0 && evs[len(evs)-1] == "submitted"
	}, "the deliverer to record the delivery")
	assert.Contains(t, w.exchangeEvents(fourth.ID), "queued")

	// A new server on the same socket numbers its panes from %0 again: the old server's cards name
	// a process that is gone.
	w.killServer(false)
	waitNoDeliverer(t, w.root)
	w.startServer()
	orch2 := w.bashPane("")
	rec2, log3 := w.recorderPane()
	require.Equal(t, rec, rec2, "the new server gives the recorder the same pane id")
	require.Equal(t, orch, orch2)
	fifth := w.send(orch2, rec2, "card-fifth")
	assert.Equal(t, "tmux", w.lookupOf(fifth.ID))
	assert.NotEqual(t, first.Dir, fifth.Dir, "a new server's exchanges get a new session folder")
	wait(log3, "card-fifth")
	sixth := w.send(orch2, rec2, "card-sixth")
	assert.Equal(t, "record", w.lookupOf(sixth.ID))
	wait(log3, "card-sixth")
}

// TestE2EPaneCardNotify: notify reads the orchestrator pane's card as send reads the worker's, and
// a respawned orchestrator pane gets its RESPONSE line in its new process, once.
func TestE2EPaneCardNotify(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch, log := w.recorderPane()
	worker := w.catPane()
	answer := func(body string) sent {
		t.Helper()
		s := w.send(orch, worker, body)
		r := w.in(worker, "notify", "--response", s.Response, "--", "answer to "+body)
		requireCode(t, 0, r)
		return s
	}
	lines := func(log, response string) int {
		return recordedPastes(t, log, "] "+response)
	}
	cardOf := func() string {
		t.Helper()
		cards, err := filepath.Glob(filepath.Join(w.root, ".panes", "*-p"+orch[1:]+".json"))
		require.NoError(t, err)
		require.Len(t, cards, 1, "notify recorded the orchestrator's pane")
		return readString(t, cards[0])
	}
	s1 := answer("first")
	waitFor(t, 15*time.Second, func() bool { return lines(log, s1.Response) == 1 }, "the first RESPONSE line")
	card := cardOf()
	s2 := answer("second")
	waitFor(t, 15*time.Second, func() bool { return lines(log, s2.Response) == 1 }, "the second RESPONSE line")
	assert.Equal(t, card, cardOf(), "the second notify read the card (a lookup would have written it again)")

	script, err := filepath.Abs(recorderPy)
	require.NoError(t, err)
	log2 := filepath.Join(w.work, "orchestrator-respawned.jsonl")
	w.tmux("respawn-pane", "-k", "-t", orch, "python3", script, log2)
	w.waitScreen(orch, "RECORDER READY")
	s3 := answer("third")
	waitFor(t, 15*time.Second, func() bool { return lines(log2, s3.Response) == 1 }, "the third RESPONSE line in the new process")
	assert.NotEqual(t, card, cardOf(), "the respawned pane was looked up and recorded anew")
	assert.Equal(t, 0, lines(log, s3.Response))
	assert.Equal(t, 1, lines(log, s1.Response))
	assert.Equal(t, 1, lines(log, s2.Response))
}
