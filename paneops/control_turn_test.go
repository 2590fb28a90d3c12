package paneops

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestControlTurnOneAtATime: a second turn of the same server waits for the first to be let go;
// one named by -L and by -S is one turn; a lock folder that is a link is not used.
func TestControlTurnOneAtATime(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("TMUX_TMPDIR", "")
	s := Server{Name: "turns"}
	first := controlTurn(s)
	got := make(chan func())
	go func() { got <- controlTurn(Server{Socket: socketFile(s)}) }()
	select {
	case r := <-got:
		r()
		t.Fatal("a second turn of the server while the first was held")
	case <-time.After(300 * time.Millisecond): // the second waits: an absence, looked at for a while
	}
	first()
	select {
	case r := <-got:
		r()
	case <-time.After(10 * time.Second):
		t.Fatal("the second turn never came")
	}

	// A link in place of the folder: no lock file is made through it.
	elsewhere := t.TempDir()
	require.NoError(t, os.RemoveAll(controlTurnDir()))
	require.NoError(t, os.Symlink(elsewhere, controlTurnDir()))
	controlTurn(s)()
	entries, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	assert.Empty(t, entries, "a lock file made through the link")
}
