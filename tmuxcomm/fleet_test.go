package tmuxcomm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// RecentExchanges reads the most recently changed folders, newest request first, and stops once
// it has n: a root of many folders is not read whole.
func TestFleetRecentExchanges(t *testing.T) {
	root := t.TempDir()
	e := New(root, nil)
	old := time.Now().Add(-time.Hour)
	var dirs []string
	for i, name := range []string{"20260117-120000-o1-w2", "20260117-120100-o1-w3"} {
		dir := filepath.Join(root, name)
		require.NoError(t, os.Mkdir(dir, 0o700))
		for n := 1; n <= 5; n += 2 {
			body := fmt.Sprintf("[WORKER capability=READONLY id=20260117-12%02d00-000%d started_at=20260117-12%02d00 orchestrator=%%1 worker=%%%d]\nrequest %d of folder %d\n", i, n, i, i+2, n, i)
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%03d-request.md", n)), []byte(body), 0o600))
		}
		dirs = append(dirs, dir)
	}
	// The first folder changed last.
	require.NoError(t, os.Chtimes(dirs[1], old, old))
	xs, err := e.finder.RecentExchanges(context.Background(), 2)
	require.NoError(t, err)
	require.Len(t, xs, 2)
	for _, x := range xs {
		assert.Equal(t, "20260117-120000-o1-w2", x.Session, "the folder changed last is read first")
	}
	assert.ElementsMatch(t, []int{5, 3}, []int{xs[0].Seq, xs[1].Seq}, "its newest requests")
	xs, err = e.finder.RecentExchanges(context.Background(), 4)
	require.NoError(t, err)
	assert.Len(t, xs, 4, "then the next folder")
}
