package cli

// wcomm __complete: completion candidates from the live tmux server and the root.

import (
	"context"
	"fmt"
	"strings"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// completeKinds are the kinds __complete knows.
var completeKinds = []string{"panes", "agents", "targets", "sessions", "tmux-sessions", "ids", "commands"}

type candidate struct{ value, desc string }

// complete returns the candidates of a kind, from the live server or the root.
func (c *cli) complete(ctx context.Context, kind string) ([]candidate, error) {
	switch kind {
	case "panes", "agents", "targets", "tmux-sessions":
		e := c.engine()
		panes, err := e.Panes(ctx, paneops.Scope{All: true})
		if err != nil {
			return nil, err
		}
		var out []candidate
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
				out = append(out, candidate{string(p.ID), desc})
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
					out = append(out, candidate{prog, "runs in " + string(p.ID)})
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
					out = append(out, candidate{s, ""})
				}
			}
		}
		return out, nil
	case "sessions", "ids":
		sessions, _, err := c.engine().History(ctx, exchange.HistoryOptions{})
		if err != nil {
			return nil, err
		}
		var out []candidate
		// Newest first: the exchange one wants is almost always a recent one.
		for i := len(sessions) - 1; i >= 0; i-- {
			s := sessions[i]
			if kind == "sessions" {
				out = append(out, candidate{s.Name, fmt.Sprintf("%s -> %s, %d exchanges", s.Orchestrator, s.Worker, len(s.Exchanges))})
				continue
			}
			for j := len(s.Exchanges) - 1; j >= 0; j-- {
				x := s.Exchanges[j]
				if x.ID != "" {
					out = append(out, candidate{x.ID, x.Status + ": " + x.Summary})
				}
			}
		}
		return out, nil
	case "commands":
		var out []candidate
		for _, n := range commandNames() {
			out = append(out, candidate{n, commands[n].Summary})
		}
		return out, nil
	}
	return nil, usagef("unknown kind %q; use one of %s", messages.SanitizeField(kind), strings.Join(completeKinds, ", "))
}
