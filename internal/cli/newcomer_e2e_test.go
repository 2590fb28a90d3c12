package cli

// What a newcomer meets first, each against the real binary and a real tmux server: doctor on a
// default socket, agent names everywhere a target is taken, script workers in panes, exit codes
// and words of the commands an orchestrator in a shell runs.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A tmux server makes its socket group-writable (0660) in a 0700 folder of its own: nobody else
// can reach it, so doctor must not call it a problem; in a folder others can enter, it is one.
func TestE2EDoctorDefaultSocketMode(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	require.NoError(t, os.Chmod(w.sock, 0o660))
	require.NoError(t, os.Chmod(w.dir, 0o700))

	r := w.in(orch, "doctor")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "problems:     none")

	require.NoError(t, os.Chmod(w.dir, 0o755))
	t.Cleanup(func() { _ = os.Chmod(w.dir, 0o700) })
	r = w.in(orch, "doctor")
	requireCode(t, 1, r)
	assert.Contains(t, r.stdout, "accessible to others")
}

// doctor --pane takes what send --to takes: an agent name found as find does, not only a pane id
// or a tmux target.
func TestE2EDoctorPaneByAgentName(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker, _, _ := w.workerPane(false)

	r := w.in(orch, "doctor", "--pane", "worker", "--json")
	requireCode(t, 0, r)
	d := decode[doctorJSON](t, r)
	require.NotNil(t, d.Pane, "%s", r)
	assert.Equal(t, worker, d.Pane.ID)

	r = w.in(orch, "doctor", "--pane", "no-such-agent")
	requireCode(t, 4, r)
}

// A worker that is a shell script shows by its script's name in panes and in find's "what runs
// where"; a script named like an agent is not taken for that agent by doctor or send.
func TestE2EScriptWorkers(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	script := "echo SCRIPT READY; while read -r line; do :; done\n"
	require.NoError(t, os.WriteFile(filepath.Join(w.work, "worker.sh"), []byte(script), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(w.work, "codex"), []byte("#!/bin/bash\n"+script), 0o700))
	sh := w.pane("", "bash", "worker.sh")
	w.waitScreen(sh, "SCRIPT READY")
	fake := w.pane("", "./codex")
	w.waitScreen(fake, "SCRIPT READY")

	r := w.in(orch, "panes", "--json")
	requireCode(t, 0, r)
	programs := map[string][]string{}
	for _, p := range decode[[]struct {
		ID       string   `json:"pane_id"`
		Programs []string `json:"programs"`
	}](t, r) {
		programs[p.ID] = p.Programs
	}
	assert.Contains(t, programs[sh], "worker.sh")
	assert.Contains(t, programs[fake], "codex")
	r = w.in(orch, "panes")
	requireCode(t, 0, r)
	assert.Regexp(t, sh+`\s+\S+\s+\S+\s+\d+\s+\S+\s+worker.sh`, r.stdout)

	r = w.in(orch, "find", "no-such-agent")
	requireCode(t, 4, r)
	assert.Contains(t, r.stderr, "worker.sh", "what runs where names the script")

	r = w.in(orch, "doctor", "--pane", fake, "--json")
	requireCode(t, 0, r)
	d := decode[doctorJSON](t, r)
	require.NotNil(t, d.Pane)
	assert.NotEqual(t, "codex", d.Pane.Detection.Profile, "a bash script named codex is not the Codex CLI: %s", d.Pane.Detection.Reason)
	assert.False(t, strings.Contains(r.stdout, "Codex CLI"), "%s", r.stdout)
}

// An orchestrator in a shell pane sees a relayed question as one line naming the command that
// shows it; questions ID and show ID show it whole, options and all.
func TestE2EQuestionSeenFromAShell(t *testing.T) {
	t.Parallel()
	q := newQWorld(t)
	q.orch = q.bashPane("")
	q.send(q.orch, q.worker, "implement the auth module")

	r := q.as(q.worker, nil, qAskArgs("task-3", "--urgency", "non-blocking")...)
	requireCode(t, 0, r)
	id := strings.TrimSpace(r.stdout)
	require.Regexp(t, `^task-3\.q1-[0-9a-f]{4}$`, id)
	screen := q.waitScreen(q.orch, "questions "+id)
	assert.Contains(t, screen, "run: wcomm questions "+id, "the line names the command that shows this question")

	want := []string{
		"QUESTION: Should the auth module use bcrypt or argon2?",
		"OPTIONS: [A: Use bcrypt (already in deps), B: Use argon2 (new dep)]",
		"CONTEXT: The plan names no hash; bcrypt is already a dependency.",
		"ID: " + id,
		"STATE: pending",
		"To answer: wcomm answer " + id + " A",
	}
	for _, args := range [][]string{{"questions", id}, {"show", id}} {
		r = q.as(q.orch, nil, args...)
		requireCode(t, 0, r)
		for _, line := range want {
			assert.Contains(t, r.stdout, line, "wcomm %s", strings.Join(args, " "))
		}
	}
	r = q.as(q.orch, nil, "questions", "--json", id)
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, `"Use argon2 (new dep)"`)

	r = q.as(q.orch, nil, "answer", id, "B")
	requireCode(t, 0, r)
	r = q.as(q.orch, nil, "show", id)
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "STATE: answered")
	assert.Contains(t, r.stdout, "ANSWER: Use argon2 (new dep) (decided by user, source local)")
	assert.NotContains(t, r.stdout, "To answer:")
}

// ask --wait bounds its wait by the settings and the environment, counted from the wait: a
// question asked non-blocking is never auto-answered for its age.
func TestE2EAskWaitTakesTheEnvironment(t *testing.T) {
	t.Parallel()
	q := newQWorld(t)
	// Asked with a timeout that has passed by the time anyone waits for it.
	r := q.as(q.worker, []string{"WCOMM_QUESTION_TIMEOUT=1ms"}, qAskArgs("task-4", "--to", q.orch, "--urgency", "non-blocking")...)
	requireCode(t, 0, r)
	id := strings.TrimSpace(r.stdout)
	q.pastes(q.orchLog, 1)

	// The environment says: wait 300ms, then time out without an answer.
	r = q.as(q.worker, []string{"WCOMM_QUESTION_TIMEOUT=300ms", "WCOMM_AUTO_ANSWER=false"}, "ask", "--wait", id)
	requireCode(t, 3, r)
	assert.Empty(t, r.stdout, "no ANSWER block: nobody answered")
	assert.Equal(t, "pending", q.question("task-4").State, "still open for the orchestrator")

	// The environment says: auto-answer when the wait ends.
	r = q.as(q.worker, []string{"WCOMM_QUESTION_TIMEOUT=300ms", "WCOMM_AUTO_ANSWER=true"}, "ask", "--wait", id)
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "DECIDED_BY: auto-timeout")
}

// ask --envelope finds the task in the request the worker is on.
func TestE2EAskEnvelopeWithoutTask(t *testing.T) {
	t.Parallel()
	q := newQWorld(t)
	s := q.send(q.orch, q.worker, "design the cache")
	file := filepath.Join(q.work, "final.md")
	require.NoError(t, os.WriteFile(file, []byte(qEnvelope(1)), 0o600))

	r := q.as(q.worker, nil, "ask", "--envelope", file, "--urgency", "non-blocking")
	requireCode(t, 0, r)
	id := strings.TrimSpace(r.stdout)
	assert.Regexp(t, `^`+s.ID+`\.q1-[0-9a-f]{4}$`, id, "the request's id is the task")
	assert.Contains(t, q.pastes(q.orchLog, 1)[0], "TASK: "+s.ID+"\n")
}

// history and show say "read" once an await has returned the response.
func TestE2EReadState(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker := w.catPane()
	s := w.send(orch, worker, "count the files")
	r := w.in(worker, "notify", "--enter-delay", "50ms", "--id", s.ID, "--", "12 files")
	requireCode(t, 0, r)

	r = w.in(orch, "history")
	requireCode(t, 0, r)
	assert.Regexp(t, s.ID+`\s+answered\s+answered\s`, r.stdout)

	r = w.in(orch, "await", s.ID, "--timeout", "10s")
	requireCode(t, 0, r)
	r = w.in(orch, "history")
	requireCode(t, 0, r)
	assert.Regexp(t, s.ID+`\s+answered\s+read\s`, r.stdout)
	r = w.in(orch, "show", s.ID)
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "status:        answered (read)")
}

// send --wait that times out still says on stdout which request went out, as send does.
func TestE2ESendWaitTimeoutPrintsID(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker := w.catPane()
	r := w.in(orch, "send", "--to", worker, "--enter-delay", "50ms", "--wait", "--timeout", "300ms", "--", "never answered")
	requireCode(t, 3, r)
	s := parseSent(t, r.stdout)
	assert.FileExists(t, s.Request)
	r = w.in(orch, "await", s.ID, "--timeout", "100ms")
	requireCode(t, 3, r)

	r = w.in(orch, "send", "--json", "--to", worker, "--enter-delay", "50ms", "--wait", "--timeout", "300ms", "--", "never answered either")
	requireCode(t, 3, r)
	x := decode[exchangeJSON](t, r)
	assert.NotEmpty(t, x.ID)
}

// notify --id from a pane that is not the request's worker is refused, and the worker's own
// notify still goes through.
func TestE2ENotifyFromAnotherPane(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker := w.catPane()
	other := w.catPane()
	s := w.send(orch, worker, "review the plan")

	r := w.in(other, "notify", "--enter-delay", "50ms", "--id", s.ID, "--", "not my request")
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "addressed to pane "+worker+", not to your pane "+other)
	assert.NoFileExists(t, s.Response)

	r = w.in(worker, "notify", "--enter-delay", "50ms", "--id", s.ID, "--", "the plan is sound")
	requireCode(t, 0, r)
	assert.Contains(t, readString(t, s.Response), "the plan is sound")
}

// Global flags stand before the command as tmux takes them; a tmux failure reads as what tmux
// said, never as its command line.
func TestE2EGlobalFlagsFirstAndTmuxErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	worker := w.catPane()
	r := w.run(call{}, "-S", w.sock, "send", "--from", "%0", "--to", worker, "--enter-delay", "50ms", "--", "hello from outside")
	requireCode(t, 0, r)
	s := parseSent(t, r.stdout)
	r = w.run(call{}, "-S", w.sock, "--json", "panes", "--all")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, `"pane_id": "`+worker+`"`)
	r = w.run(call{}, "--root", w.root, "-S", w.sock, "show", s.ID)
	requireCode(t, 0, r)

	r = w.run(call{}, "-S", w.sock, "send", "--from", "%0", "--to", "%999", "--", "to nowhere")
	requireCode(t, 4, r)
	r2 := w.run(call{}, "-S", w.sock, "doctor", "--pane", "%999")
	requireCode(t, 4, r2)
	_, problems, _ := strings.Cut(r2.stdout, "problems:")
	assert.Contains(t, problems, `no pane "%999" on this tmux server`, "one sentence in wcomm's words, not tmux's stderr")
	for _, out := range []string{r.stderr, problems} {
		assert.NotContains(t, out, "#{", "no tmux format in a message")
		assert.NotContains(t, out, "-F ", "no tmux command line in a message")
	}
}
