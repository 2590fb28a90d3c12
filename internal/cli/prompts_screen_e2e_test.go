package cli

// The screen route of the agents' own prompts: an agent with no hook of wcomm's shows its
// permission dialog, and the bridge (its prompts sentry) makes it a question for the person. The
// agent is testdata/fixtures/dialogagent.py, which draws Claude Code's dialog and logs every byte
// it reads while the dialog shows; its profile, with the dialog's markers and keys, comes from the
// user's settings, as a profile for any agent would.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const dialogProfile = `agent_profiles:
  - name: dialogagent
    kind: agent
    detect:
      names: [dialogagent.py]
    input:
      prompt: "^>( |$)"
      busy: ["esc to interrupt"]
    dialogs:
      - markers: ["^Do you want to proceed\\?$", "^❯ 1\\. Yes", "^Esc to cancel"]
        question: "^Do you want to proceed\\?$"
        title: "^(Bash) command$"
        denied: ["^● denied: "]
        allow: "1"
        deny: Escape
`

type dialogWorld struct {
	*channelWorld
	pane, keylog, dir string
}

func newDialogWorld(t *testing.T) *dialogWorld {
	return newDialogWorldArgv(t, func(script, keylog, dir string) []string { return []string{"python3", script, keylog, dir} })
}

// newDialogWorldArgv is newDialogWorld with the pane's argv made by argv from the fixture's
// script and arguments.
func newDialogWorldArgv(t *testing.T, argv func(script, keylog, dir string) []string) *dialogWorld {
	c := newChannelWorld(t)
	cfg := filepath.Join(c.xdg, "wcomm", "config.yaml")
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(dialogProfile)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	d := &dialogWorld{channelWorld: c, keylog: filepath.Join(c.work, "keys.jsonl"), dir: filepath.Join(c.work, "made")}
	require.NoError(t, os.Mkdir(d.dir, 0o700))
	script, err := filepath.Abs(filepath.Join(fixtures, "dialogagent.py"))
	require.NoError(t, err)
	d.pane = c.pane("", argv(script, d.keylog, d.dir)...)
	c.waitScreen(d.pane, "DIALOG AGENT READY")
	return d
}

// prompt types a prompt as a person does and waits for its dialog.
func (d *dialogWorld) prompt(command string) {
	d.t.Helper()
	d.tmux("send-keys", "-t", d.pane, "-l", "RUN: "+command)
	d.tmux("send-keys", "-t", d.pane, "Enter")
	d.waitScreen(d.pane, "Do you want to proceed?")
}

// listed waits for the pending permission question of command.
func (d *dialogWorld) listed(command string) qJSON {
	return d.permissionListed(command, 10*time.Second)
}

// reads are the reads the agent made while the dialog of command showed.
func (d *dialogWorld) reads(command string) []string {
	data, err := os.ReadFile(d.keylog)
	require.NoError(d.t, err)
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e struct {
			Dialog string `json:"dialog"`
			Read   string `json:"read"`
		}
		require.NoError(d.t, json.Unmarshal([]byte(line), &e))
		if e.Dialog == command {
			out = append(out, e.Read)
		}
	}
	return out
}

// lines are the lines the agent took at its input.
func (d *dialogWorld) lines() []string {
	data, _ := os.ReadFile(d.keylog)
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e struct {
			Line *string `json:"line"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Line != nil {
			out = append(out, *e.Line)
		}
	}
	return out
}

func (d *dialogWorld) made(name string) bool {
	_, err := os.Stat(filepath.Join(d.dir, name))
	return err == nil
}

func TestE2EScreenDialogAnsweredFromEverywhere(t *testing.T) {
	t.Parallel()
	d := newDialogWorld(t)
	// The bridge runs (the person started it); nothing else watches the pane.
	br := d.startAs("", nil, "bridge")
	defer func() {
		if t.Failed() { // what the bridge's sentry said
			_ = br.cmd.Process.Signal(os.Interrupt)
			t.Logf("bridge: %s", br.wait(t, 10*time.Second).stderr)
		}
	}()

	t.Run("a chat answer presses the dialog's key", func(t *testing.T) {
		d.prompt("touch chat.txt")
		j := d.listed("touch chat.txt")
		assert.Equal(t, []string{"allow", "deny"}, j.Options, "the dialog's second choice is a rule for the project: no always")
		// Its lines whole: the first may be a description or the command's first line.
		assert.Contains(t, j.Question, "asks to run Bash: Run the requested command touch chat.txt")
		m, tok := d.post("touch chat.txt")
		d.tg.Press(777, d.tg.Chat, m.ID, "a:"+tok+":1") // Allow
		waitFor(t, 10*time.Second, func() bool { return d.made("chat.txt") }, "the command to run")
		got := d.answered(j.ID)
		assert.Equal(t, "telegram", got.Answer.Source)
		assert.Equal(t, []string{"1"}, d.reads("touch chat.txt"), "one key, nothing else, reached the dialog")
		d.waitScreen(d.pane, "● ran: touch chat.txt")
	})

	t.Run("deny with a message: Escape, then the message as the person's", func(t *testing.T) {
		d.prompt("touch deny.txt")
		j := d.listed("touch deny.txt")
		requireCode(t, 0, d.asPerson(nil, "answer", j.ID, "deny", "--message", "use the staging folder"))
		d.waitScreen(d.pane, "● denied: touch deny.txt")
		assert.Equal(t, []string{"\x1b"}, d.reads("touch deny.txt"))
		assert.False(t, d.made("deny.txt"))
		waitFor(t, 15*time.Second, func() bool {
			for _, l := range d.lines() {
				if strings.Contains(l, "use the staging folder") && strings.Contains(l, "denied Bash touch deny.txt") {
					return true
				}
			}
			return false
		}, "the deny's message handed to the agent; it took %q", d.lines())
	})

	t.Run("1 at the terminal: answered there, the post edited, a late answer refused", func(t *testing.T) {
		d.prompt("touch terminal.txt")
		j := d.listed("touch terminal.txt")
		m, _ := d.post("touch terminal.txt")
		d.tmux("send-keys", "-t", d.pane, "1") // the person, at the pane
		waitFor(t, 10*time.Second, func() bool { return d.made("terminal.txt") }, "the command to run")
		got := d.answered(j.ID)
		assert.Equal(t, "terminal", got.Answer.Source)
		assert.Equal(t, "allow", got.Answer.Answer)
		d.tg.WaitFor("the post edited, its buttons gone", func() bool {
			msg := d.tg.Msgs[m.ID]
			return msg.Edits > 0 && strings.Contains(msg.Text, "answered at the terminal") && len(msg.Keyboard) == 0
		})
		late := d.as("", nil, "answer", j.ID, "deny")
		requireCode(t, 1, late)
		assert.Contains(t, late.stderr, "terminal")
		assert.Equal(t, []string{"1"}, d.reads("touch terminal.txt"), "only the person's key")
	})

	t.Run("a dialog that closed before the answer gets no key", func(t *testing.T) {
		d.prompt("touch gone.txt")
		j := d.listed("touch gone.txt")
		d.tmux("send-keys", "-t", d.pane, "Escape") // the person again
		d.waitScreen(d.pane, "● denied: touch gone.txt")
		got := d.answered(j.ID)
		assert.Equal(t, "terminal", got.Answer.Source)
		assert.Equal(t, "deny", got.Answer.Answer)
		requireCode(t, 1, d.as("", nil, "answer", j.ID, "allow"))
		assert.False(t, d.made("gone.txt"))
		assert.Equal(t, []string{"\x1b"}, d.reads("touch gone.txt"))
	})
}

// answered waits for question id to have an answer.
func (d *dialogWorld) answered(id string) qJSON { return d.answeredQ(id) }
