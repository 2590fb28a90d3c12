package exchange

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// An id that is not one (short, a broadcast's, a path) finds nothing, and says so: it neither
// panics on the stamp cut from it nor names a claim outside the root.
func TestByIDRefusesWhatIsNotAnID(t *testing.T) {
	root := t.TempDir()
	var b Book
	for _, id := range []string{"", "x", "2026", "../../etc/passwd", "bc-20261128-101010-0123abcd", "20261128-101010-\x1b[2J"} {
		x, err := b.ByID(root, id)
		require.Error(t, err, "%q", id)
		assert.Nil(t, x)
		assert.True(t, errors.Is(err, store.ErrNotFound), "%q: %v", id, err)
		assert.NotContains(t, err.Error(), "\x1b", "the id is made harmless in the message")
	}
}

// A second's hints file is looked up line by line: a suffix finds its own line only, not one
// it is the start of, nor one it ends; the last line needs no newline; a line without a target
// is no match.
func TestWhereLookup(t *testing.T) {
	data := []byte("ab12 s1/001-request.md\nab1 s1/003-request.md\nxab12 s2/005-request.md\nff00\ncd34 s3/007-request.md")
	for suffix, want := range map[string]string{"ab12": "s1/001-request.md", "ab1": "s1/003-request.md", "cd34": "s3/007-request.md"} {
		got, ok := whereLookup(data, suffix)
		assert.True(t, ok, suffix)
		assert.Equal(t, want, got, suffix)
	}
	for _, suffix := range []string{"b12", "ab123", "ff00", "s1/001-request.md", ""} {
		_, ok := whereLookup(data, suffix)
		assert.False(t, ok, "%q", suffix)
	}
	_, ok := whereLookup(nil, "ab12")
	assert.False(t, ok)
}
