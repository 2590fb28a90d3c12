package cli

// End-to-end tests of the question relay: ask, answer and questions, the built binary
// against a private tmux server (harness_test.go). The orchestrator and the worker are cat panes,
// so every paste shows on their screens; the asks run "inside" the worker's pane.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/bridge/lockfile"
)

// qWorld is a world with an orchestrator pane and a worker pane, and the environment of every
// wcomm call: no settings file from the user's home, a short enter delay. Both panes run the
// recorder of bracketed pastes, so a test sees each paste whole, with the Enter that submitted it.
type qWorld struct {
	*world
	orch, worker       string
	orchLog, workerLog string
	env                []string
}

func newQWorld(t *testing.T) *qWorld {
	t.Helper()
	w := newWorld(t)
	q := &qWorld{world: w, env: []string{"XDG_CONFIG_HOME=" + t.TempDir(), "HOME=" + t.TempDir(), "WCOMM_ENTER_DELAY=20ms"}}
	q.orch, q.orchLog = w.recorderPane()
	q.worker, q.workerLog = w.recorderPane()
	// A bridge an ask or a hook started may still be writing into the root when the test ends
	// (it ends by itself once idle): wait for it before the root is removed, whose removal would
	// otherwise fail "directory not empty". Registered after the root, so it runs before.
	t.Cleanup(func() {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) && slices.ContainsFunc(lockfile.Keys(w.root), func(k string) bool { return lockfile.Running(w.root, k) }) {
			time.Sleep(50 * time.Millisecond) // a poll's interval
		}
	})
	return q
}

// pastes waits until a recorder logged n events and returns the texts of its pastes, each of which
// must have been submitted with Enter; the LF that paste-buffer turned into CR are LF again.
func (q *qWorld) pastes(log string, n int) []string {
	q.t.Helper()
	var out []string
	for _, e := range waitRecorded(q.t, log, n) {
		p, ok := e["paste"].(string)
		require.True(q.t, ok, "not a paste: %v", e)
		assert.Equal(q.t, true, e["enter"], "a paste without its Enter: %v", e)
		out = append(out, strings.ReplaceAll(p, "\r", "\n"))
	}
	return out
}

// as runs wcomm inside pane ("" = outside any pane), always naming the test's server.
func (q *qWorld) as(pane string, env []string, args ...string) result {
	q.t.Helper()
	return q.run(call{pane: pane, env: append(append([]string(nil), q.env...), env...)}, q.withSocket(args)...)
}

func (q *qWorld) startAs(pane string, env []string, args ...string) *bg {
	q.t.Helper()
	return q.start(call{pane: pane, env: append(append([]string(nil), q.env...), env...)}, q.withSocket(args)...)
}

// withSocket puts -S right after the command name, before any "--".
func (q *qWorld) withSocket(args []string) []string {
	return append([]string{args[0], "-S", q.sock}, args[1:]...)
}

// askArgs is a numbered question of task with the seed's two options.
func qAskArgs(task string, extra ...string) []string {
	args := []string{"ask", "--task", task, "--context", "The plan names no hash; bcrypt is already a dependency.",
		"--option", "Use bcrypt (already in deps)", "--option", "Use argon2 (new dep)"}
	args = append(args, extra...)
	return append(args, "--", "Should the auth module use bcrypt or argon2?")
}

// qJSON is one question as `questions --json` prints it.
type qJSON struct {
	ID       string    `json:"id"`
	Task     string    `json:"task_id"`
	Seq      int       `json:"seq"`
	Question string    `json:"question"`
	Options  []string  `json:"options"`
	State    string    `json:"state"`
	Reason   string    `json:"reason"`
	Worker   string    `json:"worker"`
	Exchange string    `json:"exchange"`
	AskedAt  time.Time `json:"asked_at"`
	Dir      string    `json:"dir"`
	Answer   *struct {
		Answer    string `json:"answer"`
		Raw       string `json:"raw"`
		DecidedBy string `json:"decided_by"`
		Source    string `json:"source"`
		Form      string `json:"form"`
	} `json:"answer"`
}

func (j qJSON) waitLock() string {
	return filepath.Join(j.Dir, fmt.Sprintf(".%s.q%d.wait.lock", j.Task, j.Seq))
}

func (j qJSON) file(suffix string) string {
	return filepath.Join(j.Dir, fmt.Sprintf("%s.q%d.%s", j.Task, j.Seq, suffix))
}

// questions lists the questions (all, or pending only).
func (q *qWorld) questions(pending bool) []qJSON {
	q.t.Helper()
	args := []string{"questions", "--json"}
	if pending {
		args = append(args, "--pending")
	}
	r := q.as("", nil, args...)
	requireCode(q.t, 0, r)
	var out struct {
		Questions []qJSON  `json:"questions"`
		Problems  []string `json:"problems"`
	}
	require.NoError(q.t, json.Unmarshal([]byte(r.stdout), &out), "%s", r)
	assert.Empty(q.t, out.Problems)
	return out.Questions
}

// question returns the question of task, failing when there is none.
func (q *qWorld) question(task string) qJSON {
	q.t.Helper()
	for _, j := range q.questions(false) {
		if j.Task == task {
			return j
		}
	}
	q.t.Fatalf("no question of task %s", task)
	return qJSON{}
}

// waitAsking waits until the background ask b waits on a question of task, and returns it.
func (q *qWorld) waitAsking(b *bg, task string) qJSON {
	q.t.Helper()
	var found qJSON
	waitFor(q.t, 15*time.Second, func() bool {
		if b.exited() {
			q.t.Fatalf("ask ended before it waited: %s", b.wait(q.t, time.Second))
		}
		for _, j := range q.questions(true) {
			// Waiting: its lock is held and the question has been pasted to the orchestrator.
			if j.Task == task && flocked(j.waitLock()) && strings.Contains(strings.Join(qStates(qLog(q.t, j)), " "), "delivered") {
				found = j
				return true
			}
		}
		return false
	}, "an ask waiting on a question of task %s", task)
	return found
}

func qAnswerBlock(text, task, by, id string) string {
	return fmt.Sprintf("ANSWER: %s\nTASK: %s\nDECIDED_BY: %s\nID: %s\n", text, task, by, id)
}

func qLog(t *testing.T, j qJSON) []map[string]any {
	t.Helper()
	return jsonLines(t, j.file("answers.jsonl"))
}

func qStates(entries []map[string]any) []string {
	var out []string
	for _, e := range entries {
		out = append(out, fmt.Sprint(e["state"]))
	}
	return out
}

func TestE2EQuestionAskAnsweredFromAnotherPane(t *testing.T) {
	t.Parallel()
	q := newQWorld(t)
	s := q.send(q.orch, q.worker, "implement the auth module")
	human := q.bashPane("")

	b := q.startAs(q.worker, nil, qAskArgs("task-3")...)
	j := q.waitAsking(b, "task-3")
	assert.Regexp(t, `^task-3\.q1-[0-9a-f]{4}$`, j.ID)
	assert.Equal(t, s.ID, j.Exchange, "the question ties to the request the worker is on")
	assert.Equal(t, s.Dir, j.Dir)
	assert.Equal(t, q.worker, j.Worker)
	assert.Equal(t, os.FileMode(0o600), mode(t, j.file("question")))

	assert.Equal(t, []string{"[QUESTION from worker " + q.worker + "]\n" +
		"QUESTION: Should the auth module use bcrypt or argon2?\n" +
		"TASK: task-3\n" +
		"URGENCY: blocking\n" +
		"OPTIONS: [A: Use bcrypt (already in deps), B: Use argon2 (new dep)]\n" +
		"CONTEXT: The plan names no hash; bcrypt is already a dependency.\n" +
		"ID: " + j.ID + "\n" +
		"To answer: wcomm answer " + j.ID + " A   (accepted: a letter A-B, a number 1-2, or an option's exact text)"},
		q.pastes(q.orchLog, 1))

	// The answer is typed in another pane (a person's shell), as keys: harmless text on purpose.
	q.tmux("send-keys", "-t", human, "-l", `"$WCOMM_BIN" answer `+j.ID+" B")
	q.tmux("send-keys", "-t", human, "Enter")
	r := b.wait(t, 20*time.Second)
	requireCode(t, 0, r)
	assert.Equal(t, qAnswerBlock("Use argon2 (new dep)", "task-3", "user", j.ID), r.stdout)
	q.waitScreen(human, "the worker's waiting ask (pane "+q.worker+") woke on the answer")

	got := q.question("task-3")
	assert.Equal(t, "answered", got.State)
	require.NotNil(t, got.Answer)
	assert.Equal(t, "B", got.Answer.Raw)
	assert.Equal(t, "letter", got.Answer.Form)
	assert.Equal(t, "local", got.Answer.Source)
	// A waiting ask is the signal: nothing was pasted into the worker's pane but the request.
	assert.Equal(t, []string{"asked", "delivered", "accepted", "ask-woken"}, qStates(qLog(t, got)))
	assert.Len(t, jsonLines(t, q.workerLog), 1)
}

func TestE2EQuestionNumberedAnswerForms(t *testing.T) {
	t.Parallel()
	q := newQWorld(t)
	tests := []struct {
		name, raw, want, form string
	}{
		{"by number", "2", "Use argon2 (new dep)", "number"},
		{"by letter", "a", "Use bcrypt (already in deps)", "letter"},
		{"by text", "use argon2 (NEW dep)", "Use argon2 (new dep)", "text"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := "forms-" + strconv.Itoa(i)
			b := q.startAs(q.worker, nil, qAskArgs(task, "--to", q.orch)...)
			j := q.waitAsking(b, task)
			// From no pane at all: the answer needs none.
			r := q.as("", nil, "answer", j.ID, tt.raw, "--source", "telegram")
			requireCode(t, 0, r)
			assert.Equal(t, j.ID+" answered: "+tt.want+"\n", r.stdout)
			r = b.wait(t, 20*time.Second)
			requireCode(t, 0, r)
			assert.Equal(t, qAnswerBlock(tt.want, task, "user", j.ID), r.stdout)
			got := q.question(task)
			assert.Equal(t, tt.form, got.Answer.Form)
			assert.Equal(t, "telegram", got.Answer.Source)
		})
	}
}

func TestE2EQuestionInvalidAnswerThenValid(t *testing.T) {
	t.Parallel()
	q := newQWorld(t)
	b := q.startAs(q.worker, nil, qAskArgs("task-3", "--to", q.orch)...)
	j := q.waitAsking(b, "task-3")

	r := q.as("", nil, "answer", j.ID, "D")
	requireCode(t, 2, r)
	assert.Contains(t, r.stderr, `answer "D" does not fit this numbered question; accepted: a letter A-B, a number 1-2, or an option's exact text`)
	assert.Contains(t, r.stderr, "the question stays open")
	_, err := os.Stat(j.file("answer"))
	assert.True(t, os.IsNotExist(err), "an invalid answer does not consume the question")
	assert.Equal(t, "pending", q.question("task-3").State)
	assert.False(t, b.exited())

	r = q.as("", nil, "answer", j.ID, "A")
	requireCode(t, 0, r)
	r = b.wait(t, 20*time.Second)
	requireCode(t, 0, r)
	assert.Equal(t, qAnswerBlock("Use bcrypt (already in deps)", "task-3", "user", j.ID), r.stdout)
	assert.Equal(t, []string{"asked", "delivered", "invalid", "accepted", "ask-woken"}, qStates(qLog(t, j)))
}

func TestE2EQuestionRacingAnswers(t *testing.T) {
	t.Parallel()
	q := newQWorld(t)
	b := q.startAs(q.worker, nil, qAskArgs("task-3", "--to", q.orch)...)
	j := q.waitAsking(b, "task-3")

	first := q.startAs("", nil, "answer", j.ID, "A", "--source", "local")
	second := q.startAs("", nil, "answer", j.ID, "B", "--source", "telegram")
	r1, r2 := first.wait(t, 20*time.Second), second.wait(t, 20*time.Second)
	codes := []int{r1.code, r2.code}
	require.ElementsMatch(t, []int{0, 1}, codes, "%s\n%s", r1, r2)
	winner, loser, want := r1, r2, "Use bcrypt (already in deps)"
	if r2.code == 0 {
		winner, loser, want = r2, r1, "Use argon2 (new dep)"
	}
	assert.Equal(t, j.ID+" answered: "+want+"\n", winner.stdout)
	assert.Contains(t, loser.stderr, "the first answer stands; your answer was recorded as stale and changed nothing")

	r := b.wait(t, 20*time.Second)
	requireCode(t, 0, r)
	assert.Equal(t, qAnswerBlock(want, "task-3", "user", j.ID), r.stdout)
	states := strings.Join(qStates(qLog(t, j)), " ")
	assert.Equal(t, 1, strings.Count(states, "accepted"), states)
	assert.Equal(t, 1, strings.Count(states, "stale"), states)
	// A late answer changes nothing, and is recorded too.
	r = q.as("", nil, "answer", j.ID, "1")
	requireCode(t, 1, r)
	assert.Equal(t, want, q.question("task-3").Answer.Answer)
	assert.Equal(t, 2, strings.Count(strings.Join(qStates(qLog(t, j)), " "), "stale"))
}

func TestE2EQuestionTimeout(t *testing.T) {
	t.Parallel()
	q := newQWorld(t)
	tests := []struct {
		name string
		args []string
		env  []string
		code int
	}{
		{"auto-answer takes option A", []string{"--timeout", "1s"}, nil, 0},
		{"auto-answer off by flag", []string{"--timeout", "1s", "--auto-answer=false"}, nil, 3},
		{"auto-answer off by the environment", nil, []string{"WCOMM_AUTO_ANSWER=off", "WCOMM_QUESTION_TIMEOUT=1s"}, 3},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := "timeout-" + strconv.Itoa(i)
			start := time.Now()
			r := q.as(q.worker, tt.env, qAskArgs(task, append([]string{"--to", q.orch}, tt.args...)...)...)
			elapsed := time.Since(start)
			requireCode(t, tt.code, r)
			assert.GreaterOrEqual(t, elapsed, time.Second)
			j := q.question(task)
			if tt.code == 0 {
				assert.Equal(t, qAnswerBlock("Use bcrypt (already in deps)", task, "auto-timeout", j.ID), r.stdout)
				assert.Contains(t, r.stderr, `mark the choice "assumed — needs review"`)
				assert.Equal(t, "auto-answered", j.State)
				return
			}
			assert.Empty(t, r.stdout)
			assert.Equal(t, "wcomm ask: no answer to "+j.ID+" within 1s; the question stays pending: 'wcomm ask --wait "+j.ID+
				"' fetches the answer later, and an answer that comes while no ask waits is pasted into this pane; "+
				`continue on your best judgment and mark the choice "assumed — needs review"`+"\n", r.stderr)
			assert.Equal(t, "pending", j.State)
		})
	}
}

func TestE2EQuestionCap(t *testing.T) {
	t.Parallel()
	q := newQWorld(t)
	for i := 1; i <= 3; i++ {
		r := q.as(q.worker, nil, qAskArgs("task-3", "--to", q.orch, "--urgency", "non-blocking")...)
		requireCode(t, 0, r)
		assert.Regexp(t, fmt.Sprintf(`^task-3\.q%d-[0-9a-f]{4}\n$`, i), r.stdout)
	}
	start := time.Now()
	r := q.as(q.worker, nil, qAskArgs("task-3", "--to", q.orch)...)
	requireCode(t, 0, r)
	assert.Less(t, time.Since(start), 10*time.Second, "the fourth question is answered at once")
	j := q.questions(false)[3]
	assert.Equal(t, "cap-exceeded", j.State)
	assert.Equal(t, qAnswerBlock(`Question cap exceeded (at most 3 questions per worker per task). Make the decision yourself and mark it "assumed — needs review" in your report.`,
		"task-3", "cap-exceeded", j.ID), r.stdout)
	for _, p := range q.pastes(q.orchLog, 3) {
		assert.NotContains(t, p, "ID: "+j.ID, "a capped question is not relayed")
	}
	// The cap comes from the settings: a fifth with a higher cap is relayed.
	r = q.as(q.worker, []string{"WCOMM_MAX_QUESTIONS=5"}, qAskArgs("task-3", "--to", q.orch, "--urgency", "non-blocking")...)
	requireCode(t, 0, r)
	assert.Regexp(t, `^task-3\.q5-[0-9a-f]{4}\n$`, r.stdout)
}

func TestE2EQuestionNonBlocking(t *testing.T) {
	t.Parallel()
	q := newQWorld(t)
	start := time.Now()
	r := q.as(q.worker, nil, qAskArgs("task-3", "--to", q.orch, "--urgency", "non-blocking", "--timeout", "10m")...)
	requireCode(t, 0, r)
	assert.Less(t, time.Since(start), 10*time.Second)
	id := strings.TrimSpace(r.stdout)
	assert.Regexp(t, `^task-3\.q1-[0-9a-f]{4}$`, id)
	assert.Contains(t, r.stderr, "wcomm ask --wait "+id)
	assert.Contains(t, q.pastes(q.orchLog, 1)[0], "URGENCY: non-blocking\n")

	// No ask waits: the answer is pasted into the worker's pane.
	r = q.as(q.orch, nil, "answer", id, "Use bcrypt (already in deps)")
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "the ANSWER block was pasted into worker pane "+q.worker)
	assert.Equal(t, []string{"ANSWER: Use bcrypt (already in deps)\nTASK: task-3\nDECIDED_BY: user\nID: " + id}, q.pastes(q.workerLog, 1))

	// ask --wait fetches it later, at once.
	r = q.as(q.worker, nil, "ask", "--wait", id)
	requireCode(t, 0, r)
	assert.Equal(t, qAnswerBlock("Use bcrypt (already in deps)", "task-3", "user", id), r.stdout)
	assert.Equal(t, []string{"asked", "delivered", "accepted", "answer-pasted"}, qStates(qLog(t, q.question("task-3"))))
}

// qEnvelope is an agent's final message with an envelope of n questions.
func qEnvelope(n int) string {
	var qs []string
	for i := 0; i < n; i++ {
		qs = append(qs, fmt.Sprintf(`    {"question": "Question %d?", "header": "H%d", "options": [{"label": "yes %d", "description": "go on"}, {"label": "no %d"}]}`, i+1, i+1, i+1, i+1))
	}
	return "I need decisions before I write the design.\n```json\n{\"openQuestions\": [\n" + strings.Join(qs, ",\n") + "\n]}\n```\n```json\n{\"summary\": \"not the envelope\"}\n```\n"
}

func TestE2EQuestionEnvelope(t *testing.T) {
	t.Parallel()
	q := newQWorld(t)
	write := func(name, text string) string {
		p := filepath.Join(q.work, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}

	t.Run("one question, blocking, from stdin", func(t *testing.T) {
		b := q.start(call{pane: q.worker, env: q.env, stdin: []byte(qEnvelope(1))}, "ask", "--task", "env-1", "--to", q.orch, "--envelope", "-", "-S", q.sock)
		j := q.waitAsking(b, "env-1")
		assert.Equal(t, "H1: Question 1?", j.Question)
		assert.Equal(t, []string{"yes 1", "no 1"}, j.Options)
		assert.Contains(t, q.pastes(q.orchLog, 1)[0], "OPTIONS: [A: yes 1 — go on, B: no 1]\n")
		requireCode(t, 0, q.as("", nil, "answer", j.ID, "no 1"))
		r := b.wait(t, 20*time.Second)
		requireCode(t, 0, r)
		assert.Equal(t, qAnswerBlock("no 1", "env-1", "user", j.ID), r.stdout)
	})

	t.Run("four questions in one paste", func(t *testing.T) {
		file := write("four.md", qEnvelope(4))
		r := q.as(q.worker, []string{"WCOMM_MAX_QUESTIONS=4"}, "ask", "--task", "env-4", "--to", q.orch, "--envelope", file, "--urgency", "non-blocking")
		requireCode(t, 0, r)
		ids := strings.Fields(r.stdout)
		require.Len(t, ids, 4, "%s", r)
		for i, id := range ids {
			assert.Regexp(t, fmt.Sprintf(`^env-4\.q%d-[0-9a-f]{4}$`, i+1), id)
		}
		// One paste for the whole envelope, after the first subtest's.
		all := q.pastes(q.orchLog, 2)
		require.Len(t, all, 2)
		paste := all[1]
		assert.True(t, strings.HasPrefix(paste, "[QUESTION from worker "+q.worker+"]\nQUESTION: H1: Question 1?\n"), paste)
		assert.Equal(t, 4, strings.Count(paste, "\nQUESTION: "))
		for i, id := range ids {
			assert.Contains(t, paste, fmt.Sprintf("OPTIONS: [A: yes %d — go on, B: no %d]\nCONTEXT: Question %d of 4 from the agent's openQuestions envelope.\nID: %s\n", i+1, i+1, i+1, id))
		}
	})

	t.Run("five questions", func(t *testing.T) {
		file := write("five.md", qEnvelope(5))
		r := q.as(q.worker, nil, "ask", "--task", "env-5", "--to", q.orch, "--envelope", file)
		requireCode(t, 1, r)
		assert.Equal(t, "wcomm ask: "+file+`:2: openQuestions: 5 questions; at most 4 per envelope (split them, or defer the rest to a "## Open questions (deferred)" section) (fix the envelope and run ask --envelope again); continue on your best judgment and mark the choice "assumed — needs review"`+"\n", r.stderr)
		assert.Empty(t, r.stdout)
	})

	t.Run("malformed", func(t *testing.T) {
		file := write("bad.md", "Here.\n```json\n{\"openQuestions\": [{\"question\": \"q?\", \"options\": [{\"label\": \"a\"}, {\"description\": \"no label\"}]}]}\n```\n")
		r := q.as(q.worker, nil, "ask", "--task", "env-bad", "--to", q.orch, "--envelope", file)
		requireCode(t, 1, r)
		assert.Contains(t, r.stderr, "wcomm ask: "+file+`:2: openQuestions[0].options[1]: missing "label" (the user has nothing to pick)`)
		file = write("broken.md", "```json\n{\"openQuestions\": [\n  {\"question\": \"q?\",,}\n]}\n```\n")
		r = q.as(q.worker, nil, "ask", "--task", "env-bad", "--to", q.orch, "--envelope", file)
		requireCode(t, 1, r)
		assert.Contains(t, r.stderr, "wcomm ask: "+file+":3: malformed JSON: invalid character ',' looking for beginning of object key string")
	})

	t.Run("no envelope", func(t *testing.T) {
		file := write("none.md", "All done.\n```json\n{\"summary\": \"ok\"}\n```\n")
		r := q.as(q.worker, nil, "ask", "--task", "env-none", "--to", q.orch, "--envelope", file)
		requireCode(t, 0, r)
		assert.Empty(t, r.stdout)
		assert.Contains(t, r.stderr, "nothing to ask")
	})

	for _, j := range q.questions(false) {
		assert.NotContains(t, []string{"env-5", "env-bad", "env-none"}, j.Task, "nothing is stored for a refused envelope")
	}
}

func TestE2EQuestionSurvivesKilledAsk(t *testing.T) {
	t.Parallel()
	q := newQWorld(t)
	b := q.startAs(q.worker, nil, qAskArgs("task-3", "--to", q.orch, "--timeout", "5m")...)
	j := q.waitAsking(b, "task-3")
	require.NoError(t, b.cmd.Process.Kill())
	b.wait(t, 10*time.Second)
	assert.False(t, flocked(j.waitLock()), "the kernel dropped the dead ask's lock")

	pending := q.questions(true)
	require.Len(t, pending, 1)
	assert.Equal(t, j.ID, pending[0].ID)
	r := q.as("", nil, "questions", "--pending")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, j.ID)
	assert.Contains(t, r.stdout, "pending")

	// ask --wait picks the question up again and wakes on the answer.
	w := q.startAs(q.worker, nil, "ask", "--wait", j.ID, "--timeout", "1m")
	waitFor(t, 15*time.Second, func() bool { return flocked(j.waitLock()) }, "ask --wait to wait on %s", j.ID)
	r = q.as("", nil, "answer", j.ID, "2")
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "woke on the answer")
	r = w.wait(t, 20*time.Second)
	requireCode(t, 0, r)
	assert.Equal(t, qAnswerBlock("Use argon2 (new dep)", "task-3", "user", j.ID), r.stdout)
}

func TestE2EQuestionResolve(t *testing.T) {
	t.Parallel()
	q := newQWorld(t)
	b := q.startAs(q.worker, nil, qAskArgs("task-3", "--to", q.orch)...)
	j := q.waitAsking(b, "task-3")

	requireCode(t, 2, q.as("", nil, "questions", "resolve", j.ID))
	r := q.as("", nil, "questions", "resolve", j.ID, "--reason", "the task was cancelled")
	requireCode(t, 0, r)
	assert.Equal(t, j.ID+" resolved: the task was cancelled\n", r.stdout)

	r = b.wait(t, 20*time.Second)
	requireCode(t, 1, r)
	assert.Empty(t, r.stdout)
	assert.Equal(t, "wcomm ask: question "+j.ID+` was closed without an answer (the task was cancelled); continue on your best judgment and mark the choice "assumed — needs review"`+"\n", r.stderr)

	got := q.question("task-3")
	assert.Equal(t, "resolved", got.State)
	assert.Equal(t, "the task was cancelled", got.Reason)
	assert.Nil(t, got.Answer, "resolve invents no answer")
	r = q.as("", nil, "answer", j.ID, "A")
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "resolved without an answer")
	assert.Empty(t, q.questions(true))
}

func TestE2EQuestionGitBinding(t *testing.T) {
	t.Parallel()
	_, err := exec.LookPath("git")
	require.NoError(t, err, "the git binding test needs git")
	q := newQWorld(t)
	repo := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	git("init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "main.go"), []byte("package main\n"), 0o600))
	git("add", "main.go")
	git("commit", "-q", "-m", "first")

	r := q.as(q.worker, nil, qAskArgs("deploy", "--to", q.orch, "--urgency", "non-blocking", "--bind-git", "--dir", repo)...)
	requireCode(t, 0, r)
	id := strings.TrimSpace(r.stdout)
	assert.Contains(t, q.pastes(q.orchLog, 1)[0], "(bound to the git state of "+repo+": an answer after it changes is refused as stale)")

	require.NoError(t, os.WriteFile(filepath.Join(repo, "main.go"), []byte("package main // changed\n"), 0o600))
	r = q.as("", nil, "answer", id, "A")
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "question "+id+": the git state of "+repo+" changed since the question: the work tree differs")
	assert.Contains(t, r.stderr, "recorded as stale")
	j := q.question("deploy")
	assert.Equal(t, "stale", j.State)
	assert.Contains(t, j.Reason, "the work tree differs")
	assert.Empty(t, q.questions(true), "a stale question is not surfaced")
	assert.Equal(t, []string{"asked", "delivered", "stale"}, qStates(qLog(t, j)))

	// Outside a git work tree, --bind-git refuses to ask.
	r = q.as(q.worker, nil, qAskArgs("deploy-2", "--to", q.orch, "--bind-git", "--dir", t.TempDir())...)
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "not inside a git work tree")
	assert.True(t, strings.HasSuffix(r.stderr, `continue on your best judgment and mark the choice "assumed — needs review"`+"\n"))
}

func TestE2EQuestionOnQuestionHook(t *testing.T) {
	t.Parallel()
	q := newQWorld(t)
	out := filepath.Join(q.work, "hook-out.json")
	cfg := "question_relay:\n  max_questions_per_worker: 2\non_question: tee '" + out + "'\non_question_timeout: 5s\n"
	require.NoError(t, os.WriteFile(filepath.Join(q.work, ".wcomm.yaml"), []byte(cfg), 0o600))
	// Untrusted, the project file's hook is ignored, and ask says so.
	r := q.as(q.worker, nil, qAskArgs("task-2", "--to", q.orch, "--urgency", "non-blocking")...)
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "is not trusted: wcomm ignores its on_question;")
	assert.NoFileExists(t, out)
	requireCode(t, 0, q.asPerson(nil, "trust"))

	r = q.as(q.worker, nil, qAskArgs("task-3", "--to", q.orch, "--urgency", "non-blocking")...)
	requireCode(t, 0, r)
	id := strings.TrimSpace(r.stdout)
	data, err := os.ReadFile(out)
	require.NoError(t, err, "the hook ran before ask returned")
	var got qJSON
	require.NoError(t, json.Unmarshal(data, &got), "%s", data)
	assert.Equal(t, id, got.ID)
	assert.Equal(t, "Should the auth module use bcrypt or argon2?", got.Question)
	assert.Equal(t, []string{"Use bcrypt (already in deps)", "Use argon2 (new dep)"}, got.Options)
	assert.Equal(t, "pending", got.State)
	assert.Equal(t, q.worker, got.Worker)
	assert.Contains(t, qStates(qLog(t, got)), "hook-ran")

	// A failing hook is logged, not fatal; the settings file's cap applies.
	require.NoError(t, os.WriteFile(filepath.Join(q.work, ".wcomm.yaml"), []byte("question_relay:\n  max_questions_per_worker: 2\non_question: 'false'\n"), 0o600))
	requireCode(t, 0, q.asPerson(nil, "trust", ".wcomm.yaml"))
	r = q.as(q.worker, nil, qAskArgs("task-3", "--to", q.orch, "--urgency", "non-blocking")...)
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "warning: on_question for task-3.q2-")
	r = q.as(q.worker, nil, qAskArgs("task-3", "--to", q.orch, "--urgency", "non-blocking")...)
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "DECIDED_BY: cap-exceeded")

	// A broken settings file stops ask with file:line and the best-judgment line.
	require.NoError(t, os.WriteFile(filepath.Join(q.work, ".wcomm.yaml"), []byte("question_relay:\n  timeout_secs: 5\n"), 0o600))
	r = q.as(q.worker, nil, qAskArgs("task-9", "--to", q.orch)...)
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, ".wcomm.yaml:2: field timeout_secs not found")
	assert.Contains(t, r.stderr, "best judgment")
}

// permissionListed waits up to d for the pending permission question whose text holds command,
// and says in the log how long it took.
func (q *qWorld) permissionListed(command string, d time.Duration) qJSON {
	q.t.Helper()
	var found qJSON
	start := time.Now()
	waitFor(q.t, d, func() bool {
		var ok bool
		found, ok = q.findPermission(command)
		return ok
	}, "the permission question of %q listed", command)
	q.t.Logf("%q listed %s after its dialog showed", command, time.Since(start).Round(time.Millisecond))
	return found
}

// findPermission is the pending permission question whose text holds command, if one is listed.
func (q *qWorld) findPermission(command string) (qJSON, bool) {
	for _, j := range q.questions(true) {
		if j.Task == "permission" && strings.Contains(j.Question, command) {
			return j, true
		}
	}
	return qJSON{}, false
}

// answeredQ waits for question id to have an answer.
func (q *qWorld) answeredQ(id string) qJSON {
	q.t.Helper()
	var got qJSON
	waitFor(q.t, 10*time.Second, func() bool {
		for _, j := range q.questions(false) {
			if j.ID == id && j.Answer != nil {
				got = j
				return true
			}
		}
		return false
	}, "question %s answered", id)
	return got
}
