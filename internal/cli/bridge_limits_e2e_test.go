package cli

// End-to-end tests of what the bridge posts where: a project's trusted channels carry only the
// questions asked in that project, and a question within ask's limits (over every chat service's)
// is fitted to the service and holds up no other. The real binaries, a private tmux server, and
// fakes of the Telegram Bot API that enforce its limits.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/bridge/chatfake"
	"github.com/wcomm/wcomm/internal/bridge/lockfile"
	"github.com/wcomm/wcomm/messages"
)

// asIn runs wcomm in folder dir, inside pane ("" = outside any pane).
func (c *channelWorld) asIn(dir, pane string, args ...string) result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := c.cmd(ctx, call{pane: pane, env: append([]string(nil), c.env...)}, c.withSocket(args)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return finish(c.t, args, cmd.Run(), &stdout, &stderr)
}

// postIn waits for the question whose text holds text to be posted to tg, and returns it with
// its token.
func postIn(tg *chatfake.Telegram, text string) (chatfake.Msg, string) {
	var m chatfake.Msg
	tg.WaitFor("the question posted to the chat", func() bool {
		for _, s := range tg.Sent {
			if strings.Contains(s.Text, text) && len(s.Keyboard) > 0 {
				m = *s
				return true
			}
		}
		return false
	})
	return m, strings.Split(m.Keyboard[0][0].CallbackData, ":")[1]
}

// postedTo reports whether any message sent to tg holds text.
func postedTo(tg *chatfake.Telegram, text string) bool {
	for _, m := range tg.SentMsgs() {
		if strings.Contains(m.Text, text) {
			return true
		}
	}
	return false
}

// TestE2EBridgeProjectChannelsCarryOnlyTheirQuestions: the user's config names one chat; project
// X's trusted .wcomm.yaml another bot, chat and allowed user; project Y has no settings of its
// own. Asks from both folders: each question reaches only its own chat, each folder's ask starts
// the bridge of its own channels, and X's user cannot answer Y's question.
func TestE2EBridgeProjectChannelsCarryOnlyTheirQuestions(t *testing.T) {
	t.Parallel()
	c := newChannelWorld(t)
	proj := chatfake.NewTelegram(t)
	// The token is the environment's, one for every channel: the project's bot answers to it too.
	proj.Chat, proj.BotTag, proj.Token = -1005550001, "project_bot", c.tg.Token
	x, y := filepath.Join(c.work, "project-x"), filepath.Join(c.work, "project-y")
	require.NoError(t, os.Mkdir(x, 0o700))
	require.NoError(t, os.Mkdir(y, 0o700))
	conf := filepath.Join(x, ".wcomm.yaml")
	require.NoError(t, os.WriteFile(conf, []byte(fmt.Sprintf("channels:\n  telegram:\n    api_url: %s\n    chat_id: %d\n    allowed_users: [888]\n",
		proj.Srv.URL, proj.Chat)), 0o600))
	requireCode(t, 0, c.asPerson(nil, "trust", conf))
	kx, ky := c.keyIn(x), c.keyIn(y)
	require.NotEqual(t, kx, ky, "the project's channels are not the user's")
	c.send(c.orch, c.worker, "implement the auth module")

	ask := func(dir, task, text string) {
		r := c.asIn(dir, c.worker, "ask", "--task", task, "--urgency", "non-blocking", "--context", "Both work.",
			"--option", "Use bcrypt", "--option", "Use argon2", "--", text)
		requireCode(t, 0, r)
		assert.NotContains(t, r.stderr, "could not start the bridge")
	}
	ask(x, "task-x", "Question asked in project X?")
	mx, tokX := postIn(proj, "Question asked in project X?")
	ask(y, "task-y", "Question asked in project Y?")
	my, tokY := postIn(c.tg, "Question asked in project Y?")
	assert.True(t, lockfile.Running(c.root, kx), "X's ask started the bridge of X's channels")
	assert.True(t, lockfile.Running(c.root, ky), "Y's ask started the bridge of the user's channels")
	// One more question in X: X's bridge posts its questions oldest first, so once this one is
	// in X's chat, X's bridge has looked at Y's question and passed it by.
	ask(x, "task-x2", "A second question in project X?")
	postIn(proj, "A second question in project X?")
	assert.False(t, postedTo(proj, "project Y"), "Y's question never reaches X's chat")
	assert.False(t, postedTo(c.tg, "project X"), "X's questions never reach the user's chat")

	// X's user tries to answer Y's question: by a button's data in X's chat, by its command, and
	// in the user's chat, where X's user is nobody. Nothing is recorded.
	proj.Press(888, proj.Chat, mx.ID, "a:"+tokY+":1")
	proj.Say(888, proj.Chat, "/details_"+tokY, 0)
	c.tg.Press(888, c.tg.Chat, my.ID, "a:"+tokY+":1")
	proj.WaitFor("X's bridge to turn both down", func() bool {
		said := false
		for _, m := range proj.Sent {
			said = said || strings.HasPrefix(m.Text, "No question has the token "+tokY)
		}
		return said && len(proj.Acks) > 0
	})
	proj.Mu.Lock()
	assert.Equal(t, "unknown question", proj.Acks[0])
	proj.Mu.Unlock()
	// The user's own answer, in the user's chat, is the one that counts.
	c.tg.Press(777, c.tg.Chat, my.ID, "a:"+tokY+":2")
	waitFor(t, 20*time.Second, func() bool { return c.question("task-y").Answer != nil }, "Y's question answered")
	got := c.question("task-y")
	assert.Equal(t, "Use argon2", got.Answer.Answer)
	assert.Equal(t, "telegram", got.Answer.Source)
	log, err := os.ReadFile(lockfile.LogPath(c.root, ky))
	require.NoError(t, err)
	assert.Contains(t, string(log), "ignored a button press from user 888", "%s", log)

	// X's own user answers X's question in X's chat.
	proj.Press(888, proj.Chat, mx.ID, "a:"+tokX+":1")
	waitFor(t, 20*time.Second, func() bool { return c.question("task-x").Answer != nil }, "X's question answered")
	assert.Equal(t, "Use bcrypt", c.question("task-x").Answer.Answer)

	// The question records where it was asked and which channels applied there.
	r := c.as("", nil, "questions", "--json")
	requireCode(t, 0, r)
	var listed struct {
		Questions []struct {
			Task     string `json:"task_id"`
			Channels string `json:"channels"`
			AskedIn  string `json:"asked_in"`
		} `json:"questions"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &listed))
	for _, q := range listed.Questions {
		switch q.Task {
		case "task-x":
			assert.Equal(t, kx, q.Channels)
			assert.Equal(t, x, q.AskedIn)
		case "task-y":
			assert.Equal(t, ky, q.Channels)
		}
	}
}

// TestE2EBridgeLongQuestionAndHugeFileHoldUpNothing: a question at ask's own limits (2,000
// characters, 26 options of 300) is over Telegram's 4096; it is posted clipped, /details shows it
// whole in several messages, and the next question is posted. A 10 MB question file written by
// hand into the root is refused unread, recorded in the bridge's log and the question listing,
// and never posted.
func TestE2EBridgeLongQuestionAndHugeFileHoldUpNothing(t *testing.T) {
	t.Parallel()
	c := newChannelWorld(t)
	c.send(c.orch, c.worker, "implement the auth module")
	text := "LONG " + strings.Repeat("q", messages.MaxQuestionLen-20) + " END-OF-TEXT"
	args := []string{"ask", "--task", "task-l", "--urgency", "non-blocking", "--context", strings.Repeat("c", messages.MaxContextLen)}
	var opts []string
	for i := 0; i < messages.MaxOptions; i++ {
		o := fmt.Sprintf("option %02d %s END-%02d", i, strings.Repeat("o", messages.MaxOptionLen-20), i)
		opts = append(opts, o)
		args = append(args, "--option", o)
	}
	requireCode(t, 0, c.as(c.worker, nil, append(args, "--", text)...))
	m, tok := c.post("LONG qqq")
	assert.LessOrEqual(t, len([]rune(m.Text)), chatfake.TelegramMaxText)

	// A question file of 10 MB, as valid JSON, written by hand beside the asked one.
	l := c.question("task-l")
	huge := map[string]any{"id": "task-h.q1-abcd", "task_id": "task-h", "seq": 1, "type": "freeform", "urgency": "blocking",
		"question": strings.Repeat("h", 10<<20), "worker": c.worker, "orchestrator": c.orch, "asked_at": time.Now().UTC()}
	data, err := json.Marshal(huge)
	require.NoError(t, err)
	hugeFile := filepath.Join(l.Dir, "task-h.q1.question")
	require.NoError(t, os.WriteFile(hugeFile, data, 0o600))

	requireCode(t, 0, c.as(c.worker, nil, qAskArgs("task-3", "--urgency", "non-blocking")...))
	c.post("Should the auth module use bcrypt or argon2?")

	n := len(c.tg.SentMsgs())
	c.tg.Say(777, c.tg.Chat, "/details_"+tok, 0)
	var whole string
	c.tg.WaitFor("the whole question in /details", func() bool {
		var b strings.Builder
		for _, s := range c.tg.Sent[n:] {
			b.WriteString(s.Text + "\n")
		}
		whole = b.String()
		return strings.Contains(whole, "END-25") && strings.Contains(whole, "Accepted:")
	})
	assert.Contains(t, whole, text)
	for _, o := range opts {
		assert.Contains(t, whole, o)
	}

	r := c.as("", nil, "questions", "--json")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "task-h.q1.question is unreadable: it is")
	c.tg.Mu.Lock()
	for _, s := range c.tg.Sent {
		assert.NotContains(t, s.Text, "hhhhhhhh", "the hand-written file is never posted")
	}
	c.tg.Mu.Unlock()
	waitFor(t, 20*time.Second, func() bool {
		log, _ := os.ReadFile(lockfile.LogPath(c.root, c.key()))
		return strings.Contains(string(log), "a question file is posted nowhere") && strings.Contains(string(log), "task-h.q1.question")
	}, "the bridge's log to tell of the huge file")
}
