package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/tmuxcomm/core"
)

// FindError is a find that matched no pane or several; it carries what runs where, so the caller
// can show it. It wraps ErrNotFound or ErrAmbiguous.
type FindError struct {
	Agent   string
	Scope   paneops.Scope
	Matches []paneops.Match
	Panes   []PaneInfo
	err     error
}

func (e *FindError) Error() string {
	where := "this session"
	if e.Scope.All {
		where = "any session"
	} else if e.Scope.Session != "" {
		where = fmt.Sprintf("session %q", e.Scope.Session)
	}
	if len(e.Matches) == 0 {
		return fmt.Sprintf("no pane in %s runs %q; run 'wcomm panes%s' to see what runs where",
			where, messages.SanitizeField(e.Agent), map[bool]string{true: " --all", false: ""}[e.Scope.All])
	}
	ids := make([]string, len(e.Matches))
	for i, m := range e.Matches {
		ids[i] = fmt.Sprintf("%s (%s)", m.Pane.ID, m.Pane.Target())
	}
	return fmt.Sprintf("%d panes in %s run %q: %s; name the pane by its id, or take the first",
		len(e.Matches), where, messages.SanitizeField(e.Agent), strings.Join(ids, ", "))
}

func (e *FindError) Unwrap() error { return e.err }

// PaneInfo is a pane with the notable programs running in it, for `wcomm panes`.
type PaneInfo struct {
	paneops.Pane
	Programs []string `json:"programs"`
	// Agent is the agent the pane runs (its profile's name: claude, codex, ...), found as send
	// --all finds the panes it reaches; "" where none runs.
	Agent string `json:"agent,omitempty"`
	Self  bool   `json:"self,omitempty"`
	// Route is how a delivery into the pane goes now ("socket" or "typed", mailbox/route.go), and
	// AgentStatus the agent's own word on its state ("idle" or "busy") where its session says it.
	Route       string `json:"route,omitempty"`
	AgentStatus string `json:"agent_status,omitempty"`
	// Waits says who waits on a person there and why: "permission: Bash touch x" (its agent's
	// permission prompt), "answer: ..." (its question), "idle" (its agent ended its turn).
	Waits string `json:"waits,omitempty"`
	// Name is the pane's name (wcomm spawn --name), "" when it has none.
	Name string `json:"name,omitempty"`
}

// Panes lists the panes in scope with what runs in each.
func (f *Finder) Panes(ctx context.Context, scope paneops.Scope) ([]PaneInfo, error) {
	panes, t, err := f.panesAndProcs(ctx, scope)
	if err != nil {
		return nil, err
	}
	return f.paneInfos(ctx, panes, t), nil
}

// paneInfos says what runs in each of panes, from t.
func (f *Finder) paneInfos(ctx context.Context, panes []paneops.Pane, t *proc.Table) []PaneInfo {
	out := make([]PaneInfo, len(panes))
	names := f.names(ctx)
	for i, p := range panes {
		out[i] = PaneInfo{Pane: p, Programs: paneops.Notable(p, t), Self: p.ID == f.Self && f.Self != "", Name: names[p.ID]}
		// As AgentPanes (send --all) decides, the caller's own pane shown as well.
		if prof := paneops.AgentIn(f.Profiles, p, t, paneops.Exclude{}); prof != nil {
			out[i].Agent = prof.Name
		}
		if !p.Dead {
			r := f.routeIn(ctx, p, paneops.Detect(f.Profiles, p, t, nil, paneops.Exclude{}), t)
			out[i].Route, out[i].AgentStatus = r.Route, r.Status
		}
	}
	return out
}

// Find returns the one pane in scope whose process tree runs agent. With first, the first of
// several matches is taken; otherwise several matches are a *FindError wrapping ErrAmbiguous.
func (f *Finder) Find(ctx context.Context, agent string, scope paneops.Scope, first bool) (paneops.Pane, error) {
	matches, panes, t, err := f.findAll(ctx, agent, scope)
	if err != nil {
		return paneops.Pane{}, err
	}
	switch {
	case len(matches) == 1 || (first && len(matches) > 1):
		return matches[0].Pane, nil
	case len(matches) == 0:
		// What runs where, from the panes' trees the find has just read: a second read of the
		// whole process table (thousands of processes) made a find of nothing ten times slower
		// than a find that matches, and the listing looks at the panes' trees only.
		fe := &FindError{Agent: agent, Scope: scope, err: store.ErrNotFound}
		fe.Panes = f.paneInfos(ctx, panes, t)
		return paneops.Pane{}, fe
	default:
		return paneops.Pane{}, &FindError{Agent: agent, Scope: scope, Matches: matches, err: store.ErrAmbiguous}
	}
}

// FindAll returns every pane in scope whose process tree runs agent, never the caller's own.
func (f *Finder) FindAll(ctx context.Context, agent string, scope paneops.Scope) ([]paneops.Match, error) {
	matches, _, _, err := f.findAll(ctx, agent, scope)
	return matches, err
}

// findAll is FindAll, with the panes and the process table it looked at.
func (f *Finder) findAll(ctx context.Context, agent string, scope paneops.Scope) ([]paneops.Match, []paneops.Pane, *proc.Table, error) {
	if strings.TrimSpace(agent) == "" {
		return nil, nil, nil, fmt.Errorf("empty agent name")
	}
	panes, t, err := f.panesAndTrees(ctx, scope)
	if err != nil {
		return nil, nil, nil, err
	}
	// Our own command line holds the agent's name, and so may our parent's (a shell running us).
	ex := paneops.Exclude{Pane: f.Self, PIDs: t.Ancestors(f.SelfPID)}
	return paneops.Find(panes, t, agent, ex), panes, t, nil
}

// Resolve turns a send target into a pane: "%N" is a pane id; a target with ':' or '.' is a tmux
// target; any other word is first looked up as an agent (as find does) and, when no pane runs it,
// as a tmux target (a session or window name).
func (f *Finder) Resolve(ctx context.Context, target string, scope paneops.Scope, first bool) (paneops.Pane, error) {
	if target == "" {
		return paneops.Pane{}, core.Needf(core.NeedTarget, nil, "no target: name the worker's pane or its agent")
	}
	if strings.HasPrefix(target, "%") {
		if _, err := messages.ParsePaneID(target); err != nil {
			return paneops.Pane{}, fmt.Errorf("target %q: %w", messages.SanitizeField(target), err)
		}
		return f.paneOrNotFound(ctx, target)
	}
	if strings.ContainsAny(target, ":.") {
		return f.paneOrNotFound(ctx, target)
	}
	if p, ok, err := f.Named(ctx, target); ok || err != nil {
		return p, err
	}
	p, err := f.Find(ctx, target, scope, first)
	if err == nil {
		return p, nil
	}
	if fe, ok := err.(*FindError); ok && len(fe.Matches) == 0 {
		if p, err2 := f.Tmux.Pane(ctx, target); err2 == nil {
			return p, nil
		}
	}
	return paneops.Pane{}, err
}

// namer is a Tmux that lists the panes' names (paneops.Client.Names).
type namer interface {
	Names(ctx context.Context) ([]paneops.Named, error)
}

// Named returns the pane that holds name on the server (wcomm spawn --name), whatever its
// session: a name is unique on its server. ok is false when no pane holds it, or target cannot
// be a name. A name is looked up before an agent, so it tells apart panes of one agent.
func (f *Finder) Named(ctx context.Context, target string) (p paneops.Pane, ok bool, err error) {
	n, can := f.Tmux.(namer)
	if !can || paneops.ValidName(target) != nil {
		return paneops.Pane{}, false, nil
	}
	named, err := n.Names(ctx)
	if err != nil {
		return paneops.Pane{}, false, err
	}
	for _, m := range named {
		if m.Name == target {
			p, err := f.paneOrNotFound(ctx, string(m.ID))
			return p, true, err
		}
	}
	return paneops.Pane{}, false, nil
}

// names maps the server's named panes to their names; empty when the Tmux cannot list them.
func (f *Finder) names(ctx context.Context) map[messages.PaneID]string { return namesOf(ctx, f.Tmux) }

// namesOf maps the named panes of t's server to their names; empty when t cannot list them.
func namesOf(ctx context.Context, t any) map[messages.PaneID]string {
	n, ok := t.(namer)
	if !ok {
		return nil
	}
	named, err := n.Names(ctx)
	if err != nil || len(named) == 0 {
		return nil
	}
	out := make(map[messages.PaneID]string, len(named))
	for _, m := range named {
		out[m.ID] = m.Name
	}
	return out
}

// paneServer is a Tmux that looks up a pane and identifies its server in one call
// (paneops.Client.PaneServer): each tmux call is a process start and a round trip.
type paneServer interface {
	PaneServer(ctx context.Context, target string) (paneops.Pane, paneops.ServerInfo, error)
}

// ResolveWithServer is Resolve followed by ServerInfo, in one tmux call when the target names a
// pane or a tmux target and the Tmux can do both at once.
func (f *Finder) ResolveWithServer(ctx context.Context, target string, scope paneops.Scope, first bool) (paneops.Pane, paneops.ServerInfo, error) {
	if ps, ok := f.Tmux.(paneServer); ok && (strings.HasPrefix(target, "%") || strings.ContainsAny(target, ":.")) {
		if strings.HasPrefix(target, "%") {
			if _, err := messages.ParsePaneID(target); err != nil {
				return paneops.Pane{}, paneops.ServerInfo{}, fmt.Errorf("target %q: %w", messages.SanitizeField(target), err)
			}
		}
		p, srv, err := ps.PaneServer(ctx, target)
		if err != nil {
			return paneops.Pane{}, paneops.ServerInfo{}, f.notFound(target, err)
		}
		return p, srv, nil
	}
	p, err := f.Resolve(ctx, target, scope, first)
	if err != nil {
		return p, paneops.ServerInfo{}, err
	}
	srv, err := f.Tmux.ServerInfo(ctx)
	return p, srv, err
}

// notFound words a failed pane lookup: an unknown target is ErrNotFound (and still the tmux
// error, for errors.Is), said once, in wcomm's words, with one thing to do next: tmux's own
// stderr and its hint name tmux's commands, not this one's.
func (f *Finder) notFound(target string, err error) error {
	if IsNotFound(err) {
		return &paneNotFound{target: target, errs: []error{store.ErrNotFound, err}}
	}
	return err
}

// paneNotFound is the error of a target that names no pane.
type paneNotFound struct {
	target string
	errs   []error
}

func (p *paneNotFound) Error() string {
	msg := fmt.Sprintf("no pane %q on this tmux server; run 'wcomm panes --all' to see which panes exist", messages.SanitizeField(p.target))
	// HOST:TARGET reads as a tmux session:window until HOST is declared: say how to declare it.
	if host, rest, ok := strings.Cut(p.target, ":"); ok && rest != "" && messages.ValidHostName(host) == nil {
		msg += fmt.Sprintf(", or, if %s is another machine, declare it under hosts: in ~/.config/wcomm/config.yaml (hosts: {%s: {via: [ssh, %s]}}; wcomm help remote)", host, host, host)
	}
	return msg
}

func (p *paneNotFound) Unwrap() []error { return p.errs }

func (f *Finder) paneOrNotFound(ctx context.Context, target string) (paneops.Pane, error) {
	p, err := f.Tmux.Pane(ctx, target)
	if err != nil {
		return paneops.Pane{}, f.notFound(target, err)
	}
	return p, nil
}

func IsNotFound(err error) bool {
	return errors.Is(err, paneops.ErrPaneNotFound) || errors.Is(err, paneops.ErrTargetNotFound)
}

// panesAndTrees lists the panes in scope and reads what a find looks at of the process table: the
// panes' trees and the caller's ancestors (PanesProcs), or the whole table without PanesProcs.
func (f *Finder) panesAndTrees(ctx context.Context, scope paneops.Scope) ([]paneops.Pane, *proc.Table, error) {
	if f.PanesProcs == nil {
		return f.panesAndProcs(ctx, scope)
	}
	scope.Self = f.Self
	var panes []paneops.Pane
	var others []int
	var err error
	if pb, ok := f.Tmux.(panesBeside); ok {
		panes, others, err = pb.PanesBeside(ctx, scope)
	} else {
		panes, err = f.Tmux.Panes(ctx, scope)
	}
	if err != nil {
		return nil, nil, err
	}
	pids := make([]int, 0, len(panes))
	for _, p := range panes {
		if !p.Dead && p.PID > 0 {
			pids = append(pids, p.PID)
		}
	}
	t, err := f.PanesProcs(pids, others, f.SelfPID)
	if err != nil {
		return nil, nil, fmt.Errorf("read the process table: %w", err)
	}
	return panes, t, nil
}

// panesBeside is a Tmux that lists the panes of a scope with the pids of the server's other
// panes in one call (paneops.Client.PanesBeside).
type panesBeside interface {
	PanesBeside(ctx context.Context, scope paneops.Scope) ([]paneops.Pane, []int, error)
}

// panesAndProcs lists the panes in scope and reads the process table once.
func (f *Finder) panesAndProcs(ctx context.Context, scope paneops.Scope) ([]paneops.Pane, *proc.Table, error) {
	scope.Self = f.Self
	panes, err := f.Tmux.Panes(ctx, scope)
	if err != nil {
		return nil, nil, err
	}
	t, err := f.Procs()
	if err != nil {
		return nil, nil, fmt.Errorf("read the process table: %w", err)
	}
	return panes, t, nil
}

// AgentPanes returns the live panes in scope that run an agent (paneops.AgentIn),
// never the caller's own, with their server: the targets of a send to every agent. The caller's
// ancestors are left out as FindAll leaves them, so an agent running the send is not its own
// target even from another pane's shell.
func (f *Finder) AgentPanes(ctx context.Context, scope paneops.Scope) ([]paneops.Pane, paneops.ServerInfo, error) {
	panes, t, err := f.panesAndProcs(ctx, scope)
	if err != nil {
		return nil, paneops.ServerInfo{}, err
	}
	ex := paneops.Exclude{Pane: f.Self, PIDs: t.Ancestors(f.SelfPID)}
	var out []paneops.Pane
	for _, p := range panes {
		if paneops.AgentIn(f.Profiles, p, t, ex) != nil {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, paneops.ServerInfo{}, nil
	}
	srv, err := f.Tmux.ServerInfo(ctx)
	return out, srv, err
}
