package mailbox_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
)

// shellPane makes pane id run an interactive shell.
func (w *world) shellPane(id string) {
	w.tmux.Mu.Lock()
	defer w.tmux.Mu.Unlock()
	p := w.tmux.PaneMap[messages.PaneID(id)]
	p.Command = "bash"
	w.tmux.PaneMap[messages.PaneID(id)] = p
}

// What reaches a shell runs as nothing: a request as its pointer line, a RESPONSE line and a
// note's summary as comments; an agent gets a note's own words.
func TestAShellGetsInertLines(t *testing.T) {
	w := newWorld(t)
	w.shellPane("%1")
	w.shellPane("%3")
	x, m := w.request("%3", "rm -rf the task")
	_, err := w.post(m)
	require.NoError(t, err)
	_, err = w.post(w.answer(state(x), "done"))
	require.NoError(t, err)
	note := messages.Mail{Kind: messages.MailNote, Pane: "%3", Server: w.srv.Key(), From: "%1",
		Text: "the person says:\nno", Summary: "the person says no"}
	_, err = w.post(note)
	require.NoError(t, err)
	note.Pane = "%2"
	_, err = w.post(note)
	require.NoError(t, err)

	typed := w.pasted()
	require.Len(t, typed, 4)
	for _, d := range typed[:3] {
		assert.True(t, strings.HasPrefix(string(d.Content), "# "), "inert in a shell: %q", d.Content)
		assert.NotContains(t, string(d.Content), "\n")
	}
	assert.Contains(t, string(typed[0].Content), x.RequestPath)
	assert.Contains(t, string(typed[1].Content), x.ResponsePath)
	assert.Contains(t, string(typed[2].Content), "the person says no")
	assert.Equal(t, "the person says:\nno", string(typed[3].Content), "an agent's pane gets the words")
}

// Pending lists what waits in a pane's outbox; none for a pane without one.
func TestPending(t *testing.T) {
	w := newWorld(t)
	w.setBusy("%2", true)
	_, m := w.request("%2", "task")
	p, err := w.post(m)
	require.NoError(t, err)
	pend := w.office.Pending(w.root, w.srv.Key(), "%2")
	require.Len(t, pend, 1)
	assert.Equal(t, p.Mail.ID, pend[0].ID)
	assert.Empty(t, w.office.Pending(w.root, w.srv.Key(), "%3"))
	assert.Empty(t, w.office.Pending(w.root, "not-a-key", "%2"))
}
