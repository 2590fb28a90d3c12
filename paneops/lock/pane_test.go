package lock

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
)

func TestLockPaneExcludesAndReleases(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "locks")
	ctx := context.Background()

	unlock, err := Pane(ctx, dir, "123-456", "%7", time.Second)
	require.NoError(t, err)

	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	fi, err = os.Stat(filepath.Join(dir, "pane-123-456-7.lock"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	_, err = Pane(ctx, dir, "123-456", "%7", 20*time.Millisecond)
	require.ErrorIs(t, err, ErrTimeout)
	assert.Contains(t, err.Error(), "pane %7")
	assert.Contains(t, err.Error(), fmt.Sprintf("wcomm process %d has held it for 20ms", os.Getpid()), "the holder is named")

	// Other panes and other servers are independent locks.
	u2, err := Pane(ctx, dir, "123-456", "%8", 20*time.Millisecond)
	require.NoError(t, err)
	u2()
	u3, err := Pane(ctx, dir, "123-999", "%7", 20*time.Millisecond)
	require.NoError(t, err)
	u3()

	unlock()
	unlock() // idempotent
	u4, err := Pane(ctx, dir, "123-456", "%7", 20*time.Millisecond)
	require.NoError(t, err)
	u4()
}

func TestLockPaneWaitsForTheHolder(t *testing.T) {
	dir := t.TempDir()
	unlock, err := Pane(context.Background(), dir, "k", "%1", time.Second)
	require.NoError(t, err)
	var released atomic.Bool
	done := make(chan error, 1)
	go func() {
		u, err := Pane(context.Background(), dir, "k", "%1", 10*time.Second)
		if err == nil {
			if !released.Load() {
				err = fmt.Errorf("got the lock while it was held")
			}
			u()
		}
		done <- err
	}()
	released.Store(true)
	unlock()
	require.NoError(t, <-done)
}

// TestLockPaneWaitsWhileTheQueueMoves: the timeout is for one holder that never lets go, not for
// the whole wait, so a sender at the back of a long queue is not failed while the queue moves.
func TestLockPaneWaitsWhileTheQueueMoves(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	unlock, err := Pane(ctx, dir, "k", "%1", time.Second)
	require.NoError(t, err)
	// A second file description on the lock file stands in for the senders that take the lock in
	// turn: each of them writes itself into the file, as writeHolder does here.
	f, err := os.OpenFile(filepath.Join(dir, "pane-k-1.lock"), os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()

	const stall = 400 * time.Millisecond
	done := make(chan error, 1)
	go func() {
		u, err := Pane(ctx, dir, "k", "%1", stall)
		if err == nil {
			u()
		}
		done <- err
	}()
	handOffs := 0
	for end := time.Now().Add(4 * stall); time.Now().Before(end); handOffs++ {
		select {
		case err := <-done:
			t.Fatalf("the waiter gave up after %d hand-offs while the queue moved: %v", handOffs, err)
		case <-time.After(stall / 20): // the next sender's turn
		}
		writeHolder(fdFile(f.Fd()))
	}
	unlock()
	require.NoError(t, <-done, "the lock is taken once it is free")

	// A holder that stops handing over is a stall again.
	unlock, err = Pane(ctx, dir, "k", "%1", time.Second)
	require.NoError(t, err)
	defer unlock()
	_, err = Pane(ctx, dir, "k", "%1", stall/4)
	require.ErrorIs(t, err, ErrTimeout)
}

func TestLockPaneMutualExclusion(t *testing.T) {
	dir := t.TempDir()
	var inside, maxInside atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				u, err := Pane(context.Background(), dir, "k", "%1", 10*time.Second)
				if !assert.NoError(t, err) {
					return
				}
				n := inside.Add(1)
				for {
					m := maxInside.Load()
					if n <= m || maxInside.CompareAndSwap(m, n) {
						break
					}
				}
				inside.Add(-1)
				u()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), maxInside.Load())
}

func TestLockPaneContext(t *testing.T) {
	dir := t.TempDir()
	unlock, err := Pane(context.Background(), dir, "k", "%1", time.Second)
	require.NoError(t, err)
	defer unlock()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Pane(ctx, dir, "k", "%1", time.Second)
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, ErrTimeout)

	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = Pane(ctx, dir, "k", "%1", 0) // no timeout of its own: the context's deadline rules
	require.ErrorIs(t, err, ErrTimeout)
}

func TestLockPaneRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(dir, link))
	open := filepath.Join(t.TempDir(), "open")
	require.NoError(t, os.Mkdir(open, 0o700))
	require.NoError(t, os.Chmod(open, 0o777))
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))

	tests := []struct {
		name string
		dir  string
		key  string
		pane messages.PaneID
		want string
	}{
		{"pane id without %", dir, "k", "7", "invalid pane id"},
		{"pane id with a path", dir, "k", "%7/../../x", "invalid pane id"},
		{"empty key", dir, "", "%7", "invalid lock key"},
		{"key with a slash", dir, "a/b", "%7", "invalid lock key"},
		{"key with dots", dir, "..", "%7", "invalid lock key"},
		{"long key", dir, strings.Repeat("k", 65), "%7", "invalid lock key"},
		{"no folder", "", "k", "%7", "no lock folder"},
		{"folder is a symlink", link, "k", "%7", "is a symlink"},
		{"folder writable by others", open, "k", "%7", "writable by others"},
		{"folder is a file", file, "k", "%7", "is not a folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Pane(context.Background(), tt.dir, tt.key, tt.pane, time.Second)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestLockPaneDoesNotFollowSymlinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.Symlink(victim, filepath.Join(dir, "pane-k-7.lock")))
	_, err := Pane(context.Background(), dir, "k", "%7", time.Second)
	require.Error(t, err)
	_, statErr := os.Lstat(victim)
	assert.True(t, os.IsNotExist(statErr), "the symlink's target must not be created")
}

// TestLockPaneDiesWithItsProcess locks from a child process, then kills it: the lock must be free
// at once, with no stale state to clean up.
func TestLockPaneDiesWithItsProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), "WCOMM_LOCK_HELPER_DIR="+dir)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stdin, err := cmd.StdinPipe() // held open: the helper exits when it closes
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })

	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "locked\n", line)

	_, err = Pane(context.Background(), dir, "k", "%3", 20*time.Millisecond)
	require.ErrorIs(t, err, ErrTimeout, "another process holds the lock")

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	unlock, err := Pane(context.Background(), dir, "k", "%3", 5*time.Second)
	require.NoError(t, err)
	unlock()
}

// TestLockHelperProcess is the child of TestLockPaneDiesWithItsProcess; it does nothing in a
// normal run.
func TestLockHelperProcess(t *testing.T) {
	dir := os.Getenv("WCOMM_LOCK_HELPER_DIR")
	if dir == "" {
		return
	}
	if _, err := Pane(context.Background(), dir, "k", "%3", time.Second); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes stdin or kills us
	os.Exit(0)
}

// TestLockPaneHolderInPlace: each holder's record has one width and is written over the last
// one's, so the lock file is never truncated (which freed and took a disk block at every
// delivery), and a waiter's timeout still names the holder's pid.
func TestLockPaneHolderInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pane-k-1.lock")
	// The record of a version that truncated, longer than a short pid's would be.
	require.NoError(t, os.WriteFile(path, []byte("4194303 1795927935695603640\n"), 0o600))
	unlock, err := Pane(context.Background(), dir, "k", "%1", time.Second)
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Len(t, data, holderLen, "the record covers the last one whole")
	pid, _, _ := strings.Cut(string(data), " ")
	assert.Equal(t, strconv.Itoa(os.Getpid()), pid)
	_, err = Pane(context.Background(), dir, "k", "%1", 50*time.Millisecond)
	require.ErrorIs(t, err, ErrTimeout)
	assert.Contains(t, err.Error(), fmt.Sprintf("wcomm process %d ", os.Getpid()))
	unlock()
	assert.Len(t, holderLine(7, 1), holderLen)
	assert.Len(t, holderLine(4194304, time.Now().UnixNano()), holderLen)
}
