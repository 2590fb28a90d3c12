package kit

// wcomm __complete: completion candidates from the live tmux server and the root.

import (
	"context"
	"fmt"
	"strings"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm"
)

// CompleteKinds are the kinds __complete knows.
var CompleteKinds = []string{"panes", "agents", "targets", "sessions", "tmux-sessions", "ids", "commands"}

// Candidate is one completion candidate and what it is.
type Candidate struct{ Value, Desc string }

// Complete returns the candidates of a kind, from the live server or the root; engine is called
// only for the kinds that need one.
func (k Book) Complete(ctx context.Context, engine func() *tmuxcomm.Engine, kind string) ([]Candidate, error) {
	switch kind {
	case "panes", "agents", "targets", "tmux-sessions":
		e := engine()
		panes, err := e.Panes(ctx, tmuxcomm.PanesOptions{Scope: paneops.Scope{All: true}})
		if err != nil {
			return nil, err
		}
		var out []Candidate
		seen := map[string]bool{}
		addPanes := func() {
			for _, p := range panes {
				if p.Dead {
					continue
				}
				desc := strings.Join(p.Programs, " ")
				if desc == "" {
					desc = p.Command
				}
				desc = messages.SanitizeField(desc + " (" + p.Target() + ")")
				out = append(out, Candidate{string(p.ID), desc})
			}
		}
		addAgents := func() {
			for _, p := range panes {
				if p.Self {
					continue
				}
				for _, prog := range p.Programs {
					prog = messages.SanitizeField(prog)
					if prog == "" || strings.ContainsAny(prog, " \t") || seen[prog] {
						continue
					}
					seen[prog] = true
					out = append(out, Candidate{prog, "runs in " + string(p.ID)})
				}
			}
		}
		switch kind {
		case "panes":
			addPanes()
		case "agents":
			addAgents()
		case "targets":
			addPanes()
			addAgents()
		case "tmux-sessions":
			for _, p := range panes {
				if s := messages.SanitizeField(p.Session); !seen[s] {
					seen[s] = true
					out = append(out, Candidate{s, ""})
				}
			}
		}
		return out, nil
	case "sessions", "ids":
		sessions, _, err := engine().History(ctx, tmuxcomm.HistoryOptions{})
		if err != nil {
			return nil, err
		}
		var out []Candidate
		// Newest first: the exchange one wants is almost always a recent one.
		for i := len(sessions) - 1; i >= 0; i-- {
			s := sessions[i]
			if kind == "sessions" {
				out = append(out, Candidate{s.Name, fmt.Sprintf("%s -> %s, %d exchanges", s.Orchestrator, s.Worker, len(s.Exchanges))})
				continue
			}
			for j := len(s.Exchanges) - 1; j >= 0; j-- {
				x := s.Exchanges[j]
				if x.ID != "" {
					out = append(out, Candidate{x.ID, x.Status + ": " + x.Summary})
				}
			}
		}
		return out, nil
	case "commands":
		var out []Candidate
		for _, c := range k.Commands {
			out = append(out, Candidate{c.Name, c.Summary})
		}
		return out, nil
	}
	return nil, tmuxcomm.Usagef("unknown kind %q; use one of %s", messages.SanitizeField(kind), strings.Join(CompleteKinds, ", "))
}
