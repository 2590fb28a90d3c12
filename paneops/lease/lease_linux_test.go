package lease

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpenForWritingSeesAForeignWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "002-response.md")
	// A shell's `> file`, as a heredoc writer has it: the file exists while the writer still runs.
	ready := path + ".ready"
	cmd := exec.Command("sh", "-c", `exec 3>"$1"; echo half >&3; : > "$2"; exec sleep 60`, "sh", path, ready)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	require.Eventually(t, func() bool { _, err := os.Stat(ready); return err == nil }, 10*time.Second, 5*time.Millisecond)

	busy, ok := leaseBusy(path)
	require.True(t, ok, "a file of this user on a local file system takes a lease")
	assert.True(t, busy)
	assert.True(t, scanOpenForWriting(path), "the /proc scan agrees")
	assert.True(t, OpenForWriting(path))

	// The lease was let go: a writer opening the file now is not held up by it (it would wait
	// for the lease-break time, 45 s by default, if the lease were still held).
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	assert.False(t, OpenForWriting(path), "no writer left")
	assert.False(t, scanOpenForWriting(path))
	busy, ok = leaseBusy(path)
	assert.True(t, ok)
	assert.False(t, busy)

	// A reader does not count.
	r, err := os.Open(path)
	require.NoError(t, err)
	defer r.Close()
	assert.False(t, OpenForWriting(path))

	_, ok = leaseBusy(filepath.Join(t.TempDir(), "missing"))
	assert.False(t, ok, "a missing file has no answer; the scan then says false")
}
