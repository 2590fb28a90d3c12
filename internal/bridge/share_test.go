package bridge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/bridge/chatfake"
)

// countSent counts the messages the bot sent whose text starts with prefix.
func countSent(f *chatfake.Telegram, prefix string) int {
	n := 0
	for _, m := range f.SentMsgs() {
		if strings.HasPrefix(m.Text, prefix) {
			n++
		}
	}
	return n
}

// TestBridgesOfOneBotEachTakeTheirOwnAnswers: two roots' bridges on one bot (the fake answers a
// second concurrent getUpdates with 409, as the Bot API does). A button press, a reply and a
// command each reach the bridge of their own question, an unknown token is answered once, and
// when the bridge that polls ends, the other takes over without losing an answer.
func TestBridgesOfOneBotEachTakeTheirOwnAnswers(t *testing.T) {
	f := chatfake.NewTelegram(t)
	cfg, env := tgConfig(f)
	e1, e2 := &fakeEngine{}, &fakeEngine{}
	a := e1.add(numberedQ, "a1b2")
	b := e2.add(yesNoQ, "c3d4")
	c := e2.add(numberedQ, "e5f6")
	r1 := startHub(t, tempRoot(t), e1, cfg, env)
	r2 := startHub(t, tempRoot(t), e2, cfg, env)
	ma := questionMsg(t, f, "a1b2")
	questionMsg(t, f, "c3d4")
	mc := questionMsg(t, f, "e5f6")

	f.Press(777, f.Chat, ma.ID, "a:a1b2:2")
	f.Say(777, f.Chat, "/yes_c3d4", 0)
	f.Say(777, f.Chat, "/yes_0000", 0)
	eventually(t, "both roots' answers recorded", func() bool { return e1.answer(a) != nil && e2.answer(b) != nil })
	assert.Equal(t, "old cache", e1.answer(a).Answer)
	assert.Equal(t, "yes", e2.answer(b).Answer)
	tgSent(f, "the unknown token answered", func(s string) bool { return strings.HasPrefix(s, "No question has the token 0000") })

	// The bridge that polls ends; the other takes over and takes the reply to its question.
	r1.stop()
	f.Say(777, f.Chat, "B", mc.ID)
	eventually(t, "the answer after the poller ended", func() bool { return e2.answer(c) != nil })
	assert.Equal(t, "old cache", e2.answer(c).Answer)
	r2.stop()

	assert.Equal(t, 1, countSent(f, "No question has the token"), "no answer was taken by the wrong bridge, the unknown one told once: %s\n%s", r1.log, r2.log)
	assert.Equal(t, 1, e1.attemptCount())
	assert.Equal(t, 2, e2.attemptCount())
	f.Mu.Lock()
	assert.Zero(t, f.Conflicts, "one poller at a time")
	f.Mu.Unlock()
	// The folder where they met is private.
	st, err := os.Stat(meetDir(f.Srv.URL, f.Token, env))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm())
}

// TestPendingListedByEachBridgeOfTheChat: /pending in a chat two roots' bridges share is answered
// by each, for its own questions.
func TestPendingListedByEachBridgeOfTheChat(t *testing.T) {
	f := chatfake.NewTelegram(t)
	cfg, env := tgConfig(f)
	e1, e2 := &fakeEngine{}, &fakeEngine{}
	e1.add(numberedQ, "a1b2")
	e2.add(yesNoQ, "c3d4")
	startHub(t, tempRoot(t), e1, cfg, env)
	startHub(t, tempRoot(t), e2, cfg, env)
	questionMsg(t, f, "a1b2")
	questionMsg(t, f, "c3d4")
	// Each bridge answers for itself once it has joined the bot's meeting folder: a bridge that has
	// posted may still be opening its socket there under load.
	eventually(t, "both bridges in the bot's folder", func() bool {
		socks, _ := filepath.Glob(filepath.Join(runtimeDir(f), "wcomm", "*", "*.sock"))
		return len(socks) == 2
	})
	f.Say(777, f.Chat, "/pending", 0)
	tgSent(f, "root 1's list", func(s string) bool { return strings.Contains(s, "• question a1b2") })
	tgSent(f, "root 2's list", func(s string) bool { return strings.Contains(s, "• question c3d4") })
}

// TestTelegramButtonAnswersOnlyTheQuestionOfItsPost: a press on question A's post whose data
// names question B (crafted by a client, not a button of B's) answers nothing.
func TestTelegramButtonAnswersOnlyTheQuestionOfItsPost(t *testing.T) {
	f := chatfake.NewTelegram(t)
	eng := &fakeEngine{}
	a := eng.add(numberedQ, "a1b2")
	b := eng.add(yesNoQ, "c3d4")
	r := runTelegram(t, f, eng)
	ma := questionMsg(t, f, "a1b2")
	questionMsg(t, f, "c3d4")

	f.Press(777, f.Chat, ma.ID, "a:c3d4:1")
	f.WaitFor("the press acknowledged", func() bool { return len(f.Acks) == 1 })
	f.Mu.Lock()
	assert.Equal(t, "unknown question", f.Acks[0])
	f.Mu.Unlock()
	assert.Nil(t, eng.answer(b), "B was answered from A's post")
	assert.Zero(t, eng.attemptCount())
	assert.Contains(t, r.log.String(), "not the question of message")

	// The press of A's own button on A's post answers A.
	f.Press(777, f.Chat, ma.ID, "a:a1b2:1")
	eventually(t, "A answered", func() bool { return eng.answer(a) != nil })
}

// TestTelegramRepeatedUpdateAppliedOnceAndOffsetNeverBack: an update the service sends twice in
// one batch is applied once, and one below the offset after it neither applies nor moves the
// offset back.
func TestTelegramRepeatedUpdateAppliedOnceAndOffsetNeverBack(t *testing.T) {
	f := chatfake.NewTelegram(t)
	cfg, env := tgConfig(f)
	eng := &fakeEngine{}
	a := eng.add(numberedQ, "a1b2")
	r := startHub(t, tempRoot(t), eng, cfg, env)
	m := questionMsg(t, f, "a1b2")

	press := chatfake.Update{UpdateID: 5000, Callback: &chatfake.CallbackQuery{ID: "cb1", From: chatfake.User{ID: 777},
		Message: &chatfake.Message{MessageID: m.ID, Chat: chatfake.Chat{ID: f.Chat}}, Data: "a:a1b2:2"}}
	older := chatfake.Update{UpdateID: 4990, Message: &chatfake.Message{MessageID: 900, From: &chatfake.User{ID: 777},
		Chat: chatfake.Chat{ID: f.Chat}, Text: "/status", Entities: []chatfake.Entity{{Type: "bot_command", Length: 7}}}}
	f.PushAs(press, press, older)
	eventually(t, "the answer", func() bool { return eng.answer(a) != nil })
	// A later update shows the batch is done.
	help := *older.Message
	help.Text = "/help"
	help.Entities = []chatfake.Entity{{Type: "bot_command", Length: 5}}
	f.PushAs(chatfake.Update{UpdateID: 5001, Message: &help})
	tgSent(f, "the help", func(s string) bool { return strings.HasPrefix(s, "wcomm bridge") })
	r.stop()
	assert.Equal(t, 1, eng.attemptCount(), "the repeated press applied once: %s", r.log)
	assert.Zero(t, countSent(f, "too late"))
	assert.Zero(t, countSent(f, "1 question(s)")+countSent(f, "0 question(s)"), "the update below the offset was applied")
	off := filepath.Join(meetDir(f.Srv.URL, f.Token, env), "offset")
	data, err := os.ReadFile(off)
	require.NoError(t, err)
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	require.NoError(t, err)
	assert.Equal(t, int64(5002), n, "the offset went back")
}

// TestTelegramRestartedBridgeConfirmsTheAnswerItRecorded: a bridge killed after it recorded an
// answer and before it confirmed the update gets that update again once restarted; the person is
// told their answer is recorded, not that it is too late.
func TestTelegramRestartedBridgeConfirmsTheAnswerItRecorded(t *testing.T) {
	f := chatfake.NewTelegram(t)
	cfg, env := tgConfig(f)
	eng := &fakeEngine{}
	a := eng.add(numberedQ, "a1b2")
	root := tempRoot(t)
	r1 := startHub(t, root, eng, cfg, env)
	m := questionMsg(t, f, "a1b2")
	r1.stop()

	// What the first bridge did before it was killed: it noted the update, and the engine
	// recorded its answer; the update was not confirmed.
	u := f.Press(777, f.Chat, m.ID, "a:a1b2:2")
	path := filepath.Join(Dir(root, ""), stateFile)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(data, &s))
	s["applying"] = map[string]string{"event": "update " + strconv.FormatInt(u, 10), "id": a}
	data, err = json.Marshal(s)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	_, err = eng.Answer(t.Context(), tmuxcommAnswer(a, "old cache", "telegram"))
	require.NoError(t, err)

	r2 := startHub(t, root, eng, cfg, env)
	f.WaitFor("the press acknowledged", func() bool { return len(f.Acks) == 1 })
	f.Mu.Lock()
	assert.Equal(t, "recorded: old cache", f.Acks[0], "%s", r2.log)
	f.Mu.Unlock()
	tgSent(f, "the confirmation", func(s string) bool { return strings.HasPrefix(s, "✅ old cache · a1b2") })
	assert.False(t, strings.Contains(strings.Join(texts(f), "\n"), "stale"), "the person was told their answer is stale")

	// Another person's later press of the same button is too late, as before.
	f.Press(777, f.Chat, m.ID, "a:a1b2:2")
	f.WaitFor("the second press acknowledged", func() bool { return len(f.Acks) == 2 })
	f.Mu.Lock()
	assert.Contains(t, f.Acks[1], "too late")
	f.Mu.Unlock()
}

func texts(f *chatfake.Telegram) []string {
	var out []string
	for _, m := range f.SentMsgs() {
		out = append(out, m.Text)
	}
	return out
}
