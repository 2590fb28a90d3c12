// Package lockfile says where a root's bridges keep their files and holds the lock that makes
// the bridge one per root and channel configuration. It is apart from package bridge so that
// wcomm, which starts a bridge and asks whether one runs, links none of the chat clients
// (net/http among them).
//
// The bridges' files, in the root's .bridge folder (store.BridgeDir, 0700; a dot folder is no
// session folder): one folder per channel configuration, named by its key
// (messages.ChannelsConfig.Key), each with bridge.lock (held by the running bridge, holds its pid),
// state.json (package bridge) and bridge.log (the diagnostics of a bridge an ask started). A bridge
// of one project's channels so never shares a lock or a state with another's.
package lockfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// Dir is the folder of the bridge of root's channels named key; key "" is the .bridge folder
// itself (a bridge that serves every question: the tests' own).
func Dir(root, key string) string {
	if key == "" {
		return filepath.Join(root, store.BridgeDir)
	}
	return filepath.Join(root, store.BridgeDir, key)
}

// LogPath is the log of the bridge of root's channels named key, when an ask started it.
func LogPath(root, key string) string { return filepath.Join(Dir(root, key), store.BridgeLogName) }

// ErrRunning: another bridge runs for this root and these channels.
var ErrRunning = errors.New("a bridge already runs")

func checkKey(key string) error {
	if key != "" && !messages.ValidChannelsKey(key) {
		return fmt.Errorf("channels key %q is not one: want 16 hex digits", messages.SanitizeField(key))
	}
	return nil
}

// MakeDir makes the folder of the bridge of root's channels named key, with the store's checks:
// the .bridge folder and the key's folder are real folders of this user (0700), neither a symlink
// nor planted by another user. The caller checked the root itself.
func MakeDir(root, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := store.EnsureDir(Dir(root, ""), true); err != nil {
		return err
	}
	if key == "" {
		return nil
	}
	return store.EnsureDir(Dir(root, key), true)
}

// Lock takes the lock of the bridge of root's channels named key and writes this process's pid
// into it; it fails with ErrRunning naming the pid of the bridge that holds it. The lock goes
// with the process.
func Lock(root, key string) (unlock func(), err error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if err := MakeDir(root, key); err != nil {
		return nil, err
	}
	path := filepath.Join(Dir(root, key), store.BridgeLockName)
	f, err := lock.Try(path, syscall.LOCK_EX)
	if err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("process %d runs the bridge of these channels for %s: %w", PID(root, key), root, ErrRunning)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { f.Close() }, nil
}

// Running reports whether a bridge holds the lock of root's channels named key.
func Running(root, key string) bool {
	if checkKey(key) != nil {
		return false
	}
	return lock.IsLockedExclusive(filepath.Join(Dir(root, key), store.BridgeLockName))
}

// PID is the pid written in the lock file of root's channels named key, 0 when unknown.
func PID(root, key string) int {
	if checkKey(key) != nil {
		return 0
	}
	data, err := os.ReadFile(filepath.Join(Dir(root, key), store.BridgeLockName))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return n
}

// Keys lists the keys of the bridges that have a folder under root, sorted.
func Keys(root string) []string {
	ents, _ := os.ReadDir(Dir(root, ""))
	var out []string
	for _, e := range ents {
		if e.IsDir() && messages.ValidChannelsKey(e.Name()) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}
