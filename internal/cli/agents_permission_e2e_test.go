//go:build agents

package cli

// Claude Code's permission prompts relayed to the person, with the real Claude Code in its default
// permission mode (every command asks) against the scripted model, and the hooks 'wcomm
// install-skill' writes: answered by 'wcomm answer', from the Telegram and Slack fakes, from the
// console, and by the person at the terminal. The files the commands make, and the model's request
// log, are the ground truth.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/bridge"
	"github.com/wcomm/wcomm/internal/bridge/chatfake"
)

// permAgent is one Claude Code with its permission hook, and the channels it reaches.
type permAgent struct {
	*qWorld
	pane, workDir string
	m             mockModel
	tg            *chatfake.Telegram
	sl            *chatfake.Slack
}

// newPermAgent starts Claude Code in permission mode mode (default: every command asks) with the
// hooks install-skill writes and the user settings cfg adds to the channels.
func newPermAgent(t *testing.T, mode, cfg string) *permAgent {
	return newPermAgentHook(t, mode, cfg, true)
}

// newPermAgentHook is newPermAgent; without hook, install-skill is not run: no hook of wcomm's
// sees the agent's prompts.
func newPermAgentHook(t *testing.T, mode, cfg string, hook bool) *permAgent {
	installed := installAgents(t)
	w := newWorld(t)
	m := startModel(t, w.work)
	tg := chatfake.NewTelegram(t)
	sl := chatfake.NewSlack(t)
	// The agent's own HOME holds the user's settings: the hook, and the bridge it starts, read
	// the channels there (start-agent.sh passes the agent no other variable but WCOMM_*).
	home := filepath.Join(w.work, "claude-home")
	cfg += fmt.Sprintf("channels:\n  telegram:\n    api_url: %s\n    chat_id: %d\n    allowed_users: [777]\n"+
		"  slack:\n    api_url: %s/api/\n    channel: %s\n    allowed_users: [U777]\n", tg.Srv.URL, tg.Chat, sl.Srv.URL, sl.Channel)
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".config", "wcomm"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".config", "wcomm", "config.yaml"), []byte(cfg), 0o600))
	work := filepath.Join(w.work, "work-claude")
	require.NoError(t, os.MkdirAll(work, 0o700))
	if hook {
		r := w.run(call{}, "install-skill", "--dir", work, "--for", "claude", "--bin", w.bin)
		requireCode(t, 0, r)
	}
	// Its HOME is under the test's temporary folder: the folder is removed only once the agent,
	// which writes there as it exits, is gone (this runs after the pane's own cleanup kills it).
	var agentPID int
	t.Cleanup(func() {
		deadline := time.Now().Add(15 * time.Second)
		for agentPID > 0 && !exited(agentPID) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond) // polling the process table
		}
	})
	pane := w.agentPaneEnv("claude", installed, m, []string{"CLAUDE_PERMISSION_MODE=" + mode, "AGENT_HOME=" + home,
		bridge.EnvTelegramToken + "=" + tg.Token, bridge.EnvSlackBotToken + "=" + sl.Bot, bridge.EnvSlackAppToken + "=" + sl.App,
		"WCOMM_BRIDGE_IDLE_EXIT=5s"})
	_, err := fmt.Sscanf(strings.TrimSpace(w.tmux("display-message", "-p", "-t", pane, "#{pane_pid}")), "%d", &agentPID)
	require.NoError(t, err)
	q := &qWorld{world: w, env: []string{"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "HOME=" + home,
		bridge.EnvTelegramToken + "=" + tg.Token, bridge.EnvSlackBotToken + "=" + sl.Bot, bridge.EnvSlackAppToken + "=" + sl.App}}
	return &permAgent{qWorld: q, pane: pane, workDir: work, m: m, tg: tg, sl: sl}
}

// prompt types a prompt into the agent as a person does, waits for its dialog on screen and
// returns when it was first seen.
func (a *permAgent) prompt(command string) time.Time {
	a.t.Helper()
	a.tmux("send-keys", "-t", a.pane, "-l", "RUN: "+command)
	time.Sleep(300 * time.Millisecond) // an Enter in the paste's moment is swallowed (testdata/agents/MEASUREMENTS.md)
	a.tmux("send-keys", "-t", a.pane, "Enter")
	waitFor(a.t, 60*time.Second, func() bool {
		s := a.capture(a.pane)
		return strings.Contains(s, "Do you want to proceed?") && strings.Contains(s, command)
	}, "the permission dialog for %q; screen:\n%s", command, a.capture(a.pane))
	return time.Now()
}

// listed waits, at most 2 s, for the pending permission question of command.
func (a *permAgent) listed(command string) qJSON { return a.permissionListed(command, 2*time.Second) }

// idle waits for the agent's turn to end: its input box empty again, no dialog.
func (a *permAgent) idle() {
	a.t.Helper()
	waitFor(a.t, 60*time.Second, func() bool {
		s := a.capture(a.pane)
		return !strings.Contains(s, "Do you want to proceed?") && strings.Contains(s, "● ok")
	}, "the turn to end; screen:\n%s", a.capture(a.pane))
}

func (a *permAgent) file(name string) string { return filepath.Join(a.workDir, name) }

// modelGot reports whether a request the model received holds text.
func (a *permAgent) modelGot(text string) bool {
	data, err := os.ReadFile(filepath.Join(a.work, "requests.jsonl"))
	return err == nil && strings.Contains(string(data), text)
}

func (a *permAgent) answered(id string) qJSON { return a.answeredQ(id) }

func TestAgentsClaudePermission(t *testing.T) {
	a := newPermAgent(t, "default", "")

	t.Run("allow runs the command", func(t *testing.T) {
		a.prompt("touch p-allow.txt")
		j := a.listed("touch p-allow.txt")
		requireCode(t, 0, a.asPerson(nil, "answer", j.ID, "allow"))
		waitFor(t, 10*time.Second, func() bool { _, err := os.Stat(a.file("p-allow.txt")); return err == nil }, "the command to run")
		a.idle()
	})

	t.Run("deny with a message: not run, the model is told", func(t *testing.T) {
		a.prompt("touch p-deny.txt")
		j := a.listed("touch p-deny.txt")
		requireCode(t, 0, a.asPerson(nil, "answer", j.ID, "deny", "--message", "DENIED-BY-TEST use the staging folder"))
		waitFor(t, 20*time.Second, func() bool { return a.modelGot("DENIED-BY-TEST use the staging folder") }, "the model to get the message")
		a.idle()
		assert.NoFileExists(t, a.file("p-deny.txt"))
	})

	t.Run("always adds the session rule", func(t *testing.T) {
		a.prompt("touch p-always.txt")
		j := a.listed("touch p-always.txt")
		requireCode(t, 0, a.asPerson(nil, "answer", j.ID, "always"))
		waitFor(t, 10*time.Second, func() bool { _, err := os.Stat(a.file("p-always.txt")); return err == nil }, "the command to run")
		a.idle()
		require.NoError(t, os.Remove(a.file("p-always.txt")))
		before := len(a.questions(false))
		// The same command again: no dialog, no question, it runs.
		a.tmux("send-keys", "-t", a.pane, "-l", "RUN: touch p-always.txt")
		time.Sleep(300 * time.Millisecond) // as in prompt
		a.tmux("send-keys", "-t", a.pane, "Enter")
		waitFor(t, 30*time.Second, func() bool { _, err := os.Stat(a.file("p-always.txt")); return err == nil }, "the command to run by the rule")
		a.idle()
		assert.Len(t, a.questions(false), before, "no new question")
	})

	t.Run("1 at the terminal: answered there, the chat posts edited", func(t *testing.T) {
		shown := a.prompt("touch p-terminal.txt")
		j := a.listed("touch p-terminal.txt")
		var post chatfake.Msg
		a.tg.WaitFor("the Telegram post", func() bool {
			for _, s := range a.tg.Sent {
				if strings.Contains(s.Text, "touch p-terminal.txt") && len(s.Keyboard) > 0 {
					post = *s
					return true
				}
			}
			return false
		})
		// Claude Code drops keys that come within about 0.1 s of its dialog's drawing (measured:
		// none taken at 0.107 s, all at 0.157 s): the person's key comes after that.
		time.Sleep(time.Until(shown.Add(300 * time.Millisecond)))
		pressed := time.Now()
		a.tmux("send-keys", "-t", a.pane, "1")
		got := a.answered(j.ID)
		t.Logf("answered at the terminal, seen %s after the key", time.Since(pressed).Round(time.Millisecond))
		require.NotNil(t, got.Answer)
		assert.Equal(t, "terminal", got.Answer.Source)
		assert.Equal(t, "allow", got.Answer.Answer)
		waitFor(t, 10*time.Second, func() bool { _, err := os.Stat(a.file("p-terminal.txt")); return err == nil }, "the command to run")
		a.tg.WaitFor("the post edited, its buttons gone", func() bool {
			m := a.tg.Msgs[post.ID]
			return m.Edits > 0 && strings.Contains(m.Text, "answered at the terminal") && len(m.Keyboard) == 0
		})
		a.idle()
		a.tg.Press(777, a.tg.Chat, post.ID, post.Keyboard[0][0].CallbackData)
		a.tg.WaitFor("the late press told it came too late", func() bool {
			return len(a.tg.Acks) > 0 && strings.Contains(a.tg.Acks[len(a.tg.Acks)-1], "too late")
		})
	})

	t.Run("answered from Telegram", func(t *testing.T) {
		shown := a.prompt("touch p-telegram.txt")
		a.listed("touch p-telegram.txt")
		var post chatfake.Msg
		a.tg.WaitFor("the Telegram post", func() bool {
			for _, s := range a.tg.Sent {
				if strings.Contains(s.Text, "touch p-telegram.txt") && len(s.Keyboard) > 0 {
					post = *s
					return true
				}
			}
			return false
		})
		pressed := time.Now()
		a.tg.Press(777, a.tg.Chat, post.ID, post.Keyboard[0][0].CallbackData) // Allow
		waitFor(t, 10*time.Second, func() bool { _, err := os.Stat(a.file("p-telegram.txt")); return err == nil }, "the command to run")
		// Figures, not assertions (timing belongs in benchmarks): the dialog seen on screen to
		// the chat post (the screen is polled, so this may be a little under the truth), and
		// the press to the command's file.
		t.Logf("dialog → Telegram post %s; press → command ran %s", post.At.Sub(shown).Round(time.Millisecond),
			time.Since(pressed).Round(time.Millisecond))
		a.idle()
	})

	t.Run("denied from Slack", func(t *testing.T) {
		a.prompt("touch p-slack.txt")
		j := a.listed("touch p-slack.txt")
		var ts string
		waitFor(t, 10*time.Second, func() bool {
			posts, _, _ := a.sl.Snapshot()
			for _, p := range posts {
				if strings.Contains(p.Text, "touch p-slack.txt") && len(p.Buttons) == 3 {
					ts = p.TS
					return true
				}
			}
			return false
		}, "the Slack post")
		a.sl.WaitConnected()
		a.sl.Press("U777", a.sl.Channel, ts, 2) // Deny
		got := a.answered(j.ID)
		assert.Equal(t, "slack", got.Answer.Source)
		a.idle()
		assert.NoFileExists(t, a.file("p-slack.txt"))
	})

	t.Run("allowed from the console", func(t *testing.T) {
		a.prompt("touch p-console.txt")
		j := a.listed("touch p-console.txt")
		u := a.openUI(nil, 120, 40)
		u.waitUIRe(`%\d+ +\S+ +claude +permission `) // the agent's row: what it waits on a person for
		u.waitUI("[permission]", "touch p-console.txt", "a allow  s always  d deny")
		u.keys("1")
		u.waitUI("PERMISSION " + j.ID)
		u.keys("a")
		waitFor(t, 10*time.Second, func() bool { _, err := os.Stat(a.file("p-console.txt")); return err == nil }, "the command to run")
		got := a.answered(j.ID)
		assert.Equal(t, "ui", got.Answer.Source)
		u.keys("q")
		a.idle()
	})

	// Nothing was ever typed into the agent's pane by wcomm: every answer went to its hook.
	var log []map[string]any
	for _, j := range a.questions(false) {
		log = append(log, qLog(t, j)...)
	}
	data, _ := json.Marshal(log)
	assert.NotContains(t, string(data), "answer-pasted")
	assert.NotContains(t, string(data), "answer-queued")
}

func TestAgentsClaudeIdleNotice(t *testing.T) {
	a := newPermAgent(t, "acceptEdits", "notify_idle: true\n")
	a.tmux("send-keys", "-t", a.pane, "-l", "hello, then rest")
	time.Sleep(300 * time.Millisecond) // an Enter in the paste's moment is swallowed (testdata/agents/MEASUREMENTS.md)
	a.tmux("send-keys", "-t", a.pane, "Enter")
	// The turn ends: the channels are told once, with the agent's last message.
	var post chatfake.Msg
	a.tg.WaitFor("the idle notice posted", func() bool {
		for _, s := range a.tg.Sent {
			if strings.Contains(s.Text, "ended its turn") {
				post = *s
				return true
			}
		}
		return false
	})
	assert.Contains(t, post.Text, "ok", "the agent's last message")
	j := a.questions(true)
	require.Len(t, j, 1)
	assert.Equal(t, "idle", j[0].Task)
	panes := a.as("", nil, "panes", "--all")
	assert.Regexp(t, `(?m)^`+a.pane+` .*waits: idle$`, panes.stdout)

	// The person's reply is the agent's next prompt, exactly once.
	a.tg.Say(777, a.tg.Chat, "NEXT-INSTRUCTION-7 say ok", post.ID)
	waitFor(t, 30*time.Second, func() bool { return len(promptsLike(t, a.m, "claude", "NEXT-INSTRUCTION-7")) > 0 }, "the reply to reach the model")
	deadline := time.Now().Add(2 * time.Second) // a second copy would follow within moments
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond) // polling interval
	}
	assert.Len(t, promptsLike(t, a.m, "claude", "NEXT-INSTRUCTION-7"), 1, "delivered exactly once")
	got := a.answered(j[0].ID)
	assert.Equal(t, "telegram", got.Answer.Source)
	// That turn's end is a new notice; the answered one is not told again.
	a.tg.WaitFor("a second notice after the reply's turn", func() bool {
		n := 0
		for _, s := range a.tg.Sent {
			if strings.Contains(s.Text, "ended its turn") {
				n++
			}
		}
		return n == 2
	})
}

// TestAgentsClaudeScreenRoute is a Claude Code without the hook: its dialog is recognised on
// screen by the bridge's sentry (the profile's dialog data), and the answer presses its key.
func TestAgentsClaudeScreenRoute(t *testing.T) {
	a := newPermAgentHook(t, "default", "", false)
	// The person runs the bridge; no ask starts one, since no hook asks.
	br := a.startAs("", nil, "bridge")
	defer func() {
		if t.Failed() {
			_ = br.cmd.Process.Signal(os.Interrupt)
			t.Logf("bridge: %s", br.wait(t, 10*time.Second).stderr)
		}
	}()

	t.Run("allowed from Telegram: the key pressed, the command runs", func(t *testing.T) {
		shown := a.prompt("touch s-telegram.txt")
		j := a.permissionListed("touch s-telegram.txt", 10*time.Second)
		assert.Equal(t, []string{"allow", "deny"}, j.Options)
		var post chatfake.Msg
		a.tg.WaitFor("the Telegram post", func() bool {
			for _, s := range a.tg.Sent {
				if strings.Contains(s.Text, "touch s-telegram.txt") && len(s.Keyboard) > 0 {
					post = *s
					return true
				}
			}
			return false
		})
		pressed := time.Now()
		a.tg.Press(777, a.tg.Chat, post.ID, post.Keyboard[0][0].CallbackData) // Allow
		waitFor(t, 10*time.Second, func() bool { _, err := os.Stat(a.file("s-telegram.txt")); return err == nil }, "the command to run")
		t.Logf("dialog → Telegram post %s; press → command ran %s", post.At.Sub(shown).Round(time.Millisecond),
			time.Since(pressed).Round(time.Millisecond))
		a.idle()
		assert.Contains(t, qLogStates(t, j), "key-pressed")
	})

	t.Run("denied with a message: Escape, and the message follows as the person's", func(t *testing.T) {
		a.prompt("touch s-deny.txt")
		j := a.permissionListed("touch s-deny.txt", 10*time.Second)
		requireCode(t, 0, a.asPerson(nil, "answer", j.ID, "deny", "--message", "SCREEN-DENIED use the staging folder"))
		waitFor(t, 60*time.Second, func() bool { return a.modelGot("SCREEN-DENIED use the staging folder") }, "the model to get the message")
		a.idle()
		assert.NoFileExists(t, a.file("s-deny.txt"))
	})

	t.Run("1 at the terminal: answered there", func(t *testing.T) {
		shown := a.prompt("touch s-terminal.txt")
		j := a.permissionListed("touch s-terminal.txt", 10*time.Second)
		time.Sleep(time.Until(shown.Add(300 * time.Millisecond))) // Claude Code drops keys within 0.1 s of its dialog
		a.tmux("send-keys", "-t", a.pane, "1")
		got := a.answered(j.ID)
		assert.Equal(t, "terminal", got.Answer.Source)
		assert.Equal(t, "allow", got.Answer.Answer)
		waitFor(t, 10*time.Second, func() bool { _, err := os.Stat(a.file("s-terminal.txt")); return err == nil }, "the command to run")
		a.idle()
		requireCode(t, 1, a.as("", nil, "answer", j.ID, "deny"))
		assert.NotContains(t, qLogStates(t, j), "key-pressed", "the person's key alone")
	})

	t.Run("Escape at the terminal: denied there", func(t *testing.T) {
		shown := a.prompt("touch s-escape.txt")
		j := a.permissionListed("touch s-escape.txt", 10*time.Second)
		time.Sleep(time.Until(shown.Add(300 * time.Millisecond))) // as above
		a.tmux("send-keys", "-t", a.pane, "Escape")
		got := a.answered(j.ID)
		assert.Equal(t, "terminal", got.Answer.Source)
		assert.Equal(t, "deny", got.Answer.Answer)
		assert.NoFileExists(t, a.file("s-escape.txt"))
		assert.NotContains(t, qLogStates(t, j), "key-pressed")
	})
}

// qLogStates are the states of question j's log.
func qLogStates(t *testing.T, j qJSON) []string {
	var out []string
	for _, e := range qLog(t, j) {
		if s, ok := e["state"].(string); ok {
			out = append(out, s)
		}
	}
	return out
}
