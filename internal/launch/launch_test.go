package launch

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// helperEnv makes this test binary, started by Start, the helper: it reports what it was started
// with on stderr and exits.
const helperEnv = "LAUNCH_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		in, _ := io.ReadAll(os.Stdin)
		sid, _ := unix.Getsid(0)
		out, _ := os.Stdout.Stat()
		null, _ := os.Stat(os.DevNull)
		_, tty := os.OpenFile("/dev/tty", os.O_RDONLY, 0)
		fmt.Fprintf(os.Stderr, "leader=%v stdin=%d stdout-null=%v tty=%v env=%s\n",
			sid == os.Getpid(), len(in), os.SameFile(out, null), tty == nil, os.Getenv("LAUNCH_TEST_MARK"))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// waitFor polls a file until it holds a whole line, to a deadline.
func waitFor(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(data), "\n") {
			return string(data)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: no line from the helper within 10s", path)
	return ""
}

func TestStartDetached(t *testing.T) {
	t.Setenv(helperEnv, "1")
	t.Setenv("LAUNCH_TEST_MARK", "inherited")
	dir := t.TempDir()
	log := filepath.Join(dir, "helper.log")
	require.NoError(t, Start(Helper{Path: os.Args[0], Args: []string{"-test.run=^$"}, Log: log}))
	got := waitFor(t, log)
	assert.Equal(t, "leader=true stdin=0 stdout-null=true tty=false env=inherited\n", got,
		"a session of its own without a terminal, stdin and stdout on /dev/null, the environment inherited")
	st, err := os.Stat(log)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	// A second start appends to the same log.
	require.NoError(t, Start(Helper{Path: os.Args[0], Args: []string{"-test.run=^$"}, Log: log}))
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(readString(t, log), "\n") < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.Equal(t, 2, strings.Count(readString(t, log), "leader=true"))
}

func TestStartNeverFollowsALinkedLog(t *testing.T) {
	t.Setenv(helperEnv, "1")
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("kept\n"), 0o600))
	log := filepath.Join(dir, "helper.log")
	require.NoError(t, os.Symlink(victim, log))
	// The helper still starts; its diagnostics go nowhere rather than through the link.
	opened := filepath.Join(dir, "opened.log")
	require.NoError(t, Start(Helper{Path: os.Args[0], Args: []string{"-test.run=^$"}, Log: log}))
	require.NoError(t, Start(Helper{Path: os.Args[0], Args: []string{"-test.run=^$"},
		OpenLog: func() (*os.File, error) { return os.OpenFile(opened, os.O_WRONLY|os.O_CREATE, 0o600) }}))
	waitFor(t, opened)
	assert.Equal(t, "kept\n", readString(t, victim))
}

func TestStartMissingProgram(t *testing.T) {
	err := Start(Helper{Path: filepath.Join(t.TempDir(), "none")})
	assert.Error(t, err)
}

func readString(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}
