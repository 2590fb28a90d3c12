package bridge

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/bridge/chatfake"
	"github.com/wcomm/wcomm/messages"
)

// Two bridges of one root, each of its own channels: each posts only the questions asked where
// its channels applied, and takes no answer to another's; the user's own also takes a question
// that records no channels.
func TestEachBridgeServesOnlyItsOwnChannelsQuestions(t *testing.T) {
	const projectKey, userKey = "1111111111111111", "2222222222222222"
	eng := &fakeEngine{}
	inProject := eng.add(numberedQ, "a1b2")
	inOther := eng.add(messages.Question{Text: "Ship it?", Task: "task-4", Type: messages.YesNo, Context: "All green."}, "c3d4")
	unrecorded := eng.add(messages.Question{Text: "And this?", Task: "task-5", Type: messages.YesNo, Context: "An old one."}, "e5f6")
	eng.qs[0].Channels, eng.qs[1].Channels = projectKey, userKey
	root := tempRoot(t)

	project := chatfake.NewTelegram(t)
	cfg, env := tgConfig(project)
	p := startKeyedHub(t, root, eng, cfg, env, projectKey, false)
	user := chatfake.NewTelegram(t)
	user.Chat = -1009999
	cfg, env = tgConfig(user)
	u := startKeyedHub(t, root, eng, cfg, env, userKey, true)

	m := questionMsg(t, project, "a1b2")
	questionMsg(t, user, "c3d4")
	questionMsg(t, user, "e5f6")
	assert.Zero(t, countPostsOf(project, "c3d4")+countPostsOf(project, "e5f6"), "the project's chat sees no other question")
	assert.Zero(t, countPostsOf(user, "a1b2"), "the user's chat sees no project question")

	// The project's allowed user answers another folder's question by its token and by a
	// button's data: neither is known there, nothing is recorded.
	n := len(project.SentMsgs())
	project.Say(777, project.Chat, "/yes_c3d4", 0)
	project.Press(777, project.Chat, m.ID, "a:c3d4:1")
	eventually(t, "the refusals", func() bool {
		project.Mu.Lock()
		defer project.Mu.Unlock()
		return len(project.Sent) > n && len(project.Acks) > 0
	})
	assert.Contains(t, project.SentMsgs()[n].Text, "No question has the token c3d4")
	assert.Equal(t, "unknown question", project.Acks[0])
	assert.Zero(t, eng.attemptCount())
	assert.Nil(t, eng.answer(inOther))

	p.stop()
	u.stop()
	// Each keeps its own state, under its own key.
	for _, k := range []string{projectKey, userKey} {
		_, err := os.Stat(filepath.Join(Dir(root, k), stateFile))
		require.NoError(t, err)
	}
	sp, err := ReadState(root, projectKey)
	require.NoError(t, err)
	assert.Contains(t, sp.Posts["telegram"], inProject)
	assert.NotContains(t, sp.Posts["telegram"], unrecorded)
}
