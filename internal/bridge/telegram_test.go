package bridge

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/bridge/chatfake"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/actions"
)

var (
	numberedQ = messages.Question{Text: "Use Store<User> & co or the old cache?", Task: "task-3", Type: messages.Numbered,
		Options: []string{"Store<User> & co", "old cache"}, Context: `The "plan" names <none>; both build.`}
	yesNoQ = messages.Question{Text: "May I rename Login?", Task: "task-4", Type: messages.YesNo, Context: "Tests pass either way."}
)

// questionMsg waits for the post of the question whose token is tok.
func questionMsg(t *testing.T, f *chatfake.Telegram, tok string) chatfake.Msg {
	t.Helper()
	var found chatfake.Msg
	f.WaitFor("the question "+tok+" posted", func() bool {
		for _, m := range f.Sent {
			if strings.Contains(m.Text, tok) && len(m.Keyboard) > 0 {
				found = *m
				return true
			}
		}
		return false
	})
	return found
}

func lastReplyTo(f *chatfake.Telegram, id int64) *chatfake.Msg {
	for i := len(f.Sent) - 1; i >= 0; i-- {
		if f.Sent[i].ReplyTo == id {
			return f.Sent[i]
		}
	}
	return nil
}

func TestTelegramPostsCompactEscapedQuestionWithButtons(t *testing.T) {
	f := chatfake.NewTelegram(t)
	eng := &fakeEngine{}
	id := eng.add(numberedQ, "a1b2")
	yid := eng.add(yesNoQ, "c3d4")
	runTelegram(t, f, eng)

	m := questionMsg(t, f, "a1b2")
	// The fake parsed the HTML as Telegram does: the text arrives as written.
	assert.Contains(t, m.Text, "Use Store<User> & co or the old cache?")
	assert.Contains(t, m.Text, `The "plan" names <none>; both build.`)
	assert.Contains(t, m.Text, "A) Store<User> & co")
	assert.Contains(t, m.Text, "/details_a1b2")
	require.Len(t, flatten(m.Keyboard), 2, "one button per option")
	assert.Equal(t, "a:a1b2:1", flatten(m.Keyboard)[0].CallbackData)
	assert.NotContains(t, m.Text, "/yes_", "a numbered question offers no yes/no commands")
	assert.NotContains(t, m.Text, id+"\n", "compact: the token, not the whole id, names it")

	y := questionMsg(t, f, "c3d4")
	assert.Contains(t, y.Text, "/yes_c3d4")
	assert.Contains(t, y.Text, "/no_c3d4")
	btn := flatten(y.Keyboard)
	require.Len(t, btn, 2)
	assert.Equal(t, "yes", btn[0].Text)
	assert.Equal(t, "no", btn[1].Text)
	_ = yid
}

func flatten(rows [][]chatfake.Button) []chatfake.Button {
	var out []chatfake.Button
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

func TestTelegramButtonPressAnswersAcknowledgesAndConfirms(t *testing.T) {
	f := chatfake.NewTelegram(t)
	eng := &fakeEngine{}
	id := eng.add(numberedQ, "a1b2")
	runTelegram(t, f, eng)
	m := questionMsg(t, f, "a1b2")

	f.Press(777, f.Chat, m.ID, "a:a1b2:2")
	eventually(t, "the answer recorded", func() bool { return eng.answer(id) != nil })
	a := eng.answer(id)
	assert.Equal(t, "old cache", a.Answer)
	assert.Equal(t, "telegram", a.Source)
	assert.Equal(t, "old cache", a.Raw)
	f.WaitFor("the press acknowledged", func() bool { return len(f.Acks) == 1 })
	assert.Contains(t, f.Acks[0], "recorded: old cache")
	f.WaitFor("one confirmation", func() bool { return lastReplyTo(f, m.ID) != nil })
	f.Mu.Lock()
	c := *lastReplyTo(f, m.ID)
	f.Mu.Unlock()
	for _, want := range []string{"old cache", "a1b2", "source telegram", "next: worker %5", "request task-3"} {
		assert.Contains(t, c.Text, want)
	}
	// The question's own message now says it is answered, without buttons.
	f.WaitFor("the question marked answered", func() bool {
		q := f.Msgs[m.ID]
		return q.Edits > 0 && len(q.Keyboard) == 0 && strings.Contains(q.Text, "answered: old cache (source telegram)")
	})
}

func TestTelegramTokenizedCommandsWithBotSuffix(t *testing.T) {
	f := chatfake.NewTelegram(t)
	eng := &fakeEngine{}
	id := eng.add(yesNoQ, "c3d4")
	r := runTelegram(t, f, eng)
	m := questionMsg(t, f, "c3d4")

	// A command addressed to another bot in the group is not ours.
	f.Say(777, f.Chat, "/no_c3d4@SomeOtherBot", 0)
	f.Say(777, f.Chat, "/yes_c3d4@wcomm_test_bot", 0)
	eventually(t, "the answer recorded", func() bool { return eng.answer(id) != nil })
	assert.Equal(t, "yes", eng.answer(id).Answer)
	assert.Equal(t, "/yes_c3d4@wcomm_test_bot"[1:4], eng.answer(id).Raw)
	tgSent(f, "the compact confirmation", func(s string) bool { return strings.HasPrefix(s, "✅ yes · c3d4 · source telegram") })
	assert.Equal(t, 1, eng.attemptCount(), "the other bot's command was not taken: %s", r.log)
	_ = m
}

func TestTelegramReplyToTheQuestionAnswersIt(t *testing.T) {
	f := chatfake.NewTelegram(t)
	eng := &fakeEngine{}
	id := eng.add(numberedQ, "a1b2")
	runTelegram(t, f, eng)
	m := questionMsg(t, f, "a1b2")
	f.Say(777, f.Chat, "B", m.ID)
	eventually(t, "the answer recorded", func() bool { return eng.answer(id) != nil })
	assert.Equal(t, "old cache", eng.answer(id).Answer)
	assert.Equal(t, "B", eng.answer(id).Raw)
	assert.Equal(t, "telegram", eng.answer(id).Source)
}

func TestTelegramInvalidAnswerGetsAcceptedFormsAndStaysOpen(t *testing.T) {
	f := chatfake.NewTelegram(t)
	eng := &fakeEngine{}
	id := eng.add(yesNoQ, "c3d4")
	runTelegram(t, f, eng)
	m := questionMsg(t, f, "c3d4")
	f.Say(777, f.Chat, "maybe <later>", m.ID)
	forms := tgSent(f, "the accepted forms", func(s string) bool { return strings.Contains(s, "is not an answer to c3d4") })
	for _, want := range []string{"yes or no", "/yes_c3d4", "maybe <later>"} {
		assert.Contains(t, forms, want)
	}
	assert.Nil(t, eng.answer(id), "the question stays open")
	f.Say(777, f.Chat, "no", m.ID)
	eventually(t, "a valid answer after the invalid one", func() bool { return eng.answer(id) != nil })
	assert.Equal(t, "no", eng.answer(id).Answer)
}

func TestTelegramStrangersChangeNothingAndLearnNothing(t *testing.T) {
	f := chatfake.NewTelegram(t)
	eng := &fakeEngine{}
	id := eng.add(yesNoQ, "c3d4")
	r := runTelegram(t, f, eng)
	m := questionMsg(t, f, "c3d4")
	before := len(f.SentMsgs())

	f.Say(999, f.Chat, "/yes_c3d4", 0)       // a stranger in the chat
	f.Say(999, f.Chat, "yes", m.ID)          // a stranger's reply
	f.Press(999, f.Chat, m.ID, "a:c3d4:1")   // a stranger's button press
	f.Say(777, -100999, "/yes_c3d4", 0)      // an allowed user, in another chat
	f.Say(999, f.Chat, "/pending", 0)        // a stranger asking what waits
	last := f.Say(777, f.Chat, "/status", 0) // then the allowed user, to know all were read
	f.WaitFor("the allowed user's /status answered", func() bool { return f.Served[last].After(f.Served[last-1]) || len(f.Sent) > before })
	eventually(t, "the status reply", func() bool { return len(f.SentMsgs()) == before+1 })

	assert.Nil(t, eng.answer(id), "nothing changed")
	assert.Equal(t, 0, eng.attemptCount(), "no answer attempt at all")
	f.Mu.Lock()
	assert.Empty(t, f.Acks, "no reply to a stranger's press")
	f.Mu.Unlock()
	sent := f.SentMsgs()
	assert.Contains(t, sent[len(sent)-1].Text, "question(s) pending", "the only reply is the allowed user's")
	assert.Equal(t, 5, strings.Count(r.log.String(), "ignored"), "each refused update is logged: %s", r.log)
}

func TestTelegramLateAnswerIsStaleAndTheChatIsToldWhoWon(t *testing.T) {
	f := chatfake.NewTelegram(t)
	eng := &fakeEngine{}
	id := eng.add(yesNoQ, "c3d4")
	runTelegram(t, f, eng)
	m := questionMsg(t, f, "c3d4")
	// The local console answers first.
	_, err := eng.Answer(context.Background(), tmuxcommAnswer(id, "no", "local"))
	require.NoError(t, err)
	f.WaitFor("the post marked answered elsewhere", func() bool {
		return strings.Contains(f.Msgs[m.ID].Text, "answered: no (source local)") && len(f.Msgs[m.ID].Keyboard) == 0
	})
	f.Say(777, f.Chat, "/yes_c3d4", 0)
	tgSent(f, "told it is stale", func(s string) bool { return strings.HasPrefix(s, "⏱ stale") && strings.Contains(s, "source local") })
	assert.Equal(t, "no", eng.answer(id).Answer, "the first answer stands")
	assert.Equal(t, "local", eng.answer(id).Source)
}

func TestTelegramHelpPendingDetails(t *testing.T) {
	f := chatfake.NewTelegram(t)
	eng := &fakeEngine{}
	eng.add(numberedQ, "a1b2")
	runTelegram(t, f, eng)
	questionMsg(t, f, "a1b2")
	reply := func(cmd string) string {
		n := len(f.SentMsgs())
		f.Say(777, f.Chat, cmd, 0)
		eventually(t, "a reply to "+cmd, func() bool { return len(f.SentMsgs()) > n })
		return f.SentMsgs()[n].Text
	}
	help := reply("/help")
	var cmds []string
	for _, w := range strings.Fields(help) {
		if strings.HasPrefix(w, "/") {
			cmds = append(cmds, w)
		}
	}
	assert.Equal(t, []string{"/status", "/summary", "/pending", "/timeline", "/help"}, cmds)
	assert.Contains(t, reply("/pending"), "a1b2")
	d := reply("/details_a1b2")
	assert.Contains(t, d, `The "plan" names <none>; both build.`)
	assert.Contains(t, d, "task-3.q1-a1b2")
	assert.Contains(t, reply("/status@wcomm_test_bot"), "1 question(s) pending")
	assert.Contains(t, reply("/timeline"), "nothing decided yet")
}

func TestTelegramRestartNeitherRepostsNorReapplies(t *testing.T) {
	f := chatfake.NewTelegram(t)
	eng := &fakeEngine{}
	id := eng.add(yesNoQ, "c3d4")
	other := eng.add(numberedQ, "a1b2")
	cfg, env := tgConfig(f)
	root := tempRoot(t)
	r := startHub(t, root, eng, cfg, env)
	questionMsg(t, f, "c3d4")
	questionMsg(t, f, "a1b2")
	f.Say(777, f.Chat, "/yes_c3d4", 0)
	eventually(t, "the answer", func() bool { return eng.answer(id) != nil })
	f.WaitFor("the confirmation", func() bool {
		return strings.HasPrefix(f.Sent[len(f.Sent)-1].Text, "✅") || strings.Contains(f.Sent[len(f.Sent)-1].Text, "answered")
	})
	r.stop()
	posts := countPosts(f)
	attempts := eng.attemptCount()

	// The state on disk: private, with the posts and the offset.
	st, err := os.Stat(filepath.Join(Dir(root, ""), stateFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	dst, err := os.Stat(Dir(root, ""))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), dst.Mode().Perm())

	sent := len(f.SentMsgs())
	r2 := startHub(t, root, eng, cfg, env)
	// A new update shows the second bridge is polling past the old ones.
	f.Say(777, f.Chat, "B", questionMsg(t, f, "a1b2").ID)
	eventually(t, "the second bridge's answer", func() bool { return eng.answer(other) != nil })
	tgSent(f, "the second bridge's confirmation", func(s string) bool { return strings.HasPrefix(s, "✅ old cache · a1b2") })
	assert.Equal(t, posts, countPosts(f), "no question posted again: %s", r2.log)
	assert.Len(t, f.SentMsgs(), sent+1, "the second bridge said nothing but its confirmation: no summary of old questions")
	assert.Equal(t, attempts+1, eng.attemptCount(), "no old update applied again")
}

func countPosts(f *chatfake.Telegram) int {
	n := 0
	for _, m := range f.SentMsgs() {
		if strings.Contains(m.Raw, "Reply to this message to answer") {
			n++
		}
	}
	return n
}

func TestTelegramServiceDownThenBackPostsWithBackoff(t *testing.T) {
	f := chatfake.NewTelegram(t)
	eng := &fakeEngine{}
	f.FailNext("sendMessage", http.StatusInternalServerError, http.StatusTooManyRequests, http.StatusBadGateway)
	f.FailNext("getUpdates", http.StatusBadGateway)
	id := eng.add(yesNoQ, "c3d4")
	r := runTelegram(t, f, eng)
	// While the service fails, answering locally works as before.
	_, err := eng.Answer(context.Background(), tmuxcommAnswer(eng.add(numberedQ, "a1b2"), "A", "local"))
	require.NoError(t, err)
	m := questionMsg(t, f, "c3d4")
	assert.GreaterOrEqual(t, f.Calls["sendMessage"], 4)
	log := r.log.String()
	assert.Contains(t, log, "retry after 1s", "429's retry_after is honoured")
	assert.Contains(t, log, "trying again")
	assert.NotContains(t, log, f.Token)
	f.Say(777, f.Chat, "yes", m.ID)
	eventually(t, "the answer once the service is back", func() bool { return eng.answer(id) != nil })
}

func TestTelegramErrorsAndDoctorNeverHoldTheToken(t *testing.T) {
	f := chatfake.NewTelegram(t)
	cfg, env := tgConfig(f)
	hub := &Hub{Engine: &fakeEngine{}, Root: tempRoot(t)}
	require.NoError(t, hub.Open())

	// A wrong token: 401, said plainly.
	bad := envOf(map[string]string{EnvTelegramToken: "999:wrong-secret"})
	chans, err := Open(cfg, hub, bad)
	require.NoError(t, err)
	checks := chans[0].Check(context.Background())
	require.Len(t, checks, 1)
	assert.False(t, checks[0].OK)
	assert.Contains(t, checks[0].Detail, "401")
	assert.NotContains(t, checks[0].Detail, "wrong-secret")

	// The right one: getMe and getChat pass, and nothing is posted.
	chans, err = Open(cfg, hub, env)
	require.NoError(t, err)
	checks = chans[0].Check(context.Background())
	require.Len(t, checks, 2)
	assert.True(t, checks[0].OK && checks[1].OK, "%+v", checks)
	assert.Zero(t, f.Calls["sendMessage"])

	// A chat the bot cannot reach.
	cfg.Telegram.ChatID = -1
	chans, err = Open(cfg, hub, env)
	require.NoError(t, err)
	checks = chans[0].Check(context.Background())
	assert.False(t, checks[1].OK)
	assert.Contains(t, checks[1].Detail, "chat not found")

	// A service that is not there: Go's url.Error would quote the URL, token and all.
	f.Srv.Close()
	tg := chans[0].(*telegram)
	tg.joinOnce.Do(func() { close(tg.joined) }) // as Receive does first; it is not running here
	_, err = tg.Post(context.Background(), Question{ID: "t.q1-0000", Token: "0000", Text: "x"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), f.Token)
	assert.NotContains(t, err.Error(), "/bot")
	assert.Contains(t, err.Error(), "telegram sendMessage")
}

func TestTelegramApprovalRecordsIntentOnlyAndPendingListsApprovals(t *testing.T) {
	f := chatfake.NewTelegram(t)
	eng := &fakeEngine{}
	id := eng.approval("publish", "e5f6")
	eng.actions = []*actions.ActionStatus{{ID: "task-8.q1-0001", Status: actions.ActionApproved}}
	eng.actions[0].Action = "deploy"
	runTelegram(t, f, eng)
	m := questionMsg(t, f, "e5f6")
	assert.Contains(t, m.Text, "approval of publish")
	assert.Contains(t, m.Text, "records intent only")

	n := len(f.SentMsgs())
	f.Say(777, f.Chat, "/pending", 0)
	eventually(t, "the /pending reply", func() bool { return len(f.SentMsgs()) > n })
	p := f.SentMsgs()[n].Text
	assert.Contains(t, p, "approval of publish e5f6")
	assert.Contains(t, p, "Approved, not yet run:\n• deploy (approved for task-8.q1-0001)")

	f.Say(777, f.Chat, "/yes_e5f6", 0)
	eventually(t, "the approval recorded", func() bool { return eng.answer(id) != nil })
	assert.Equal(t, "yes", eng.answer(id).Answer)
	confirm := tgSent(f, "the confirmation", func(s string) bool { return strings.HasPrefix(s, "✅ yes · e5f6") })
	assert.Contains(t, confirm, "approval recorded as intent: 'wcomm actions run' executes it while its fingerprint holds")
}

func TestTelegramServiceThatHangsIsTimedOutAndPostedLater(t *testing.T) {
	tgCallTimeout = 2 * time.Second
	defer func() { tgCallTimeout = 0 }()
	f := chatfake.NewTelegram(t)
	f.HangNext("sendMessage", 1)
	eng := &fakeEngine{}
	eng.add(yesNoQ, "c3d4")
	r := runTelegram(t, f, eng)
	questionMsg(t, f, "c3d4")
	assert.Contains(t, r.log.String(), "telegram sendMessage: timed out")
	assert.NotContains(t, r.log.String(), f.Token)
	assert.Equal(t, 1, countPosts(f), "posted once, after the timeout")
}
