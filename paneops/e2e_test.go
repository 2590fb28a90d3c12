package paneops

// End-to-end tests: a real, private tmux server per test (its own -S socket in a short temp
// folder), real panes running bash, cat, sleep and testdata/recorder.py.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/tmuxtest"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/paneops/profile"
)

// tmuxBin finds tmux through the shared gate (tmuxtest.Require).
func tmuxBin(t testing.TB) string { return tmuxtest.Require(t) }

var python = sync.OnceValues(func() (string, error) {
	// The real interpreter, not a version manager's shim script: pane process trees stay as the
	// tests describe them, and panes start faster.
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	return strings.TrimSpace(string(out)), err
})

// pythonBin returns the python3 interpreter the recorder and the process-tree panes need.
func pythonBin(t testing.TB) string {
	t.Helper()
	p, err := python()
	require.NoError(t, err, "these tests need python3")
	return p
}

// testServer is a private tmux server for one test.
type testServer struct {
	t    testing.TB
	c    *Client
	dir  string
	key  string // ServerInfo.Key(), the lock key
	recs int
}

// startServer starts a private tmux server on a socket in a new short temp folder (socket paths
// are limited to ~100 bytes), with no config file, and kills it when the test ends. At the end it
// also checks that no tmux buffer was left behind.
func startServer(t testing.TB) *testServer {
	t.Helper()
	srv := tmuxtest.New(t)
	srv.Start(t, tmuxtest.Options{Session: "main", Width: 160, Height: 48, Argv: []string{"sleep", "86400"}})
	s := &testServer{t: t, c: &Client{Bin: srv.Bin, Server: Server{Socket: srv.Sock}}, dir: srv.Dir}
	t.Cleanup(func() {
		// Before tmuxtest's own cleanup kills the server (cleanups run last first).
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if out, err := s.c.Run(ctx, nil, "list-buffers", "-F", "#{buffer_name}"); err == nil {
			assert.Empty(t, out, "tmux buffers left behind")
		}
	})
	info, err := s.c.ServerInfo(context.Background())
	require.NoError(t, err)
	s.key = info.Key()
	return s
}

// tmux runs a tmux command that must succeed and returns its stdout.
func (s *testServer) tmux(args ...string) string {
	s.t.Helper()
	out, err := s.c.Run(context.Background(), nil, args...)
	require.NoError(s.t, err)
	return out
}

// newWindow opens a background window in session main running argv (no shell) and returns its pane.
func (s *testServer) newWindow(argv ...string) messages.PaneID {
	s.t.Helper()
	args := append([]string{"new-window", "-d", "-t", "main:", "-P", "-F", "#{pane_id}"}, argv...)
	return messages.PaneID(strings.TrimSpace(s.tmux(args...)))
}

// pane returns the pane's current state.
func (s *testServer) pane(id messages.PaneID) Pane {
	s.t.Helper()
	p, err := s.c.Pane(context.Background(), string(id))
	require.NoError(s.t, err)
	return p
}

// delivery fills in the lock settings of a test delivery.
func (s *testServer) delivery(pane messages.PaneID, content string, submit bool) Delivery {
	return Delivery{Pane: pane, Content: []byte(content), Submit: submit, EnterDelay: 5 * time.Millisecond,
		LockDir: filepath.Join(s.dir, "locks"), LockKey: s.key, LockTimeout: time.Minute}
}

// buffers lists the server's paste buffers.
func (s *testServer) buffers() string {
	s.t.Helper()
	return s.tmux("list-buffers", "-F", "#{buffer_name}")
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t testing.TB, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition still false after %v", timeout)
		}
		time.Sleep(10 * time.Millisecond) // the polling interval, not a wait for a result
	}
}

// record is one line of recorder.py's output.
type record struct {
	Paste *string `json:"paste"`
	Enter bool    `json:"enter"`
	Raw   *string `json:"raw"`
}

func (r record) String() string {
	switch {
	case r.Paste != nil:
		return fmt.Sprintf("paste %q enter=%v", *r.Paste, r.Enter)
	case r.Raw != nil:
		return fmt.Sprintf("raw %q", *r.Raw)
	}
	return "empty record"
}

// recorder is a pane running testdata/recorder.py.
type recorder struct {
	t    testing.TB
	pane messages.PaneID
	file string
}

// startRecorder opens a recorder pane and waits until it has enabled bracketed paste: its READY
// line is printed after the mode switch, and tmux handles a pane's output in order. With idle > 0
// a paste that nothing follows for that long is recorded without Enter; with 0 it waits for the
// next byte, so a slow Enter on a loaded machine is still paired with its paste.
func (s *testServer) startRecorder(idle time.Duration) recorder {
	s.t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "recorder.py"))
	require.NoError(s.t, err)
	s.recs++
	file := filepath.Join(s.dir, fmt.Sprintf("rec%d.jsonl", s.recs))
	argv := []string{pythonBin(s.t), script, file}
	if idle > 0 {
		argv = append(argv, fmt.Sprint(idle.Seconds()))
	}
	pane := s.newWindow(argv...)
	waitFor(s.t, 10*time.Second, func() bool {
		out, err := s.c.Capture(context.Background(), pane, 0)
		return err == nil && strings.Contains(out, "RECORDER READY")
	})
	return recorder{t: s.t, pane: pane, file: file}
}

// records returns the complete lines written so far.
func (r recorder) records() []record {
	r.t.Helper()
	data, err := os.ReadFile(r.file)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(r.t, err)
	var out []record
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var rec record
		require.NoError(r.t, json.Unmarshal(sc.Bytes(), &rec), "recorder line %q", sc.Text())
		out = append(out, rec)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		out = out[:len(out)-1] // the recorder is still writing the last line
	}
	return out
}

// wait returns the first n records once they are there.
func (r recorder) wait(n int) []record {
	r.t.Helper()
	var recs []record
	waitFor(r.t, 20*time.Second, func() bool { recs = r.records(); return len(recs) >= n })
	return recs[:n]
}

func pasted(text string, enter bool) record { return record{Paste: &text, Enter: enter} }

func TestRealPanes(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := context.Background()
	w1 := s.newWindow("sleep", "300")
	split := messages.PaneID(strings.TrimSpace(s.tmux("split-window", "-d", "-t", string(w1), "-P", "-F", "#{pane_id}", "sleep", "301")))
	other := messages.PaneID(strings.TrimSpace(s.tmux("new-session", "-d", "-s", "other", "-P", "-F", "#{pane_id}", "sleep", "302")))
	// A new pane shows "tmux" as its command until its child has exec'd sleep; the snapshots below
	// are compared whole, so they are taken once every pane runs sleep.
	waitFor(t, 20*time.Second, func() bool {
		return strings.TrimSpace(s.tmux("list-panes", "-a", "-F", "#{pane_current_command}")) == "sleep\nsleep\nsleep\nsleep"
	})

	main, err := s.c.Panes(ctx, Scope{Session: "main"})
	require.NoError(t, err)
	require.Len(t, main, 3)
	for _, p := range main {
		assert.Equal(t, "main", p.Session)
		assert.Positive(t, p.PID)
		assert.Equal(t, "sleep", p.Command)
		assert.True(t, strings.HasPrefix(p.TTY, "/dev/"), p.TTY)
		assert.False(t, p.Dead)
	}
	assert.Equal(t, messages.PaneID("%0"), main[0].ID)
	assert.Equal(t, w1, main[1].ID)
	assert.Equal(t, split, main[2].ID)
	assert.Equal(t, "main:1.1", main[2].Target())
	assert.Equal(t, "sleep 301", main[2].StartedWith)

	all, err := s.c.Panes(ctx, Scope{All: true})
	require.NoError(t, err)
	require.Len(t, all, 4)
	assert.Contains(t, all, s.pane(other))

	// PanesBeside: the same panes, and in the same call the pids of every live pane of the server.
	beside, others, err := s.c.PanesBeside(ctx, Scope{Session: "main"})
	require.NoError(t, err)
	assert.Equal(t, main, beside)
	var allPIDs []int
	for _, p := range all {
		allPIDs = append(allPIDs, p.PID)
	}
	assert.ElementsMatch(t, allPIDs, others)
	_, _, err = s.c.PanesBeside(ctx, Scope{Session: "nosuch"})
	assert.ErrorIs(t, err, ErrTargetNotFound)

	mine, err := s.c.Panes(ctx, Scope{Self: other})
	require.NoError(t, err, "the session of Self")
	require.Len(t, mine, 1)
	assert.Equal(t, other, mine[0].ID)
	assert.Equal(t, "other", mine[0].Session)

	_, err = s.c.Panes(ctx, Scope{Session: "nosuch"})
	assert.ErrorIs(t, err, ErrTargetNotFound)
	_, err = s.c.Panes(ctx, Scope{Self: "%999"})
	assert.ErrorIs(t, err, ErrPaneNotFound)

	tests := []struct {
		target string
		want   messages.PaneID
		err    error
	}{
		{string(split), split, nil},
		{"main:1.1", split, nil},
		{"main:1", w1, nil}, // the active pane of the window
		{"other", other, nil},
		{"%999", "", ErrPaneNotFound},
		{"main:1.7", "", ErrPaneNotFound},
		{"main:9", "", ErrTargetNotFound},
		{"nosuch", "", ErrTargetNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			p, err := s.c.Pane(ctx, tt.target)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				var te *Error
				require.ErrorAs(t, err, &te)
				assert.Equal(t, 1, te.ExitCode)
				assert.NotEmpty(t, te.Stderr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.ID)
			assert.Contains(t, all, p)
		})
	}
}

func TestRealServerInfoAndCapture(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := context.Background()
	info, err := s.c.ServerInfo(ctx)
	require.NoError(t, err)
	assert.Positive(t, info.PID)
	assert.Positive(t, info.StartTime)
	assert.NotEmpty(t, info.Version)
	assert.Equal(t, s.c.Server.Socket, info.Socket)

	p := s.newWindow("bash", "-c", `printf 'first line\nsecond ; line\n'; exec sleep 300`)
	var screen string
	waitFor(t, 10*time.Second, func() bool {
		screen, err = s.c.Capture(ctx, p, 0)
		return err == nil && strings.Contains(screen, "second")
	})
	assert.Equal(t, "first line\nsecond ; line\n", screen)

	withHistory, err := s.c.Capture(ctx, p, 100)
	require.NoError(t, err)
	assert.Equal(t, screen, withHistory)

	_, err = s.c.Capture(ctx, "%999", 0)
	assert.ErrorIs(t, err, ErrPaneNotFound)
}

func TestRealNoServer(t *testing.T) {
	t.Parallel()
	bin := tmuxBin(t)
	dir, err := os.MkdirTemp("", "wc")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ctx := context.Background()

	missing := &Client{Bin: bin, Server: Server{Socket: filepath.Join(dir, "nonexistent")}}
	_, err = missing.Panes(ctx, Scope{All: true})
	require.ErrorIs(t, err, ErrNoServer)
	assert.Contains(t, err.Error(), "error connecting to")
	assert.Contains(t, err.Error(), "start tmux first")

	// kill-server leaves the socket file behind (measured on tmux 3.3a): "no server running on".
	s := startServer(t)
	s.tmux("kill-server")
	_, err = s.c.ServerInfo(ctx)
	require.ErrorIs(t, err, ErrNoServer)
	_, err = s.c.Deliver(ctx, s.delivery("%0", "hello", false))
	require.ErrorIs(t, err, ErrNoServer)
}

// killLater ends, when the test ends, the processes a test started and found by its own markers;
// kill-server hangs up their terminal anyway, this is for a test that fails half-way.
func killLater(t *testing.T, procs []proc.Process) {
	t.Cleanup(func() {
		for _, p := range procs {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
	})
}

func TestRealFind(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := context.Background()
	py := pythonBin(t)
	// pane bash -> python3 -> bash -> sleep with argv0 "fake-agent-x": three levels below the
	// pane process. The "; true" keeps each bash from exec'ing its last command.
	nested := s.newWindow("bash", "-c", `"$0" -c "$1"; true`, py,
		`import subprocess; subprocess.run(["bash", "-c", "bash -c 'exec -a fake-agent-x sleep 300'; true"])`)
	// A background job of a subshell that exits at once: reparented, found by session id only.
	orphaned := s.newWindow("bash", "-c", "(exec -a orphan-agent sleep 300 &); exec sleep 301")
	plain := s.newWindow("sleep", "303")

	// A find reads the panes' trees (ScanPanes), as wcomm find does; whole reads the whole table.
	findIn := func(agent string, whole bool) []Match {
		panes, err := s.c.Panes(ctx, Scope{All: true})
		require.NoError(t, err)
		var pids []int
		for _, p := range panes {
			pids = append(pids, p.PID)
		}
		tb, err := proc.ScanPanes(pids, os.Getpid())
		if whole {
			tb, err = proc.Scan()
		}
		require.NoError(t, err)
		return Find(panes, tb, agent, Exclude{PIDs: tb.Ancestors(os.Getpid())})
	}
	find := func(agent string) []Match { return findIn(agent, false) }
	agentOf := func(m Match, name string) (proc.Process, bool) {
		for _, p := range m.Procs {
			if len(p.Args) > 0 && p.Args[0] == name && p.Comm == "sleep" {
				return p, true
			}
		}
		return proc.Process{}, false
	}

	var m []Match
	waitFor(t, 10*time.Second, func() bool {
		m = find("fake-agent-x")
		if len(m) != 1 {
			return false
		}
		_, ok := agentOf(m[0], "fake-agent-x")
		return ok
	})
	assert.Equal(t, nested, m[0].Pane.ID)
	agent, _ := agentOf(m[0], "fake-agent-x")
	killLater(t, []proc.Process{agent})
	tb, err := proc.Scan()
	require.NoError(t, err)
	anc := tb.Ancestors(agent.PID)
	require.GreaterOrEqual(t, len(anc), 4)
	assert.Equal(t, m[0].Pane.PID, anc[3], "the agent runs three levels below the pane process")
	assert.Equal(t, "fake-agent-x", Notable(m[0].Pane, tb)[0], "deepest first")

	waitFor(t, 10*time.Second, func() bool {
		m = find("orphan-agent")
		if len(m) != 1 {
			return false
		}
		_, ok := agentOf(m[0], "orphan-agent")
		return ok
	})
	assert.Equal(t, orphaned, m[0].Pane.ID)
	orphan, _ := agentOf(m[0], "orphan-agent")
	killLater(t, []proc.Process{orphan})
	assert.NotEqual(t, m[0].Pane.PID, orphan.PPID, "reparented")
	assert.Equal(t, m[0].Pane.PID, orphan.SID, "still in the pane's session")
	for _, agent := range []string{"fake-agent-x", "orphan-agent"} {
		assert.Equal(t, stableMatches(findIn(agent, true)), stableMatches(find(agent)), "the panes' trees find what the whole table finds: %s", agent)
	}

	assert.Empty(t, find("sleep 303x"))
	found := find("sleep 303")
	require.Len(t, found, 1)
	assert.Equal(t, plain, found[0].Pane.ID)

	// The caller's own pane never matches.
	panes, err := s.c.Panes(ctx, Scope{All: true})
	require.NoError(t, err)
	tb, err = proc.Scan()
	require.NoError(t, err)
	assert.Empty(t, Find(panes, tb, "fake-agent-x", Exclude{Pane: nested}))
}

func TestRealDeliverToRecorder(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := context.Background()
	rec := s.startRecorder(0)
	big := strings.Repeat("0123456789abcdef", 6400) // 100 KB in one line
	tests := []struct {
		name    string
		content string
		submit  bool
		want    record
	}{
		{"plain", "hello recorder", true, pasted("hello recorder", true)},
		{"newlines reach the app as CR inside the paste", "line one\nline two\n", true, pasted("line one\rline two\r", true)},
		{"tmux syntax stays text", "rm x \\; ; #{pane_id} #[fg=red] $HOME `id` {a} -R ;", true,
			pasted("rm x \\; ; #{pane_id} #[fg=red] $HOME `id` {a} -R ;", true)},
		{"unicode", "héllo ✳ 世界", true, pasted("héllo ✳ 世界", true)},
		{"100 KB", big, true, pasted(big, true)},
		{"no submit: recorded when the next paste arrives", "just pasted", false, pasted("just pasted", false)},
		{"after a paste without Enter", "next", true, pasted("next", true)},
	}
	bufName := regexp.MustCompile(`^wcomm-\d+-\d+-[0-9a-f]{8}$`)
	for _, tt := range tests {
		res, err := s.c.Deliver(ctx, s.delivery(rec.pane, tt.content, tt.submit))
		require.NoError(t, err, tt.name)
		assert.Regexp(t, bufName, res.Buffer)
		assert.True(t, res.Pasted)
		assert.Equal(t, tt.submit, res.Submitted)
		if tt.submit {
			assert.False(t, res.EnterAt.Before(res.PastedAt.Add(5*time.Millisecond)), "Enter waits EnterDelay")
		}
	}
	got := rec.wait(len(tests))
	for i, tt := range tests {
		assert.Equal(t, tt.want.String(), got[i].String(), tt.name)
	}
	assert.Empty(t, s.buffers())

	// An empty LockKey is looked up from the server.
	d := s.delivery(rec.pane, "keyless", true)
	d.LockKey = ""
	_, err := s.c.Deliver(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, pasted("keyless", true).String(), rec.wait(len(tests) + 1)[len(tests)].String())
}

func TestRealDeliverToCat(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := context.Background()
	out := filepath.Join(s.dir, "cat.out")
	// cat in a cooked tty: no bracketed paste, the line discipline turns CR into LF.
	p := s.newWindow("bash", "-c", `exec cat > "$0"`, out)
	var want strings.Builder
	for _, msg := range []string{"hello cat", "ends in a semicolon ;", "two\nlines", "escaped \\;"} {
		_, err := s.c.Deliver(ctx, s.delivery(p, msg, true))
		require.NoError(t, err)
		want.WriteString(msg + "\n")
	}
	var got []byte
	waitFor(t, 10*time.Second, func() bool {
		got, _ = os.ReadFile(out)
		return len(got) >= want.Len()
	})
	assert.Equal(t, want.String(), string(got))
}

func TestRealDeliverDeadPane(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := context.Background()
	p := s.newWindow("cat")
	s.tmux("set-option", "-p", "-t", string(p), "remain-on-exit", "on")
	s.tmux("respawn-pane", "-k", "-t", string(p), "true")
	waitFor(t, 10*time.Second, func() bool { return s.pane(p).Dead })
	before, err := s.c.ServerInfo(ctx)
	require.NoError(t, err)

	res, err := s.c.Deliver(ctx, s.delivery(p, "into a dead pane", true))
	require.ErrorIs(t, err, ErrRefused)
	assert.Contains(t, err.Error(), "dead")
	assert.False(t, res.Pasted)
	assert.False(t, res.Submitted)

	after, err := s.c.ServerInfo(ctx)
	require.NoError(t, err, "the server survived")
	assert.Equal(t, before, after)
	assert.Empty(t, s.buffers())
	assert.True(t, s.pane(p).Dead)
}

func TestRealDeliverInputOff(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := context.Background()
	rec := s.startRecorder(0)
	s.tmux("select-pane", "-d", "-t", string(rec.pane))
	require.True(t, s.pane(rec.pane).InputOff)

	_, err := s.c.Deliver(ctx, s.delivery(rec.pane, "must not arrive", true))
	require.ErrorIs(t, err, ErrRefused)
	assert.Empty(t, s.buffers())

	// Order is kept per pane, so if the refused text had arrived it would come first.
	s.tmux("select-pane", "-e", "-t", string(rec.pane))
	_, err = s.c.Deliver(ctx, s.delivery(rec.pane, "after input on", true))
	require.NoError(t, err)
	assert.Equal(t, pasted("after input on", true).String(), rec.wait(1)[0].String())
}

func TestRealDeliverCopyMode(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := context.Background()
	rec := s.startRecorder(0)
	s.tmux("copy-mode", "-t", string(rec.pane))
	require.True(t, s.pane(rec.pane).InMode)

	_, err := s.c.Deliver(ctx, s.delivery(rec.pane, "pasted out of copy mode\nsecond line", true))
	require.NoError(t, err)
	assert.Equal(t, pasted("pasted out of copy mode\rsecond line", true).String(), rec.wait(1)[0].String(),
		"bracketed, because copy-mode -q left the mode first")
	assert.False(t, s.pane(rec.pane).InMode)
}

func TestRealDeliverMissingPane(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	res, err := s.c.Deliver(context.Background(), s.delivery("%999", "nowhere", true))
	require.ErrorIs(t, err, ErrPaneNotFound)
	assert.False(t, res.Pasted)
	assert.NotEmpty(t, res.Buffer)
	assert.Empty(t, s.buffers(), "the failed call's buffer was deleted")
}

func TestRealDeliverCancelledBeforeEnter(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	rec := s.startRecorder(300 * time.Millisecond) // no Enter comes: the paste is recorded on its own
	ctx, cancel := context.WithCancel(context.Background())
	d := s.delivery(rec.pane, "pasted, never submitted", true)
	d.EnterDelay = time.Hour
	var res DeliveryResult
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err = s.c.Deliver(ctx, d)
	}()
	// Cancel once the paste has landed; Deliver is then waiting out EnterDelay.
	got := rec.wait(1)[0]
	cancel()
	<-done
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, res.Submitted)
	// Almost always Deliver is in its EnterDelay by now; on a loaded machine the paste call may
	// not have returned yet, and then it is the call that was cancelled.
	if res.Pasted {
		assert.Contains(t, err.Error(), "not submitted")
	}
	assert.Equal(t, pasted("pasted, never submitted", false).String(), got.String())

	// The lock was released: the next delivery goes through.
	_, err = s.c.Deliver(context.Background(), s.delivery(rec.pane, "next", true))
	require.NoError(t, err)
	assert.Equal(t, pasted("next", true).String(), rec.wait(2)[1].String())
}

func TestRealDeliverConcurrent(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	rec := s.startRecorder(0)
	const senders, each = 16, 10
	var wg sync.WaitGroup
	errs := make(chan error, senders*each)
	var want []string
	for g := range senders {
		for i := range each {
			want = append(want, fmt.Sprintf("sender %02d message %02d", g, i))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				d := s.delivery(rec.pane, fmt.Sprintf("sender %02d message %02d", g, i), true)
				d.EnterDelay = 2 * time.Millisecond
				if _, err := s.c.Deliver(context.Background(), d); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	recs := rec.wait(senders * each)
	var got []string
	for _, r := range recs {
		require.NotNil(t, r.Paste, "no bytes outside a paste: %s", r)
		assert.True(t, r.Enter, "every paste directly followed by its own Enter: %s", r)
		got = append(got, *r.Paste)
	}
	slices.Sort(got)
	assert.Equal(t, want, got, "160 whole, distinct, non-merged messages")
	assert.Empty(t, s.buffers())
}

// stableMatches is ms with what /proc says of each process at one moment left out (its run
// state, its count of threads): the two finds compared read it at different moments, and a
// process running at one read may sleep at the next.
func stableMatches(ms []Match) []Match {
	out := make([]Match, len(ms))
	for i, m := range ms {
		out[i].Pane = m.Pane
		for _, p := range m.Procs {
			out[i].Procs = append(out[i].Procs, proc.Process{PID: p.PID, PPID: p.PPID, SID: p.SID, PGRP: p.PGRP,
				TPGID: p.TPGID, TTY: p.TTY, Comm: p.Comm, Args: p.Args})
		}
	}
	return out
}

// A shell running one short job after another, detected again and again: every answer is the shell
// itself or names the job it runs, never a ready line reader. Between a job's end and the shell
// taking its terminal back, the terminal names a group with no process and is still cooked; taken
// for a line reader there, a queued line was typed uncommented and ran at the shell's prompt.
func TestRealDetectShellBetweenJobs(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	id := s.newWindow("bash", "--norc", "--noprofile", "-i")
	waitFor(t, 20*time.Second, func() bool { return s.pane(id).Command == "bash" })
	s.tmux("send-keys", "-t", string(id), "-l", "while :; do /bin/true; done")
	s.tmux("send-keys", "-t", string(id), "Enter")
	p := s.pane(id)
	set, ttyMode := profile.Defaults(), DefaultTTYMode()
	seen := map[string]int{}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		tab, err := proc.ScanPane(p.PID)
		require.NoError(t, err)
		det := Detect(set, p, tab, ttyMode, Exclude{})
		if det.Name != "shell" && det.Job == "" {
			root, _ := tab.Proc(p.PID)
			t.Fatalf("a shell between jobs taken for a ready %s: %s; the shell %+v, below it %+v", det.Name, det.Reason, root, tab.Descendants(p.PID))
		}
		switch {
		case strings.Contains(det.Reason, "has just ended"):
			seen["between jobs"]++
		case det.Job != "":
			seen["in a job"]++
		default:
			seen["shell"]++
		}
	}
	assert.Positive(t, seen["in a job"], "the loop's jobs were seen: %v", seen)
	t.Logf("detections: %v", seen)
	s.tmux("send-keys", "-t", string(id), "C-c")
}
