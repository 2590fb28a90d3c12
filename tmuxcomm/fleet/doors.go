package fleet

import (
	"context"
	"fmt"

	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/paneops/profile"
)

// Which door a delivery into a pane goes through: the agent's own (Claude Code's messaging socket,
// Codex's app-server) or the pane's keys.

// maxDoorCandidates bounds how many processes of a pane are looked at for a session file: an
// agent's session is its own process, near the top of the pane's tree.
const maxDoorCandidates = 64

// Route says how a delivery into pane p under profile det goes now, and why.
func (f *Finder) Route(ctx context.Context, p paneops.Pane, det profile.Detection) door.Finding {
	if det.Profile == nil || det.Profile.Door == "" {
		return f.routeIn(ctx, p, det, nil)
	}
	var t *proc.Table
	var err error
	if f.PaneProcs != nil && p.PID > 0 {
		t, err = f.PaneProcs(p.PID, f.SelfPID)
	} else if f.Procs != nil {
		t, err = f.Procs()
	}
	if err != nil {
		t = nil
	}
	return f.routeIn(ctx, p, det, t)
}

// routeIn is Route with the process table at hand (nil: only the detected process is looked at).
func (f *Finder) routeIn(ctx context.Context, p paneops.Pane, det profile.Detection, t *proc.Table) door.Finding {
	if det.Profile == nil || det.Profile.Door == "" {
		return door.Finding{Route: door.RouteTyped, Why: fmt.Sprintf("profile %s has no door of its own: typed into the pane", orGeneric(det.Name))}
	}
	return f.Door.FindFor(ctx, det.Profile.Door, string(p.ID), doorCandidates(p, det, t))
}

func orGeneric(name string) string {
	if name == "" {
		return "generic"
	}
	return name
}

// doorCandidates are the processes of the pane that may be the agent's session: the process the
// profile was detected by first, then the pane's whole tree, shallowest first.
func doorCandidates(p paneops.Pane, det profile.Detection, t *proc.Table) []int {
	var pids []int
	seen := map[int]bool{}
	add := func(pid int) {
		if pid > 0 && !seen[pid] && len(pids) < maxDoorCandidates {
			seen[pid] = true
			pids = append(pids, pid)
		}
	}
	if det.Matched != nil {
		add(det.Matched.PID)
	}
	if t != nil && p.PID > 0 {
		add(p.PID)
		for _, c := range t.Descendants(p.PID) {
			add(c.PID)
		}
	}
	return pids
}
