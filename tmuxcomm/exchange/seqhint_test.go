package exchange

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
)

// listedNext is the number the listing gives: the oracle the hint must agree with.
func listedNext(t *testing.T, dir string) int {
	t.Helper()
	files, _, err := ListSeq(dir)
	require.NoError(t, err)
	return nextRequestNumber(files)
}

func touchSeq(t *testing.T, dir string, n int, k messages.Kind) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, messages.SeqFileName(n, k)), []byte("x\n"), 0o600))
}

func claimN(t *testing.T, dir string) int {
	t.Helper()
	n, path, err := ClaimRequest(dir, nil, func(n int) ([][]byte, error) { return [][]byte{[]byte("request " + strconv.Itoa(n) + "\n")}, nil })
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, messages.SeqFileName(n, messages.KindRequest)), path)
	return n
}

func TestClaimRequestHint(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, dir string) // after requests 1 and 3 were claimed and 1 answered
		want  int
	}{
		{"answered and pending requests", func(t *testing.T, dir string) {}, 5},
		{"newest answered", func(t *testing.T, dir string) { touchSeq(t, dir, 4, messages.KindResponse) }, 5},
		{"stale hint: another sender claimed after it", func(t *testing.T, dir string) {
			touchSeq(t, dir, 5, messages.KindRequest)
			touchSeq(t, dir, 7, messages.KindRequest)
			touchSeq(t, dir, 8, messages.KindResponse)
		}, 9},
		{"a seed sender counting files", func(t *testing.T, dir string) { touchSeq(t, dir, 6, messages.KindRequest) }, 8},
		{"damaged hint", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, store.SeqHintName)))
			require.NoError(t, os.Symlink("../../etc", filepath.Join(dir, store.SeqHintName)))
		}, 5},
		{"hint names a request that was removed", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, messages.SeqFileName(3, messages.KindRequest))))
		}, 3},
		{"hint above every file", func(t *testing.T, dir string) { writeSeqHint(dir, 41) }, 5},
		{"hint is a regular file", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, store.SeqHintName)))
			require.NoError(t, os.WriteFile(filepath.Join(dir, store.SeqHintName), []byte("1"), 0o600))
		}, 5},
		{"other .md files counted by a seed sender", func(t *testing.T, dir string) {
			touchSeq(t, dir, 3+hintFreeRun, messages.KindRequest)
		}, 3 + hintFreeRun + 2},
		{"a long run of numbered files past the hint", func(t *testing.T, dir string) {
			for n := 4; n <= 4+maxHintProbe; n++ {
				touchSeq(t, dir, n, messages.KindResponse)
			}
		}, 4 + maxHintProbe + 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			require.Equal(t, 1, claimN(t, dir))
			touchSeq(t, dir, 2, messages.KindResponse)
			require.Equal(t, 3, claimN(t, dir))
			h, ok := readSeqHint(dir)
			require.True(t, ok)
			require.Equal(t, 3, h)
			tt.setup(t, dir)
			want := listedNext(t, dir)
			require.Equal(t, tt.want, want, "the listing's number")
			assert.Equal(t, want, claimN(t, dir), "the claim agrees with the listing")
			h, ok = readSeqHint(dir)
			assert.True(t, ok)
			assert.Equal(t, want, h, "the hint names the newest claim")
		})
	}
}

// TestClaimRequestHintBeyondItsSight: a foreign file past a longer free run than the probe looks
// at is not seen, but the claim still takes a number no file has, and the next claim goes above.
func TestClaimRequestHintBeyondItsSight(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, 1, claimN(t, dir))
	far := 1 + hintFreeRun + 2
	touchSeq(t, dir, far, messages.KindRequest)
	assert.Equal(t, 3, claimN(t, dir), "a free number, below the one it could not see")
	assert.Equal(t, far+2, claimN(t, dir), "probing from 3 passes the file and goes above it")
}

func TestNextFromHintAgreesWithListing(t *testing.T) {
	// Every pattern of requests and responses over numbers 3..10 that wcomm and counting senders
	// can leave (at most one number free in a row after the hint's request).
	for mask := 0; mask < 1<<16; mask += 211 {
		dir := t.TempDir()
		touchSeq(t, dir, 1, messages.KindRequest)
		touchSeq(t, dir, 3, messages.KindRequest)
		free, valid := 0, true
		for i := 0; i < 8 && valid; i++ {
			n := 4 + i
			bits := (mask >> (2 * i)) & 3
			if bits&1 != 0 {
				touchSeq(t, dir, n, messages.KindRequest)
			}
			if bits&2 != 0 {
				touchSeq(t, dir, n, messages.KindResponse)
			}
			if bits == 0 {
				free++
			} else if free >= hintFreeRun {
				valid = false // a gap of two before a later file: only the listing finds that one
			} else {
				free = 0
			}
		}
		if !valid {
			continue
		}
		got, ok := nextFromHint(dir, 3)
		require.True(t, ok, "mask %b", mask)
		require.Equal(t, listedNext(t, dir), got, "mask %b", mask)
	}
}

// TestSeqHintRewrittenInPlace: the hint is one file for the folder's life, rewritten in place at
// each claim (no inode made and freed per send), and an earlier version's link is still read
// and then replaced by the file.
func TestSeqHintRewrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, store.SeqHintName)
	require.NoError(t, os.Symlink("1", path)) // as an earlier version left it, after request 1
	touchSeq(t, dir, 1, messages.KindRequest)
	h, ok := readSeqHint(dir)
	require.True(t, ok, "an earlier version's link is read")
	require.Equal(t, 1, h)

	require.Equal(t, 3, claimN(t, dir))
	st, err := os.Lstat(path)
	require.NoError(t, err)
	require.True(t, st.Mode().IsRegular(), "the link is replaced by a file")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "000000000003\n", string(data))
	var first syscall.Stat_t
	require.NoError(t, syscall.Lstat(path, &first))

	for want := 5; want <= 9; want += 2 {
		require.Equal(t, want, claimN(t, dir))
		h, ok := readSeqHint(dir)
		require.True(t, ok)
		assert.Equal(t, want, h)
	}
	var later syscall.Stat_t
	require.NoError(t, syscall.Lstat(path, &later))
	assert.Equal(t, first.Ino, later.Ino, "the same file, rewritten")

	require.NoError(t, os.WriteFile(path, []byte("00000000000000000007\n"), 0o600))
	_, ok = readSeqHint(dir)
	assert.False(t, ok, "too long: no hint")
	require.Equal(t, 11, claimN(t, dir), "the listing decides")
	h, ok = readSeqHint(dir)
	require.True(t, ok, "the rewrite cut the old tail")
	assert.Equal(t, 11, h)
}
