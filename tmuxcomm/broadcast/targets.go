package broadcast

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// expand turns the targets as given into one target each, in order: the lists split at commas,
// each @group replaced by its members.
func (c *Caster) expand(given []string) ([]string, error) {
	split, err := messages.SplitTargets(given)
	if err != nil {
		return nil, core.Usagef("--to: %v", err)
	}
	var out []string
	for _, t := range split {
		name, isGroup := messages.GroupName(t)
		if !isGroup {
			out = append(out, t)
			continue
		}
		if err := messages.ValidGroupName(name); err != nil {
			return nil, core.Usagef("target %s: %v", messages.SanitizeField(t), err)
		}
		var groups map[string][]string
		if c.Groups != nil {
			groups = c.Groups()
		}
		members, ok := groups[name]
		if !ok {
			known := "none are set"
			if len(groups) > 0 {
				names := make([]string, 0, len(groups))
				for n := range groups {
					names = append(names, "@"+n)
				}
				slices.Sort(names)
				known = "the settings have " + strings.Join(names, ", ")
			}
			return nil, fmt.Errorf("no group %q in the settings (%s); add it under groups: in .wcomm.yaml or ~/.config/wcomm/config.yaml: %w",
				name, known, store.ErrNotFound)
		}
		out = append(out, members...)
	}
	return out, nil
}

// resolve finds the pane of every target before anything is written: every target that names no
// pane, several panes, the caller's own pane or a dead one is named, and any of them refuses the
// whole send. Targets that reach one pane are kept once, at the first place they appear.
func (c *Caster) resolve(ctx context.Context, o Options) ([]member, error) {
	// The list's own mistakes first: they are the caller's words, whatever pane it runs in.
	targets, err := c.expand(o.Targets)
	if err != nil {
		return nil, err
	}
	if c.Self == "" {
		return nil, c.NeedOwnPane(ctx, "send from the orchestrator's pane, or name the pane you send for")
	}
	var ms []member
	if len(o.Targets) == 0 {
		if !o.All {
			return nil, core.NeedUsagef(core.NeedTarget, "no target: name the workers' panes or agents, a @group, or send to every agent")
		}
		panes, srv, err := c.Finder.AgentPanes(ctx, paneops.Scope{Self: c.Self})
		if err != nil {
			return nil, err
		}
		if len(panes) == 0 {
			return nil, store.Kindf(store.ErrNotFound, "no other pane of this session runs an agent; run 'wcomm panes' to see what runs where")
		}
		for _, p := range panes {
			ms = append(ms, member{target: string(p.ID), pane: p, srv: srv})
		}
		return ms, nil
	}
	scope := paneops.Scope{All: o.All}
	var errs []error
	seen := map[string]bool{}
	for _, t := range targets {
		m := member{target: t}
		if remote, err := c.Sender.HostTarget(t); err != nil {
			errs = append(errs, err)
			continue
		} else if remote {
			m.host = true
		} else {
			p, srv, err := c.Finder.ResolveWithServer(ctx, t, scope, o.Send.First)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("target %s: %w", messages.SanitizeField(t), err))
				continue
			case p.ID == c.Self && !c.Relayed:
				errs = append(errs, fmt.Errorf("target %s is your own pane %s; leave it out", messages.SanitizeField(t), p.ID))
				continue
			case p.Dead:
				errs = append(errs, fmt.Errorf("target %s: %w", messages.SanitizeField(t), fleet.DeadPane(p)))
				continue
			}
			m.pane, m.srv = p, srv
		}
		if !seen[m.key()] {
			seen[m.key()] = true
			ms = append(ms, m)
		}
	}
	if len(errs) > 0 {
		return nil, &refused{errs: errs}
	}
	return ms, nil
}

// refused is a broadcast refused before anything was written: the targets that failed, each in
// its own words. Its class is the first one's (a target not found: exit 4).
type refused struct{ errs []error }

func (r *refused) Error() string {
	words := make([]string, len(r.errs))
	for i, e := range r.errs {
		words[i] = e.Error()
	}
	return strings.Join(words, "; ") + "; nothing was sent to any target"
}

func (r *refused) Unwrap() []error { return r.errs }
