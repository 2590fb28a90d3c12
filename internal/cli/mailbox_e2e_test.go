package cli

// The mailbox end to end: a pane that is not ready (a shell running a job, a person's text in the
// input, copy mode) never blocks the sender, and gets the message exactly once, inert, when it is
// ready again; a deliverer killed mid-delivery is finished by the next one without a second paste.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// paneCommand is the pane's foreground command as tmux sees it.
func (w *world) paneCommand(p string) string {
	out, _ := w.tmuxErr("display-message", "-p", "-t", p, "#{pane_current_command}")
	return strings.TrimSpace(out)
}

// startJob types a command line into an interactive shell pane and waits until its first program
// runs in the foreground.
func (w *world) startJob(p, line, prog string) {
	w.t.Helper()
	w.tmux("send-keys", "-t", p, "-l", line)
	w.tmux("send-keys", "-t", p, "Enter")
	waitFor(w.t, 10*time.Second, func() bool { return w.paneCommand(p) == prog }, "%s to run in pane %s", prog, p)
}

// loggedEvent is one event of an exchange's delivery log, as show --json gives it.
type loggedEvent struct {
	State  string            `json:"state"`
	Detail map[string]string `json:"detail"`
}

// exchangeLog returns an exchange's delivery log, in order.
func (w *world) exchangeLog(id string) []loggedEvent {
	w.t.Helper()
	r := w.run(call{}, "show", "--json", id)
	requireCode(w.t, 0, r)
	var x struct {
		Events []loggedEvent `json:"events"`
	}
	require.NoError(w.t, json.Unmarshal([]byte(r.stdout), &x))
	return x.Events
}

// exchangeEvents returns the states of an exchange's delivery log, in order.
func (w *world) exchangeEvents(id string) []string {
	w.t.Helper()
	var out []string
	for _, ev := range w.exchangeLog(id) {
		out = append(out, ev.State)
	}
	return out
}

// inboxItems runs 'wcomm inbox --json' with args in pane p.
func (w *world) inboxItems(p string, args ...string) []map[string]any {
	w.t.Helper()
	r := w.in(p, append([]string{"inbox", "--json"}, args...)...)
	requireCode(w.t, 0, r)
	var res struct {
		Items []map[string]any `json:"items"`
	}
	require.NoError(w.t, json.Unmarshal([]byte(r.stdout), &res), "%s", r)
	return res.Items
}

var responseComment = regexp.MustCompile(`# \[RESPONSE [^\n]*?(/\S+-response\.md)`)

// TestE2EMailboxShellJob: a bash orchestrator running a foreground job gets the RESPONSE line only
// once the job has ended, as an inert comment; notify returns while the job still runs.
func TestE2EMailboxShellJob(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker := w.catPane()
	s := w.send(orch, worker, "task for the cat")

	w.startJob(orch, "sleep 4; echo job-done-marker", "sleep")
	start := time.Now()
	r := w.in(worker, "notify", "--response", s.Response, "--", "the answer")
	took := time.Since(start)
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "queued")
	assert.Contains(t, r.stderr, "runs sleep")
	assert.Equal(t, "sleep", w.paneCommand(orch), "notify returned while the job still ran")
	t.Logf("notify into a busy shell returned in %s", took.Round(time.Millisecond))

	screen := w.waitScreen(orch, "# [RESPONSE")
	done := strings.Index(screen, "\njob-done-marker\n")
	line := strings.Index(screen, "# [RESPONSE")
	require.GreaterOrEqual(t, done, 0, "screen:\n%s", screen)
	assert.Less(t, done, line, "the line came after the job; screen:\n%s", screen)
	assert.NotContains(t, screen, "command not found", "nothing ran")
	assert.Equal(t, 1, strings.Count(screen, "# [RESPONSE"), "screen:\n%s", screen)
	m := responseComment.FindStringSubmatch(screen)
	require.NotNil(t, m, "screen:\n%s", screen)
	assert.Equal(t, s.Response, m[1])
	waitFor(t, 10*time.Second, func() bool {
		evs := w.exchangeEvents(s.ID)
		return len(evs) > 0 && evs[len(evs)-1] == "notified"
	}, "the exchange to record the delivery")
	assert.Contains(t, w.exchangeEvents(s.ID), "notify-queued")
}

// TestE2EMailboxPersonsText: with a person's half-typed text in the orchestrator's input, nothing
// is typed over it; inbox lists the waiting response; once the person clears the line, it is
// delivered exactly once, without anyone running anything.
func TestE2EMailboxPersonsText(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	victim := t.TempDir()
	orch := w.promptPane(victim, nil, "bash", "--norc", "--noprofile", "-i")
	worker := w.catPane()
	s := w.send(orch, worker, "a task")

	w.tmux("send-keys", "-t", orch, "-l", "touch typed-by-a-person")
	before := w.waitScreen(orch, "touch typed-by-a-person")
	r := w.in(worker, "notify", "--response", s.Response, "--", "the answer")
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "queued")
	assert.Contains(t, r.stderr, "someone else's text")
	assert.Equal(t, before, w.capture(orch), "the person's line is untouched")

	items := w.inboxItems(orch, "--peek")
	require.Len(t, items, 1, "%v", items)
	assert.Equal(t, "response", items[0]["kind"])
	assert.Equal(t, "waiting", items[0]["state"])
	assert.Contains(t, items[0]["text"], s.Response)

	// The person thinks better of it and clears the line (Ctrl-U).
	w.tmux("send-keys", "-t", orch, "C-u")
	screen := w.waitScreen(orch, "# [RESPONSE")
	assert.Equal(t, 1, strings.Count(screen, "# [RESPONSE"), "screen:\n%s", screen)
	assert.NoFileExists(t, filepath.Join(victim, "typed-by-a-person"), "the person's command never ran")
	waitFor(t, 10*time.Second, func() bool {
		all := w.inboxItems(orch, "--all")
		return len(all) == 1 && all[0]["state"] == "delivered" && all[0]["via"] == "paste"
	}, "the outbox to record the delivery")
	assert.Empty(t, w.inboxItems(orch, "--peek"), "nothing waits any more")
}

// TestE2EMailboxInboxTakes: what 'wcomm inbox' took is never typed in afterwards.
func TestE2EMailboxInboxTakes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker := w.catPane()
	s := w.send(orch, worker, "a task")
	w.startJob(orch, "sleep 3; echo job-done-marker", "sleep")
	requireCode(t, 0, w.in(worker, "notify", "--response", s.Response, "--", "the answer"))

	r := w.in(orch, "inbox")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "[RESPONSE ")
	assert.Contains(t, r.stdout, s.Response)
	assert.Contains(t, r.stdout, "delivered via inbox")

	w.waitScreen(orch, "\njob-done-marker")
	waitNoDeliverer(t, w.root)
	assert.NotContains(t, w.capture(orch), "# [RESPONSE", "a message taken from the inbox is not typed in too")
	assert.Contains(t, w.exchangeEvents(s.ID), "notified")
	assert.Empty(t, w.inboxItems(orch, "--peek"))
}

// TestE2EMailboxCoalesced: sixteen workers notify one busy orchestrator at once: all return at
// once, and the sixteen RESPONSE lines arrive in one or a few pastes, each exactly once.
func TestE2EMailboxCoalesced(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	const n = 16
	workers := make([]string, n)
	exchanges := make([]sent, n)
	for i := range workers {
		workers[i] = w.catPane()
		exchanges[i] = w.send(orch, workers[i], "task "+strconv.Itoa(i))
	}
	w.startJob(orch, "sleep 5; echo job-done-marker", "sleep")
	var wg sync.WaitGroup
	results := make([]result, n)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = w.in(workers[i], "notify", "--response", exchanges[i].Response, "--", "answer "+strconv.Itoa(i))
		}()
	}
	wg.Wait()
	for _, r := range results {
		requireCode(t, 0, r)
		assert.Contains(t, r.stderr, "queued")
	}
	assert.Equal(t, "sleep", w.paneCommand(orch), "all sixteen returned while the orchestrator was busy")

	var screen string
	waitFor(t, 30*time.Second, func() bool {
		screen = w.capture(orch)
		return strings.Count(screen, "# [RESPONSE") >= n
	}, "sixteen RESPONSE lines; screen:\n%s", &screen)
	waitNoDeliverer(t, w.root)
	screen = w.capture(orch)
	seen := map[string]int{}
	for _, m := range responseComment.FindAllStringSubmatch(screen, -1) {
		seen[m[1]]++
	}
	for _, x := range exchanges {
		assert.Equal(t, 1, seen[x.Response], "%s exactly once; screen:\n%s", x.Response, screen)
	}
	assert.Len(t, seen, n)
	assert.NotContains(t, screen, "command not found")

	// How many pastes carried them: the distinct mail that each notified event names.
	pastes := map[string]bool{}
	for _, x := range exchanges {
		for _, ev := range w.exchangeLog(x.ID) {
			if ev.State == "notified" {
				pastes[ev.Detail["mail"]] = true
			}
		}
	}
	t.Logf("16 RESPONSE lines arrived in %d paste(s)", len(pastes))
	assert.LessOrEqual(t, len(pastes), 3, "coalesced into one or a few deliveries")
}

// TestE2EMailboxKilledDeliverer: a deliverer killed with SIGKILL between its paste and its Enter
// leaves the paste in the pane; the next deliverer presses Enter for it, and the orchestrator gets
// the line exactly once.
func TestE2EMailboxKilledDeliverer(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec, recLog := w.recorderPane()
	worker := w.catPane()
	s := w.send(rec, worker, "a task")

	// Copy mode: someone is reading the orchestrator's pane, so the line waits.
	w.tmux("copy-mode", "-t", rec)
	// A long pause between paste and Enter gives the test its moment to kill.
	r := w.run(call{pane: worker, env: []string{"WCOMM_ENTER_DELAY=5s"}}, "notify", "--response", s.Response, "--", "the answer")
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "copy mode")
	w.tmux("send-keys", "-t", rec, "-X", "cancel")

	// The paste is recorded in the pane itself, in the same tmux call.
	waitFor(t, 15*time.Second, func() bool {
		out := w.markRecord("PASTED", rec)
		return strings.TrimSpace(out) != ""
	}, "the deliverer's paste")
	// An outbox keeps its inflight.json, emptied, once a delivery ended: the one in flight has a record.
	var inflights []string
	records, _ := filepath.Glob(filepath.Join(w.root, ".outbox", "*", "inflight.json"))
	for _, p := range records {
		if st, err := os.Stat(p); err == nil && st.Size() > 0 {
			inflights = append(inflights, p)
		}
	}
	require.Len(t, inflights, 1)
	var f struct {
		PID int `json:"pid"`
	}
	require.NoError(t, json.Unmarshal([]byte(readString(t, inflights[0])), &f))
	// Checked before the kill: once the deliverer is dead, its guard may press the Enter at once.
	require.Empty(t, jsonLines(t, recLog), "paste seen, Enter still 5 s away: nothing submitted yet")
	require.NoError(t, syscall.Kill(f.PID, syscall.SIGKILL))
	waitFor(t, 10*time.Second, func() bool { return syscall.Kill(f.PID, 0) != nil || isZombie(f.PID) }, "the deliverer to die")

	// Anything that looks at the outbox starts a new deliverer; it finishes the delivery.
	requireCode(t, 0, w.in(rec, "inbox", "--peek"))
	var state string
	waitFor(t, 20*time.Second, func() bool {
		state = outboxState(w)
		return len(jsonLines(t, recLog)) >= 1
	}, "the recorder's line; outbox:%s", &state)
	waitNoDeliverer(t, w.root)
	entries := jsonLines(t, recLog)
	require.Len(t, entries, 1, "%v", entries)
	assert.Equal(t, true, entries[0]["enter"])
	assert.Contains(t, entries[0]["paste"], s.Response)
	all := w.inboxItems(rec, "--all")
	require.Len(t, all, 1)
	assert.Equal(t, "delivered", all[0]["state"])
	assert.Contains(t, all[0]["detail"], "recovered")
}

// isZombie reports whether pid has exited but not been reaped.
func isZombie(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(data), ')')
	return i > 0 && i+2 < len(data) && data[i+2] == 'Z'
}

// TestE2EMailboxResend: a request refused by a fail-fast send is listed by history --pending and
// delivered again, under its own id, by send --resend.
func TestE2EMailboxResend(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	victim := t.TempDir()
	target := w.promptPane(victim, nil, "bash", "--norc", "--noprofile", "-i")
	w.tmux("send-keys", "-t", target, "-l", "echo half-typed")
	w.waitScreen(target, "echo half-typed")
	r := w.in(orch, "send", "--to", target, "--no-queue", "--busy-wait", "0", "--", "first try")
	requireCode(t, 1, r)
	m := regexp.MustCompile(`send --resend (\S+)' delivers it again`).FindStringSubmatch(r.stderr)
	require.NotNil(t, m, "%s", r)
	id := m[1]

	h := w.in(orch, "history", "--pending")
	requireCode(t, 0, h)
	assert.Contains(t, h.stdout, id)
	assert.Contains(t, h.stdout, "refused")

	w.tmux("send-keys", "-t", target, "C-u")
	r = w.in(orch, "send", "--resend", id)
	requireCode(t, 0, r)
	fields := strings.Fields(r.stdout)
	require.Len(t, fields, 2, "%s", r)
	assert.Equal(t, id, fields[0], "the same id")
	screen := w.waitScreen(target, "# [WORKER")
	assert.Equal(t, 1, strings.Count(screen, "# [WORKER"))
	// The resend may have queued it, the C-u not yet read when it looked: the deliverer then
	// logs its submission a moment after the screen shows it.
	waitFor(t, 15*time.Second, func() bool {
		evs := w.exchangeEvents(id)
		return evs[len(evs)-1] == "submitted"
	}, "the resent request logged as submitted")
	assert.Equal(t, "refused", w.exchangeEvents(id)[1])
	// The log says submitted a moment before the mail leaves the target's outbox: until it has
	// left, a resend is refused as just delivered, which is not what is tested next.
	waitFor(t, 15*time.Second, func() bool {
		for _, it := range w.inboxItems(orch, "--all", "--peek", "--pane", target) {
			if it["exchange"] == id && (it["state"] == "waiting" || it["state"] == "held") {
				return false
			}
		}
		return true
	}, "the resent request out of the outbox")

	// Again while it waits: refused, not queued twice.
	w.tmux("send-keys", "-t", target, "-l", "echo more")
	w.waitScreen(target, "echo more")
	requireCode(t, 0, w.in(orch, "send", "--resend", id))
	r = w.in(orch, "send", "--resend", id)
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "already waits in the outbox")
	w.tmux("send-keys", "-t", target, "C-u")
}

// TestE2EMailboxQuestionAndAnswer: a QUESTION for a busy orchestrator and an ANSWER for a busy
// worker wait in their outboxes and arrive, inert, once each shell's job has ended.
func TestE2EMailboxQuestionAndAnswer(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker := w.bashPane("")
	w.send(orch, worker, "a task")

	w.startJob(orch, "sleep 3; echo orch-job-done", "sleep")
	r := w.in(worker, "ask", "--task", "t1", "--urgency", "non-blocking", "--context", "Both work.", "--option", "yes", "--option", "no", "--", "May I?")
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "queued")
	id := strings.TrimSpace(r.stdout)
	require.Regexp(t, `^t1\.q1-[0-9a-f]+$`, id)
	assert.Equal(t, "sleep", w.paneCommand(orch), "ask returned while the orchestrator was busy")
	screen := w.waitScreen(orch, "# [QUESTION from worker")
	assert.Less(t, strings.Index(screen, "\norch-job-done"), strings.Index(screen, "# [QUESTION from worker"))

	w.startJob(worker, "sleep 3; echo worker-job-done", "sleep")
	r = w.in(orch, "answer", id, "B")
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "queued")
	screen = w.waitScreen(worker, "# [ANSWER "+id)
	assert.Less(t, strings.Index(screen, "\nworker-job-done"), strings.Index(screen, "# [ANSWER "+id))
	assert.NotContains(t, screen, "command not found")
	assert.Equal(t, 1, strings.Count(screen, "# [ANSWER "+id))
}

// TestE2EMailboxHook: an agent's hook takes what waits for its pane and prints it in the form the
// agent hands to its model; nothing waiting, it prints nothing; it never fails the agent's turn.
func TestE2EMailboxHook(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch, hooks := w.hostBashPane() // the agent's hooks run in its pane
	worker := w.catPane()
	hook := func(agent, input string) result {
		return w.hookIn(hooks, nil, []byte(input), "hook", "--agent", agent)
	}
	queue := func() sent {
		s := w.send(orch, worker, "a task")
		w.tmux("copy-mode", "-t", orch) // someone reads the pane: the line waits
		requireCode(t, 0, w.in(worker, "notify", "--response", s.Response, "--", "answer"))
		return s
	}

	s := queue()
	r := hook("claude", `{"hook_event_name":"Stop","stop_hook_active":false}`)
	requireCode(t, 0, r)
	var stop struct{ Decision, Reason string }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &stop), "%s", r)
	assert.Equal(t, "block", stop.Decision)
	assert.Contains(t, stop.Reason, "[RESPONSE ")
	assert.Contains(t, stop.Reason, s.Response)
	r = hook("claude", `{"hook_event_name":"Stop","stop_hook_active":true}`)
	requireCode(t, 0, r)
	assert.Empty(t, r.stdout, "taken once: the next stop goes ahead")

	s = queue()
	r = hook("gemini", `{"hook_event_name":"BeforeAgent","prompt":"hi"}`)
	requireCode(t, 0, r)
	var ctx struct {
		HookSpecificOutput struct{ HookEventName, AdditionalContext string } `json:"hookSpecificOutput"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &ctx), "%s", r)
	assert.Equal(t, "BeforeAgent", ctx.HookSpecificOutput.HookEventName)
	assert.Contains(t, ctx.HookSpecificOutput.AdditionalContext, s.Response)

	// Bad input or an event wcomm does not handle: a word on stderr, exit 0, nothing taken.
	s = queue()
	for _, in := range []string{"not json", `{"hook_event_name":"PreToolUse"}`} {
		r = hook("codex", in)
		requireCode(t, 0, r)
		assert.Empty(t, r.stdout)
		assert.NotEmpty(t, r.stderr)
	}
	assert.Len(t, w.inboxItems(orch, "--peek"), 1, "still waiting")
	r = hook("codex", `{"hook_event_name":"UserPromptSubmit","prompt":"go on"}`)
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, s.Response)
	requireCode(t, 2, hook("vim", `{}`))
	w.tmux("send-keys", "-t", orch, "-X", "cancel")
	waitNoDeliverer(t, w.root)
	assert.NotContains(t, w.capture(orch), "# [RESPONSE", "what the hooks took is never typed in")
}
