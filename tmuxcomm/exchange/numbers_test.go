package exchange

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
)

// fakeNumbers is a Numbers that tells next when set, and records what it is told.
type fakeNumbers struct {
	next    int
	marks   int
	claimed [][2]int // number, mark
}

func (f *fakeNumbers) Mark(dir string) uint64 { f.marks++; return 7 }

func (f *fakeNumbers) Next(dir string) (int, uint64, bool) { return f.next, 9, f.next > 0 }

func (f *fakeNumbers) Claimed(dir string, n int, mark uint64) {
	f.claimed = append(f.claimed, [2]int{n, int(mark)})
}

func claimWith(t *testing.T, dir string, nums Numbers) int {
	t.Helper()
	n, _, err := claimRequest(dir, nil, nums, func(n int) ([][]byte, error) { return [][]byte{[]byte("request " + strconv.Itoa(n) + "\n")}, nil })
	require.NoError(t, err)
	return n
}

// A claim takes the number Numbers tells without looking at the folder's files; one it cannot
// tell, or one taken already, is found from the files, after a mark, and the number claimed is
// told back with the mark it stands on.
func TestClaimRequestTakesTheNumberItIsTold(t *testing.T) {
	dir := t.TempDir()
	f := &fakeNumbers{}
	assert.Equal(t, 1, claimWith(t, dir, f))
	assert.Equal(t, 1, f.marks, "marked before the files were looked at")
	assert.Equal(t, [][2]int{{1, 7}}, f.claimed)

	// Told: taken as told, the hint not read (a hint that would say otherwise stays unread).
	f.next = 41
	writeSeqHint(dir, 1)
	assert.Equal(t, 41, claimWith(t, dir, f))
	assert.Equal(t, 1, f.marks, "no look, no mark")
	assert.Equal(t, [2]int{41, 9}, f.claimed[1])
	assert.FileExists(t, filepath.Join(dir, messages.SeqFileName(41, messages.KindRequest)))
	n, ok := readSeqHint(dir)
	require.True(t, ok)
	assert.Equal(t, 41, n, "the hint still follows the claims, for other senders")

	// Told a number taken since: the files decide.
	f.next = 3
	require.NoError(t, os.WriteFile(filepath.Join(dir, messages.SeqFileName(3, messages.KindRequest)), []byte("x\n"), 0o600))
	assert.Equal(t, listedNext(t, dir), claimWith(t, dir, f))
	assert.Equal(t, 2, f.marks)
	assert.Equal(t, 7, f.claimed[2][1])
}
