package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm"
)

// The bridge's files, in the root's .bridge folder (0700; a dot folder is no session folder):
// bridge.lock (held by the running bridge, holds its pid), state.json (what was posted where,
// tokens, update offsets; 0600, replaced atomically after each change) and bridge.log (the
// diagnostics of a bridge an ask started).
const (
	stateDir  = ".bridge"
	lockFile  = "bridge.lock"
	stateFile = "state.json"
	LogFile   = "bridge.log"
)

// Dir is the bridge's folder under root.
func Dir(root string) string { return filepath.Join(root, stateDir) }

// ErrRunning: another bridge runs for this root.
var ErrRunning = errors.New("a bridge already runs")

// Lock takes the root's bridge lock and writes this process's pid into it; it fails with
// ErrRunning naming the pid of the bridge that holds it. The lock goes with the process.
func Lock(root string) (unlock func(), err error) {
	dir := Dir(root)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("process %d runs the bridge for %s: %w", RunningPID(root), root, ErrRunning)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { f.Close() }, nil
}

// Running reports whether a bridge holds root's lock.
func Running(root string) bool {
	f, err := os.Open(filepath.Join(Dir(root), lockFile))
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

// RunningPID is the pid written in root's lock file, 0 when unknown.
func RunningPID(root string) int {
	data, err := os.ReadFile(filepath.Join(Dir(root), lockFile))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return n
}

// Post is one question posted on one channel.
type Post struct {
	Channel  string    `json:"channel"`
	ID       string    `json:"id"`
	Ref      string    `json:"ref"`
	PostedAt time.Time `json:"posted_at"`
	// Closed is set once the post says the question is decided.
	Closed bool `json:"closed,omitempty"`
}

// State is state.json.
type State struct {
	// Posts by channel, then question id.
	Posts map[string]map[string]*Post `json:"posts"`
	// Tokens: the short token of each question id.
	Tokens map[string]string `json:"tokens"`
	// TelegramOffset is the next getUpdates offset: every update below it was handled.
	TelegramOffset int64 `json:"telegram_offset,omitempty"`
	// SlackSeen are the ids of the last Slack messages handled (Slack redelivers an envelope
	// whose ack it missed).
	SlackSeen []string `json:"slack_seen,omitempty"`
}

// store is the state in memory with its file, safe for the bridge's goroutines.
type store struct {
	mu   sync.Mutex
	path string
	s    State
}

func openStore(root string) (*store, error) {
	dir := Dir(root)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	st := &store{path: filepath.Join(dir, stateFile)}
	data, err := os.ReadFile(st.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", st.path, err)
	default:
		if err := json.Unmarshal(data, &st.s); err != nil {
			return nil, fmt.Errorf("%s: %w; move it away to start afresh (questions may then be posted again)", st.path, err)
		}
	}
	if st.s.Posts == nil {
		st.s.Posts = map[string]map[string]*Post{}
	}
	if st.s.Tokens == nil {
		st.s.Tokens = map[string]string{}
	}
	return st, nil
}

// saveLocked writes the state whole, atomically; the caller holds mu. A state is on disk
// before the bridge acts on it being so.
func (st *store) saveLocked() error {
	data, err := json.MarshalIndent(st.s, "", "  ")
	if err != nil {
		return err
	}
	return tmuxcomm.WriteFile(st.path, append(data, '\n'), 0o600)
}

// update runs f on the state under the lock and saves it.
func (st *store) update(f func(*State)) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	f(&st.s)
	return st.saveLocked()
}

// view runs f on the state under the lock.
func (st *store) view(f func(*State)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	f(&st.s)
}
