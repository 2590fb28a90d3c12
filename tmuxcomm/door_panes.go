package tmuxcomm

import (
	"context"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// The panes' verbs: find one pane (an agent's, or a send target with what it runs and how a
// delivery reaches it), list them, and the console's fleet that reads them again and again.

// FindOptions say which pane Find looks for: the one that runs Agent, or the one Target names.
type FindOptions struct {
	// Agent is a word of the agent's command line (wcomm find): the one pane in Scope whose
	// process tree runs it, never the caller's own.
	Agent string
	// Target is a pane as send --to names it: a pane id, a name, a tmux target or an agent.
	Target string
	Scope  paneops.Scope
	// First takes the first of several matches; without it several are a *fleet.FindError.
	First bool
	// Detect also says which profile the pane runs (Profile when given, else detected) and
	// which route a delivery into it takes now.
	Detect  bool
	Profile string
}

// Found is the pane Find found, and with FindOptions.Detect what runs in it.
type Found struct {
	Pane      paneops.Pane
	Detection profile.Detection
	Route     door.Finding
}

// Find returns the pane o names (see FindOptions). A pane not found, or several, is a
// *fleet.FindError (class not found) that lists what runs where.
func (e *Engine) Find(ctx context.Context, o FindOptions) (*Found, error) {
	var p paneops.Pane
	var err error
	switch {
	case (o.Agent == "") == (o.Target == ""):
		return nil, core.Usagef("find looks for an agent or a target: give one of them")
	case o.Agent != "":
		p, err = e.finder.Find(ctx, o.Agent, o.Scope, o.First)
	default:
		p, err = e.finder.Resolve(ctx, o.Target, o.Scope, o.First)
	}
	if err != nil {
		return nil, err
	}
	f := &Found{Pane: p}
	if !o.Detect {
		return f, nil
	}
	if f.Detection, err = e.finder.Detect(ctx, p, o.Profile); err != nil {
		return f, err
	}
	f.Route = e.finder.Route(ctx, p, f.Detection)
	return f, nil
}

// PanesOptions say which panes Panes lists, and what it says of each.
type PanesOptions struct {
	Scope paneops.Scope
	// Waits says in each pane what waits on a person there (PaneInfo.Waits): its agent's
	// permission prompt, a blocking question of its worker, or its agent at rest after its turn.
	// The questions are read from their files alone (no staleness judged).
	Waits bool
}

// Panes lists the panes in o.Scope with what runs in each.
func (e *Engine) Panes(ctx context.Context, o PanesOptions) ([]fleet.PaneInfo, error) {
	panes, err := e.finder.Panes(ctx, o.Scope)
	if err != nil || !o.Waits {
		return panes, err
	}
	srv, err := e.cfg.Tmux.ServerInfo(ctx)
	if err != nil {
		return panes, nil
	}
	list, _, _ := e.Questions(ctx, questions.QuestionsOptions{Pending: true, FilesOnly: true})
	for i := range panes {
		panes[i].Waits = WaitsOn(panes[i].ID, srv.Key(), panes[i].AgentStatus, list)
	}
	return panes, nil
}

// Fleet returns a reader of the panes of scope for a caller that reads them again and again
// (the console): it detects a pane's profile again only when the pane's process changed, and
// says what waits on the panes and which exchanges are recent (see fleet.Fleet).
func (e *Engine) Fleet(scope paneops.Scope) *fleet.Fleet { return e.finder.NewFleet(scope) }

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
