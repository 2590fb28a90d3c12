package tmuxcomm

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

func TestIdleNoticeToldOnceAndReplyDelivered(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	agent := e.as("%2")
	first, _, err := agent.desk.NotifyIdle(context.Background(), "claude", "I finished the refactor.")
	require.NoError(t, err)
	assert.Equal(t, "idle", first.Waits)
	assert.Contains(t, first.Context, "I finished the refactor.")
	second, _, err := agent.desk.NotifyIdle(context.Background(), "claude", "Done again.")
	require.NoError(t, err)
	list, _, err := e.Questions(context.Background(), questions.QuestionsOptions{Pending: true})
	require.NoError(t, err)
	require.Len(t, list, 1, "one notice open per pane: the newer turn's end replaces the older")
	assert.Equal(t, second.ID, list[0].ID)
	assert.Equal(t, "idle", WaitsOn("%2", f.Server.Key(), "", list))

	res, err := e.as("").desk.Answer(context.Background(), questions.AnswerOptions{ID: second.ID, Raw: "now write the tests", Source: "telegram"})
	require.NoError(t, err)
	assert.Equal(t, SignalPasted, res.Signal)
	var texts []string
	for _, d := range f.Delivered() {
		if d.Pane == "%2" {
			texts = append(texts, string(d.Content))
		}
	}
	require.Len(t, texts, 1, "delivered once")
	assert.Equal(t, "now write the tests", strings.TrimSpace(texts[0]), "the person's words as they are, no ANSWER block")
	_, err = e.as("").desk.Answer(context.Background(), questions.AnswerOptions{ID: second.ID, Raw: "again", Source: "telegram"})
	assert.ErrorIs(t, err, ErrStale, "a second reply is not delivered")
	assert.Len(t, f.Delivered(), 1)
}
