package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
)

// newResidentWorld is a world whose calls and panes turn the resident tmux client on.
func newResidentWorld(t *testing.T) *world {
	w := newWorld(t)
	w.env = []string{"WCOMM_TMUXD=1"}
	w.tmux("set-environment", "-g", "WCOMM_TMUXD", "1")
	return w
}

// residentPID waits until a resident tmux client serves the world's root (its socket is there
// and its lock names it) and returns its pid.
func (w *world) residentPID() int {
	w.t.Helper()
	pid := 0
	waitFor(w.t, 15*time.Second, func() bool {
		socks, _ := filepath.Glob(filepath.Join(w.root, ".tmuxd", "*.sock"))
		locks, _ := filepath.Glob(filepath.Join(w.root, ".tmuxd", "*.lock"))
		if len(socks) != 1 || len(locks) != 1 {
			return false
		}
		data, _ := os.ReadFile(locks[0])
		pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		return pid > 0 && syscall.Kill(pid, 0) == nil
	}, "a resident tmux client for %s", w.root)
	return pid
}

// startResident makes a first send start the resident, and waits until it serves.
func (w *world) startResident(from, to string) int {
	w.t.Helper()
	w.send(from, to, "wake the resident")
	pid := w.residentPID()
	waitFor(w.t, 15*time.Second, func() bool {
		return strings.Contains(w.tmux("list-clients", "-F", "#{client_control_mode}"), "1")
	}, "the resident's control client attached")
	return pid
}

// pastes are the recorder's entries whose paste holds text.
func pastes(t *testing.T, log, text string) []map[string]any {
	var out []map[string]any
	for _, e := range jsonLines(t, log) {
		if s, _ := e["paste"].(string); strings.Contains(s, text) {
			out = append(out, e)
		}
	}
	return out
}

// TestResidentKilledBetweenPasteAndEnter: the resident that pasted a send's request is killed
// (-9) before the send's Enter: the send presses the Enter by a client of its own, and the
// request arrives once, submitted. The send does its own work (WCOMM_TMUXD_COMMANDS=0) and hands
// the resident its tmux calls only, as the commands not handed whole do.
func TestResidentKilledBetweenPasteAndEnter(t *testing.T) {
	t.Parallel()
	w := newResidentWorld(t)
	orch := w.catPane()
	rec, recLog := w.recorderPane()
	pid := w.startResident(orch, rec)
	before := w.markRecord("PASTED", rec)

	s := w.start(call{pane: orch, env: []string{"WCOMM_TMUXD_COMMANDS=0"}}, "send", "--to", rec, "--enter-delay", "3s", "--", "the killed resident's task")
	waitFor(t, 15*time.Second, func() bool {
		out := w.markRecord("PASTED", rec)
		return strings.TrimSpace(out) != strings.TrimSpace(before)
	}, "the send's paste")
	require.Empty(t, pastes(t, recLog, "the killed resident's task"), "pasted, the Enter 3 s away: nothing submitted yet")
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))

	r := s.wait(t, time.Minute)
	requireCode(t, 0, r)
	w.deliveredOnce(orch, rec, recLog, "the killed resident's task", 15*time.Second)
}

// deliveredOnce checks that task reached the recorder rec once, submitted, also after a send that
// follows it (it is not pasted again behind it), and that no buffer is left behind. The recorder
// logs what it read once it has read it, which under load can be after the send has ended.
func (w *world) deliveredOnce(orch, rec, recLog, task string, within time.Duration) {
	t := w.t
	t.Helper()
	waitFor(t, within, func() bool { return len(pastes(t, recLog, task)) > 0 }, "the request submitted")
	w.send(orch, rec, "the next task")
	waitFor(t, 15*time.Second, func() bool { return len(pastes(t, recLog, "the next task")) > 0 }, "the next request")
	got := pastes(t, recLog, task)
	require.Len(t, got, 1, "%v", got)
	assert.Equal(t, true, got[0]["enter"])
	assert.Empty(t, w.buffers(), "a buffer left behind")
}

// TestResidentKilledMidCall: the resident is stopped, so the send's call waits in flight on its
// socket, then killed (-9): the send goes on by clients of its own and the request arrives
// once, submitted; nothing the dead resident took runs after it.
func TestResidentKilledMidCall(t *testing.T) {
	t.Parallel()
	w := newResidentWorld(t)
	orch := w.catPane()
	rec, recLog := w.recorderPane()
	pid := w.startResident(orch, rec)
	sock, _ := filepath.Glob(filepath.Join(w.root, ".tmuxd", "*.sock"))
	require.Len(t, sock, 1)

	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }) // never left stopped
	// The stop is taken by each thread as it next runs: on a loaded machine a thread woken by the
	// send's connect could still accept the call first (seen once in CI), so the send starts only
	// once every thread is stopped.
	waitFor(t, 15*time.Second, func() bool { return allStopped(pid) }, "the resident's threads stopped")
	// Handed whole or not, a call the stopped resident never took goes on without it.
	s := w.start(call{pane: orch}, "send", "--to", rec, "--enter-delay", "0", "--", "the stopped resident's task")
	// The send is connected and waits for an answer: its connection waits in the listener's
	// queue, which the stopped resident does not take.
	queued := func() (bool, string) {
		out, err := exec.Command("ss", "-xlH", "src", sock[0]).Output()
		f := strings.Fields(string(out))
		return err == nil && len(f) > 2 && f[2] != "0", string(out)
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if ok, _ := queued(); ok {
			break
		}
		if time.Now().After(deadline) {
			// What the send did meanwhile says why it never waited there.
			_, ss := queued()
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("timed out after 15s waiting for the send's call waiting on the stopped resident (ss: %q)\n%s", ss, s.wait(t, time.Minute))
		}
	}
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))

	r := s.wait(t, time.Minute)
	requireCode(t, 0, r)
	w.deliveredOnce(orch, rec, recLog, "the stopped resident's task", 15*time.Second)
}

// allStopped reports whether every thread of pid is in the stopped state ("T"). A thread's stat
// is at /proc/TID as well, so procStatFields reads it.
func allStopped(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			return false
		}
		f, err := procStatFields(tid)
		if err != nil || f[0] != "T" {
			return false
		}
	}
	return true
}

// TestResidentPlantedFolder: a .tmuxd folder another user (uid 65534) planted in the root is
// refused: nothing is made or started in it, and sends go on by clients of their own.
func TestResidentPlantedFolder(t *testing.T) {
	t.Parallel()
	w := newResidentWorld(t)
	orch := w.catPane()
	rec, recLog := w.recorderPane()
	require.NoError(t, os.MkdirAll(w.root, 0o700))
	planted := filepath.Join(w.root, ".tmuxd")
	require.NoError(t, os.Mkdir(planted, 0o777))
	require.NoError(t, os.Chown(planted, 65534, 65534))

	for i := range 3 {
		w.send(orch, rec, "task "+strconv.Itoa(i))
	}
	waitFor(t, 15*time.Second, func() bool { return len(pastes(t, recLog, "task 2")) == 1 }, "the third request")
	entries, err := os.ReadDir(planted)
	require.NoError(t, err)
	assert.Empty(t, entries, "something was made in another user's folder")
	assert.NotContains(t, w.tmux("list-clients", "-F", "#{client_control_mode}"), "1", "a resident attached")
}

// TestResidentOtherUser: another user (uid 65534) cannot reach the resident's socket: its folder
// is 0700 and the socket 0600, both this user's.
func TestResidentOtherUser(t *testing.T) {
	t.Parallel()
	w := newResidentWorld(t)
	orch := w.catPane()
	rec, _ := w.recorderPane()
	w.startResident(orch, rec)
	socks, _ := filepath.Glob(filepath.Join(w.root, ".tmuxd", "*.sock"))
	require.Len(t, socks, 1)
	for _, p := range []string{filepath.Dir(socks[0]), socks[0]} {
		st, err := os.Lstat(p)
		require.NoError(t, err)
		want := os.FileMode(0o600)
		if st.IsDir() {
			want = 0o700
		}
		assert.Equal(t, want, st.Mode().Perm(), p)
		assert.Equal(t, uint32(os.Getuid()), st.Sys().(*syscall.Stat_t).Uid, p)
	}
	script := "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ntry:\n  s.connect(sys.argv[1]); print('connected')\nexcept Exception as e:\n  print(type(e).__name__)\n"
	cmd := exec.Command("/usr/bin/python3", "-c", script, socks[0])
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, "PermissionError\n", string(out))
}

// TestResidentStartedByFindOnceItSucceeds: find starts the root's resident only after its own
// listing worked, and the next find lists the panes through it; a find whose server is not
// there starts none, makes no root, and leaves no socket on the path it was given.
func TestResidentStartedByFindOnceItSucceeds(t *testing.T) {
	t.Parallel()
	w := newResidentWorld(t)
	nosock := filepath.Join(t.TempDir(), "no-such-server")
	fresh := filepath.Join(t.TempDir(), "fresh")
	r := w.run(call{}, "-S", nosock, "--root", fresh, "find", "6061")
	requireCode(t, 1, r)
	for _, p := range []string{nosock, fresh} {
		_, err := os.Lstat(p)
		assert.True(t, os.IsNotExist(err), "%s: no tmux server started on the path, no root made", p)
	}

	caller := w.window(session, nil, "cat")
	target := w.window(session, nil, "sleep", "6061")
	// A new pane's process is tmux's own fork until it has run sleep: find looks for sleep. Its
	// own command line tells (tmux's pane_current_command says the pane's argv until then).
	pid := strings.TrimSpace(w.tmux("display-message", "-p", "-t", target, "#{pane_pid}"))
	waitFor(t, 15*time.Second, func() bool {
		argv, err := os.ReadFile("/proc/" + pid + "/cmdline")
		return err == nil && strings.HasPrefix(string(argv), "sleep\x00")
	}, "the pane running sleep")
	r = w.in(caller, "find", "6061")
	requireCode(t, 0, r)
	assert.Equal(t, target, strings.TrimSpace(r.stdout))
	w.residentPID()
	waitFor(t, 15*time.Second, func() bool {
		return strings.Contains(w.tmux("list-clients", "-F", "#{client_control_mode}"), "1")
	}, "the resident's control client attached")
	r = w.in(caller, "find", "6061")
	requireCode(t, 0, r)
	assert.Equal(t, target, strings.TrimSpace(r.stdout))
}

// pastedBuffer is the tmux buffer the "pasted" entry of request's delivery log names.
func pastedBuffer(t *testing.T, request string) string {
	t.Helper()
	for _, e := range jsonLines(t, strings.TrimSuffix(request, "-request.md")+"-delivery.jsonl") {
		if e["state"] == "pasted" {
			d, _ := e["detail"].(map[string]any)
			b, _ := d["buffer"].(string)
			return b
		}
	}
	t.Fatalf("no pasted entry in the delivery log of %s", request)
	return ""
}

// TestResidentHandedCommands: with a resident running, send, notify and await are handed to it
// whole: the delivery is the resident's (its buffer names the resident's pid), the command's
// stdout, stderr and exit code are what the command prints, a path relative to the caller's
// folder and a message on stdin are the caller's, and a caller that goes cancels its call.
func TestResidentHandedCommands(t *testing.T) {
	t.Parallel()
	w := newResidentWorld(t)
	orch := w.catPane()
	rec, recLog := w.recorderPane()
	pid := w.startResident(orch, rec)
	prefix := "wcomm-" + strconv.Itoa(pid) + "-"

	require.NoError(t, os.WriteFile(filepath.Join(w.work, "task.md"), []byte("the handed task from a file"), 0o600))
	r := w.in(orch, "send", "--to", rec, "--enter-delay", "50ms", "--file", "task.md")
	requireCode(t, 0, r)
	s := parseSent(t, r.stdout)
	assert.True(t, strings.HasPrefix(pastedBuffer(t, s.Request), prefix), "the send ran in the resident (pid %d): %s", pid, pastedBuffer(t, s.Request))
	waitFor(t, 15*time.Second, func() bool { return len(pastes(t, recLog, "the handed task from a file")) == 1 }, "the request submitted")

	// The worker's answer on stdin, then the await: the answer's body on stdout.
	n := w.run(call{pane: rec, stdin: []byte("the handed answer\n")}, "notify", "--id", s.ID, "--enter-delay", "0", "-")
	requireCode(t, 0, n)
	assert.Equal(t, s.Response+"\n", n.stdout)
	assert.Contains(t, n.stderr, "response saved")
	a := w.in(orch, "await", s.ID, "--timeout", "30s")
	requireCode(t, 0, a)
	assert.Contains(t, a.stdout, "the handed answer")

	// A --file that only this process can read as the caller means it (/dev/stdin) is read here.
	r = w.run(call{pane: orch, stdin: []byte("the task on its stdin")}, "send", "--to", rec, "--enter-delay", "50ms", "--file", "/dev/stdin")
	requireCode(t, 0, r)
	waitFor(t, 15*time.Second, func() bool { return len(pastes(t, recLog, "the task on its stdin")) == 1 }, "the request from /dev/stdin submitted")

	// Exit codes and errors pass through; a usage error is this process's own.
	requireCode(t, 4, w.in(orch, "await", "20200101-000000-0000", "--timeout", "1s"))
	u := w.in(orch, "await", "--timeout", "soon")
	requireCode(t, 2, u)
	assert.Contains(t, u.stderr, "usage: wcomm await")

	// A caller killed during its await: the resident ends the call and lets go of its lock.
	s2 := w.send(orch, rec, "the second handed task")
	bgAwait := w.start(call{pane: orch}, "await", s2.ID, "--timeout", "5m")
	lock := awaitLockIn(s2.Dir, s2.Seq)
	waitFor(t, 15*time.Second, func() bool { return flocked(lock) }, "the handed await waiting")
	require.NoError(t, bgAwait.cmd.Process.Kill())
	bgAwait.wait(t, time.Minute)
	waitFor(t, 15*time.Second, func() bool { return !flocked(lock) }, "the resident ending the await of a caller gone")
	require.NoError(t, syscall.Kill(pid, 0), "the resident runs on")
}

// TestResidentTimerSlack: a resident started by a command (not an MCP server) sleeps with a
// server's timer slack all the same (before, only one an MCP server started had it).
func TestResidentTimerSlack(t *testing.T) {
	t.Parallel()
	w := newResidentWorld(t)
	orch := w.catPane()
	rec, _ := w.recorderPane()
	pid := w.startResident(orch, rec)
	assert.Equal(t, serverSlack, timerSlack(t, pid))
}

// TestResidentSendsNumberFromTheirWatch: the resident running handed sends keeps the session
// folder's watch from the first of them, with no await: a request another sender put far past
// the last number (a sender of the plain procedure, counting files) is counted by the next send,
// which a look at the few numbers after the folder's hint does not reach.
func TestResidentSendsNumberFromTheirWatch(t *testing.T) {
	t.Parallel()
	w := newResidentWorld(t)
	orch := w.catPane()
	rec, _ := w.recorderPane()
	pid := w.startResident(orch, rec)
	first := w.send(orch, rec, "the first handed send")
	assert.True(t, strings.HasPrefix(pastedBuffer(t, first.Request), "wcomm-"+strconv.Itoa(pid)+"-"), "handed to the resident")
	far := first.Seq + 30
	require.NoError(t, os.WriteFile(filepath.Join(first.Dir, fmt.Sprintf("%03d-request.md", far)), []byte("[WORKER id=x]\nforeign\n"), 0o600))
	next := w.send(orch, rec, "the next handed send")
	assert.Equal(t, first.Dir, next.Dir)
	assert.Equal(t, far+2, next.Seq, "numbered past the foreign request")
}

// TestResidentKilledMidHandedSend: the resident running a handed send is killed (-9) between
// the paste and the Enter: the send says that its outcome is not known and exits 1, never runs
// again, and the request arrives once (the resident's guard presses its Enter), not twice.
func TestResidentKilledMidHandedSend(t *testing.T) {
	t.Parallel()
	w := newResidentWorld(t)
	orch := w.catPane()
	rec, recLog := w.recorderPane()
	pid := w.startResident(orch, rec)
	before := w.markRecord("PASTED", rec)

	s := w.start(call{pane: orch}, "send", "--to", rec, "--enter-delay", "3s", "--", "the handed task of a killed resident")
	waitFor(t, 15*time.Second, func() bool {
		out := w.markRecord("PASTED", rec)
		return strings.TrimSpace(out) != strings.TrimSpace(before)
	}, "the send's paste")
	require.Empty(t, pastes(t, recLog, "the handed task of a killed resident"), "pasted, the Enter 3 s away: nothing submitted yet")
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))

	r := s.wait(t, time.Minute)
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "ended during the call")
	assert.Contains(t, r.stderr, "not run again")
	w.deliveredOnce(orch, rec, recLog, "the handed task of a killed resident", 30*time.Second)
}

// TestResidentOfCompanion: the resident a companion program starts (wcomm-mcp, as an MCP server
// does) runs wcomm, so that wcomm's commands, which hand their work only to a resident of their
// own program, hand it to that one.
func TestResidentOfCompanion(t *testing.T) {
	t.Parallel()
	w := newResidentWorld(t)
	orch := w.catPane()
	rec, recLog := w.recorderPane()
	companion := filepath.Join(filepath.Dir(w.bin), "wcomm-mcp")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := w.cmd(ctx, call{pane: orch}, "send", "--to", rec, "--enter-delay", "50ms", "--", "sent by the companion")
	cmd.Path, cmd.Args[0] = companion, companion
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	pid := w.residentPID()
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	require.NoError(t, err)
	assert.Equal(t, "wcomm", filepath.Base(exe), "the resident runs wcomm")

	s := w.send(orch, rec, "handed to the companion's resident")
	assert.True(t, strings.HasPrefix(pastedBuffer(t, s.Request), "wcomm-"+strconv.Itoa(pid)+"-"), "the send ran in the resident (pid %d)", pid)
	waitFor(t, 15*time.Second, func() bool { return len(pastes(t, recLog, "handed to the companion's resident")) == 1 }, "the request submitted")
}

// TestResidentSharedByMCP: an MCP server with the resident on keeps no tmux client of its own:
// its reads and pastes go through the root's resident, so the server has one control client
// attached for the root whatever the number of MCP servers (each attached client adds to what
// tmux does for every change), and a send and a panes listing still work through it.
func TestResidentSharedByMCP(t *testing.T) {
	t.Parallel()
	w := newResidentWorld(t)
	orch := w.catPane()
	rec, recLog := w.recorderPane()
	c := w.mcpClient(orch, "WCOMM_TMUXD=1")
	res, _ := c.call("send", map[string]any{"to": rec, "message": "through the shared client"})
	require.False(t, res.IsError, "%s", text(res))
	waitFor(t, 15*time.Second, func() bool { return len(pastes(t, recLog, "through the shared client")) == 1 }, "the request submitted")
	res, _ = c.call("panes", map[string]any{})
	require.False(t, res.IsError, "%s", text(res))
	pid := w.residentPID()
	for _, line := range strings.Split(strings.TrimSpace(w.tmux("list-clients", "-F", "#{client_control_mode} #{client_pid}")), "\n") {
		mode, cpid, _ := strings.Cut(line, " ")
		if mode != "1" {
			continue
		}
		stat, err := os.ReadFile("/proc/" + cpid + "/stat")
		require.NoError(t, err)
		f := strings.Fields(string(stat)[strings.LastIndexByte(string(stat), ')')+2:])
		assert.Equal(t, strconv.Itoa(pid), f[1], "control client %s is not the resident's (pid %d)", cpid, pid)
	}
}

// wakeups is the number of times pid's threads have slept and been woken so far.
func wakeups(t *testing.T, pid int) int {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	require.NoError(t, err)
	n := 0
	for _, task := range tasks {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, task.Name()))
		if err != nil {
			continue // a thread gone meanwhile
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
				k, _ := strconv.Atoi(strings.TrimSpace(v))
				n += k
			}
		}
	}
	return n
}

// TestResidentHandedSendWaitSleeps: a send --wait handed to the resident waits for its
// response on the folder's watch, as a handed await does, not with a look every 2 ms (about
// 500 wake-ups a second of the resident's while it waits), and the answer wakes it.
func TestResidentHandedSendWaitSleeps(t *testing.T) {
	t.Parallel()
	w := newResidentWorld(t)
	orch := w.catPane()
	worker := w.catPane()
	pid := w.startResident(orch, worker)

	sw := w.start(call{pane: orch}, "send", "--to", worker, "--enter-delay", "0", "--wait", "--timeout", "2m", "--", "the task waited for")
	var lockPath, respPath string
	waitFor(t, 30*time.Second, func() bool {
		reqs, _ := filepath.Glob(filepath.Join(w.root, "*", "*-request.md"))
		for _, req := range reqs {
			data, err := os.ReadFile(req)
			if err != nil || !strings.Contains(string(data), "the task waited for") {
				continue
			}
			n, _, _ := messages.ParseSeqFileName(filepath.Base(req))
			lockPath = awaitLockIn(filepath.Dir(req), n)
			for _, line := range strings.Split(string(data), "\n") {
				if p, ok := strings.CutPrefix(line, "Response file: "); ok {
					respPath = strings.TrimSpace(p)
				}
			}
			return respPath != "" && flocked(lockPath)
		}
		return false
	}, "the handed send waiting for its response")
	// An absence, looked at for a second: the resident does not wake to look.
	before := wakeups(t, pid)
	time.Sleep(time.Second)
	woke := wakeups(t, pid) - before
	assert.Less(t, woke, 100, "the resident woke %d times in a second while the send waited", woke)

	n := w.run(call{pane: worker, stdin: []byte("the answer it waited for\n")}, "notify", "--response", respPath, "--enter-delay", "0", "-")
	requireCode(t, 0, n)
	r := sw.wait(t, time.Minute)
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "the answer it waited for")
}
