package cli

// The screen route against what a screen alone does not tell: the program that drew a dialog may
// be gone while its rows stay, and a dialog may leave the screen for a moment while its program
// redraws.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startBridge starts the bridge (the person's), whose sentry watches the panes.
func (d *dialogWorld) startBridge() {
	d.t.Helper()
	br := d.startAs("", nil, "bridge")
	d.t.Cleanup(func() {
		if d.t.Failed() { // what the bridge's sentry said
			_ = br.cmd.Process.Signal(os.Interrupt)
			d.t.Logf("bridge: %s", br.wait(d.t, 10*time.Second).stderr)
		}
	})
}

// panePID is the pid of the pane's own process.
func (d *dialogWorld) panePID() int {
	d.t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(d.tmux("display-message", "-p", "-t", d.pane, "#{pane_pid}")))
	require.NoError(d.t, err)
	return pid
}

// questionLog is what the question's log says of it.
func questionLog(t *testing.T, j qJSON) string {
	t.Helper()
	data, _ := os.ReadFile(j.file("answers.jsonl"))
	return string(data)
}

// The agent that showed the dialog dies, its shell runs something else, and the dialog's rows
// stay on screen: the person's answer presses nothing into the program that replaced it.
func TestE2EScreenDialogKeyNotPressedIntoAnotherProgram(t *testing.T) {
	t.Parallel()
	d := newDialogWorldArgv(t, func(script, keylog, dir string) []string {
		return []string{"sh", "-c", `python3 "$0" "$1" "$2"; exec sleep 600`, script, keylog, dir}
	})
	d.startBridge()
	d.prompt("touch replaced.txt")
	j := d.listed("touch replaced.txt")

	sh := d.panePID()
	children, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(sh), "task", strconv.Itoa(sh), "children"))
	require.NoError(t, err)
	agent, err := strconv.Atoi(strings.TrimSpace(string(children)))
	require.NoError(t, err, "the agent is the shell's one child: %q", children)
	require.NoError(t, syscall.Kill(agent, syscall.SIGKILL))
	waitFor(t, 10*time.Second, func() bool {
		comm, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(sh), "comm"))
		return strings.TrimSpace(string(comm)) == "sleep"
	}, "the pane's shell to run sleep")
	require.Contains(t, d.tmux("capture-pane", "-p", "-t", d.pane), "Do you want to proceed?", "the dialog's rows stay")

	requireCode(t, 0, d.asPerson(nil, "answer", j.ID, "allow"))
	waitFor(t, 15*time.Second, func() bool { return strings.Contains(questionLog(t, j), "key-not-pressed") },
		"the sentry to refuse the key; the log says %s", questionLog(t, j))
	log := questionLog(t, j)
	assert.Contains(t, log, "no longer runs in the pane's foreground")
	assert.NotContains(t, log, `"key-pressed"`)
	assert.NotContains(t, log, "key-no-effect")
	assert.False(t, d.made("replaced.txt"))
}

// The agent redraws its screen while its dialog waits: the dialog is gone for a moment and
// comes back. It is the same question, still the person's to answer, not one answered at the
// terminal and another asked.
func TestE2EScreenDialogRedrawIsTheSameQuestion(t *testing.T) {
	t.Parallel()
	d := newDialogWorld(t)
	d.startBridge()
	d.prompt("touch redrawn.txt")
	j := d.listed("touch redrawn.txt")

	require.NoError(t, syscall.Kill(d.panePID(), syscall.SIGUSR1))
	waitFor(t, 10*time.Second, func() bool {
		data, _ := os.ReadFile(d.keylog)
		return strings.Count(string(data), `{"shown": "touch redrawn.txt"`) == 2
	}, "the dialog drawn again")

	requireCode(t, 0, d.asPerson(nil, "answer", j.ID, "allow"))
	waitFor(t, 10*time.Second, func() bool { return d.made("redrawn.txt") }, "the command to run")
	assert.Equal(t, []string{"1"}, d.reads("touch redrawn.txt"), "one key, nothing else, reached the dialog")
	got := d.answeredQ(j.ID)
	assert.NotEqual(t, "terminal", got.Answer.Source, "the person's answer, not one taken from the terminal")
	n := 0
	for _, q := range d.questions(false) {
		if strings.Contains(q.Question, "touch redrawn.txt") {
			n++
		}
	}
	assert.Equal(t, 1, n, "one question for the dialog")
}

// less shows a file of Claude Code's package whose text looks like its dialog: less is no Claude
// Code, so no question is opened for it and no key pressed into it, while the sentry asks about
// a real dialog in another pane.
func TestE2EScreenDialogOfAFileUnderAnAgentsPackage(t *testing.T) {
	t.Parallel()
	d := newDialogWorld(t)
	pkg := filepath.Join(d.work, "node_modules", "@anthropic-ai", "claude-code")
	require.NoError(t, os.MkdirAll(pkg, 0o700))
	readme := filepath.Join(pkg, "README.md")
	require.NoError(t, os.WriteFile(readme, []byte("The dialog looks like this:\n\n Bash command\n\n   touch from-less.txt\n\n"+
		" Do you want to proceed?\n ❯ 1. Yes\n   2. No\n\n Esc to cancel · Tab to amend\n"), 0o600))
	viewer := d.qWorld.pane("", "less", readme)
	d.waitScreen(viewer, "Esc to cancel")
	d.startBridge()

	// Two real dialogs asked, the second well after the sentry's grace for Claude Code's hook
	// (1 s) has passed for the rows less shows: the sentry has looked at them many times.
	d.prompt("touch first.txt")
	requireCode(t, 0, d.asPerson(nil, "answer", d.listed("touch first.txt").ID, "deny"))
	d.waitScreen(d.pane, "● denied: touch first.txt")
	// A window of time to observe: what is looked for is that nothing happens in it.
	time.Sleep(2 * time.Second)
	d.prompt("touch second.txt")
	d.listed("touch second.txt")

	for _, q := range d.questions(false) {
		assert.NotEqual(t, viewer, q.Worker, "a question for less: %s", q.Question)
	}
}
