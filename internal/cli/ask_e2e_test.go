package cli

// ask and the questions it relays, against the real binary and a real tmux server: a question seen
// from an orchestrator in a shell, ask --wait's bound, ask --envelope finding its task.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
