package door

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Codex's door. Codex's TUI (unless started with --no-daemon) is a client of an app-server daemon
// that it starts and shares with every TUI of the same CODEX_HOME; the daemon listens on a Unix
// socket named by CODEX_HOME/app-server-control/app-server-control.sock (a symlink into a 0700
// folder of /tmp), speaks JSON-RPC in WebSocket frames, and asks no token: the socket's mode (0600)
// is the whole check, so only the same user gets in. Its method turn/start, into the thread the TUI
// shows, reaches the model exactly once, whether the TUI is idle, mid-turn (the message joins the
// running turn), running a tool, holding a person's draft (untouched) or showing a dialog.
//
// Nothing links a TUI process to its thread but what they share: the process's CODEX_HOME (its
// socket) and working folder (the thread's cwd). The daemon outlives its TUIs and keeps their
// threads loaded, and a turn started in a thread whose TUI has exited is seen by nobody; so a
// thread counts only when it is the only one of the TUI's home and folder created since this TUI
// process started, no other TUI of that home runs in that folder, and the process is checked
// again to be alive right before the write.

// codexMinVersion is the oldest Codex whose app-server was measured to deliver as described.
const codexMinVersion = "0.169.0"

// maxCodexThreads bounds how many loaded threads are read: a daemon holds one per TUI session and
// a few of its own.
const maxCodexThreads = 64

// createdSlack allows for a boot time read from /proc/stat being off by a second or so against the
// wall clock the daemon stamps threads with.
const createdSlack = 2

// codexThread is what thread/read says of a thread. Only the fields checked or reported are read.
type codexThread struct {
	ID         string      `json:"id"`
	Cwd        string      `json:"cwd"`
	Originator string      `json:"originator"`
	Ephemeral  bool        `json:"ephemeral"`
	CreatedAt  int64       `json:"createdAt"`
	CliVersion string      `json:"cliVersion"`
	Status     codexStatus `json:"status"`
}

type codexStatus struct {
	Type        string   `json:"type"`
	ActiveFlags []string `json:"activeFlags"`
}

type threadList struct {
	Data       []string `json:"data"`
	NextCursor *string  `json:"nextCursor"`
}

type threadRead struct {
	Thread codexThread `json:"thread"`
}

type threadID struct {
	ThreadID string `json:"threadId"`
}

type listParams struct {
	Cursor *string `json:"cursor,omitempty"`
}

type turnStartParams struct {
	ThreadID string      `json:"threadId"`
	Input    []userInput `json:"input"`
}

type userInput struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type turnStarted struct {
	Turn struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"turn"`
}

// CodexProc is a Codex TUI process with the home and folder that tie it to its thread.
type CodexProc struct {
	PID  int
	Home string // its CODEX_HOME
	Cwd  string
}

// findCodex is Find for Codex's app-server: the first process of pids that is a Codex TUI decides.
func (f Finder) findCodex(ctx context.Context, pids []int) Finding {
	if len(pids) == 0 {
		return typed("no process of the pane could be read")
	}
	for _, pid := range pids {
		args, err := f.args(pid)
		if err != nil || !isCodexTUI(args) {
			continue
		}
		return f.codexOne(ctx, pid, args)
	}
	return typed("no Codex TUI process in this pane")
}

// isCodexTUI reports whether argv is Codex's interactive TUI (the native program; the npm
// launcher is node), not its daemon or a non-interactive command.
func isCodexTUI(args []string) bool {
	if len(args) == 0 || filepath.Base(args[0]) != "codex" {
		return false
	}
	if len(args) > 1 {
		switch args[1] {
		case "app-server", "exec", "e", "review", "mcp", "mcp-server", "exec-server", "login", "logout",
			"completion", "update", "doctor", "sandbox", "debug", "apply", "a", "cloud", "features", "help", "queue":
			return false
		}
	}
	return true
}

// codexOne looks at the Codex TUI process pid.
func (f Finder) codexOne(ctx context.Context, pid int, args []string) Finding {
	for _, a := range args[1:] {
		switch {
		case a == "--no-daemon":
			return typed("Codex TUI %d runs without its app-server daemon (--no-daemon)", pid)
		case a == "--remote" || strings.HasPrefix(a, "--remote="):
			return typed("Codex TUI %d is a client of a remote app-server (--remote)", pid)
		}
	}
	home, err := f.codexHome(pid)
	if err != nil {
		return typed("Codex TUI %d: %v", pid, err)
	}
	cwd, err := f.cwd(pid)
	if err != nil {
		return typed("Codex TUI %d: working folder: %v", pid, err)
	}
	start, err := f.procStart(pid)
	if err != nil {
		return typed("process %d: %v", pid, err)
	}
	started, err := f.startTime(pid, start)
	if err != nil {
		return typed("process %d: %v", pid, err)
	}
	link := filepath.Join(home, "app-server-control", "app-server-control.sock")
	sock, err := f.codexSocket(link)
	if err != nil {
		return typed("Codex TUI %d: app-server socket %s: %v", pid, link, err)
	}

	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	c, _, err := dialAppServer(ctx, sock)
	if err != nil {
		return typed("Codex TUI %d: app-server: %v", pid, err)
	}
	defer c.Close()
	threads, err := loadedThreads(ctx, c)
	if err != nil {
		return typed("Codex TUI %d: app-server: %v", pid, err)
	}
	var mine []codexThread
	for _, t := range threads {
		// Not by originator: that is the daemon's first client's name, not the thread's maker's.
		if !t.Ephemeral && t.Cwd == cwd && t.Status.Type != "notLoaded" &&
			t.CreatedAt >= started.Unix()-createdSlack {
			mine = append(mine, t)
		}
	}
	switch len(mine) {
	case 0:
		return typed("Codex TUI %d: its app-server holds no thread of %s made since the TUI started at %s (%s)", pid, cwd,
			started.UTC().Format(time.RFC3339), describeThreads(threads))
	case 1:
	default:
		ids := make([]string, len(mine))
		for i, t := range mine {
			ids[i] = t.ID
		}
		return typed("Codex TUI %d: %d threads of %s on its app-server (%s): which one it shows cannot be told", pid, len(mine), cwd, strings.Join(ids, ", "))
	}
	t := mine[0]
	others, err := f.codexTUIs()
	if err != nil {
		return typed("Codex TUI %d: the process table: %v", pid, err)
	}
	for _, o := range others {
		if o.PID != pid && o.Home == home && o.Cwd == cwd {
			return typed("Codex TUI %d: Codex TUI %d runs with the same home (%s) in the same folder, so their threads cannot be told apart", pid, o.PID, home)
		}
	}
	fd := Finding{Route: RouteTyped, Door: CodexAppServer, Status: codexState(t.Status), Version: t.CliVersion, PID: pid,
		Thread: t.ID, procStart: start, cwd: cwd}
	if !versionAtLeast(t.CliVersion, codexMinVersion) {
		fd.Why = fmt.Sprintf("Codex %s is older than %s, the first version whose app-server was measured", t.CliVersion, codexMinVersion)
		return fd
	}
	fd.Route, fd.Socket = RouteSocket, sock
	fd.Why = fmt.Sprintf("Codex %s TUI %d in this pane shows thread %s of its app-server (%s)", t.CliVersion, pid, t.ID, sock)
	return fd
}

// describeThreads says which threads were loaded, for a finding that matched none.
func describeThreads(threads []codexThread) string {
	if len(threads) == 0 {
		return "no thread is loaded"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d loaded:", len(threads))
	for i, t := range threads {
		if i == 4 {
			fmt.Fprintf(&b, " and %d more", len(threads)-i)
			break
		}
		fmt.Fprintf(&b, " %s of %s by %s made %s%s;", t.ID, t.Cwd, t.Originator, time.Unix(t.CreatedAt, 0).UTC().Format(time.RFC3339),
			map[bool]string{true: " (ephemeral)"}[t.Ephemeral])
	}
	return strings.TrimSuffix(b.String(), ";")
}

// codexState is a thread's status in the words of Finding.Status.
func codexState(s codexStatus) string {
	switch s.Type {
	case "idle":
		return StatusIdle
	case "active":
		return StatusBusy
	}
	return s.Type
}

// loadedThreads reads every loaded thread (at most maxCodexThreads).
func loadedThreads(ctx context.Context, c *rpcConn) ([]codexThread, error) {
	var ids []string
	var cursor *string
	for {
		var l threadList
		if err := c.call(ctx, "thread/loaded/list", listParams{Cursor: cursor}, &l); err != nil {
			return nil, err
		}
		ids = append(ids, l.Data...)
		if l.NextCursor == nil || *l.NextCursor == "" || len(ids) >= maxCodexThreads {
			break
		}
		cursor = l.NextCursor
	}
	if len(ids) > maxCodexThreads {
		ids = ids[:maxCodexThreads]
	}
	out := make([]codexThread, 0, len(ids))
	for _, id := range ids {
		var r threadRead
		if err := c.call(ctx, "thread/read", threadID{ThreadID: id}, &r); err != nil {
			if isRPCError(err) {
				continue // unloaded meanwhile
			}
			return nil, err
		}
		out = append(out, r.Thread)
	}
	return out, nil
}

// writeCodex starts a turn with text in the thread findCodex matched. Before it connects it checks
// that the TUI process is still the one matched (a TUI that has exited leaves its thread loaded,
// and a turn there would be seen by nobody) and that the thread is still loaded in the same folder.
// Every error before the turn/start message is written whole, and the server's error reply to it,
// wrap ErrNotWritten. A turn/start written whole with no reply is another error: the turn may
// have started, so the message must not be sent again.
func (f Finder) writeCodex(ctx context.Context, fd Finding, text string) error {
	if start, err := f.procStart(fd.PID); err != nil || start != fd.procStart {
		return fmt.Errorf("%w: Codex TUI %d has ended", ErrNotWritten, fd.PID)
	}
	if err := f.checkSocket(fd.Socket); err != nil {
		return fmt.Errorf("%w: app-server socket %s: %w", ErrNotWritten, fd.Socket, err)
	}
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	c, _, err := dialAppServer(ctx, fd.Socket)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotWritten, err)
	}
	defer c.Close()
	var r threadRead
	if err := c.call(ctx, "thread/read", threadID{ThreadID: fd.Thread}, &r); err != nil {
		return fmt.Errorf("%w: %w", ErrNotWritten, err)
	}
	if r.Thread.Cwd != fd.cwd || r.Thread.Status.Type == "notLoaded" {
		return fmt.Errorf("%w: thread %s is no longer the one of Codex TUI %d", ErrNotWritten, fd.Thread, fd.PID)
	}
	req := c.request("turn/start", turnStartParams{ThreadID: fd.Thread, Input: []userInput{{Type: "text", Text: text}}})
	if err := c.send(ctx, req); err != nil {
		// A WebSocket message is acted on only when its frame is whole.
		return fmt.Errorf("%w: turn/start: %w", ErrNotWritten, err)
	}
	var ts turnStarted
	if err := c.reply(ctx, "turn/start", &ts); err != nil {
		if isRPCError(err) {
			return fmt.Errorf("%w: %w", ErrNotWritten, err)
		}
		return fmt.Errorf("turn/start was written to Codex's app-server for thread %s, but %w; it may have started a turn, so it is not written again", fd.Thread, err)
	}
	return nil
}

// codexHome is the process's CODEX_HOME, else its HOME's .codex.
func (f Finder) codexHome(pid int) (string, error) {
	env, err := f.environ(pid)
	if err != nil {
		return "", err
	}
	home, codex := envValue(env, "HOME"), envValue(env, "CODEX_HOME")
	if codex == "" && home != "" {
		codex = filepath.Join(home, ".codex")
	}
	if codex == "" || !filepath.IsAbs(codex) {
		return "", fmt.Errorf("process %d has no HOME", pid)
	}
	return filepath.Clean(codex), nil
}

func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if rest, ok := strings.CutPrefix(kv, name+"="); ok {
			v = rest
		}
	}
	return v
}

// codexSocket resolves the socket path link names: a symlink of this user to a socket in a
// folder only this user can enter, or such a socket itself. Another user's link or folder could
// route a message to them.
func (f Finder) codexSocket(link string) (string, error) {
	st, err := os.Lstat(link)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", errors.New("gone (no daemon has run for this home)")
		}
		return "", err
	}
	sock := link
	if st.Mode().Type() == fs.ModeSymlink {
		if err := f.owned(st); err != nil {
			return "", fmt.Errorf("the link is %w", err)
		}
		if sock, err = filepath.EvalSymlinks(link); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", errors.New("gone (its daemon has stopped)")
			}
			return "", err
		}
	}
	dir, err := os.Lstat(filepath.Dir(sock))
	if err != nil {
		return "", err
	}
	if !dir.IsDir() || dir.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("its folder %s may be entered by others (mode %04o)", filepath.Dir(sock), dir.Mode().Perm())
	}
	if err := f.owned(dir); err != nil {
		return "", fmt.Errorf("its folder %s is %w", filepath.Dir(sock), err)
	}
	if err := f.checkSocket(sock); err != nil {
		return "", fmt.Errorf("%s: %w", sock, err)
	}
	return sock, nil
}

func (f Finder) args(pid int) ([]string, error) {
	if f.Args != nil {
		return f.Args(pid)
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil, err
	}
	data = bytes.TrimRight(data, "\x00")
	if len(data) == 0 {
		return nil, nil
	}
	return strings.Split(string(data), "\x00"), nil
}

func (f Finder) cwd(pid int) (string, error) {
	if f.Cwd != nil {
		return f.Cwd(pid)
	}
	return os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
}

// startTime is when the process started on the wall clock: the boot time of /proc/stat plus its
// start in clock ticks, which /proc counts at 100 a second (USER_HZ; proc(5)).
func (f Finder) startTime(pid int, ticks uint64) (time.Time, error) {
	if f.StartTime != nil {
		return f.StartTime(pid)
	}
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "btime "); ok {
			boot, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			if err != nil {
				break
			}
			return time.Unix(boot, 0).Add(time.Duration(ticks) * 10 * time.Millisecond), nil
		}
	}
	return time.Time{}, errors.New("no boot time in /proc/stat")
}

// codexTUIs lists the Codex TUI processes of the machine with their homes and folders.
func (f Finder) codexTUIs() ([]CodexProc, error) {
	if f.CodexTUIs != nil {
		return f.CodexTUIs()
	}
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	var out []CodexProc
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid <= 0 {
			continue
		}
		args, err := f.args(pid)
		if err != nil || !isCodexTUI(args) || slices.Contains(args, "--no-daemon") {
			continue
		}
		home, err1 := f.codexHome(pid)
		cwd, err2 := f.cwd(pid)
		if err1 != nil || err2 != nil {
			continue // gone meanwhile, or another user's
		}
		out = append(out, CodexProc{PID: pid, Home: home, Cwd: cwd})
	}
	return out, nil
}
