//go:build agents

package cli

// Codex's approvals relayed to the person through its own door, with the real Codex (approval
// policy on-request, a read-only sandbox, its app-server daemon) against the scripted model, which
// asks to run a command outside the sandbox. The console runs in a pane of the test's server, so
// its sentry follows Codex's thread: each approval is a permission question, answered with
// 'wcomm answer' or by the person in the pane. The files the commands make, the model's request
// log and the questions' logs are the ground truth.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// codexDialog is the first line of Codex's approval dialog (0.169.0).
const codexDialog = "Would you like to run the following command?"

func TestAgentsCodexApproval(t *testing.T) {
	installed := installAgents(t)
	w := newWorld(t)
	m := startModel(t, w.work)
	pane := w.agentPaneEnv("codex", installed, m, []string{"CODEX_DAEMON=1", "CODEX_APPROVAL=on-request"})
	home := codexHomeOf(t, w, pane)
	t.Cleanup(func() { stopCodexDaemon(home) })
	q := &qWorld{world: w, env: []string{"XDG_CONFIG_HOME=" + t.TempDir(), "HOME=" + t.TempDir()}}
	u := q.openUI(nil, 120, 40)
	work := filepath.Join(w.work, "work-codex")
	file := func(name string) string { return filepath.Join(work, name) }
	screen := func() string { return w.tmux("capture-pane", "-p", "-t", pane) }

	// prompt types a prompt into Codex as a person does and waits for its approval dialog.
	prompt := func(name string) time.Time {
		t.Helper()
		text := "ESCALATE: touch " + file(name)
		w.tmux("send-keys", "-t", pane, "-l", text)
		w.waitScreen(pane, text)
		w.tmux("send-keys", "-t", pane, "Enter")
		waitFor(t, 60*time.Second, func() bool {
			s := screen()
			return strings.Contains(s, codexDialog) && strings.Contains(s, name)
		}, "Codex's approval dialog for %s; screen:\n%s", name, screen())
		return time.Now()
	}
	// listed waits for the pending permission question of the command that touches name.
	listed := func(name string, shown time.Time) qJSON {
		t.Helper()
		var found qJSON
		waitFor(t, 10*time.Second, func() bool {
			for _, j := range q.questions(true) {
				if j.Task == "permission" && strings.Contains(j.Question, "touch "+file(name)) {
					found = j
					return true
				}
			}
			return false
		}, "the permission question of %s listed", name)
		t.Logf("%s listed %s after its dialog showed", name, time.Since(shown).Round(time.Millisecond))
		assert.Equal(t, []string{"allow", "deny"}, found.Options, "no 'always': Codex offers a lasting rule only")
		assert.Contains(t, found.Question, "codex in pane "+pane)
		return found
	}
	closed := func(what string) {
		t.Helper()
		waitFor(t, 15*time.Second, func() bool { return !strings.Contains(screen(), codexDialog) }, "the dialog to close after %s; screen:\n%s", what, screen())
	}
	idle := func(what string) {
		t.Helper()
		waitFor(t, 60*time.Second, func() bool {
			s := screen()
			return !strings.Contains(s, codexDialog) && strings.Contains(s, "Ask Codex to do anything")
		}, "the turn to end after %s; screen:\n%s", what, screen())
	}
	states := func(j qJSON) string { return strings.Join(qStates(qLog(t, j)), " ") }
	requests := func() string {
		data, _ := os.ReadFile(filepath.Join(w.work, "requests.jsonl"))
		return string(data)
	}

	t.Run("allow runs the command and closes the dialog", func(t *testing.T) {
		shown := prompt("c-allow.txt")
		j := listed("c-allow.txt", shown)
		answered := time.Now()
		requireCode(t, 0, q.asPerson(nil, "answer", j.ID, "allow"))
		waitFor(t, 15*time.Second, func() bool { _, err := os.Stat(file("c-allow.txt")); return err == nil }, "the command to run")
		t.Logf("answer → command ran %s", time.Since(answered).Round(time.Millisecond))
		closed("the answer")
		idle("the allowed command")
		waitFor(t, 10*time.Second, func() bool { return strings.Contains(states(j), "decision-applied") }, "the question's log to say the decision was applied: %s", states(j))
	})

	t.Run("deny with a message: not run, the model is told", func(t *testing.T) {
		rejectedBefore := strings.Count(requests(), "rejected by user")
		shown := prompt("c-deny.txt")
		j := listed("c-deny.txt", shown)
		requireCode(t, 0, q.asPerson(nil, "answer", j.ID, "deny", "--message", "DENIED-BY-TEST use the staging folder"))
		closed("the deny")
		waitFor(t, 20*time.Second, func() bool {
			r := requests()
			return strings.Count(r, "rejected by user") > rejectedBefore && strings.Contains(r, "DENIED-BY-TEST use the staging folder")
		}, "the model to see the rejection and the message")
		idle("the denied command")
		assert.NoFileExists(t, file("c-deny.txt"))
		log := states(j)
		assert.Contains(t, log, "decision-applied")
		assert.Contains(t, log, "message-delivered")
	})

	t.Run("y at the terminal: answered there, a later answer too late", func(t *testing.T) {
		shown := prompt("c-terminal.txt")
		j := listed("c-terminal.txt", shown)
		pressed := time.Now()
		w.tmux("send-keys", "-t", pane, "y") // the person, in the pane
		var got qJSON
		waitFor(t, 10*time.Second, func() bool {
			for _, x := range q.questions(false) {
				if x.ID == j.ID && x.Answer != nil {
					got = x
					return true
				}
			}
			return false
		}, "question %s answered at the terminal", j.ID)
		t.Logf("answered at the terminal, seen %s after the key", time.Since(pressed).Round(time.Millisecond))
		assert.Equal(t, "terminal", got.Answer.Source)
		assert.Equal(t, "allow", got.Answer.Answer)
		waitFor(t, 15*time.Second, func() bool { _, err := os.Stat(file("c-terminal.txt")); return err == nil }, "the command to run")
		idle("the terminal's yes")
		late := q.as("", nil, "answer", j.ID, "deny")
		assert.NotEqual(t, 0, late.code, "%s", late)
		assert.Contains(t, late.stderr, "too late")
		assert.Contains(t, states(j), "answered-at-terminal")
	})

	t.Run("Esc at the terminal: denied there", func(t *testing.T) {
		shown := prompt("c-esc.txt")
		j := listed("c-esc.txt", shown)
		w.tmux("send-keys", "-t", pane, "Escape")
		var got qJSON
		waitFor(t, 10*time.Second, func() bool {
			for _, x := range q.questions(false) {
				if x.ID == j.ID && x.Answer != nil {
					got = x
					return true
				}
			}
			return false
		}, "question %s answered at the terminal", j.ID)
		assert.Equal(t, "terminal", got.Answer.Source)
		assert.Equal(t, "deny", got.Answer.Answer)
		idle("the terminal's Esc")
		assert.NoFileExists(t, file("c-esc.txt"))
	})

	// The console lists nothing left to answer, and nothing was ever typed into the agent's pane by
	// wcomm: every answer went through the app-server.
	assert.Empty(t, q.questions(true))
	var log []map[string]any
	for _, j := range q.questions(false) {
		log = append(log, qLog(t, j)...)
	}
	data, _ := json.Marshal(log)
	assert.NotContains(t, string(data), "answer-pasted")
	assert.NotContains(t, string(data), "answer-queued")
	u.keys("q")
}
