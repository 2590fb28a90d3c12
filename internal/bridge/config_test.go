package bridge

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/bridge/chatfake"
	"github.com/wcomm/wcomm/internal/bridge/lockfile"
)

func TestTokenFileMustBePrivate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "telegram.token")
	require.NoError(t, os.WriteFile(path, []byte("123:file-secret\n"), 0o644))
	_, err := readToken("channels.telegram", EnvTelegramToken, path, envOf(nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "refused")
	assert.Contains(t, err.Error(), "0644")
	assert.Contains(t, err.Error(), "chmod 600")
	assert.NotContains(t, err.Error(), "file-secret")

	require.NoError(t, os.Chmod(path, 0o600))
	tok, err := readToken("channels.telegram", EnvTelegramToken, path, envOf(nil))
	require.NoError(t, err)
	assert.Equal(t, "123:file-secret", tok)

	// ~ is the home folder; the environment variable takes precedence over the file.
	tok, err = readToken("channels.telegram", EnvTelegramToken, "~/telegram.token", envOf(map[string]string{"HOME": dir}))
	require.NoError(t, err)
	assert.Equal(t, "123:file-secret", tok)
	tok, err = readToken("channels.telegram", EnvTelegramToken, path, envOf(map[string]string{EnvTelegramToken: "env-secret"}))
	require.NoError(t, err)
	assert.Equal(t, "env-secret", tok)

	_, err = readToken("channels.slack bot token", EnvSlackBotToken, "", envOf(nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), EnvSlackBotToken)
}

func TestOneBridgePerRoot(t *testing.T) {
	root := tempRoot(t)
	unlock, err := lockfile.Lock(root, "")
	require.NoError(t, err)
	assert.True(t, lockfile.Running(root, ""))
	_, err = lockfile.Lock(root, "")
	require.ErrorIs(t, err, lockfile.ErrRunning)
	assert.Contains(t, err.Error(), "process "+strconv.Itoa(os.Getpid()))
	unlock()
	assert.False(t, lockfile.Running(root, ""))
	unlock, err = lockfile.Lock(root, "")
	require.NoError(t, err)
	unlock()
}

// A bridge whose root is removed ends, though a question of the root was still pending: nothing it
// serves is left, and a bridge that waited on would run for ever (a test's root, a root a person
// deleted).
func TestBridgeEndsWhenItsRootIsGone(t *testing.T) {
	f := chatfake.NewTelegram(t)
	cfg, env := tgConfig(f)
	eng := &fakeEngine{}
	eng.add(numberedQ, "a1b2")
	root := tempRoot(t)
	r := startHub(t, root, eng, cfg, env)
	questionMsg(t, f, "a1b2")
	// The running bridge may write its state in the root while it is removed (unlinkat: directory
	// not empty): the removal is tried again until the root is gone, as a person's rm -r would be.
	deadline := time.Now().Add(5 * time.Second)
	for err := os.RemoveAll(root); err != nil; err = os.RemoveAll(root) {
		require.True(t, time.Now().Before(deadline), "remove the root: %v", err)
	}
	select {
	case err := <-r.done:
		require.NoError(t, err)
		r.done <- err // for the cleanup's stop
	case <-time.After(10 * time.Second):
		t.Fatal("the bridge still runs with its root gone")
	}
	assert.Contains(t, r.log.String(), "is gone: the bridge ends")
}
