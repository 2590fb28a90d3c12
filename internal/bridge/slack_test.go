package bridge

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/bridge/chatfake"
	"github.com/wcomm/wcomm/messages"
)

func slackConfig(f *chatfake.Slack) (*messages.ChannelsConfig, func(string) string) {
	return &messages.ChannelsConfig{Slack: &messages.SlackConfig{APIURL: f.Srv.URL + "/api/", Channel: f.Channel, AllowedUsers: []string{"U777"}}},
		envOf(map[string]string{EnvSlackBotToken: f.Bot, EnvSlackAppToken: f.App})
}

func slackQuestionPost(t *testing.T, f *chatfake.Slack, tok string) chatfake.SlackPost {
	t.Helper()
	var found chatfake.SlackPost
	eventually(t, "the question "+tok+" posted to Slack", func() bool {
		posts, _, _ := f.Snapshot()
		for _, p := range posts {
			if p.ThreadTS == "" && strings.Contains(p.Text, tok) {
				found = p
				return true
			}
		}
		return false
	})
	return found
}

func TestSlackThreadReplyAnswersAndIsConfirmedInThread(t *testing.T) {
	f := chatfake.NewSlack(t)
	eng := &fakeEngine{}
	id := eng.add(numberedQ, "a1b2")
	r := runSlack(t, f, eng)
	f.WaitConnected()
	p := slackQuestionPost(t, f, "a1b2")
	assert.Contains(t, p.Text, "Store&lt;User&gt; &amp; co", "escaped as Slack's text format wants")
	assert.Contains(t, p.Text, "reply in this thread")

	// A stranger, and an allowed user in another channel: nothing changes, nothing is said.
	f.Reply("U999", f.Channel, p.TS, "A")
	f.Reply("U777", "C999", p.TS, "A")
	env1 := f.Reply("U777", f.Channel, p.TS, "B")
	eventually(t, "the answer", func() bool { return eng.answer(id) != nil })
	a := eng.answer(id)
	assert.Equal(t, "old cache", a.Answer)
	assert.Equal(t, "slack", a.Source)
	assert.Equal(t, "B", a.Raw)
	assert.Equal(t, 1, eng.attemptCount(), "only the allowed user's reply was taken")
	slackThreadPost(t, f, p.TS, "source slack", "old cache")
	eventually(t, "every envelope acknowledged", func() bool { _, _, acks := f.Snapshot(); return acks[env1] && len(acks) == 3 })
	eventually(t, "the question's message marked answered", func() bool {
		_, ups, _ := f.Snapshot()
		return strings.Contains(ups[p.TS], "answered: old cache (source slack)")
	})
	posts, _, _ := f.Snapshot()
	replies := 0
	for _, q := range posts {
		if q.ThreadTS == p.TS {
			replies++
		}
	}
	assert.Equal(t, 1, replies, "strangers get no reply")
	assert.Equal(t, 2, strings.Count(r.log.String(), "ignored a reply"), r.log.String())

	// Slack redelivers an envelope whose ack it missed: the same message is applied once.
	again := f.Redeliver(env1)
	eventually(t, "the redelivery acknowledged", func() bool { _, _, acks := f.Snapshot(); return acks[again] })
	// A late answer of the allowed user is told it is stale.
	f.Reply("U777", f.Channel, p.TS, "A")
	slackThreadPost(t, f, p.TS, "stale")
	assert.Equal(t, "old cache", eng.answer(id).Answer)
	// Events are handled in order: had the redelivery been applied, there would be three.
	assert.Equal(t, 2, eng.attemptCount(), "a redelivered message is applied once")
}

func TestSlackInvalidReplyKeepsTheQuestionOpen(t *testing.T) {
	f := chatfake.NewSlack(t)
	eng := &fakeEngine{}
	id := eng.add(yesNoQ, "c3d4")
	runSlack(t, f, eng)
	f.WaitConnected()
	p := slackQuestionPost(t, f, "c3d4")
	f.Reply("U777", f.Channel, p.TS, "perhaps")
	slackThreadPost(t, f, p.TS, "yes or no")
	assert.Nil(t, eng.answer(id))
	f.Reply("U777", f.Channel, p.TS, "yes")
	eventually(t, "the answer", func() bool { return eng.answer(id) != nil })
}

func TestSlackAnsweredElsewhereIsMarkedAndRateLimitsAreWaitedOut(t *testing.T) {
	f := chatfake.NewSlack(t)
	f.Failures["chat.postMessage"] = []int{http.StatusTooManyRequests, http.StatusInternalServerError}
	eng := &fakeEngine{}
	id := eng.add(yesNoQ, "c3d4")
	r := runSlack(t, f, eng)
	p := slackQuestionPost(t, f, "c3d4")
	assert.Contains(t, r.log.String(), "rate limited")
	_, err := eng.Answer(context.Background(), tmuxcommAnswer(id, "yes", "local"))
	require.NoError(t, err)
	eventually(t, "the post marked answered elsewhere", func() bool {
		_, ups, _ := f.Snapshot()
		return strings.Contains(ups[p.TS], "answered: yes (source local)")
	})
}

func TestSlackDoctorChecksWithoutPostingOrLeaking(t *testing.T) {
	f := chatfake.NewSlack(t)
	cfg, env := slackConfig(f)
	hub := &Hub{Engine: &fakeEngine{}, Root: tempRoot(t)}
	require.NoError(t, hub.Open())
	chans, err := Open(cfg, hub, env)
	require.NoError(t, err)
	checks := chans[0].Check(context.Background())
	require.Len(t, checks, 2)
	assert.True(t, checks[0].OK && checks[1].OK, "%+v", checks)
	posts, _, _ := f.Snapshot()
	assert.Empty(t, posts)

	bad := envOf(map[string]string{EnvSlackBotToken: "xoxb-wrong-secret", EnvSlackAppToken: f.App})
	chans, err = Open(cfg, hub, bad)
	require.NoError(t, err)
	checks = chans[0].Check(context.Background())
	require.Len(t, checks, 1)
	assert.False(t, checks[0].OK)
	assert.Contains(t, checks[0].Detail, "invalid_auth")
	assert.NotContains(t, checks[0].Detail, "wrong-secret")

	cfg.Slack.Channel = "C999"
	chans, err = Open(cfg, hub, env)
	require.NoError(t, err)
	checks = chans[0].Check(context.Background())
	assert.False(t, checks[1].OK)
	assert.Contains(t, checks[1].Detail, "channel_not_found")

	// A refused app token ends Receive with the reason, for the bridge to report and retry.
	badApp := envOf(map[string]string{EnvSlackBotToken: f.Bot, EnvSlackAppToken: "xapp-wrong-secret"})
	chans, err = Open(cfg, hub, badApp)
	require.NoError(t, err)
	err = chans[0].Receive(context.Background())
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "wrong-secret")
}

// A restarted bridge posts no question again, and an envelope Slack sends again to the new
// connection (its ack was lost with the old one) is not applied twice: the posts and the messages
// taken are kept on disk.
func TestSlackRestartNeitherRepostsNorReapplies(t *testing.T) {
	f := chatfake.NewSlack(t)
	eng := &fakeEngine{}
	id := eng.add(yesNoQ, "c3d4")
	other := eng.add(numberedQ, "a1b2")
	cfg, env := slackConfig(f)
	root := tempRoot(t)
	r := startHub(t, root, eng, cfg, env)
	f.WaitConnected()
	p := slackQuestionPost(t, f, "c3d4")
	slackQuestionPost(t, f, "a1b2")
	env1 := f.Reply("U777", f.Channel, p.TS, "yes")
	eventually(t, "the answer", func() bool { return eng.answer(id) != nil })
	slackThreadPost(t, f, p.TS, "source slack")
	r.stop()
	tops := func() int {
		posts, _, _ := f.Snapshot()
		n := 0
		for _, q := range posts {
			if q.ThreadTS == "" {
				n++
			}
		}
		return n
	}
	before := tops()
	require.Equal(t, 2, before)

	r2 := startHub(t, root, eng, cfg, env)
	f.WaitConnected()
	again := f.Redeliver(env1)
	eventually(t, "the redelivery acknowledged", func() bool { _, _, acks := f.Snapshot(); return acks[again] })
	// A new reply shows the second bridge knows the old posts; events are handled in order.
	p2 := slackQuestionPost(t, f, "a1b2")
	f.Reply("U777", f.Channel, p2.TS, "B")
	eventually(t, "the second bridge's answer", func() bool { return eng.answer(other) != nil })
	assert.Equal(t, 2, eng.attemptCount(), "the redelivered reply was not applied again: %s", r2.log)
	assert.Equal(t, before, tops(), "no question posted again")
}

func slackPost(f *chatfake.Slack, ts string) chatfake.SlackPost {
	posts, _, _ := f.Snapshot()
	for _, p := range posts {
		if p.TS == ts {
			return p
		}
	}
	return chatfake.SlackPost{}
}

// Every option is a Block Kit button: a press by an allowed user in the channel answers as a
// thread reply would, is confirmed in the thread, and the post loses its buttons once decided;
// a stranger's press changes nothing and gets no reply; a redelivered press is applied once.
// The thread reply still answers a question with buttons.
func TestSlackButtonPressAnswersAndIsConfirmedInThread(t *testing.T) {
	f := chatfake.NewSlack(t)
	eng := &fakeEngine{}
	id := eng.add(numberedQ, "a1b2")
	yid := eng.add(yesNoQ, "c3d4")
	r := runSlack(t, f, eng)
	f.WaitConnected()
	p := slackQuestionPost(t, f, "a1b2")
	require.Len(t, p.Buttons, 2)
	assert.Equal(t, "A) Store<User> & co", p.Buttons[0].Text)
	assert.Equal(t, "a:a1b2:2", p.Buttons[1].Value)
	assert.Contains(t, p.Text, "Press an option or reply in this thread")
	y := slackQuestionPost(t, f, "c3d4")
	require.Len(t, y.Buttons, 2)
	assert.Equal(t, []string{"yes", "no"}, []string{y.Buttons[0].Text, y.Buttons[1].Text})

	f.Press("U999", f.Channel, p.TS, 0)
	f.Press("U777", "C999", p.TS, 0)
	env1 := f.Press("U777", f.Channel, p.TS, 1)
	eventually(t, "the answer", func() bool { return eng.answer(id) != nil })
	a := eng.answer(id)
	assert.Equal(t, "old cache", a.Answer)
	assert.Equal(t, "slack", a.Source)
	assert.Equal(t, "old cache", a.Raw)
	slackThreadPost(t, f, p.TS, "source slack", "old cache", "a1b2")
	eventually(t, "the post marked answered, its buttons gone", func() bool {
		_, ups, _ := f.Snapshot()
		return strings.Contains(ups[p.TS], "answered: old cache (source slack)") && len(slackPost(f, p.TS).Buttons) == 0
	})
	again := f.Redeliver(env1)
	eventually(t, "every envelope acknowledged", func() bool {
		_, _, acks := f.Snapshot()
		return acks[env1] && acks[again] && len(acks) == 4
	})
	assert.Equal(t, 2, strings.Count(r.log.String(), "ignored a button press"), r.log.String())

	// The thread reply answers the yes-no question beside its buttons.
	f.Reply("U777", f.Channel, y.TS, "no")
	eventually(t, "the thread reply's answer", func() bool { return eng.answer(yid) != nil })
	assert.Equal(t, "no", eng.answer(yid).Answer)
	assert.Equal(t, 2, eng.attemptCount(), "the strangers' presses and the redelivery were not taken")
	posts, _, _ := f.Snapshot()
	replies := 0
	for _, q := range posts {
		if q.ThreadTS == p.TS {
			replies++
		}
	}
	assert.Equal(t, 1, replies, "strangers get no reply; the redelivery none either")
}
