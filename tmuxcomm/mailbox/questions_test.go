package mailbox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// desk is the questions room of pane self, handing its blocks to this world's mailbox.
func (w *world) desk(self string) *questions.Desk {
	c := *w.cfg
	c.Self = messages.PaneID(self)
	book := &exchange.Book{Config: &c}
	return &questions.Desk{Config: &c, Book: book, Finder: &fleet.Finder{Config: &c, Mail: w.office}, Mailer: w.office}
}

// ask has worker %2 ask one question about x.
func (w *world) ask(x *exchange.Exchange) *questions.QuestionStatus {
	w.t.Helper()
	res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Exchange: x.ID, MaxQuestions: 3,
		Questions: []messages.Question{{Text: "May I?", Task: "t", Type: messages.YesNo, Urgency: messages.NonBlocking, Context: "Both work."}}})
	require.NoError(w.t, err)
	require.Len(w.t, res.Questions, 1)
	return res.Questions[0]
}

// A QUESTION block waits in a busy orchestrator's outbox and is typed once it is ready; its
// ANSWER block reaches the worker, and both steps are in the question's log.
func TestQuestionAndAnswerBlocksAreDelivered(t *testing.T) {
	w := newWorld(t)
	x, m := w.request("%2", "task")
	_, err := w.post(m)
	require.NoError(t, err)
	w.setBusy("%1", true)
	q := w.ask(x)
	pend, _ := w.outbox("%1").Pending()
	require.Len(t, pend, 1)
	assert.Equal(t, messages.MailQuestion, pend[0].Kind)

	w.setBusy("%1", false)
	w.drain("%1")
	typed := w.pasted()
	require.Len(t, typed, 2)
	assert.Equal(t, messages.PaneID("%1"), typed[1].Pane)
	assert.Contains(t, string(typed[1].Content), "May I?")

	_, err = w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: q.ID, Raw: "yes"})
	require.NoError(t, err)
	typed = w.pasted()
	require.Len(t, typed, 3)
	assert.Equal(t, messages.PaneID("%2"), typed[2].Pane)
	assert.Contains(t, string(typed[2].Content), "ANSWER: yes")
	var states []string
	for _, ev := range questions.QuestionEvents(reload(t, w, q)) {
		states = append(states, ev.State)
	}
	assert.Contains(t, states, questions.QQueued)
	assert.Contains(t, states, questions.QDelivered)
	assert.Contains(t, states, questions.QAnswerPasted)
}

// A question decided while its block waited is not typed: the person has answered it already.
func TestAnsweredQuestionIsNotTyped(t *testing.T) {
	w := newWorld(t)
	x, m := w.request("%2", "task")
	_, err := w.post(m)
	require.NoError(t, err)
	w.setBusy("%1", true)
	w.setBusy("%2", true)
	q := w.ask(x)
	_, err = w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: q.ID, Raw: "no"})
	require.NoError(t, err)
	w.setBusy("%1", false)
	w.drain("%1")
	for _, d := range w.pasted() {
		assert.NotEqual(t, messages.PaneID("%1"), d.Pane, "no QUESTION block typed: %q", d.Content)
	}
	res, err := w.office.Inbox(context.Background(), inboxAll("%1"))
	require.NoError(t, err)
	require.Len(t, res.Items, 1)
	assert.Equal(t, messages.MailSuperseded, res.Items[0].State)
	assert.Contains(t, res.Items[0].Detail, "answered or resolved")

	// The ANSWER block waits for the busy worker; taken by its hook, it is its text.
	in, err := w.office.Inbox(context.Background(), mailboxTake("%2"))
	require.NoError(t, err)
	require.Equal(t, 1, in.Taken)
	assert.Equal(t, messages.MailAnswer, in.Items[0].Kind)
	assert.True(t, strings.Contains(in.Items[0].Text, "ANSWER: no"), in.Items[0].Text)
}

func reload(t *testing.T, w *world, q *questions.QuestionStatus) *questions.QuestionStatus {
	t.Helper()
	st, err := questions.FindQuestion(w.root, q.ID)
	require.NoError(t, err)
	return st
}
