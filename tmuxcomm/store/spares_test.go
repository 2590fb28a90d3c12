package store

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sparesIn returns the inodes of the temp files in dir.
func sparesIn(t *testing.T, dir string) map[uint64]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[uint64]string{}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), TempPrefix) {
			var st syscall.Stat_t
			require.NoError(t, syscall.Lstat(filepath.Join(dir, e.Name()), &st))
			assert.Zero(t, st.Size, "a spare is empty")
			assert.Equal(t, uint32(FileMode), st.Mode&0o777)
			out[st.Ino] = e.Name()
		}
	}
	return out
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Lstat(path, &st))
	return st.Ino
}

// waitSpares polls until dir holds n spares.
func waitSpares(t *testing.T, dir string, n int) map[uint64]string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := sparesIn(t, dir)
		if len(got) == n || time.Now().After(deadline) {
			require.Len(t, got, n, "spares in %s", dir)
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSparesTakeTheCreateOffTheWrite: in a process that keeps spares, the second record and a
// new log in a folder are the files made ahead there, written whole; a log that is there is
// appended to; the release removes what is left.
func TestSparesTakeTheCreateOffTheWrite(t *testing.T) {
	dir := t.TempDir()
	release := KeepSpares()
	var syncs Syncs
	require.NoError(t, WriteExclusiveLater(filepath.Join(dir, "001-request.md"), &syncs, []byte("first\n")))
	made := waitSpares(t, dir, sparesPerDir)

	require.NoError(t, WriteExclusiveLater(filepath.Join(dir, "002-request.md"), &syncs, []byte("head\n"), []byte("second\n")))
	require.NoError(t, syncs.Wait())
	data, err := os.ReadFile(filepath.Join(dir, "002-request.md"))
	require.NoError(t, err)
	assert.Equal(t, "head\nsecond\n", string(data))
	assert.Contains(t, made, inode(t, filepath.Join(dir, "002-request.md")), "the record is a spare made ahead")

	made = waitSpares(t, dir, sparesPerDir)
	log := filepath.Join(dir, "002-delivery.jsonl")
	require.NoError(t, AppendLine(log, []byte(`{"event":"written"}`)))
	assert.Contains(t, made, inode(t, log), "a new log is a spare made ahead")
	require.NoError(t, AppendLine(log, []byte(`{"event":"pasted"}`)))
	data, err = os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, "{\"event\":\"written\"}\n{\"event\":\"pasted\"}\n", string(data))
	st, err := os.Stat(log)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(FileMode), st.Mode().Perm())

	waitSpares(t, dir, sparesPerDir)
	release()
	assert.Empty(t, sparesIn(t, dir), "the release removes the spares")
	require.NoError(t, AppendLine(filepath.Join(dir, "003-delivery.jsonl"), []byte("x")), "without spares, as before")
	assert.Empty(t, sparesIn(t, dir))
}

// TestSparesOfAFolderMadeAgain: a spare whose folder was removed and made again under the same
// name is not used (its name leads elsewhere); the write goes on as before, into the new folder.
func TestSparesOfAFolderMadeAgain(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "s")
	require.NoError(t, os.Mkdir(dir, 0o700))
	defer KeepSpares()()
	var syncs Syncs
	require.NoError(t, WriteExclusiveLater(filepath.Join(dir, "001-request.md"), &syncs, []byte("a\n")))
	waitSpares(t, dir, sparesPerDir)
	require.NoError(t, syncs.Wait())
	require.NoError(t, os.RemoveAll(dir))
	require.NoError(t, os.Mkdir(dir, 0o700))

	require.NoError(t, WriteExclusiveLater(filepath.Join(dir, "001-request.md"), &syncs, []byte("b\n")))
	require.NoError(t, AppendLine(filepath.Join(dir, "001-delivery.jsonl"), []byte("l")))
	require.NoError(t, syncs.Wait())
	data, err := os.ReadFile(filepath.Join(dir, "001-request.md"))
	require.NoError(t, err)
	assert.Equal(t, "b\n", string(data))
	data, err = os.ReadFile(filepath.Join(dir, "001-delivery.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, "l\n", string(data))
}

// TestSpareLogTakenMeanwhile: when another writer makes the log between the look and the
// spare's rename, the line is appended to its log, not lost, and the spare is not left behind.
func TestSpareLogTakenMeanwhile(t *testing.T) {
	dir := t.TempDir()
	defer KeepSpares()()
	var syncs Syncs
	require.NoError(t, WriteExclusiveLater(filepath.Join(dir, "001-request.md"), &syncs, []byte("a\n")))
	waitSpares(t, dir, sparesPerDir)
	require.NoError(t, syncs.Wait())
	log := filepath.Join(dir, "001-delivery.jsonl")
	require.NoError(t, os.WriteFile(log, []byte("theirs\n"), 0o600))
	done, err := newLogFromSpare(log, []byte("mine"))
	require.NoError(t, err)
	assert.False(t, done, "the log was there: not made from the spare")
	require.NoError(t, AppendLine(log, []byte("mine")))
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, "theirs\nmine\n", string(data))
	got := waitSpares(t, dir, sparesPerDir)
	assert.Len(t, got, sparesPerDir, "the spare taken is removed, and made again")
}

// TestSparesWaitForTheMessagesOnTheirWay: the spare a write took is made again only once no
// message is on its way (Busy), or while it waits (Waiting); the maker waits meanwhile.
func TestSparesWaitForTheMessagesOnTheirWay(t *testing.T) {
	dir := t.TempDir()
	defer KeepSpares()()
	waiting := make(chan struct{}, 1)
	spares.mu.Lock()
	sparesWaitHook = func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	}
	spares.mu.Unlock()
	defer func() {
		spares.mu.Lock()
		sparesWaitHook = nil
		spares.mu.Unlock()
	}()
	var syncs Syncs
	require.NoError(t, WriteExclusiveLater(filepath.Join(dir, "001-request.md"), &syncs, []byte("a\n")))
	waitSpares(t, dir, sparesPerDir)

	release := Busy()
	require.NoError(t, WriteExclusiveLater(filepath.Join(dir, "002-request.md"), &syncs, []byte("b\n")))
	select {
	case <-waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("the maker did not wait for the message on its way")
	}
	assert.Len(t, sparesIn(t, dir), sparesPerDir-1, "no spare made while a message is on its way")

	resume := Waiting()
	waitSpares(t, dir, sparesPerDir) // made while the message waits
	resume()
	require.NoError(t, WriteExclusiveLater(filepath.Join(dir, "003-request.md"), &syncs, []byte("c\n")))
	select {
	case <-waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("the maker did not wait once the wait was over")
	}
	assert.Len(t, sparesIn(t, dir), sparesPerDir-1)
	release()
	release() // a second release changes nothing
	waitSpares(t, dir, sparesPerDir)
	require.NoError(t, syncs.Wait())
	resume = Waiting() // with no Busy counted: nothing to lower
	spares.mu.Lock()
	assert.Zero(t, spares.busy)
	spares.mu.Unlock()
	resume()
	spares.mu.Lock()
	assert.Zero(t, spares.busy)
	spares.mu.Unlock()
}
