package tmuxcomm

import (
	"context"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// PanesWaiting lists the panes in scope as Panes does, each with what waits on a person there
// (Waits): its agent's permission prompt, a blocking question of its worker, or its agent at
// rest after its turn. The questions are read from their files alone (no staleness judged).
func (e *Engine) PanesWaiting(ctx context.Context, scope paneops.Scope) ([]fleet.PaneInfo, error) {
	panes, err := e.Panes(ctx, scope)
	if err != nil {
		return nil, err
	}
	srv, err := e.Tmux.ServerInfo(ctx)
	if err != nil {
		return panes, nil
	}
	list, _, _ := e.Questions(ctx, questions.QuestionsOptions{Pending: true, FilesOnly: true})
	for i := range panes {
		panes[i].Waits = WaitsOn(panes[i].ID, srv.Key(), panes[i].AgentStatus, list)
	}
	return panes, nil
}

// WaitsOn says what waits on a person in pane (of server srv) given the pending questions and
// its agent's own state: a permission prompt first, then a blocking question, then "idle" (an
// open idle notice, or the agent's own word).
func WaitsOn(pane messages.PaneID, srv, agentStatus string, pending []*questions.QuestionStatus) string {
	var answer string
	idle := false
	for _, q := range pending {
		if q.Worker != pane || (q.Server != "" && q.Server != srv) || q.State != questions.QuestionPending {
			continue
		}
		if q.Permission != nil {
			return q.Waits
		}
		if q.Urgency == messages.Blocking && answer == "" {
			answer = q.Waits
		}
		if q.Idle != nil {
			idle = true
		}
	}
	if answer != "" {
		return answer
	}
	if idle || agentStatus == door.StatusIdle {
		return "idle"
	}
	return ""
}
