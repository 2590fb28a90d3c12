package cli

// The fourth audit's newcomer trips and the smaller points it found, each against the real binary
// (and a real tmux server where the command needs one): each one failed against the code it was
// found in.

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAudit4ForeignRoot: a root another user (uid 65534) owns is refused by every command that
// reads it, in the same words and with the same exit code (1), whatever the command would have
// read there. Before, history refused it while questions printed "no questions" and exited 0,
// actions listed nothing, and show, await and answer called it "no exchanges yet" (exit 4).
func TestAudit4ForeignRoot(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.catPane()
	worker := w.catPane()
	require.NoError(t, os.MkdirAll(w.root, 0o700))
	require.NoError(t, os.Chown(w.root, 65534, 65534))
	want := "root " + w.root + " is owned by uid 65534, not by you"

	const xid, qid = "20260101-000000-a1b2", "task-3.q1-a1b2"
	resp := filepath.Join(w.root, "20260101-000000-o1-w2", "002-response.md")
	for _, args := range [][]string{
		{"history"},
		{"history", "--json"},
		{"questions"},
		{"questions", "--json"},
		{"questions", "--pending"},
		{"questions", qid},
		{"questions", "resolve", qid, "--reason", "gone"},
		{"answer", qid, "yes"},
		{"actions"},
		{"show", xid},
		{"await", xid, "--timeout", "1s"},
		{"parse", "[RESPONSE started_at=20260101-000000 orchestrator=%1 worker=%2] " + resp},
		{"inbox", "--pane", orch},
		{"watch", "--count", "1", "--timeout", "1s"},
		{"send", "--to", worker, "--", "a task"},
		{"send", "--resend", xid},
		{"notify", "--id", xid, "--", "an answer"},
		{"ask", "--task", "task-3", "--context", "c", "--option", "a", "--option", "b", "--", "which?"},
		{"ask", "--context", "c", "--option", "a", "--option", "b", "--", "which?"},
	} {
		r := w.in(orch, args...)
		assert.Equal(t, 1, r.code, "%s", r)
		assert.Contains(t, r.stderr, want, "%s", r)
		assert.Empty(t, r.stdout, "%s", r)
	}
}
