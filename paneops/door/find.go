package door

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/paneops/proc"
)

// Finder looks up a pane's session. The zero value reads the real /proc and files; tests replace
// the functions.
type Finder struct {
	// Environ returns a process's environment (nil: /proc/PID/environ). The session folder is
	// the agent's own: its CLAUDE_CONFIG_DIR, else its HOME's .claude.
	Environ func(pid int) ([]string, error)
	// ProcStart returns when a process started, in clock ticks after boot, as the session file's
	// procStart records it (nil: field 22 of /proc/PID/stat).
	ProcStart func(pid int) (uint64, error)
	// Args returns a process's argv (nil: /proc/PID/cmdline), Cwd its working folder (nil:
	// /proc/PID/cwd) and StartTime when it started on the wall clock (nil: from /proc/stat).
	Args      func(pid int) ([]string, error)
	Cwd       func(pid int) (string, error)
	StartTime func(pid int) (time.Time, error)
	// CodexTUIs lists the machine's Codex TUI processes (nil: a scan of /proc).
	CodexTUIs func() ([]CodexProc, error)
	// UID is the user whose files are trusted (0: the caller's own).
	UID int
	// SkipOwner turns the owner checks off (tests on a file system that fakes owners).
	SkipOwner bool
}

// maxSessionFile bounds what is read of a session or key file: they are a few hundred bytes.
const maxSessionFile = 64 << 10

// Find returns the route for pane, given the processes of the pane's tree that may be the
// agent's session (pids, shallowest first). A session counts only when everything agrees: its
// file is named by the pid of a process in the pane's tree and says that pid, the process started
// when the file says (procStart), the file's tmux pane is this pane, it is interactive, its
// version and peer protocol are ones this package knows, and its socket is a socket of this
// user. The tmux field alone never decides: pane ids repeat across servers.
func (f Finder) Find(pane string, pids []int) Finding {
	if len(pids) == 0 {
		return typed("no process of the pane could be read")
	}
	var why []string
	for _, pid := range pids {
		fd, found := f.one(pane, pid)
		if found {
			return fd
		}
		if fd.Why != "" {
			why = append(why, fd.Why)
		}
	}
	if len(why) == 0 {
		return typed("no Claude Code session file names a process of this pane")
	}
	return typed("%s", strings.Join(why, "; "))
}

// one looks at one process. found is true when a session of this pane was matched (the finding
// may still be typed: a session without a usable socket); a typed finding with a Why and found
// false says why the process's session file did not count.
func (f Finder) one(pane string, pid int) (Finding, bool) {
	dir, err := f.sessionsDir(pid)
	if err != nil {
		return Finding{}, false
	}
	path := filepath.Join(dir, strconv.Itoa(pid)+".json")
	data, err := f.readOwn(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Finding{}, false
	}
	if err != nil {
		return typed("session file of pid %d: %v", pid, err), false
	}
	var s Session
	if err := json.Unmarshal(data, &s); err != nil {
		return typed("session file %s is not JSON: %v", path, err), false
	}
	if s.PID != pid {
		return typed("session file %s names pid %d, not %d", path, s.PID, pid), false
	}
	start, err := f.procStart(pid)
	if err != nil {
		return typed("process %d: %v", pid, err), false
	}
	if s.ProcStart != strconv.FormatUint(start, 10) {
		return typed("session file %s is of an earlier process %d (procStart %q, the process started at %d)", path, pid, s.ProcStart, start), false
	}
	if got := paneOf(s.Tmux); got != pane {
		return typed("session %d says it runs in tmux pane %q, not %s", pid, s.Tmux, pane), false
	}
	// From here on the session is this pane's: its status is the agent's own word on its state.
	fd := Finding{Route: RouteTyped, Status: s.Status, Version: s.Version, PID: pid, procStart: start, dir: dir}
	switch {
	case s.Kind != "interactive":
		fd.Why = fmt.Sprintf("Claude Code session %d is %q, not interactive", pid, s.Kind)
	case !versionAtLeast(s.Version, MinVersion):
		fd.Why = fmt.Sprintf("Claude Code %s is older than %s, the first version whose messaging socket was measured", s.Version, MinVersion)
	case s.PeerProtocol != PeerProtocol:
		fd.Why = fmt.Sprintf("Claude Code session %d speaks peer protocol %d; wcomm knows %d", pid, s.PeerProtocol, PeerProtocol)
	case s.MessagingSocketPath == "" || !filepath.IsAbs(s.MessagingSocketPath):
		fd.Why = fmt.Sprintf("Claude Code session %d has no messaging socket", pid)
	default:
		if err := f.checkSocket(s.MessagingSocketPath); err != nil {
			fd.Why = fmt.Sprintf("Claude Code session %d: messaging socket %s: %v", pid, s.MessagingSocketPath, err)
			break
		}
		if _, err := f.token(dir, pid, start); err != nil {
			fd.Why = fmt.Sprintf("Claude Code session %d: %v", pid, err)
			break
		}
		fd.Route, fd.Socket, fd.Door = RouteSocket, s.MessagingSocketPath, ClaudeSocket
		fd.Why = fmt.Sprintf("Claude Code %s session %d in this pane has a messaging socket (%s)", s.Version, pid, s.MessagingSocketPath)
	}
	return fd, true
}

// sessionsDir is the folder of the agent's session files, from the agent's own environment.
func (f Finder) sessionsDir(pid int) (string, error) {
	env, err := f.environ(pid)
	if err != nil {
		return "", err
	}
	var home, config string
	for _, kv := range env {
		switch {
		case strings.HasPrefix(kv, "CLAUDE_CONFIG_DIR="):
			config = strings.TrimPrefix(kv, "CLAUDE_CONFIG_DIR=")
		case strings.HasPrefix(kv, "HOME="):
			home = strings.TrimPrefix(kv, "HOME=")
		}
	}
	if config == "" && home != "" {
		config = filepath.Join(home, ".claude")
	}
	if config == "" || !filepath.IsAbs(config) {
		return "", fmt.Errorf("process %d has no HOME", pid)
	}
	return filepath.Join(config, "sessions"), nil
}

// token reads the session's peer token from its key file (PID.HASH.key), which must belong to
// the same process (procStart). The token is returned to Write only; no error holds it.
func (f Finder) token(dir string, pid int, start uint64) (string, error) {
	matches, err := filepath.Glob(filepath.Join(dir, strconv.Itoa(pid)+".*.key"))
	if err != nil || len(matches) == 0 {
		return "", fmt.Errorf("no key file for session %d in %s", pid, dir)
	}
	for _, m := range matches {
		data, err := f.readOwn(m)
		if err != nil {
			continue
		}
		var k keyFile
		if json.Unmarshal(data, &k) != nil || k.ProcStart != strconv.FormatUint(start, 10) {
			continue
		}
		if !validToken(k.PeerToken) {
			return "", fmt.Errorf("key file %s holds no well-formed token", m)
		}
		return k.PeerToken, nil
	}
	return "", fmt.Errorf("no key file of this process (procStart %d) for session %d in %s", start, pid, dir)
}

// validToken accepts what was seen (32 hex digits) and a little more, never control characters.
func validToken(t string) bool {
	if len(t) < 16 || len(t) > 256 {
		return false
	}
	for _, r := range t {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// readOwn reads a small regular file of this user that nobody else may write. A file another user
// could have planted would let them choose where wcomm writes a message.
func (f Finder) readOwn(path string) ([]byte, error) {
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("%s may be written by others (mode %04o)", path, st.Mode().Perm())
	}
	if err := f.owned(st); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	buf := make([]byte, maxSessionFile+1)
	n, err := fh.Read(buf)
	if err != nil {
		return nil, err
	}
	if n > maxSessionFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxSessionFile)
	}
	return bytes.TrimSpace(buf[:n]), nil
}

// checkSocket accepts a Unix socket of this user that others cannot connect to.
func (f Finder) checkSocket(path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errors.New("gone")
		}
		return err
	}
	if st.Mode().Type() != fs.ModeSocket {
		return errors.New("not a socket")
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("others may connect (mode %04o)", st.Mode().Perm())
	}
	return f.owned(st)
}

func (f Finder) owned(st fs.FileInfo) error {
	if f.SkipOwner {
		return nil
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	uid := f.UID
	if uid == 0 {
		uid = os.Getuid()
	}
	if int(sys.Uid) != uid {
		return fmt.Errorf("owned by uid %d, not %d", sys.Uid, uid)
	}
	return nil
}

func (f Finder) environ(pid int) ([]string, error) {
	if f.Environ != nil {
		return f.Environ(pid)
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return nil, err
	}
	return strings.Split(string(bytes.TrimRight(data, "\x00")), "\x00"), nil
}

func (f Finder) procStart(pid int) (uint64, error) {
	if f.ProcStart != nil {
		return f.ProcStart(pid)
	}
	return proc.ProcStart(pid)
}
