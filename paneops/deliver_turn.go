package paneops

// Whether an agent is ready for the next paste beyond its box reading empty and idle: some
// agents clear their box on Enter a while before they show that a turn has begun, and lose a
// message pasted and submitted in between (OpenCode 1.18.33: a prompt submitted within about a
// second of the previous one's Enter never reached its model, 3 of 30; GitHub Copilot CLI 1.0.102:
// the first prompt, submitted as its box first showed empty, did not either, 2 of 2 runs under
// load). A profile asks for two things (VerifySpec.QuietMS, VerifySpec.TurnStartMS); the time
// of wcomm's latest Enter into a pane is kept in the pane (markEnteredAt), so the next delivery,
// by whichever process, knows it.

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/profile"
)

// markEnteredAt is the pane option that holds the time of wcomm's latest Enter into the pane, in
// Unix milliseconds, for profiles with a TurnStartMS.
const markEnteredAt = "@wcomm-entered-at"

// withEnterStamp adds to a guarded Enter (enterArgs) the recording of at in the pane, in the
// branch that presses the key, so the time is recorded only when the Enter went out.
func withEnterStamp(args []string, pane messages.PaneID, at time.Time) []string {
	out := append([]string(nil), args...)
	out[len(out)-1] += " ; set-option -p -t " + string(pane) + " " + markEnteredAt + " " + strconv.FormatInt(at.UnixMilli(), 10)
	return out
}

// enteredAt reads the time of wcomm's latest Enter into the pane; zero when none is recorded.
func (c *Client) enteredAt(ctx context.Context, pane messages.PaneID) (time.Time, error) {
	out, err := c.Run(ctx, nil, "display-message", "-p", "-t", string(pane), "#{"+markEnteredAt+"}")
	if err != nil {
		return time.Time{}, err
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil || ms <= 0 {
		return time.Time{}, nil
	}
	return time.UnixMilli(ms), nil
}

// turnBegun forgets the time of wcomm's latest Enter into the pane: the agent has shown that it
// began the turn, so the next paste need not wait for that.
func (c *Client) turnBegun(ctx context.Context, pane messages.PaneID) error {
	_, err := c.Run(ctx, nil, "set-option", "-p", "-u", "-t", string(pane), markEnteredAt)
	return err
}

// readiness follows the looks at a box before a paste, for a profile's QuietMS and TurnStartMS.
type readiness struct {
	p         *profile.Profile
	enteredAt time.Time // wcomm's latest Enter into the pane; zero: none known, or a turn seen since
	idleSince time.Time // since when the box has read empty and idle; zero: not on the last look
	busySeen  bool      // the agent read busy on some look of this wait
	// until is when the agent will be ready if its box stays empty and idle; zero when the last
	// look found it ready, or its box not empty and idle.
	until time.Time
}

// look takes one inspection at now and reports whether the agent is ready for a paste as far as
// QuietMS and TurnStartMS go, and if not, why. It says nothing about the box itself: DecideBefore
// does.
func (r *readiness) look(in profile.Inspection, now time.Time) (bool, string) {
	r.until = time.Time{}
	if in.Busy {
		r.busySeen = true
	}
	if !in.Empty() || in.Busy || in.Starting {
		r.idleSince = time.Time{}
		return false, ""
	}
	if r.idleSince.IsZero() {
		r.idleSince = now
	}
	v := r.p.Verify
	var why []string
	if v.TurnStartMS > 0 && !r.enteredAt.IsZero() && !r.busySeen {
		if end := r.enteredAt.Add(time.Duration(v.TurnStartMS) * time.Millisecond); now.Before(end) {
			r.until = end
			why = append(why, "the agent has not shown a turn begun since wcomm's last Enter, "+now.Sub(r.enteredAt).Round(time.Millisecond).String()+" ago")
		}
	}
	if v.QuietMS > 0 {
		if end := r.idleSince.Add(time.Duration(v.QuietMS) * time.Millisecond); now.Before(end) {
			r.until = later(r.until, end)
			why = append(why, "its input box has read empty and idle for "+now.Sub(r.idleSince).Round(time.Millisecond).String()+" only")
		}
	}
	return len(why) == 0, strings.Join(why, ", and ")
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// decideReady is DecideBefore with the profile's QuietMS and TurnStartMS: a box DecideBefore
// would paste into waits while r says the agent is not ready. That wait runs to its own end
// (r.until, within QuietMS and TurnStartMS) even past the deadline, since an agent whose box stays
// empty and idle is not busy; a box that turns busy meanwhile is a busy agent's again, pasted into
// at the deadline with Busy set (a strict delivery then queues the message instead).
func decideReady(p *profile.Profile, in profile.Inspection, deadline bool, r *readiness, now time.Time) profile.Decision {
	if !p.HasBox() {
		return profile.DecideBefore(p, in, deadline)
	}
	ready, why := r.look(in, now)
	final := deadline && (ready || !now.Before(r.until))
	dec := profile.DecideBefore(p, in, final)
	if dec.Action != profile.ActPaste || dec.Busy || ready {
		return dec
	}
	if final {
		return profile.Decision{Action: profile.ActPaste, Busy: true, Evidence: "input box empty, but " + why + ": the message queues"}
	}
	return profile.Decision{Action: profile.ActWait, Evidence: why}
}
