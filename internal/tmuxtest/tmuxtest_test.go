package tmuxtest

import (
	"errors"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/testhome"
)

func TestMain(m *testing.M) { testhome.Main(m) }

// A server that ends on kill-server is gone when Kill returns, and is not reported killed.
func TestKillWaitsForTheServer(t *testing.T) {
	s := New(t)
	s.Start(t, Options{Session: "main", Width: 80, Height: 24, Argv: []string{"sleep", "86400"}})
	require.True(t, running(s.PID, s.Sock))
	assert.False(t, s.Kill())
	assert.False(t, running(s.PID, s.Sock), "the server's process is gone once Kill returns")
}

// A server that outlives kill-server (here a process standing in for one, which no kill-server
// reaches, naming the socket in its command line as a server does) is killed once killWait is
// over, and Kill says so.
func TestKillEndsAServerThatOutlivesKillServer(t *testing.T) {
	bin := Require(t)
	sock := filepath.Join(t.TempDir(), "s")
	cmd := exec.Command("sh", "-c", "sleep 60; :", "tmux-server-of", sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its sleep goes with it at the end
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	was := killWait
	killWait = 200 * time.Millisecond
	t.Cleanup(func() { killWait = was })

	s := &Server{Bin: bin, Dir: filepath.Dir(sock), Sock: sock, PID: cmd.Process.Pid}
	// Start returns once the exec began, before the kernel has set the new command line (a CI
	// run read it empty): looked at until it shows, as TestRunningNamesTheSocket does.
	require.Eventually(t, func() bool { return running(s.PID, s.Sock) }, 10*time.Second, time.Millisecond,
		"the stand-in runs, naming the socket")
	assert.True(t, s.Kill(), "reported killed")
	select {
	case err := <-ended:
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "%v", err)
		assert.Equal(t, syscall.SIGKILL, exit.Sys().(syscall.WaitStatus).Signal())
	case <-time.After(10 * time.Second):
		t.Fatal("the process still runs after Kill")
	}
}

// running never takes another process for the server: one whose command line does not name the
// socket (a pid used again), nor a zombie's (it has none).
func TestRunningNamesTheSocket(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	assert.False(t, running(cmd.Process.Pid, "/tmp/wc-none/s"))
	// Start returns once the exec began, which is before the kernel has set the new command line
	// (for a moment it reads empty): looked at until it shows.
	assert.Eventually(t, func() bool { return running(cmd.Process.Pid, "60") }, 10*time.Second, time.Millisecond,
		"the same process, by a word its command line holds")
}
