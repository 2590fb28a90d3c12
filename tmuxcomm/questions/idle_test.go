package questions_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/core/coretest"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

func TestIdleNoticeToldOnceAndReplyDelivered(t *testing.T) {
	w := newWorld(t)
	agent := w.desk("%2")
	first, _, err := agent.NotifyIdle(context.Background(), "claude", "I finished the refactor.")
	require.NoError(t, err)
	assert.Equal(t, "idle", first.Waits)
	assert.Equal(t, questions.IdleTask, first.Task)
	assert.Contains(t, first.Context, "I finished the refactor.")
	assert.Contains(t, first.Text, "claude in pane %2 ended its turn")
	second, _, err := agent.NotifyIdle(context.Background(), "claude", "Done again.")
	require.NoError(t, err)
	list, _, err := w.desk("%1").Questions(context.Background(), questions.QuestionsOptions{Pending: true})
	require.NoError(t, err)
	require.Len(t, list, 1, "one notice open per pane: the newer turn's end replaces the older")
	assert.Equal(t, second.ID, list[0].ID)
	first.Refresh()
	assert.Equal(t, questions.QuestionResolved, first.State)
	assert.Equal(t, "the agent ended another turn", first.Reason)

	res, err := w.desk("").Answer(context.Background(), questions.AnswerOptions{ID: second.ID, Raw: "now write the tests", Source: "telegram"})
	require.NoError(t, err)
	assert.Equal(t, core.SignalPasted, res.Signal)
	typed := w.delivered("%2")
	require.Len(t, typed, 1, "delivered once")
	assert.Equal(t, "now write the tests", strings.TrimSpace(typed[0]), "the person's words as they are, no ANSWER block")
	assert.Equal(t, "[message from the person, via telegram] now write the tests", w.mailer.mails()[0].Summary)
	_, err = w.desk("").Answer(context.Background(), questions.AnswerOptions{ID: second.ID, Raw: "again", Source: "telegram"})
	assert.True(t, isStale(err), "a second reply is not delivered: %v", err)
	assert.Len(t, w.delivered("%2"), 1)
}

func TestIdleNoticeClosedByTheNextPrompt(t *testing.T) {
	w := newWorld(t)
	agent := w.desk("%2")
	st, _, err := agent.NotifyIdle(context.Background(), "", "")
	require.NoError(t, err)
	assert.Contains(t, st.Text, "the agent in pane %2")
	assert.Contains(t, st.Context, "It said nothing")
	w.desk("%1").CloseIdle(context.Background(), "another pane's prompt")
	st.Refresh()
	assert.Equal(t, questions.QuestionPending, st.State, "only the pane's own prompt closes its notice")
	agent.CloseIdle(context.Background(), "the agent took its next prompt")
	st.Refresh()
	assert.Equal(t, questions.QuestionResolved, st.State)
	assert.Empty(t, st.Waits)
}

// An agent's last message longer than a question's context is clipped there, and kept whole
// in the notice.
func TestIdleNoticeClipsALongLastMessage(t *testing.T) {
	w := newWorld(t)
	last := strings.Repeat("é", messages.MaxContextLen+10)
	st, _, err := w.desk("%2").NotifyIdle(context.Background(), "codex", last)
	require.NoError(t, err)
	assert.Equal(t, messages.MaxContextLen, len([]rune(st.Context)))
	assert.True(t, strings.HasSuffix(st.Context, "…"))
	assert.Equal(t, last, st.Idle.Last)

	_, _, err = w.desk("").NotifyIdle(context.Background(), "codex", "x")
	assert.ErrorContains(t, err, "own pane")
}

// A pane of the same id on another tmux server is another agent: its prompt, or its turn's end,
// closes only its own notice.
func TestIdleNoticeClosedOnlyOnItsOwnServer(t *testing.T) {
	w := newWorld(t)
	st, _, err := w.desk("%2").NotifyIdle(context.Background(), "claude", "done on the default server")
	require.NoError(t, err)

	other := coretest.NewTmux("%1", "%2")
	other.Server.Socket, other.Server.StartTime = "/tmp/other", 1700000500
	cfg := coretest.Config(t, other, "%2")
	cfg.Root = w.root
	there := &questions.Desk{Config: cfg, Book: &exchange.Book{Config: cfg}, Finder: &fleet.Finder{Config: cfg}, Mailer: &fakeMailer{tmux: other}}
	there.CloseIdle(context.Background(), "the agent took its next prompt")
	st.Refresh()
	assert.Equal(t, questions.QuestionPending, st.State, "another server's pane %2 took a prompt")
	theirs, _, err := there.NotifyIdle(context.Background(), "codex", "done on the other server")
	require.NoError(t, err)
	st.Refresh()
	assert.Equal(t, questions.QuestionPending, st.State, "another server's pane %2 ended a turn")

	w.desk("%2").CloseIdle(context.Background(), "the agent took its next prompt")
	st.Refresh()
	assert.Equal(t, questions.QuestionResolved, st.State)
	theirs.Refresh()
	assert.Equal(t, questions.QuestionPending, theirs.State)
}

// Turn ends told at once (an agent whose Stop hook is installed twice runs both together) leave
// one notice open, not one each: the person is told once.
func TestIdleNoticeOneOpenWhenTurnEndsRace(t *testing.T) {
	for round := 0; round < 5; round++ {
		w := newWorld(t)
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, err := w.desk("%2").NotifyIdle(context.Background(), "claude", "done")
				assert.NoError(t, err)
			}()
		}
		wg.Wait()
		list, _, err := w.desk("").Questions(context.Background(), questions.QuestionsOptions{FilesOnly: true})
		require.NoError(t, err)
		open := 0
		for _, st := range list {
			if st.State == questions.QuestionPending {
				open++
			} else {
				assert.Equal(t, "the agent ended another turn", st.Reason)
			}
		}
		assert.Equal(t, 1, open, "round %d: one notice open of %d", round, len(list))
	}
}

// An agent may give an agent at rest its next instruction (an orchestrator does), but its reply
// is handed over under its own name, never as the person's words.
func TestIdleNoticeReplyOfAnAgentIsNotThePersons(t *testing.T) {
	w := newWorld(t)
	st, _, err := w.desk("%2").NotifyIdle(context.Background(), "claude", "Done.")
	require.NoError(t, err)
	// The MCP server of the orchestrator's claude, in pane %1.
	orch := withProcs(w.desk("%1"),
		proc.Process{PID: 1000, PPID: 1, SID: 1000, Comm: "claude", Args: []string{"claude"}},
		proc.Process{PID: 300, PPID: 1000, SID: 1000, Comm: "wcomm", Args: []string{"wcomm", "mcp"}})
	res, err := orch.Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: "now write the tests", Source: "mcp", Agent: true})
	require.NoError(t, err, "an agent may answer an idle notice")
	assert.Equal(t, "agent claude", res.Question.Answer.NotPerson)
	typed := w.delivered("%2")
	require.Len(t, typed, 1, "delivered once")
	assert.Equal(t, "[message from agent claude, via mcp, not from the person] now write the tests", strings.TrimSpace(typed[0]))
	assert.Equal(t, "[message from agent claude, via mcp] now write the tests", w.mailer.mails()[0].Summary)
}
