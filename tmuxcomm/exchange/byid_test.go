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
