package cli

// A root wcomm cannot trust is refused, against the real binary and a real tmux server: a root
// another user owns, by every command in the same words, and store folders another user planted
// in a root that was loose before first use, or a symlink out of it.

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestE2EPlantedStores: in a root that was loose (0777) before first use, store folders that
// another user (uid 65534) planted are refused, not used, and so is a symlink at ROOT/.ids to a
// folder outside the root: one owner-and-symlink check for every store. Before, only .outbox and
// .locks were checked: the other user's .ids, .where and .panes were written to, and the link
// was followed.
func TestE2EPlantedStores(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.catPane()
	worker := w.catPane()
	require.NoError(t, os.MkdirAll(w.root, 0o700))
	require.NoError(t, os.Chmod(w.root, 0o777))
	const other = 65534
	plant := func(name string) string {
		d := filepath.Join(w.root, name)
		require.NoError(t, os.Mkdir(d, 0o777))
		require.NoError(t, os.Chown(d, other, other))
		return d
	}
	ids, where, panes := plant(".ids"), plant(".where"), plant(".panes")

	r := w.run(call{pane: orch}, "send", "--to", worker, "--", "a task")
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, ids+" is owned by uid 65534")
	require.NoError(t, os.Remove(ids))

	s := w.send(orch, worker, "a task")
	for _, d := range []string{where, panes} {
		entries, err := os.ReadDir(d)
		require.NoError(t, err)
		assert.Empty(t, entries, "%s, another user's folder, was written to", d)
	}
	r = w.run(call{pane: orch}, "show", s.ID)
	requireCode(t, 0, r)

	outside := t.TempDir()
	require.NoError(t, os.RemoveAll(filepath.Join(w.root, ".ids")))
	require.NoError(t, os.Symlink(outside, filepath.Join(w.root, ".ids")))
	r = w.run(call{pane: orch}, "send", "--to", worker, "--", "another task")
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, ".ids is a symlink")
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "the symlink was followed and written through")
}

// TestE2EForeignRoot: a root another user (uid 65534) owns is refused by every command that
// reads it, in the same words and with the same exit code (1), whatever the command would have
// read there. Before, history refused it while questions printed "no questions" and exited 0,
// actions listed nothing, and show, await and answer called it "no exchanges yet" (exit 4).
func TestE2EForeignRoot(t *testing.T) {
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
