package tmuxcomm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/core/coretest"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// doorEngine is an engine whose pane panePID runs the fake session's process.
func doorEngine(t *testing.T, f *fakeTmux, self string, s *coretest.ClaudeSession, panePID int) *Engine {
	e := newEngine(t, f, self)
	table := s.Procs(panePID)
	e.cfg.Procs = func() (*proc.Table, error) { return table, nil }
	e.cfg.Door = s.Door(func(int) (uint64, error) { return 777, nil })
	return e
}
func TestNotifyGoesThroughTheOrchestratorsDoor(t *testing.T) {
	f := newFake("%1", "%2")
	s := coretest.NewClaudeSession(t, "%1", "idle")
	e := doorEngine(t, f, "%1", s, 1000)
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("task")})
	require.NoError(t, err)
	require.Len(t, f.Delivered(), 1, "the worker has no door: typed")
	res, err := e.as("%2").Notify(context.Background(), NotifyOptions{Ref: x.ResponsePath, Body: []byte("answer")})
	require.NoError(t, err)
	assert.Equal(t, core.SignalPasted, res.Signal)
	assert.Equal(t, exchange.ViaSocket, res.Via)
	assert.Len(t, f.Delivered(), 1, "the RESPONSE line was not typed")
	got := s.Received(1)
	require.Len(t, got, 1)
	assert.Equal(t, res.Line, got[0])
}

// An answer that no ask waits for goes through the worker's door, and the answer's result says
// so: it was written to the socket, not pasted.
func TestAnswerGoesThroughTheWorkersDoor(t *testing.T) {
	f := newFake("%1", "%2")
	s := coretest.NewClaudeSession(t, "%2", "idle")
	orch := doorEngine(t, f, "%1", s, 1001)
	x, err := orch.Send(context.Background(), SendOptions{To: "%2", Body: []byte("task")})
	require.NoError(t, err)
	s.Received(1)
	worker := orch.as("%2")
	res, err := worker.desk.Ask(context.Background(), questions.AskOptions{Exchange: x.ID, MaxQuestions: 3,
		Questions: []messages.Question{{Text: "May I?", Task: "t", Type: messages.YesNo, Urgency: messages.NonBlocking, Context: "Both work."}}})
	require.NoError(t, err)
	typed := len(f.Delivered())
	ar, err := orch.desk.Answer(context.Background(), questions.AnswerOptions{ID: res.Questions[0].ID, Raw: "yes"})
	require.NoError(t, err)
	assert.Equal(t, core.SignalPasted, ar.Signal)
	assert.Equal(t, exchange.ViaSocket, ar.Via)
	assert.Len(t, f.Delivered(), typed, "the ANSWER block was not typed")
	got := s.Received(2)
	require.Len(t, got, 2)
	assert.Contains(t, got[1], "ANSWER: yes")
	assert.Equal(t, "no ask was waiting: the ANSWER block was written to the messaging socket of worker pane %2 (via socket)", ar.Say())
}
