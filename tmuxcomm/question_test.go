package tmuxcomm

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wcomm/wcomm/paneops/lock"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// The question relay through the door, against the in-memory tmux of engine_test.go: %1 is the
// orchestrator, %2 the worker. These check the wiring (the engine as the questions room's Mailer,
// the mailbox typing the blocks); the room's own rules are tested in tmuxcomm/questions.

func qQuestion(text string) messages.Question {
	return messages.Question{Text: text, Task: "task-3", Urgency: messages.Blocking, Type: messages.Numbered,
		Options: []string{"Use bcrypt (already in deps)", "Use argon2 (stronger but new dep)"},
		Context: "The plan names no hash; bcrypt is already a dependency."}
}

// qPair sends a request from %1 to %2 and returns the orchestrator's engine, the worker's engine
// and the exchange the worker's questions tie to.
func qPair(t *testing.T) (*fakeTmux, *Engine, *Engine, *exchange.Exchange) {
	t.Helper()
	f := newFake("%1", "%2")
	orch := newEngine(t, f, "%1")
	x, err := orch.Send(context.Background(), SendOptions{To: "%2", Body: []byte("implement the auth module")})
	require.NoError(t, err)
	return f, orch, orch.as("%2"), x.Exchange
}

// qAskAsync runs a blocking ask in the background and returns a channel with its outcome.
type qOutcome struct {
	res *questions.AskResult
	err error
}

func qAskAsync(e *Engine, o questions.AskOptions) <-chan qOutcome {
	ch := make(chan qOutcome, 1)
	go func() {
		res, err := e.desk.Ask(context.Background(), o)
		ch <- qOutcome{res, err}
	}()
	return ch
}

// qWaitQuestion polls until exactly n questions exist and returns the newest pending one.
func qWaitQuestion(t *testing.T, e *Engine, n int) *questions.QuestionStatus {
	t.Helper()
	var list []*questions.QuestionStatus
	require.Eventually(t, func() bool {
		list, _, _ = e.Questions(context.Background(), questions.QuestionsOptions{})
		return len(list) == n && lock.IsLocked(list[n-1].WaitLock()) || len(list) == n && list[n-1].Urgency == messages.NonBlocking
	}, 5*time.Second, 5*time.Millisecond)
	return list[n-1]
}

func qEvents(st *questions.QuestionStatus) []string {
	var out []string
	for _, ev := range questions.QuestionEvents(st) {
		out = append(out, ev.State)
	}
	return out
}

func TestQuestionAskBlockingWakesOnAnswer(t *testing.T) {
	f, orch, worker, x := qPair(t)
	done := qAskAsync(worker, questions.AskOptions{Questions: []messages.Question{qQuestion("bcrypt or argon2?")}, Wait: true, Timeout: 10 * time.Second, AutoAnswer: true, MaxQuestions: 3})
	st := qWaitQuestion(t, orch, 1)

	assert.Regexp(t, `^task-3\.q1-[0-9a-f]{4}$`, st.ID)
	assert.Equal(t, x.ID, st.Exchange)
	assert.Equal(t, x.Seq, st.ExchangeSeq)
	assert.Equal(t, x.Dir, st.Dir)
	assert.Equal(t, messages.PaneID("%2"), st.Worker)
	assert.Equal(t, messages.PaneID("%1"), st.Orchestrator)
	// The record's own fields and mode are the questions room's tests (TestAskBlockingWakesOnAnswer);
	// here, the door's mailbox carries the QUESTION block and the answer wakes the ask.

	// The question file appears before its QUESTION block is pasted: wait for the paste.
	require.Eventually(t, func() bool { return len(f.Delivered()) == 2 }, 5*time.Second, time.Millisecond)
	ds := f.Delivered()
	assert.Equal(t, messages.PaneID("%1"), ds[1].Pane)
	q, err := messages.ParseQuestionBlock(string(ds[1].Content))
	require.NoError(t, err)
	assert.Equal(t, st.ID, q.ID)
	assert.Equal(t, "bcrypt or argon2?", q.Text)
	assert.Contains(t, string(ds[1].Content), "To answer: wcomm answer "+st.ID+" A")
	// The ask records the delivery once its paste has returned: wait for the record, so that
	// the answer below comes after it, as the order checked at the end says.
	require.Eventually(t, func() bool { return slices.Contains(qEvents(st), questions.QDelivered) }, 5*time.Second, time.Millisecond)

	start := time.Now()
	ar, err := orch.desk.Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: "b"})
	require.NoError(t, err)
	assert.Equal(t, core.SignalAsk, ar.Signal)
	out := <-done
	require.NoError(t, out.err)
	t.Logf("ask woke %s after the answer call started", time.Since(start))
	require.Len(t, out.res.Questions, 1)
	got := out.res.Questions[0]
	assert.Equal(t, questions.QuestionAnswered, got.State)
	assert.Equal(t, messages.Answer{Text: "Use argon2 (stronger but new dep)", Task: "task-3", DecidedBy: "user", ID: st.ID}, *got.AnswerBlock())
	assert.Equal(t, "b", got.Answer.Raw)
	assert.Equal(t, "letter", got.Answer.Form)
	assert.Equal(t, "local", got.Answer.Source)
	assert.Len(t, f.Delivered(), 2, "a waiting ask is the signal: nothing pasted into the worker")
	assert.Equal(t, []string{questions.QAsked, questions.QDelivered, questions.QAccepted, questions.QAskWoken}, qEvents(got))
}

func TestQuestionAnswerPastedWhenNoAskWaits(t *testing.T) {
	f, orch, worker, _ := qPair(t)
	q := qQuestion("bcrypt or argon2?")
	q.Urgency = messages.NonBlocking
	res, err := worker.desk.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, MaxQuestions: 3})
	require.NoError(t, err)
	st := res.Questions[0]
	assert.Equal(t, questions.QuestionPending, st.State)

	ar, err := orch.desk.Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: "Use BCRYPT (already in deps)", Source: "telegram"})
	require.NoError(t, err)
	assert.Equal(t, core.SignalPasted, ar.Signal)
	ds := f.Delivered()
	last := ds[len(ds)-1]
	assert.Equal(t, messages.PaneID("%2"), last.Pane)
	assert.True(t, last.Submit)
	a, err := messages.ParseAnswerBlock(string(last.Content))
	require.NoError(t, err)
	assert.Equal(t, messages.Answer{Text: "Use bcrypt (already in deps)", Task: "task-3", DecidedBy: "user", ID: st.ID}, a)

	// ask --wait after the fact returns the recorded answer at once.
	wres, err := worker.desk.WaitQuestions(context.Background(), questions.WaitOptions{IDs: []string{st.ID}})
	require.NoError(t, err)
	assert.Equal(t, "telegram", wres.Questions[0].Answer.Source)
	assert.Equal(t, "text", wres.Questions[0].Answer.Form)
}

func TestQuestionFilesAreNotForeign(t *testing.T) {
	assert.True(t, exchange.IsQuestionFile("task-3.q1.question"))
	assert.True(t, exchange.IsQuestionFile("task-3.q1.answers.jsonl"))
	assert.False(t, exchange.IsQuestionFile("001-request.md"))
	assert.False(t, exchange.IsQuestionFile(".task-3.q1.wait.lock"))
}

func TestQuestionIntoShellOrchestratorIsACommentLine(t *testing.T) {
	f, _, worker, _ := qPair(t)
	f.Mu.Lock()
	p := f.PaneMap["%1"]
	p.Command = "bash" // the orchestrator's pane is at a shell prompt
	f.PaneMap["%1"] = p
	f.Mu.Unlock()

	q := qQuestion("drop the table?; $(touch pwn)")
	q.Urgency = messages.NonBlocking
	res, err := worker.desk.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, MaxQuestions: 3})
	require.NoError(t, err)
	ds := f.Delivered()
	last := ds[len(ds)-1]
	require.Equal(t, messages.PaneID("%1"), last.Pane)
	line := string(last.Content)
	assert.True(t, strings.HasPrefix(line, "# "), "a shell runs a QUESTION block's lines: only a comment goes in, got %q", line)
	assert.NotContains(t, line, "\n")
	assert.NotContains(t, line, "$")
	assert.Contains(t, line, res.Questions[0].ID)
}
