package lifecycle

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// Quiet times: how long a screen must stay the same to count as ready, when the profile names no
// quiet time of its own. An agent's box is drawn in stages (a banner, then the box, then its
// hints), so it gets longer than a plain program, whose terminal keeps what is typed early anyway.
const (
	agentQuiet = 1500 * time.Millisecond
	plainQuiet = 300 * time.Millisecond
	// readyPoll is how often the pane is looked at: each look is one or two tmux calls.
	readyPoll = 100 * time.Millisecond
)

// awaitReady waits until the program in pane is ready for input: its agent's own door open where
// it has one, else its input box on screen, empty and idle, for the profile's quiet time; a plain
// program (prof nil) when it runs and its screen is quiet. It returns how it was seen and the
// conversation the door reports (Codex's thread). A command of no known agent is looked at as find
// looks, by the pane's processes, on every poll: a wrapper that execs an agent turns out to be
// that agent, whose readiness is then waited for, and whose profile is returned as detected. A
// pane that dies, or a wait past timeout, is an error saying what the screen showed last.
func (r *Room) awaitReady(ctx context.Context, pane messages.PaneID, prof *profile.Profile, timeout time.Duration) (how, thread string, detected *profile.Profile, err error) {
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	quiet := plainQuiet
	if prof != nil {
		quiet = agentQuiet
		if prof.Verify.QuietMS > 0 {
			quiet = time.Duration(prof.Verify.QuietMS) * time.Millisecond
		}
	}
	deadline := r.now().Add(timeout)
	var last profile.Screen
	var seen string
	var since time.Time
	for {
		p, err := r.Tmux.Pane(ctx, string(pane))
		if err != nil {
			return "", "", nil, fmt.Errorf("the program exited at once (its pane %s went away): %w", pane, err)
		}
		if detected == nil && (prof == nil || prof.Kind != profile.KindAgent) && !p.Dead {
			if det, derr := r.Agents.Detect(ctx, p, ""); derr == nil && det.Profile != nil && det.Profile.Kind == profile.KindAgent {
				prof, detected, since = det.Profile, det.Profile, time.Time{}
				quiet = agentQuiet
				if prof.Verify.QuietMS > 0 {
					quiet = time.Duration(prof.Verify.QuietMS) * time.Millisecond
				}
			}
		}
		sc, err := r.Tmux.Screen(ctx, pane)
		if err == nil {
			seen = screenText(sc)
		}
		if p.Dead {
			return "", "", nil, fmt.Errorf("the program in pane %s exited before it was ready%s", pane, lastSeen(seen))
		}
		if prof != nil && prof.Door != "" {
			det, derr := r.Agents.Detect(ctx, p, prof.Name)
			if derr == nil {
				if f := r.Agents.Route(ctx, p, det); f.Route == door.RouteSocket {
					return "door", f.Thread, detected, nil
				}
			}
		}
		idle := err == nil
		if idle && prof != nil && prof.Input != nil {
			in := prof.Inspect(sc)
			idle = in.Empty() && !in.Busy && !in.Starting
		}
		switch {
		case !idle:
			since = time.Time{}
		case since.IsZero() || !sc.Same(last):
			since = r.now()
		case r.now().Sub(since) >= quiet:
			if prof != nil && prof.Input != nil {
				return "input box", "", detected, nil
			}
			return "quiet", "", detected, nil
		}
		last = sc
		if r.now().After(deadline) {
			what := "its screen never stayed quiet"
			if prof != nil && prof.Input != nil {
				what = fmt.Sprintf("the %s input box was %s", prof.Name, prof.Inspect(sc).State())
			}
			return "", "", nil, fmt.Errorf("pane %s was not ready for input within %s (%s)%s: %w", pane, timeout, what, lastSeen(seen), store.ErrTimeout)
		}
		select {
		case <-ctx.Done():
			return "", "", nil, ctx.Err()
		case <-time.After(readyPoll):
		}
	}
}

// screenText is the screen's rows, blank ones at the end dropped.
func screenText(s profile.Screen) string {
	rows := make([]string, 0, len(s.Lines))
	for _, l := range s.Lines {
		rows = append(rows, strings.TrimRight(l.Text, " "))
	}
	return strings.TrimRight(strings.Join(rows, "\n"), "\n ")
}

// lastSeen words what a screen showed for an error, its last few rows.
func lastSeen(text string) string {
	if strings.TrimSpace(text) == "" {
		return "; its screen was blank"
	}
	rows := strings.Split(text, "\n")
	if len(rows) > 6 {
		rows = rows[len(rows)-6:]
	}
	return "; its screen showed:\n" + messages.SanitizeTerminal(strings.Join(rows, "\n"))
}
