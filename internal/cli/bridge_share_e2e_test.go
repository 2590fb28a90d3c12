package cli

// End-to-end tests of the bridge's edges: two roots whose channels name one bot, a root another
// user owns, and a token file that does not exist. The real binaries, a private tmux server and
// the fake Telegram Bot API (which answers a second concurrent getUpdates with 409).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/bridge"
	"github.com/wcomm/wcomm/internal/bridge/lockfile"
)

// TestE2EBridgeTwoRootsOneBot: asks in two roots start a bridge each on the same bot; a press on
// each root's question answers it, and neither bridge tells the person of an unknown token.
func TestE2EBridgeTwoRootsOneBot(t *testing.T) {
	t.Parallel()
	c := newChannelWorld(t)
	c.send(c.orch, c.worker, "implement the auth module")
	root2 := filepath.Join(t.TempDir(), "root2")
	in2 := []string{"WCOMM_ROOT=" + root2}
	// The worker's exchange lives in the first root; the second root's question is asked by
	// its own orchestrator's request.
	requireCode(t, 0, c.as(c.orch, in2, "send", "--to", c.worker, "--", "implement the billing module"))

	ask := func(env []string, task, text string) {
		r := c.as(c.worker, env, "ask", "--task", task, "--urgency", "non-blocking", "--context", "Both work.",
			"--option", "Use bcrypt", "--option", "Use argon2", "--", text)
		requireCode(t, 0, r)
		assert.NotContains(t, r.stderr, "answer channels")
	}
	ask(nil, "task-1", "Question of the first root?")
	ask(in2, "task-2", "Question of the second root?")
	m1, tok1 := postIn(c.tg, "Question of the first root?")
	m2, tok2 := postIn(c.tg, "Question of the second root?")
	assert.True(t, lockfile.Running(c.root, c.key()))
	assert.True(t, lockfile.Running(root2, c.key()))

	c.tg.Press(777, c.tg.Chat, m2.ID, "a:"+tok2+":2")
	c.tg.Press(777, c.tg.Chat, m1.ID, "a:"+tok1+":1")
	waitFor(t, 30*time.Second, func() bool { return c.question("task-1").Answer != nil }, "the first root's answer")
	assert.Equal(t, "Use bcrypt", c.question("task-1").Answer.Answer)
	var listed string
	waitFor(t, 30*time.Second, func() bool {
		r := c.as("", in2, "questions", "--json")
		listed = r.stdout
		return strings.Contains(r.stdout, `"answer": "Use argon2"`)
	}, "the second root's answer")
	assert.Contains(t, listed, `"source": "telegram"`)
	c.tg.Mu.Lock()
	defer c.tg.Mu.Unlock()
	assert.Zero(t, c.tg.Conflicts, "the bridges polled one at a time")
	for _, m := range c.tg.Sent {
		assert.NotContains(t, m.Text, "No question has the token")
	}
}

// TestE2EBridgeRefusesAnotherUsersRoot: 'wcomm bridge' in a root owned by another user (uid
// 65534) is refused with the root check every command makes, and creates nothing in it.
func TestE2EBridgeRefusesAnotherUsersRoot(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Fatal("this test makes a folder of another user: it runs as root (the test image's user)")
	}
	c := newChannelWorld(t)
	root := filepath.Join(t.TempDir(), "theirs")
	require.NoError(t, os.Mkdir(root, 0o777))
	require.NoError(t, os.Chown(root, 65534, 65534))
	r := c.as("", []string{"WCOMM_ROOT=" + root}, "bridge")
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "is owned by uid 65534, not by you")
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	assert.Empty(t, entries, "the bridge made its folder in another user's root")
}

// TestE2EBridgeMissingTokenFileSaidByAskAndDoctor: channels whose token file does not exist. The
// ask says the channels cannot be reached and why, and that the question still reaches the person
// otherwise; no bridge is started to die; doctor words it for a person.
func TestE2EBridgeMissingTokenFileSaidByAskAndDoctor(t *testing.T) {
	t.Parallel()
	c := newChannelWorld(t)
	missing := filepath.Join(c.work, "no-such.token")
	cfg := fmt.Sprintf("channels:\n  telegram:\n    api_url: %s\n    token_file: %s\n    chat_id: %d\n    allowed_users: [777]\n", c.tg.Srv.URL, missing, c.tg.Chat)
	require.NoError(t, os.WriteFile(filepath.Join(c.xdg, "wcomm", "config.yaml"), []byte(cfg), 0o600))
	noEnv := []string{bridge.EnvTelegramToken + "="}
	c.send(c.orch, c.worker, "implement the auth module")

	r := c.as(c.worker, noEnv, "ask", "--task", "task-1", "--urgency", "non-blocking", "--context", "Both work.",
		"--option", "Use bcrypt", "--option", "Use argon2", "--", "Which hash?")
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "your answer channels cannot be reached")
	assert.Contains(t, r.stderr, "token file "+missing+" does not exist")
	assert.Contains(t, r.stderr, "still reaches you")
	assert.False(t, lockfile.Running(c.root, c.key()), "a bridge was started to die")
	_, err := os.Stat(lockfile.LogPath(c.root, c.key()))
	assert.ErrorIs(t, err, os.ErrNotExist, "a bridge was started to die")

	d := c.as("", noEnv, "doctor")
	requireCode(t, 1, d)
	assert.Contains(t, d.stdout, "token file "+missing+" does not exist")
	assert.NotContains(t, d.stdout+d.stderr, "__channels")
}
