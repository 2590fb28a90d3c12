package cli

// End-to-end tests of the answer channels: the real binary, a private tmux server, real asks,
// and a fake Telegram Bot API on loopback (internal/bridge/chatfake) that behaves as the
// service's documentation says.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/bridge"
	"github.com/wcomm/wcomm/internal/bridge/chatfake"
	"github.com/wcomm/wcomm/internal/bridge/lockfile"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

// channelWorld is a question world whose user settings name a fake Telegram chat.
type channelWorld struct {
	*qWorld
	tg  *chatfake.Telegram
	xdg string
}

// runtimeDir is a runtime folder of the test's own, where its bridges of one bot meet: a
// bridge another test left running, its fake's address reused, never meets them. It is short,
// as a socket's path must be.
func runtimeDir(t *testing.T) string {
	t.Helper()
	rt, err := os.MkdirTemp("", "wcrt")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(rt) })
	return rt
}

func newChannelWorld(t *testing.T) *channelWorld {
	t.Helper()
	q := newQWorld(t)
	tg := chatfake.NewTelegram(t)
	xdg := t.TempDir()
	cfg := fmt.Sprintf("channels:\n  telegram:\n    api_url: %s\n    chat_id: %d\n    allowed_users: [777]\n", tg.Srv.URL, tg.Chat)
	require.NoError(t, os.MkdirAll(filepath.Join(xdg, "wcomm"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(xdg, "wcomm", "config.yaml"), []byte(cfg), 0o600))
	q.env = append(q.env, "XDG_CONFIG_HOME="+xdg, bridge.EnvTelegramToken+"="+tg.Token, "WCOMM_BRIDGE_IDLE_EXIT=2s", "XDG_RUNTIME_DIR="+runtimeDir(t))
	return &channelWorld{qWorld: q, tg: tg, xdg: xdg}
}

// key is the key of the channels that apply in the work folder, where the world's commands run:
// their bridge's lock and files are under it.
func (c *channelWorld) key() string {
	c.t.Helper()
	return c.keyIn(c.work)
}

// keyIn is the key of the channels that apply in dir.
func (c *channelWorld) keyIn(dir string) string {
	c.t.Helper()
	env := map[string]string{}
	for _, kv := range c.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	s, err := settings.Load(dir, func(k string) string { return env[k] })
	require.NoError(c.t, err)
	return s.Channels.Key(dir)
}

// post waits for the question whose text holds text to be posted, and returns it with its token.
func (c *channelWorld) post(text string) (chatfake.Msg, string) {
	c.t.Helper()
	var m chatfake.Msg
	c.tg.WaitFor("the question posted to the chat", func() bool {
		for _, s := range c.tg.Sent {
			if strings.Contains(s.Raw, text) && len(s.Keyboard) > 0 {
				m = *s
				return true
			}
		}
		return false
	})
	data := m.Keyboard[0][0].CallbackData // a:TOKEN:1
	return m, strings.Split(data, ":")[1]
}

func (c *channelWorld) sentText(prefix string) string {
	var out string
	c.tg.WaitFor("a message starting "+prefix, func() bool {
		for _, s := range c.tg.Sent {
			if strings.HasPrefix(s.Text, prefix) {
				out = s.Text
				return true
			}
		}
		return false
	})
	return out
}

func TestE2EBridgeAskAnsweredFromTelegram(t *testing.T) {
	t.Parallel()
	c := newChannelWorld(t)
	c.send(c.orch, c.worker, "implement the auth module")

	// The ask starts a bridge itself: nobody ran 'wcomm bridge'.
	b := c.startAs(c.worker, nil, qAskArgs("task-3")...)
	j := c.waitAsking(b, "task-3")
	m, tok := c.post("Should the auth module use bcrypt or argon2?")
	assert.Contains(t, m.Text, tok)
	assert.True(t, lockfile.Running(c.root, c.key()), "a bridge runs for the root")
	argv, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", lockfile.PID(c.root, c.key())))
	require.NoError(t, err)
	assert.Contains(t, string(argv), "--idle-exit")
	assert.NotContains(t, string(argv), c.tg.Token, "no secret in the started bridge's argv")

	// A stranger's press changes nothing; the allowed user's press answers.
	c.tg.Press(999, c.tg.Chat, m.ID, "a:"+tok+":1")
	c.tg.Press(777, c.tg.Chat, m.ID, "a:"+tok+":2")
	r := b.wait(t, 30*time.Second)
	requireCode(t, 0, r)
	assert.Equal(t, qAnswerBlock("Use argon2 (new dep)", "task-3", "user", j.ID), r.stdout)
	got := c.question("task-3")
	require.NotNil(t, got.Answer)
	assert.Equal(t, "telegram", got.Answer.Source)
	assert.Equal(t, "Use argon2 (new dep)", got.Answer.Raw)
	confirm := c.sentText("✅")
	assert.Contains(t, confirm, "source telegram")
	assert.Contains(t, confirm, "woke on the answer")

	// A late answer from the local console is stale, and says who won.
	late := c.as("", nil, "answer", j.ID, "A")
	requireCode(t, 1, late)
	assert.Contains(t, late.stderr, "source telegram")

	// The bridge the ask started ends on its own once nothing is pending.
	waitFor(t, 20*time.Second, func() bool { return !lockfile.Running(c.root, c.key()) }, "the spawned bridge to end")
	log, err := os.ReadFile(lockfile.LogPath(c.root, c.key()))
	require.NoError(t, err)
	assert.Contains(t, string(log), "ignored a button press from user 999")
	assert.Contains(t, string(log), "nothing pending")
	assert.NotContains(t, string(log), c.tg.Token)
}

func TestE2EBridgeLocalAnswerFirstTelegramIsStale(t *testing.T) {
	t.Parallel()
	c := newChannelWorld(t)
	c.send(c.orch, c.worker, "rename things")
	fg := c.startAs("", nil, "bridge")
	waitFor(t, 20*time.Second, func() bool { return lockfile.Running(c.root, c.key()) || fg.exited() }, "the bridge to take its lock")
	require.False(t, fg.exited(), "%s", fg.res)
	assert.Equal(t, fg.cmd.Process.Pid, lockfile.PID(c.root, c.key()), "wcomm handed over to wcomm-bridge in the same process")
	b := c.startAs(c.worker, nil, "ask", "--task", "task-4", "--type", "yes-no", "--context", "Store<User> & co stay as they are.", "--", "May I rename Login?")
	j := c.waitAsking(b, "task-4")
	m, tok := c.post("May I rename Login?")
	assert.Contains(t, m.Text, "Store<User> & co stay as they are.", "escaped for the parse mode, arrives as written")
	assert.Contains(t, m.Text, "/yes_"+tok)

	// A second bridge for the same root says who runs it and exits 1.
	second := c.as("", nil, "bridge")
	requireCode(t, 1, second)
	assert.Regexp(t, `process \d+ runs the bridge`, second.stderr)

	requireCode(t, 0, c.as("", nil, "answer", j.ID, "no"))
	requireCode(t, 0, b.wait(t, 30*time.Second))
	// The chat is told the question was answered elsewhere, and a late command is stale.
	c.tg.WaitFor("the post marked answered", func() bool {
		q := c.tg.Msgs[m.ID]
		return strings.Contains(q.Text, "answered: no (source local)") && len(q.Keyboard) == 0
	})
	c.tg.Say(777, c.tg.Chat, "/yes_"+tok+"@"+c.tg.BotTag, 0)
	assert.Contains(t, c.sentText("⏱ stale"), "source local")
	got := c.question("task-4")
	assert.Equal(t, "local", got.Answer.Source)
	assert.Equal(t, "no", got.Answer.Answer)

	// The foreground bridge ends on SIGTERM.
	require.NoError(t, fg.cmd.Process.Signal(os.Interrupt))
	requireCode(t, 0, fg.wait(t, 20*time.Second))
	st, err := os.Stat(filepath.Join(lockfile.Dir(c.root, c.key()), "state.json"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
}

func TestE2EBridgeDoctorAndTokenFile(t *testing.T) {
	t.Parallel()
	c := newChannelWorld(t)
	r := c.as("", nil, "doctor", "--json")
	var rep struct {
		Channels []ChannelCheck `json:"channels"`
		Problems []string       `json:"problems"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), "%s", r)
	require.GreaterOrEqual(t, len(rep.Channels), 2)
	assert.True(t, rep.Channels[0].OK && rep.Channels[1].OK, "%+v", rep.Channels)
	assert.NotContains(t, r.stdout+r.stderr, c.tg.Token)
	c.tg.Mu.Lock()
	assert.Zero(t, c.tg.Calls["sendMessage"], "doctor posts nothing")
	assert.Equal(t, 1, c.tg.Calls["getChat"])
	c.tg.Mu.Unlock()

	// A wrong token: doctor fails naming the reason, never the token.
	bad := c.as("", []string{bridge.EnvTelegramToken + "=1:wrong-secret"}, "doctor")
	requireCode(t, 1, bad)
	assert.Contains(t, bad.stdout, "401")
	assert.NotContains(t, bad.stdout+bad.stderr, "wrong-secret")

	// A token file others can read is refused with the reason.
	tokFile := filepath.Join(c.work, "telegram.token")
	require.NoError(t, os.WriteFile(tokFile, []byte(c.tg.Token+"\n"), 0o644))
	cfg := fmt.Sprintf("channels:\n  telegram:\n    api_url: %s\n    token_file: %s\n    chat_id: %d\n    allowed_users: [777]\n", c.tg.Srv.URL, tokFile, c.tg.Chat)
	require.NoError(t, os.WriteFile(filepath.Join(c.xdg, "wcomm", "config.yaml"), []byte(cfg), 0o600))
	env := []string{bridge.EnvTelegramToken + "="}
	refused := c.as("", env, "bridge")
	requireCode(t, 1, refused)
	assert.Contains(t, refused.stderr, "mode 0644")
	assert.Contains(t, refused.stderr, "chmod 600")
	assert.NotContains(t, refused.stderr, c.tg.Token)
	require.NoError(t, os.Chmod(tokFile, 0o600))
	ok := c.as("", env, "doctor", "--json")
	assert.NotContains(t, ok.stdout, "FAILED")
	assert.Contains(t, ok.stdout, `"ok": true`)
}

// TestE2EBridgeMCPAsk: an ask through the MCP server's ask tool starts the bridge as the
// command's ask does (the front door's Helpers.Bridge serves both faces): the question reaches the
// fake chat, and an answer there wakes the tool call.
func TestE2EBridgeMCPAsk(t *testing.T) {
	t.Parallel()
	c := newChannelWorld(t)
	c.send(c.orch, c.worker, "implement the auth module")
	mc := c.mcpClient(c.worker, c.env...)

	type called struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan called, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res, err := mc.cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{
			"task": "task-5", "question": "Should the auth module use bcrypt or argon2?",
			"context": "The plan names no hash.", "options": []string{"Use bcrypt", "Use argon2"},
		}})
		done <- called{res, err}
	}()

	m, tok := c.post("Should the auth module use bcrypt or argon2?")
	assert.True(t, lockfile.Running(c.root, c.key()), "the MCP ask started a bridge for the root")
	c.tg.Press(777, c.tg.Chat, m.ID, "a:"+tok+":2")
	var got called
	select {
	case got = <-done:
	case <-time.After(time.Minute):
		t.Fatalf("the MCP ask did not wake; server stderr:\n%s", mc.stderr)
	}
	require.NoError(t, got.err, "server stderr:\n%s", mc.stderr)
	require.False(t, got.res.IsError, "%s", text(got.res))
	assert.Contains(t, text(got.res), "ANSWER: Use argon2")
	q := c.question("task-5")
	require.NotNil(t, q.Answer)
	assert.Equal(t, "telegram", q.Answer.Source)
	assert.Contains(t, c.sentText("✅"), "source telegram")
	waitFor(t, 20*time.Second, func() bool { return !lockfile.Running(c.root, c.key()) }, "the spawned bridge to end")
}

// TestE2EBridgeDeadLetterTold: a request whose pane stays busy past its time to live is
// dead-lettered by its deliverer, and the running bridge tells the chat once, with the command
// that re-sends it.
func TestE2EBridgeDeadLetterTold(t *testing.T) {
	t.Parallel()
	c := newChannelWorld(t)
	fg := c.startAs("", nil, "bridge")
	waitFor(t, 20*time.Second, func() bool { return lockfile.Running(c.root, c.key()) || fg.exited() }, "the bridge to take its lock")
	require.False(t, fg.exited(), "%s", fg.res)
	busy := c.bashPane("")
	c.startJob(busy, "sleep 60", "sleep")
	r := c.as(c.orch, []string{"WCOMM_MAIL_TTL=1s"}, "send", "--to", busy, "--", "a task that waits too long")
	requireCode(t, 0, r)
	id := strings.Fields(r.stdout)[0]
	notice := c.sentText("📭")
	assert.Contains(t, notice, "not delivered (expired): request "+id+" for pane "+busy)
	assert.Contains(t, notice, "wcomm send --resend "+id)
	require.NoError(t, fg.cmd.Process.Signal(os.Interrupt))
	requireCode(t, 0, fg.wait(t, 20*time.Second))
	c.tg.Mu.Lock()
	defer c.tg.Mu.Unlock()
	n := 0
	for _, m := range c.tg.Sent {
		if strings.HasPrefix(m.Text, "📭") {
			n++
		}
	}
	assert.Equal(t, 1, n, "told once")
	c.tmux("send-keys", "-t", busy, "C-c")
}
