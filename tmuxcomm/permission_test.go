package tmuxcomm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/tmuxcomm/core/coretest"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// An agent's permission prompt as the door shows it beside the panes (WaitsOn), against the
// in-memory tmux: %2 is the agent whose hook asks, %1 a pane an answer may come from. The
// question's own rules are tested in the questions room.

// procsOf makes the engine's process table procs, the caller pid 300.
func procsOf(e *Engine, procs ...proc.Process) *Engine {
	e.cfg.SelfPID = 300
	e.cfg.Procs = func() (*proc.Table, error) { return proc.NewProcTable(procs), nil }
	e.cfg.PaneProcs = func(int, ...int) (*proc.Table, error) { return e.cfg.Procs() }
	return e
}

func TestPermissionWaitsShown(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	w, _, err := e.as("%2").desk.AskPermission(context.Background(), coretest.PermissionRequest(t))
	require.NoError(t, err)
	defer w.Close()
	list, _, err := e.Questions(context.Background(), questions.QuestionsOptions{Pending: true})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "permission: Bash touch k1.txt", list[0].Waits)
	srv := f.Server.Key()
	assert.Equal(t, "permission: Bash touch k1.txt", WaitsOn("%2", srv, "", list))
	assert.Equal(t, "", WaitsOn("%1", srv, "", list), "nothing waits on a person in another pane")
	assert.Equal(t, "idle", WaitsOn("%1", srv, "idle", list), "an agent at rest after its turn")
	assert.Equal(t, "", WaitsOn("%2", "another-server", "", list), "a pane of the same id on another server")

	_, err = e.desk.Answer(context.Background(), questions.AnswerOptions{ID: w.Question.ID, Raw: "allow"})
	require.NoError(t, err)
	list, _, err = e.Questions(context.Background(), questions.QuestionsOptions{Pending: true})
	require.NoError(t, err)
	assert.Equal(t, "", WaitsOn("%2", srv, "", list), "nothing waits once answered")
}
