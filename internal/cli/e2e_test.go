package cli

// End-to-end tests of the core commands: the built binary against a private tmux server
// with real programs in real panes. The harness is in harness_test.go, the fixtures in
// testdata/fixtures. Exit codes are part of the contract: 0 ok, 1 failure, 2 usage, 3 timeout,
// 4 not found or ambiguous.

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
)

// exchangeJSON is the record --json prints for one exchange: the fields scripts rely on.
type exchangeJSON struct {
	Session      string   `json:"session"`
	Dir          string   `json:"dir"`
	Seq          int      `json:"seq"`
	ID           string   `json:"id"`
	StartedAt    string   `json:"started_at"`
	Orchestrator string   `json:"orchestrator"`
	Worker       string   `json:"worker"`
	Capability   string   `json:"capability"`
	Status       string   `json:"status"`
	State        string   `json:"state"`
	Form         string   `json:"form"`
	Summary      string   `json:"summary"`
	RequestPath  string   `json:"request_path"`
	ResponsePath string   `json:"response_path"`
	RequestBody  string   `json:"request_body"`
	ResponseBody string   `json:"response_body"`
	Integrity    string   `json:"integrity"`
	Problems     []string `json:"problems"`
}

type sessionJSON struct {
	Session      string         `json:"session"`
	Dir          string         `json:"dir"`
	Orchestrator string         `json:"orchestrator"`
	Worker       string         `json:"worker"`
	Exchanges    []exchangeJSON `json:"exchanges"`
	Foreign      []string       `json:"foreign"`
	Orphans      []string       `json:"orphans"`
	Problems     []string       `json:"problems"`
}

type historyJSON struct {
	Sessions []sessionJSON `json:"sessions"`
	Foreign  []string      `json:"foreign"`
}

type paneJSON struct {
	ID       string   `json:"pane_id"`
	Session  string   `json:"session"`
	PID      int      `json:"pid"`
	Dead     bool     `json:"dead"`
	Programs []string `json:"programs"`
	Self     bool     `json:"self"`
}

func decode[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &v), "not JSON: %s", r)
	return v
}

func requireCode(t *testing.T, want int, r result) {
	t.Helper()
	require.Equal(t, want, r.code, "%s", r)
}

func randHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

func readString(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Lstat(path)
	require.NoError(t, err)
	return st.Mode().Perm()
}

var sendOut = regexp.MustCompile(`^(\d{8}-\d{6}-[0-9a-f]{4,16}) (/\S+/(\d{8}-\d{6})-o(\d+)-w(\d+)/(\d{3,})-response\.md)\n$`)

// sent is what `wcomm send` printed: the id and the response path, and what they imply.
type sent struct {
	ID, Response, Request, Dir, StartedAt string
	Seq                                   int
}

// send runs `wcomm send` inside pane from with a short enter delay and checks its output form.
func (w *world) send(from, to string, body string, extra ...string) sent {
	w.t.Helper()
	args := append([]string{"send", "--to", to, "--enter-delay", "50ms"}, extra...)
	r := w.in(from, append(args, "--", body)...)
	requireCode(w.t, 0, r)
	return parseSent(w.t, r.stdout)
}

func parseSent(t *testing.T, stdout string) sent {
	t.Helper()
	m := sendOut.FindStringSubmatch(stdout)
	require.NotNil(t, m, "send printed %q, want \"ID RESPONSE-PATH\\n\"", stdout)
	n, err := strconv.Atoi(m[6])
	require.NoError(t, err)
	dir := filepath.Dir(m[2])
	return sent{ID: m[1], Response: m[2], Dir: dir, StartedAt: m[3], Seq: n - 1,
		Request: filepath.Join(dir, fmt.Sprintf("%03d-request.md", n-1))}
}

func sum12(body string) string {
	s := sha256.Sum256([]byte(body))
	return hex.EncodeToString(s[:])[:12]
}

// wantRequest is the request file wcomm must write, spelled out here from the protocol's request
// format (plus wcomm's integrity fields and notify line), not from the formatter under test, so a
// formatter that drifted from what plain-tmux peers parse fails here.
func wantRequest(s sent, capability, orch, worker, body string) string {
	o, wk := strings.TrimPrefix(orch, "%"), strings.TrimPrefix(worker, "%")
	var b strings.Builder
	fmt.Fprintf(&b, "[WORKER capability=%s id=%s started_at=%s orchestrator=%s worker=%s bytes=%d sha256=%s]\n",
		capability, s.ID, s.StartedAt, orch, worker, len(body), sum12(body))
	b.WriteString(body)
	if !strings.HasSuffix(body, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("\n[RESPONSE INSTRUCTIONS]\n")
	fmt.Fprintf(&b, "Response file: %s\n", s.Response)
	b.WriteString("Notify via:\n")
	fmt.Fprintf(&b, "wcomm notify --response %s --file ANSWER.md\n", s.Response)
	b.WriteString("Without wcomm, write the response file with the header line\n")
	fmt.Fprintf(&b, "[WORKER RESPONSE id=%s started_at=%s orchestrator=%s worker=%s]\n", s.ID, s.StartedAt, orch, worker)
	b.WriteString("and notify via:\n")
	fmt.Fprintf(&b, `tmux load-buffer -b "msg-o%s-w%s" - <<< "[RESPONSE started_at=%s orchestrator=%s worker=%s] %s" && tmux paste-buffer -b "msg-o%s-w%s" -t %s && sleep 0.2 && tmux send-keys -t %s Enter`+"\n",
		o, wk, s.StartedAt, orch, worker, s.Response, o, wk, orch, orch)
	return b.String()
}

// pasted is what a pane receives for a request file pasted whole: the sanitized text without its
// final newline, every LF turned into CR by paste-buffer (measured on tmux 3.3a).
func pasted(file string) string {
	return strings.ReplaceAll(strings.TrimRight(messages.Sanitize(file, true), "\n"), "\n", "\r")
}

// notifyLine is the path-only line a worker pastes into the orchestrator's pane.
func notifyLine(s sent, orch, worker string) string {
	return fmt.Sprintf("[RESPONSE started_at=%s orchestrator=%s worker=%s] %s", s.StartedAt, orch, worker, s.Response)
}

// answerOf is what testdata/fixtures/worker.py answers to a request body.
func answerOf(id, body string) string {
	return "answer to " + id + ": " + strings.ToUpper(body)
}

// awaitLock is the lock an await holds while it waits on request seq (tmuxcomm/await.go); notify
// tests it to decide whether to paste the RESPONSE line.
func awaitLock(s sent) string {
	return awaitLockIn(s.Dir, s.Seq)
}

// waitAwaiting waits until an await is waiting on the exchange.
func (w *world) waitAwaiting(s sent, b *bg) {
	w.t.Helper()
	waitFor(w.t, 10*time.Second, func() bool {
		if b.exited() {
			w.t.Fatalf("await ended before it was expected to wait: %s", b.wait(w.t, time.Second))
		}
		return flocked(awaitLock(s))
	}, "await to wait on %s", s.ID)
}

// procArgv0 finds the live processes whose argv[0] is name and returns their pids.
func procArgv0(name string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if argv0, _, _ := strings.Cut(string(data), "\x00"); argv0 == name {
			pids = append(pids, pid)
		}
	}
	return pids
}

// procStat returns a process's parent and session ids.
func procStat(t *testing.T, pid int) (ppid, sid int) {
	t.Helper()
	ppid, sid, err := readProcStat(pid)
	require.NoError(t, err)
	return ppid, sid
}

// readProcStat reads a process's parent and session; an error when it has gone.
func readProcStat(pid int) (ppid, sid int, err error) {
	f, err := procStatFields(pid)
	if err != nil {
		return 0, 0, err
	}
	ppid, err1 := strconv.Atoi(f[1])
	sid, err2 := strconv.Atoi(f[3])
	return ppid, sid, errors.Join(err1, err2)
}

// procStatFields returns the fields of /proc/PID/stat after the command name: state, ppid,
// pgrp, session, ...
func procStatFields(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(f) < 4 {
		return nil, fmt.Errorf("short /proc/%d/stat: %q", pid, data)
	}
	return f, nil
}

func (w *world) panePID(pane string) int {
	w.t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(w.tmux("display-message", "-p", "-t", pane, "#{pane_pid}")))
	require.NoError(w.t, err)
	return pid
}

// waitAgent waits for exactly one process named agent and returns its pid.
func waitAgent(t *testing.T, agent string) int {
	t.Helper()
	waitFor(t, 10*time.Second, func() bool { return len(procArgv0(agent)) == 1 }, "one process named %s", agent)
	return procArgv0(agent)[0]
}

// Case 1: panes and find over real process trees.
func TestE2EFindAndPanes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tree, err := filepath.Abs(filepath.Join(fixtures, "tree.py"))
	require.NoError(t, err)
	suffix := randHex(t)
	deep, orphan, mine, twin := "e2edeep"+suffix, "e2eorphan"+suffix, "e2emine"+suffix, "e2etwin"+suffix
	// In a shell that keeps running after the tree (no exec of the last command), so the pane's
	// process is bash and the agent is 3 levels below it: bash > python3 > python3 > agent.
	nestedIn := func(agent string, depth int) string {
		return w.paneEnv("", []string{"TREE_AGENT=" + agent}, "bash", "--norc", "--noprofile", "-c",
			fmt.Sprintf("python3 %s nested %d; exit", tree, depth))
	}
	caller := nestedIn(mine, 1)
	nested := nestedIn(deep, 2)
	orph := w.paneEnv("", []string{"TREE_AGENT=" + orphan}, "python3", tree, "orphan")
	mineToo := nestedIn(mine, 1)
	twinA := nestedIn(twin, 1)
	twinB := nestedIn(twin, 1)

	// The fixtures built what the cases need.
	deepPID := waitAgent(t, deep)
	p1, _ := procStat(t, deepPID)
	p2, _ := procStat(t, p1)
	p3, _ := procStat(t, p2)
	require.Equal(t, w.panePID(nested), p3, "the agent must sit 3 levels below the pane's shell")
	orphanPID := waitAgent(t, orphan)
	// The agent's first parent is the helper, itself in the pane's session: wait until the
	// helper has exited and the agent's parent lies outside the session.
	waitFor(t, 10*time.Second, func() bool {
		ppid, _ := procStat(t, orphanPID)
		_, parentSID, err := readProcStat(ppid)
		return err == nil && parentSID != w.panePID(orph) // an error: the helper is exiting as we look
	}, "the orphan's helper to exit")
	ppid, sid := procStat(t, orphanPID)
	require.Equal(t, w.panePID(orph), sid, "the orphan stays in the pane's session")
	_, parentSID := procStat(t, ppid)
	require.NotEqual(t, w.panePID(orph), parentSID, "the orphan's new parent is outside the pane's session")
	waitFor(t, 10*time.Second, func() bool { return len(procArgv0(mine)) == 2 && len(procArgv0(twin)) == 2 }, "the twin agents")

	t.Run("nested", func(t *testing.T) {
		r := w.in(caller, "find", deep)
		requireCode(t, 0, r)
		assert.Equal(t, nested+"\n", r.stdout)
	})
	t.Run("orphan", func(t *testing.T) {
		r := w.in(caller, "find", orphan)
		requireCode(t, 0, r)
		assert.Equal(t, orph+"\n", r.stdout)
	})
	t.Run("own pane excluded", func(t *testing.T) {
		r := w.in(caller, "find", mine)
		requireCode(t, 0, r)
		assert.Equal(t, mineToo+"\n", r.stdout, "the caller's own pane runs %s too and must not match", mine)
		// From the other pane, the caller's pane is the one match.
		r = w.in(mineToo, "find", mine)
		requireCode(t, 0, r)
		assert.Equal(t, caller+"\n", r.stdout)
	})
	t.Run("ambiguous", func(t *testing.T) {
		r := w.in(caller, "find", twin)
		requireCode(t, 4, r)
		assert.Empty(t, r.stdout)
		assert.Contains(t, r.stderr, twinA)
		assert.Contains(t, r.stderr, twinB)
		r = w.in(caller, "find", twin, "--first")
		requireCode(t, 0, r)
		assert.Contains(t, []string{twinA + "\n", twinB + "\n"}, r.stdout)
		// Outside any pane nobody is excluded: the caller's pane and its twin both match.
		r = w.run(call{}, "find", "-S", w.sock, mine)
		requireCode(t, 4, r)
		assert.Contains(t, r.stderr, caller)
		assert.Contains(t, r.stderr, mineToo)
	})
	t.Run("missing", func(t *testing.T) {
		r := w.in(caller, "find", "e2enobody"+suffix)
		requireCode(t, 4, r)
		assert.Empty(t, r.stdout)
		assert.Contains(t, r.stderr, "e2enobody"+suffix)
		// What runs where: the panes with their programs.
		for _, want := range []string{nested, deep, orph, orphan, twinA, twin} {
			assert.Contains(t, r.stderr, want)
		}
	})
	t.Run("json", func(t *testing.T) {
		r := w.in(caller, "panes", "--json")
		requireCode(t, 0, r)
		panes := decode[[]paneJSON](t, r)
		byID := map[string]paneJSON{}
		for _, p := range panes {
			byID[p.ID] = p
		}
		require.Len(t, byID, 7, "keeper + 6 panes: %s", r.stdout)
		assert.True(t, byID[caller].Self)
		assert.False(t, byID[nested].Self)
		assert.Contains(t, byID[nested].Programs, deep)
		assert.Contains(t, byID[orph].Programs, orphan)
		assert.Equal(t, w.panePID(nested), byID[nested].PID)
		assert.Equal(t, session, byID[nested].Session)

		r = w.in(caller, "find", deep, "--json")
		requireCode(t, 0, r)
		assert.Equal(t, nested, decode[paneJSON](t, r).ID)

		r = w.in(caller, "panes", "--all", "--json")
		requireCode(t, 0, r)
		assert.Len(t, decode[[]paneJSON](t, r), 7)

		r = w.in(caller, "find", twin, "--json")
		assert.Equal(t, 4, r.code, "%s", r)
	})
	t.Run("C locale outside a pane", func(t *testing.T) {
		// cron, env -i or a service: no UTF-8 in the locale and no $TMUX. A plain tmux client
		// prints every tab of a format as "_" then, and every exchange would fail.
		c := call{env: []string{"LC_ALL=C", "LC_CTYPE=C", "LANG=C"}}
		r := w.run(c, "find", "-S", w.sock, deep)
		requireCode(t, 0, r)
		assert.Equal(t, nested+"\n", r.stdout)
		r = w.run(c, "panes", "-S", w.sock, "--json")
		requireCode(t, 0, r)
		panes := decode[[]paneJSON](t, r)
		require.Len(t, panes, 7, "%s", r.stdout)
		for _, p := range panes {
			if p.ID == nested {
				assert.Equal(t, session, p.Session)
				assert.Contains(t, p.Programs, deep)
			}
		}
	})
	t.Run("text", func(t *testing.T) {
		r := w.in(caller, "panes")
		requireCode(t, 0, r)
		assert.Contains(t, r.stdout, "PANE")
		assert.Contains(t, r.stdout, "(you)")
		assert.Regexp(t, regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(nested)+`\s+-\s+`+session+`:\d+\.0\s+\d+\s+.*`+deep), r.stdout, "a pane without a name shows - in NAME")
	})
}

// Case 2: send writes the exact request file, delivers it once and records it.
func TestE2ESend(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	catLog := filepath.Join(w.work, "cat.out")
	cat := w.pane("", "sh", "-c", `exec cat > "$1"`, "sh", catLog)
	rec, recLog := w.recorderPane()

	t.Run("cat", func(t *testing.T) {
		body := "Look at the failing test.\nReport what you find."
		s := w.send(orch, cat, body)
		assert.Equal(t, 1, s.Seq)
		assert.Regexp(t, `^`+regexp.QuoteMeta(w.root)+`/\d{8}-\d{6}-o`+orch[1:]+`-w`+cat[1:]+`$`, s.Dir)
		file := readString(t, s.Request)
		assert.Equal(t, wantRequest(s, "READONLY", orch, cat, body), file)
		assert.Equal(t, os.FileMode(0o600), mode(t, s.Request))
		assert.Equal(t, os.FileMode(0o700), mode(t, s.Dir))
		assert.Equal(t, os.FileMode(0o700), mode(t, w.root))
		assert.NoFileExists(t, s.Response)
		// cat in cooked mode gets the pasted lines, the last one ended by wcomm's Enter: exactly the
		// request, once. (Its screen shows every line twice, the tty's echo and cat's output, which
		// can interleave; the file it writes cannot.)
		var got string
		waitFor(t, 10*time.Second, func() bool {
			data, _ := os.ReadFile(catLog)
			got = string(data)
			return strings.HasSuffix(got, "\n") && strings.Count(got, "\n") >= strings.Count(strings.TrimRight(file, "\n"), "\n")+1
		}, "cat to write the whole request; got:\n%s", &got)
		assert.Equal(t, strings.TrimRight(file, "\n")+"\n", got)
	})

	t.Run("recorder", func(t *testing.T) {
		first := w.send(orch, rec, "first request\twith a tab", "--capability", "writable")
		second := w.send(orch, rec, "second request")
		assert.Equal(t, first.Dir, second.Dir, "the pair's session folder is reused")
		assert.Equal(t, 1, first.Seq)
		assert.Equal(t, 3, second.Seq)
		assert.Equal(t, filepath.Join(first.Dir, "001-request.md"), first.Request)
		assert.Equal(t, filepath.Join(first.Dir, "002-response.md"), first.Response)
		assert.Equal(t, filepath.Join(second.Dir, "004-response.md"), second.Response)
		f1, f2 := readString(t, first.Request), readString(t, second.Request)
		assert.Equal(t, wantRequest(first, "WRITABLE", orch, rec, "first request\twith a tab"), f1)
		assert.Equal(t, wantRequest(second, "READONLY", orch, rec, "second request"), f2)

		entries := waitRecorded(t, recLog, 2)
		require.Len(t, entries, 2, "two deliveries, nothing else: %v", entries)
		assert.Equal(t, map[string]any{"paste": pasted(f1), "enter": true}, entries[0])
		assert.Equal(t, map[string]any{"paste": pasted(f2), "enter": true}, entries[1])
		assert.NotContains(t, entries[0]["paste"], "\t", "a tab becomes spaces on its way to a pane")

		r := w.in(orch, "history", "--json")
		requireCode(t, 0, r)
		h := decode[historyJSON](t, r)
		var got *sessionJSON
		for i := range h.Sessions {
			if h.Sessions[i].Dir == first.Dir {
				got = &h.Sessions[i]
			}
		}
		require.NotNil(t, got, "history lists %s: %s", first.Dir, r.stdout)
		assert.Len(t, h.Sessions, 2)
		assert.Equal(t, orch, got.Orchestrator)
		assert.Equal(t, rec, got.Worker)
		require.Len(t, got.Exchanges, 2)
		for i, s := range []sent{first, second} {
			x := got.Exchanges[i]
			assert.Equal(t, s.ID, x.ID)
			assert.Equal(t, s.Seq, x.Seq)
			assert.Equal(t, "pending", x.Status)
			assert.Equal(t, "submitted", x.State)
			assert.Equal(t, s.Request, x.RequestPath)
			assert.Equal(t, s.Response, x.ResponsePath)
		}
		assert.Equal(t, "WRITABLE", got.Exchanges[0].Capability)

		r = w.in(orch, "history")
		requireCode(t, 0, r)
		assert.Contains(t, r.stdout, first.ID)
		assert.Contains(t, r.stdout, second.ID)
		assert.Contains(t, r.stdout, "pending")
	})

	t.Run("copy mode, fail-fast", func(t *testing.T) {
		// In copy mode tmux drops the paste brackets and copy mode eats keys; send --no-queue leaves
		// the mode first, so the recorder still gets one bracketed paste and its Enter. (Without
		// --no-queue the request waits for copy mode to end: see the mailbox tests.)
		before := len(jsonLines(t, recLog))
		w.tmux("copy-mode", "-t", rec)
		require.Equal(t, "1", strings.TrimSpace(w.tmux("display-message", "-p", "-t", rec, "#{pane_in_mode}")))
		s := w.send(orch, rec, "while in copy mode", "--no-queue")
		entries := waitRecorded(t, recLog, before+1)
		require.Len(t, entries, before+1, "%v", entries)
		assert.Equal(t, map[string]any{"paste": pasted(readString(t, s.Request)), "enter": true}, entries[before])
		assert.Equal(t, "0", strings.TrimSpace(w.tmux("display-message", "-p", "-t", rec, "#{pane_in_mode}")))
	})
}

// waitRecorded waits until the recorder logged n events and returns them all.
func waitRecorded(t *testing.T, log string, n int) []map[string]any {
	t.Helper()
	var got []map[string]any
	var seen string
	waitFor(t, 20*time.Second, func() bool {
		got = jsonLines(t, log)
		seen = fmt.Sprint(len(got))
		return len(got) >= n
	}, "%d recorder events; have %s", n, &seen)
	return got
}

// Case 3: the full round trip between an orchestrator shell and the scripted worker.
func TestE2ERoundTrip(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker, log, gate := w.workerPane(true)

	t.Run("await before notify", func(t *testing.T) {
		s := w.send(orch, worker, "count the files")
		waitLog(t, log, "the request", event("received", s.ID))
		// Flags after the positional argument, as agents write them.
		b := w.start(call{pane: orch}, "await", s.ID, "--timeout", "30s")
		w.waitAwaiting(s, b)
		openGate(t, gate, s.ID)
		r := b.wait(t, 20*time.Second)
		requireCode(t, 0, r)
		assert.Equal(t, answerOf(s.ID, "count the files")+"\n", r.stdout)
		n := waitLog(t, log, "the notify", event("notified", s.ID))
		assert.Equal(t, float64(0), n["rc"], "notify: %v", n)
		assert.Contains(t, n["stderr"], "no line pasted")
		assert.Equal(t, s.Response+"\n", n["stdout"])
		// One signal, not two: nothing was pasted into the orchestrator's pane.
		screen := w.settle(orch)
		assert.NotContains(t, screen, "[RESPONSE", "screen:\n%s", screen)
	})

	t.Run("notify without await", func(t *testing.T) {
		s := w.send(orch, worker, "list the tests")
		waitLog(t, log, "the request", event("received", s.ID))
		openGate(t, gate, s.ID)
		n := waitLog(t, log, "the notify", event("notified", s.ID))
		assert.Equal(t, float64(0), n["rc"], "notify: %v", n)
		w.waitScreen(orch, notifyLine(s, orch, worker))
		// The response is already there: await returns it at once, by id or by path.
		r := w.in(orch, "await", s.ID, "--timeout", "5s")
		requireCode(t, 0, r)
		assert.Equal(t, answerOf(s.ID, "list the tests")+"\n", r.stdout)
		r = w.in(orch, "await", "--json", s.Response)
		requireCode(t, 0, r)
		x := decode[exchangeJSON](t, r)
		assert.Equal(t, s.ID, x.ID)
		assert.Equal(t, "answered", x.Status)
		assert.Equal(t, answerOf(s.ID, "list the tests"), strings.TrimSuffix(x.ResponseBody, "\n"))
	})

	t.Run("timeout", func(t *testing.T) {
		s := w.send(orch, worker, "never answered in time")
		waitLog(t, log, "the request", event("received", s.ID))
		r := w.in(orch, "await", s.ID, "--timeout", "300ms")
		requireCode(t, 3, r)
		assert.Empty(t, r.stdout)
		assert.Contains(t, r.stderr, s.ID)
		// Without an id: the newest unanswered request sent from this pane, the same one.
		r = w.in(orch, "await", "--timeout", "300ms")
		requireCode(t, 3, r)
		assert.Contains(t, r.stderr, s.ID)
		// Started before the answer: once answered, the request is no longer "unanswered" and an
		// await without an id started after that finds nothing (exit 4).
		b := w.start(call{pane: orch}, "await", "--timeout", "30s")
		w.waitAwaiting(s, b)
		openGate(t, gate, s.ID)
		r = b.wait(t, 20*time.Second)
		requireCode(t, 0, r)
		assert.Equal(t, answerOf(s.ID, "never answered in time")+"\n", r.stdout)
	})

	t.Run("send --wait", func(t *testing.T) {
		openGate(t, gate, "all")
		r := w.in(orch, "send", "--to", worker, "--enter-delay", "50ms", "--wait", "--timeout", "30s", "--", "one call")
		requireCode(t, 0, r)
		m := regexp.MustCompile(`sent (\S+); waiting`).FindStringSubmatch(r.stderr)
		require.NotNil(t, m, "%s", r)
		assert.Equal(t, answerOf(m[1], "one call")+"\n", r.stdout)
	})
}

// Case 4: notify when the orchestrator is gone, and a second notify.
func TestE2ENotifyOrchestratorGone(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker := w.catPane()
	s := w.send(orch, worker, "a question")
	w.tmux("kill-pane", "-t", orch)
	_, exists := w.paneDead(orch)
	require.False(t, exists)

	// Without --response: the newest unanswered request addressed to this pane.
	r := w.in(worker, "notify", "--enter-delay", "50ms", "the first answer")
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, orch)
	assert.Contains(t, r.stderr, s.Response, "the message says where the response was kept")
	assert.Contains(t, r.stderr, "orchestrator pane")
	resp := readString(t, s.Response)
	assert.Equal(t, fmt.Sprintf("[WORKER RESPONSE id=%s started_at=%s orchestrator=%s worker=%s bytes=%d sha256=%s]\nthe first answer\n",
		s.ID, s.StartedAt, orch, worker, len("a question"), sum12("a question")), resp)
	assert.Equal(t, os.FileMode(0o600), mode(t, s.Response))

	r = w.in(worker, "notify", "--enter-delay", "50ms", "--response", s.Response, "a second answer")
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "first one stands")
	assert.Equal(t, resp, readString(t, s.Response), "the first response is unchanged")

	r = w.in(worker, "notify", "--enter-delay", "50ms", "--id", s.ID, "a third answer")
	requireCode(t, 1, r)
	assert.Equal(t, resp, readString(t, s.Response))
}

// Case 5: parse reads a RESPONSE line back, refuses lines pointing outside the root; show.
func TestE2EParseAndShow(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker := w.catPane()
	s := w.send(orch, worker, "what changed?")
	r := w.in(worker, "notify", "--enter-delay", "50ms", "--response", s.Response, "--", "nothing changed")
	requireCode(t, 0, r)
	line := notifyLine(s, orch, worker)
	w.waitScreen(orch, line)

	check := func(t *testing.T, r result) {
		t.Helper()
		requireCode(t, 0, r)
		x := decode[exchangeJSON](t, r)
		assert.Equal(t, s.ID, x.ID)
		assert.Equal(t, "answered", x.Status)
		assert.Equal(t, orch, x.Orchestrator)
		assert.Equal(t, worker, x.Worker)
		assert.Equal(t, s.StartedAt, x.StartedAt)
		assert.Equal(t, s.Request, x.RequestPath)
		assert.Equal(t, s.Response, x.ResponsePath)
		assert.Equal(t, "what changed?", strings.TrimSuffix(x.RequestBody, "\n"))
		assert.Equal(t, "nothing changed", strings.TrimSuffix(x.ResponseBody, "\n"))
	}
	t.Run("prompt and colours", func(t *testing.T) {
		shown := "\x1b[1;32muser@host\x1b[0m:\x1b[34m~/src\x1b[0m$ \x1b[33m" + line + "\x1b[0m\r\n\x1b[2m(waiting)\x1b[0m\n"
		check(t, w.run(call{pane: orch}, "parse", "--json", shown))
		check(t, w.run(call{pane: orch, stdin: []byte(shown)}, "parse", "--json"))
		check(t, w.run(call{pane: orch, stdin: []byte(shown)}, "parse", "--json", "-"))
		// What the orchestrator's screen shows, as it is.
		check(t, w.run(call{pane: orch, stdin: []byte(w.capture(orch))}, "parse", "--json", "-"))
		r := w.in(orch, "parse", line)
		requireCode(t, 0, r)
		assert.Contains(t, r.stdout, s.ID)
		assert.Contains(t, r.stdout, "nothing changed")
	})

	t.Run("outside the root", func(t *testing.T) {
		// A complete, readable exchange outside the root: reading it would leak its secret.
		outside := t.TempDir()
		sess := "20260101-000000-o1-w2"
		odir := filepath.Join(outside, sess)
		require.NoError(t, os.Mkdir(odir, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(odir, "001-request.md"),
			[]byte("[WORKER capability=READONLY id=20260101-000000-abcd started_at=20260101-000000 orchestrator=%1 worker=%2]\nq\n"), 0o600))
		passwd, err := os.ReadFile("/etc/passwd")
		require.NoError(t, err)
		secret := "[WORKER RESPONSE id=20260101-000000-abcd started_at=20260101-000000 orchestrator=%1 worker=%2]\nSECRET-OUTSIDE\n" + string(passwd)
		require.NoError(t, os.WriteFile(filepath.Join(odir, "002-response.md"), []byte(secret), 0o600))
		require.NoError(t, os.Symlink(odir, filepath.Join(w.root, sess)))

		for _, tc := range []struct{ name, path string }{
			{"absolute", filepath.Join(odir, "002-response.md")},
			{"passwd", "/etc/passwd-response.md"},
			// s.Dir is TEMP/N/root/SESSION and outside is TEMP/M: up three, then down.
			{"dot-dot", s.Dir + "/../../../" + filepath.Base(outside) + "/" + sess + "/002-response.md"},
			{"symlinked session folder", filepath.Join(w.root, sess, "002-response.md")},
		} {
			t.Run(tc.name, func(t *testing.T) {
				forged := "[RESPONSE started_at=20260101-000000 orchestrator=%1 worker=%2] " + tc.path
				r := w.in(orch, "parse", "--json", forged)
				assert.NotEqual(t, 0, r.code, "%s", r)
				assert.NotContains(t, r.stdout, "SECRET-OUTSIDE")
				assert.NotContains(t, r.stdout, "root:")
				assert.NotEmpty(t, r.stderr)
				r = w.in(orch, "show", tc.path)
				assert.NotEqual(t, 0, r.code, "%s", r)
				assert.NotContains(t, r.stdout, "SECRET-OUTSIDE")
			})
		}
	})

	t.Run("show", func(t *testing.T) {
		check(t, w.in(orch, "show", "--json", s.ID))
		check(t, w.in(orch, "show", s.Request, "--json"))
		check(t, w.in(orch, "show", s.Response, "--json"))
		r := w.in(orch, "show", s.ID)
		requireCode(t, 0, r)
		for _, want := range []string{s.ID, s.Request, s.Response, "answered", "--- request\nwhat changed?", "--- response\nnothing changed"} {
			assert.Contains(t, r.stdout, want)
		}
		r = w.in(orch, "show", "20200101-000000-ffff")
		requireCode(t, 4, r)
	})
}

// Case 6: history and show name damaged and foreign files instead of failing.
func TestE2EHistoryDamaged(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker := w.catPane()
	s := w.send(orch, worker, "a good request")
	damaged := filepath.Join(s.Dir, "003-request.md")
	require.NoError(t, os.WriteFile(damaged, []byte("\x00\x1b[2J\xffGARBAGE no header\n\x1b]2;TITLE\x07"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir, "notes.txt"), []byte("mine\n"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(w.root, "not-a-session"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(w.root, "stray.md"), []byte("x"), 0o600))

	r := w.in(orch, "history")
	requireCode(t, 0, r)
	for _, want := range []string{s.ID, "003-request.md", "damaged", "notes.txt", "not-a-session", "stray.md"} {
		assert.Contains(t, r.stdout, want)
	}
	assert.NotContains(t, r.stdout, "\x1b", "control bytes from a damaged file never reach the terminal")
	assert.True(t, utf8.ValidString(r.stdout))

	r = w.in(orch, "history", "--json")
	requireCode(t, 0, r)
	h := decode[historyJSON](t, r)
	assert.ElementsMatch(t, []string{"not-a-session", "stray.md"}, h.Foreign)
	require.Len(t, h.Sessions, 1)
	assert.Equal(t, []string{"notes.txt"}, h.Sessions[0].Foreign)
	require.Len(t, h.Sessions[0].Exchanges, 2)
	good, bad := h.Sessions[0].Exchanges[0], h.Sessions[0].Exchanges[1]
	assert.Equal(t, "pending", good.Status)
	assert.Equal(t, s.ID, good.ID)
	assert.Equal(t, 3, bad.Seq)
	assert.Equal(t, "damaged", bad.Status)
	assert.NotEmpty(t, bad.Problems)
	assert.Contains(t, strings.Join(bad.Problems, "\n"), damaged)

	r = w.in(orch, "history", "--pending")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, s.ID)

	r = w.in(orch, "history", filepath.Base(s.Dir), "--json")
	requireCode(t, 0, r)

	r = w.in(orch, "show", damaged)
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "damaged")
	assert.Contains(t, r.stdout, damaged)
	assert.NotContains(t, r.stdout, "\x1b")

	r = w.in(orch, "show", "--json", damaged)
	requireCode(t, 0, r)
	assert.Equal(t, "damaged", decode[exchangeJSON](t, r).Status)
}

// Case 7: failures and their exit codes.
func TestE2EFailures(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker := w.catPane()
	w.tmux("set-option", "-g", "remain-on-exit", "on")
	dead := w.pane("", "true")
	waitFor(t, 10*time.Second, func() bool { d, _ := w.paneDead(dead); return d }, "pane %s to die", dead)
	noServer := filepath.Join(w.dir, "nobody", "s")

	for _, tc := range []struct {
		name   string
		call   call
		args   []string
		code   int
		stderr []string
	}{
		{"dead pane", call{pane: orch}, []string{"send", "--to", dead, "--enter-delay", "50ms", "hello"}, 1, []string{dead, "dead"}},
		{"unknown pane", call{pane: orch}, []string{"send", "--to", "%999", "hello"}, 4, []string{"%999"}},
		{"unknown agent", call{pane: orch}, []string{"send", "--to", "e2enobody" + randHex(t), "hello"}, 4, []string{"e2enobody"}},
		{"no server send", call{}, []string{"send", "-S", noServer, "--from", "%0", "--to", "%1", "hello"}, 1, []string{noServer, "start tmux"}},
		{"no server panes", call{}, []string{"panes", "-S", noServer}, 1, []string{noServer}},
		{"no server find", call{}, []string{"find", "-S", noServer, "codex"}, 1, []string{noServer}},
		{"empty message", call{pane: orch}, []string{"send", "--to", worker, ""}, 2, []string{"message"}},
		{"blank message", call{pane: orch}, []string{"send", "--to", worker, " \n\t"}, 2, []string{"message"}},
		{"no message", call{pane: orch}, []string{"send", "--to", worker}, 2, []string{"message"}},
		{"empty stdin", call{pane: orch, stdin: []byte{}}, []string{"send", "--to", worker, "-"}, 2, []string{"message"}},
		{"empty response", call{pane: worker}, []string{"notify", "--id", "20200101-000000-ffff", ""}, 2, []string{"response"}},
		{"unknown flag", call{pane: orch}, []string{"send", "--to", worker, "--bogus", "hello"}, 2, []string{"bogus"}},
		{"unknown flag await", call{pane: orch}, []string{"await", "--bogus"}, 2, []string{"bogus"}},
		{"unknown command", call{pane: orch}, []string{"bogus"}, 2, []string{"bogus"}},
		{"no target", call{pane: orch}, []string{"send", "hello"}, 2, []string{"--to"}},
		{"bad capability", call{pane: orch}, []string{"send", "--to", worker, "--capability", "ROOT", "hello"}, 2, []string{"ROOT"}},
		{"bad timeout", call{pane: orch}, []string{"await", "--timeout", "soon"}, 2, []string{"soon"}},
		{"await unknown id", call{pane: orch}, []string{"await", "20200101-000000-ffff", "--timeout", "1s"}, 4, []string{"20200101-000000-ffff"}},
		{"send outside a pane", call{}, []string{"send", "-S", w.sock, "--to", worker, "hello"}, 1, []string{"pane"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := w.run(tc.call, tc.args...)
			requireCode(t, tc.code, r)
			for _, s := range tc.stderr {
				assert.Contains(t, r.stderr, s)
			}
			assert.True(t, strings.HasPrefix(r.stderr, "wcomm"), "errors are printed by wcomm, once: %s", r)
		})
	}
	assert.True(t, w.serverAlive(), "the server survives a send to a dead pane")
	d, exists := w.paneDead(dead)
	assert.True(t, d && exists, "the dead pane is still there, dead")
	assert.Empty(t, w.buffers(), "no buffer is left behind")
	// Nothing was written for the dead pane, the unknown ones or the refused messages.
	r := w.in(orch, "history", "--json")
	requireCode(t, 0, r)
	for _, s := range decode[historyJSON](t, r).Sessions {
		assert.NotEqual(t, dead, s.Worker, "a request for a dead pane: %+v", s)
		assert.Empty(t, s.Exchanges, "no request may be written for %+v", s)
	}

	t.Run("input off", func(t *testing.T) {
		// A pane whose input is off drops a paste silently; the guard in the paste's own tmux call
		// refuses it instead, and the request stays on disk as undelivered.
		off := w.catPane()
		w.tmux("select-pane", "-d", "-t", off)
		r := w.in(orch, "send", "--to", off, "--enter-delay", "50ms", "hello")
		requireCode(t, 1, r)
		m := regexp.MustCompile(`request kept at (\S+-request\.md)`).FindStringSubmatch(r.stderr)
		require.NotNil(t, m, "%s", r)
		assert.FileExists(t, m[1])
		assert.Empty(t, w.buffers(), "the refused paste's buffer is gone")
		assert.True(t, w.serverAlive())
		r = w.in(orch, "show", "--json", m[1])
		requireCode(t, 0, r)
		assert.Equal(t, "undelivered", decode[exchangeJSON](t, r).Status)
		r = w.in(orch, "await", m[1], "--timeout", "1s")
		assert.Equal(t, 1, r.code, "awaiting an undelivered request fails at once: %s", r)
	})
}

// Case 8: 50 concurrent sends to one pane.
func TestE2EConcurrentSends(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	rec, recLog := w.recorderPane()
	const n = 50
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Multi-line and of different sizes, so merged or split pastes show.
			body := fmt.Sprintf("concurrent message %02d\n%s", i, strings.Repeat(fmt.Sprintf("line of %02d\n", i), i%7+1))
			results[i] = w.run(call{pane: orch}, "send", "--to", rec, "--enter-delay", "50ms", "--", body)
		}()
	}
	wg.Wait()

	files := map[string]string{} // request path -> content
	seqs := map[int]bool{}
	var dir string
	for i, r := range results {
		requireCode(t, 0, r)
		s := parseSent(t, r.stdout)
		if dir == "" {
			dir = s.Dir
		}
		assert.Equal(t, dir, s.Dir, "one session folder for the pair")
		assert.False(t, seqs[s.Seq], "number %d claimed twice", s.Seq)
		seqs[s.Seq] = true
		assert.Equal(t, 1, s.Seq%2, "requests are odd, their responses even: %d", s.Seq)
		body := fmt.Sprintf("concurrent message %02d\n%s", i, strings.Repeat(fmt.Sprintf("line of %02d\n", i), i%7+1))
		file := readString(t, s.Request)
		assert.Equal(t, wantRequest(s, "READONLY", orch, rec, body), file)
		files[s.Request] = file
	}
	require.Len(t, files, n)
	reqs, err := filepath.Glob(filepath.Join(dir, "*-request.md"))
	require.NoError(t, err)
	assert.Len(t, reqs, n)

	// The recorder got each request whole, once, followed by its Enter, and nothing else.
	entries := waitRecorded(t, recLog, n)
	want := map[string]int{}
	for _, f := range files {
		want[pasted(f)]++
	}
	got := map[string]int{}
	for _, e := range entries {
		assert.Equal(t, true, e["enter"], "every paste is followed by its own Enter: %v", e)
		p, ok := e["paste"].(string)
		if assert.True(t, ok, "only pastes reach the pane: %v", e) {
			got[p]++
		}
	}
	assert.Equal(t, want, got)
	assert.Empty(t, w.buffers(), "no buffer is left behind")

	r := w.in(orch, "history", "--json")
	requireCode(t, 0, r)
	h := decode[historyJSON](t, r)
	require.Len(t, h.Sessions, 1)
	assert.Len(t, h.Sessions[0].Exchanges, n)
	for _, x := range h.Sessions[0].Exchanges {
		assert.Equal(t, "submitted", x.State, "%s", x.RequestPath)
		assert.Equal(t, "ok", x.Integrity, "%s", x.RequestPath)
	}
}

// hostile holds tmux command separators, shell expansions, escape sequences, a bracketed-paste end
// marker followed by a command line, ^C ^D ^Z, invalid UTF-8, and ends in ";".
// The words between are no commands, so that a shell that runs the text (see the bash case)
// does not start an interactive program that would eat the rest.
const hostile = "; kill-server ;\n" +
	"escaped \\;\n" +
	"echo $(touch pwn) `touch pwn`\n" +
	"\x1b[31mcoloured\x1b[0m \x1b]2;HACKED\x07 \x1bP+q\x1b\\ \x9b31m\n" +
	"\x1b[201~\ntouch pwned\n" +
	"ctrl \x03 \x04 \x1a \x7f\r\n" +
	"invalid \xff\xfe\xc3\x28 utf8\n" +
	"the end;"

// Case 9: a hostile message, and a 1 MB one.
func TestE2EHostileMessage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")

	// checkFile: the request file keeps the original bytes exactly.
	checkFile := func(t *testing.T, s sent, worker, body string) string {
		file := readString(t, s.Request)
		assert.Equal(t, wantRequest(s, "READONLY", orch, worker, body), file)
		return file
	}

	t.Run("recorder", func(t *testing.T) {
		rec, recLog := w.recorderPane()
		r := w.run(call{pane: orch, stdin: []byte(hostile)}, "send", "--to", rec, "--enter-delay", "50ms", "-")
		requireCode(t, 0, r)
		s := parseSent(t, r.stdout)
		file := checkFile(t, s, rec, hostile)
		entries := waitRecorded(t, recLog, 1)
		require.Len(t, entries, 1, "%v", entries)
		assert.Equal(t, true, entries[0]["enter"])
		p, _ := entries[0]["paste"].(string)
		assert.Equal(t, pasted(file), p)
		for _, c := range p {
			assert.False(t, (c < 0x20 && c != '\r') || c == 0x7f || (c >= 0x80 && c < 0xa0),
				"control character %U reached the pane", c)
		}
		assert.NotContains(t, p, `\x`, "invalid UTF-8 reached the pane")
		assert.Contains(t, p, "touch pwned", "the text itself arrives, defused")
		assert.True(t, w.serverAlive())
		assert.NotEqual(t, "HACKED", strings.TrimSpace(w.tmux("display-message", "-p", "-t", rec, "#{pane_title}")))
		assert.Empty(t, w.buffers())
	})

	t.Run("bash", func(t *testing.T) {
		victim := t.TempDir()
		sh := w.bashPane(victim)
		r := w.run(call{pane: orch, stdin: []byte(hostile)}, "send", "--to", sh, "--enter-delay", "50ms", "-")
		requireCode(t, 0, r)
		s := parseSent(t, r.stdout)
		checkFile(t, s, sh, hostile)
		screen := w.settle(sh)
		dead, exists := w.paneDead(sh)
		assert.True(t, exists && !dead, "the bash pane is alive")
		assert.True(t, w.serverAlive(), "the server is alive")
		assert.NotEqual(t, "HACKED", strings.TrimSpace(w.tmux("display-message", "-p", "-t", sh, "#{pane_title}")))
		for _, f := range []string{"pwn", "pwned"} {
			assert.NoFileExists(t, filepath.Join(victim, f), "a command of the message ran in the shell; screen:\n%s", screen)
		}
		// Had the shell run the request's lines, its seed fallback line would have pasted a
		// forged RESPONSE line into the orchestrator's pane.
		orchScreen := w.settle(orch)
		assert.NotContains(t, orchScreen, "[RESPONSE", "a forged notification reached the orchestrator")
	})

	t.Run("1MB", func(t *testing.T) {
		rec, recLog := w.recorderPane()
		var b strings.Builder
		for i := 0; b.Len() < 1<<20; i++ {
			fmt.Fprintf(&b, "line %06d of a long request, with text to make it wide enough to count\n", i)
		}
		body := b.String()
		msg := filepath.Join(w.work, "big.md")
		require.NoError(t, os.WriteFile(msg, []byte(body), 0o600))
		r := w.in(orch, "send", "--to", rec, "--enter-delay", "50ms", "--file", msg)
		requireCode(t, 0, r)
		s := parseSent(t, r.stdout)
		checkFile(t, s, rec, body)
		entries := waitRecorded(t, recLog, 1)
		require.Len(t, entries, 1, "one pointer line, nothing else")
		assert.Equal(t, true, entries[0]["enter"])
		p, _ := entries[0]["paste"].(string)
		assert.NotContains(t, p, "\r", "the pointer is one line")
		assert.Less(t, len(p), 1000)
		assert.True(t, strings.HasPrefix(p, fmt.Sprintf("[WORKER capability=READONLY id=%s ", s.ID)), "pointer: %q", p)
		assert.Contains(t, p, s.Request)
		r = w.in(orch, "show", "--json", s.ID)
		requireCode(t, 0, r)
		assert.Equal(t, "pointer", decode[exchangeJSON](t, r).Form)
	})
}

// Case 10: a foreign, non-atomic response writer: await prints the complete body only.
func TestE2EForeignSlowWriter(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker := w.catPane()
	s := w.send(orch, worker, "write slowly")
	b := w.start(call{pane: orch}, "await", s.ID, "--timeout", "30s")
	w.waitAwaiting(s, b)

	body := "first part of the answer\nsecond part\nthird part\nthe end\n"
	content := fmt.Sprintf("[WORKER RESPONSE id=%s started_at=%s orchestrator=%s worker=%s]\n%s", s.ID, s.StartedAt, orch, worker, body)
	writer := exec.Command("python3", filepath.Join(fixtures, "slowwriter.py"), s.Response, "4", "0.15")
	writer.Stdin = strings.NewReader(content)
	out, err := writer.CombinedOutput()
	require.NoError(t, err, "%s", out)

	r := b.wait(t, 20*time.Second)
	requireCode(t, 0, r)
	assert.Equal(t, body, r.stdout)
	assert.Equal(t, content, readString(t, s.Response))
}

// Case 11: compatibility with the seed's plain procedure, both ways.
func TestE2ESeedCompat(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ref, err := filepath.Abs(referenceDir)
	require.NoError(t, err)
	refEnv := func(orch string) []string {
		return append(cleanEnv(), "REF_ROOT="+w.root, "REF_TMUX_SOCKET="+w.sock, "REF_ORCHESTRATOR="+orch, "REF_ENTER_DELAY=0.05")
	}
	runRef := func(t *testing.T, env []string, script string, args ...string) string {
		t.Helper()
		cmd := exec.Command("bash", append([]string{filepath.Join(ref, script)}, args...)...)
		cmd.Env = env
		cmd.Dir = w.work
		out, err := cmd.Output()
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		require.NoError(t, err, "%s: %s%s", script, out, stderr)
		return string(out)
	}

	t.Run("seed request, wcomm answer", func(t *testing.T) {
		orch := w.bashPane("")
		worker := w.catPane()
		msg := filepath.Join(w.work, "seed-msg.md")
		require.NoError(t, os.WriteFile(msg, []byte("Review the plan.\nBe brief.\n"), 0o600))
		out := runRef(t, refEnv(orch), "send.sh", worker, msg)
		m := regexp.MustCompile(`session_dir=(\S+)\nresponse_file=(\S+)\n`).FindStringSubmatch(out)
		require.NotNil(t, m, "send.sh printed %q", out)
		dir, resp := m[1], m[2]
		req := readString(t, filepath.Join(dir, "001-request.md"))
		h := regexp.MustCompile(`^\[WORKER capability=READONLY id=(\S+) started_at=(\S+) orchestrator=` + orch + ` worker=` + worker + `\]\n`).FindStringSubmatch(req)
		require.NotNil(t, h, "seed request:\n%s", req)
		id, startedAt := h[1], h[2]

		r := w.in(worker, "notify", "--enter-delay", "50ms", "--response", resp, "--", "The plan is sound.")
		requireCode(t, 0, r)
		assert.Equal(t, resp+"\n", r.stdout)
		w.waitScreen(orch, fmt.Sprintf("[RESPONSE started_at=%s orchestrator=%s worker=%s] %s", startedAt, orch, worker, resp))

		got := runRef(t, refEnv(orch), "await.sh", resp, "10")
		assert.Equal(t, fmt.Sprintf("[WORKER RESPONSE id=%s started_at=%s orchestrator=%s worker=%s]\nThe plan is sound.\n", id, startedAt, orch, worker), got)

		r = w.in(orch, "history", "--json")
		requireCode(t, 0, r)
		var x *exchangeJSON
		for _, s := range decode[historyJSON](t, r).Sessions {
			for i := range s.Exchanges {
				if s.Exchanges[i].ID == id {
					x = &s.Exchanges[i]
				}
			}
		}
		require.NotNil(t, x, "history lists the seed's exchange: %s", r.stdout)
		assert.Equal(t, "answered", x.Status)
		assert.Equal(t, resp, x.ResponsePath)
		r = w.in(orch, "await", id, "--timeout", "5s")
		requireCode(t, 0, r)
		assert.Equal(t, "The plan is sound.\n", r.stdout)
	})

	t.Run("wcomm request, seed answer", func(t *testing.T) {
		orch := w.bashPane("")
		worker := w.catPane()
		s := w.send(orch, worker, "Summarize the log.")
		b := w.start(call{pane: orch}, "await", s.ID, "--timeout", "30s")
		w.waitAwaiting(s, b)
		answer := filepath.Join(w.work, "seed-answer.md")
		require.NoError(t, os.WriteFile(answer, []byte("The log is clean.\nDELTA:\n  changes: [none]\n  risks: []\n  alternatives: []\n  needs_consult: no\n"), 0o600))
		out := runRef(t, refEnv(""), "respond.sh", s.Request, answer)
		assert.Equal(t, "response_file="+s.Response+"\n", out)

		r := b.wait(t, 20*time.Second)
		requireCode(t, 0, r)
		assert.Equal(t, "The log is clean.\nDELTA:\n  changes: [none]\n  risks: []\n  alternatives: []\n  needs_consult: no\n", r.stdout)

		screen := w.waitScreen(orch, notifyLine(s, orch, worker))
		r = w.run(call{pane: orch, stdin: []byte(screen)}, "parse", "--json", "-")
		requireCode(t, 0, r)
		x := decode[exchangeJSON](t, r)
		assert.Equal(t, s.ID, x.ID)
		assert.Equal(t, "answered", x.Status)
		assert.Equal(t, s.Response, x.ResponsePath)
		assert.Contains(t, x.ResponseBody, "The log is clean.")
		var full map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &full))
		delta, ok := full["delta"].(map[string]any)
		require.True(t, ok, "the DELTA block is parsed into the record: %s", r.stdout)
		assert.Equal(t, []any{"none"}, delta["changes"])
		assert.Empty(t, delta["risks"])
		assert.Empty(t, delta["alternatives"])
		assert.Equal(t, false, delta["needs_consult"])
	})
}
