// Package lockfile says where a root's bridge keeps its files and holds the lock that makes the
// bridge one per root. It is apart from package bridge so that wcomm, which starts a bridge and
// asks whether one runs, links none of the chat clients (net/http among them).
package lockfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The bridge's files, in the root's .bridge folder (0700; a dot folder is no session folder):
// bridge.lock (held by the running bridge, holds its pid), state.json (package bridge) and
// bridge.log (the diagnostics of a bridge an ask started).
const (
	dirName  = ".bridge"
	lockName = "bridge.lock"
	// LogFile is the log of a bridge an ask started, in Dir.
	LogFile = "bridge.log"
)

// Dir is the bridge's folder under root.
func Dir(root string) string { return filepath.Join(root, dirName) }

// ErrRunning: another bridge runs for this root.
var ErrRunning = errors.New("a bridge already runs")

// Lock takes the root's bridge lock and writes this process's pid into it; it fails with
// ErrRunning naming the pid of the bridge that holds it. The lock goes with the process.
func Lock(root string) (unlock func(), err error) {
	dir := Dir(root)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("process %d runs the bridge for %s: %w", PID(root), root, ErrRunning)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { f.Close() }, nil
}

// Running reports whether a bridge holds root's lock.
func Running(root string) bool {
	f, err := os.Open(filepath.Join(Dir(root), lockName))
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// PID is the pid written in root's lock file, 0 when unknown.
func PID(root string) int {
	data, err := os.ReadFile(filepath.Join(Dir(root), lockName))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return n
}
