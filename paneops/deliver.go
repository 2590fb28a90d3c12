package paneops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/paneops/profile"
)

// Deliver pastes Content into the pane and optionally submits it. Under the pane's lock it runs ONE
// tmux call: load-buffer -b UNIQUE - (content on stdin) ; if-shell -F -t PANE
// '#{||:#{pane_dead},#{pane_input_off}}' 'delete-buffer -b UNIQUE ; display -p REFUSED-MARK'
// 'copy-mode -q -t PANE ; paste-buffer -d -p -b UNIQUE -t PANE' (tmux 3.3a crashes when pasting into
// a dead pane, so the check must be server-side, in the same call). A refused paste is ErrRefused;
// a failed call deletes the buffer if it is still there. Then, if Submit, it waits EnterDelay and
// sends "send-keys -t PANE Enter" as a separate call, still under the lock, so concurrent senders
// never merge. The unique buffer name is "wcomm-PID-COUNTER-RANDHEX".
//
// With a Profile the screen is read around those steps (see Delivery.Profile): a box holding
// someone else's text is ErrHumanInput and a box that never shows is ErrNotReady, both before
// anything is pasted; a message pasted but not taken is ErrNotSubmitted. Escape and Ctrl-C are
// never sent: they cancel an agent's work or quit it.
//
// An empty LockKey is filled in from ServerInfo (one more tmux call); a zero LockTimeout means 30s.
func (c *Client) Deliver(ctx context.Context, d Delivery) (DeliveryResult, error) {
	var res DeliveryResult
	if _, err := paneNum(d.Pane); err != nil {
		return res, fmt.Errorf("deliver: %w", err)
	}
	if d.Mark != "" && !validMark(d.Mark) {
		return res, fmt.Errorf("deliver to pane %s: mark %q is not [a-z0-9-]", d.Pane, d.Mark)
	}
	if len(d.Content) == 0 {
		// tmux would create no buffer for empty input and then fail the paste (measured on tmux 3.3a).
		return res, fmt.Errorf("deliver to pane %s: the content is empty: pass some text", d.Pane)
	}
	key := d.LockKey
	if key == "" {
		si, err := c.ServerInfo(ctx)
		if err != nil {
			return res, fmt.Errorf("deliver to pane %s: identify the tmux server: %w", d.Pane, err)
		}
		key = si.Key()
	}
	timeout := d.LockTimeout
	if timeout == 0 {
		timeout = defaultLockTimeout
	}
	start := time.Now()
	unlock, err := lock.Pane(ctx, d.LockDir, key, d.Pane, timeout)
	if err != nil {
		return res, fmt.Errorf("deliver to pane %s: %w", d.Pane, err)
	}
	defer unlock()
	res.LockWait = time.Since(start)

	// A strict delivery refuses a pane in copy mode (a person is reading it): the guarded paste
	// checks that itself, but a profile with a box reads the screen first, which copy mode shows
	// instead of the program's, so that check comes before the screen is read.
	p := d.Profile
	if d.Strict && p.HasBox() {
		if mode, err := c.inMode(ctx, d.Pane); err != nil {
			return res, fmt.Errorf("deliver to pane %s: %w", d.Pane, err)
		} else if mode {
			return res, copyModeBusy(d.Pane, &res)
		}
	}
	if p != nil {
		res.Profile = p.Name
		// Checked under the lock: another wcomm's paste in flight is never taken for a person's.
		if err := c.awaitBox(ctx, d, &res); err != nil {
			return res, err
		}
	}

	delay := d.EnterDelay
	if p != nil {
		delay = max(delay, p.EnterDelay.For(len(d.Content)))
	}
	together := enterWithPaste(d, delay)
	res.Buffer = newBufferName()
	expect := ""
	if d.Strict {
		expect = d.Expect.guardValue()
	}
	out, buffer, err := c.runFenced(ctx, d.Pane, d.Content, res.Buffer, func(buffer string) []string {
		return markFenced(guardArgsEnter(d.Pane, buffer, d.Mark, d.Strict, together, expect), d.Mark, fencePaste, time.Now())
	})
	res.Buffer = buffer
	if err != nil {
		return res, c.dropBuffer(ctx, res.Buffer, fmt.Errorf("deliver to pane %s: %w", d.Pane, err))
	}
	refused, inMode, changed, ok := refusalOf(out, res.Buffer)
	switch {
	case !ok:
		return res, c.dropBuffer(ctx, res.Buffer,
			fmt.Errorf("deliver to pane %s: unexpected output %q from tmux; check the pane before retrying", d.Pane, out))
	case changed:
		res.Before = "pane or server not the one looked up"
		return res, notNow(d.Pane, ErrPaneChanged, ": its process or its tmux server is not pid %d of server %d as looked up; nothing was pasted",
			d.Expect.PanePID, d.Expect.ServerPID)
	case inMode:
		// The refusing branch deleted the buffer itself, in the same call.
		return res, copyModeBusy(d.Pane, &res)
	case refused:
		return res, fmt.Errorf("deliver to pane %s: %w: the pane is dead or its input is off "+
			"(respawn the pane, or turn input on with 'tmux select-pane -e -t %s')", d.Pane, ErrRefused, d.Pane)
	}
	res.Pasted = true
	res.PastedAt = time.Now()
	if !d.Submit {
		return res, nil
	}
	res.EnterDelay = delay
	if together {
		res.Enters, res.EnterAt = 1, res.PastedAt
		dec := profile.DecideAfter(p, profile.Inspection{}, "", false, true, true, res.Enters)
		res.Submitted, res.Verified, res.Evidence = true, dec.Verified, dec.Evidence
		return res, nil
	}
	shown := false
	if p.HasBox() {
		var err error
		if shown, err = c.awaitShown(ctx, d, &res); err != nil {
			return res, err
		}
	}
	// The delay is the product's behaviour, not a test sleep: some apps ignore an Enter that
	// arrives with or right after a paste (measured on tmux 3.3a), counted from the paste, and from the
	// moment the paste showed (Verify.SettleMS).
	enterAt := res.PastedAt.Add(delay)
	if shown && p.Verify.SettleMS > 0 {
		if at := res.PastedAt.Add(res.ShownAfter + time.Duration(p.Verify.SettleMS)*time.Millisecond); at.After(enterAt) {
			enterAt = at
		}
	}
	if err := sleepCtx(ctx, time.Until(enterAt)); err != nil {
		return res, fmt.Errorf("pasted into pane %s but not submitted: %w", d.Pane, err)
	}
	return res, c.submit(ctx, d, &res, shown)
}

// Resume finishes a delivery that an earlier process pasted (its mark is the pane's pasted
// record, see Marks) but did not submit, because it died between paste and Enter: under the pane's lock it presses
// Enter, with the same checks as Deliver's, only when the pane shows nothing but that paste. A
// box that is empty means the text went on without us (submitted, or cleared by someone): nothing
// is pressed and Submitted stays false. A box holding other text is ErrHumanInput.
func (c *Client) Resume(ctx context.Context, d Delivery) (DeliveryResult, error) {
	res := DeliveryResult{Pasted: true}
	if _, err := paneNum(d.Pane); err != nil {
		return res, fmt.Errorf("resume delivery: %w", err)
	}
	if d.Mark != "" && !validMark(d.Mark) {
		return res, fmt.Errorf("resume delivery to pane %s: mark %q is not [a-z0-9-]", d.Pane, d.Mark)
	}
	timeout := d.LockTimeout
	if timeout == 0 {
		timeout = defaultLockTimeout
	}
	unlock, err := lock.Pane(ctx, d.LockDir, d.LockKey, d.Pane, timeout)
	if err != nil {
		return res, fmt.Errorf("resume delivery to pane %s: %w", d.Pane, err)
	}
	defer unlock()
	p := d.Profile
	shown := false
	if p.HasBox() {
		s, err := c.Screen(ctx, d.Pane)
		if err != nil {
			return res, fmt.Errorf("resume delivery to pane %s: read its screen: %w", d.Pane, err)
		}
		in := p.Inspect(s)
		a := p.Attribute(in, string(d.Content))
		if dl, ok := p.Dialog(s); ok {
			// The paste waits under the dialog: its Enter would answer it.
			res.Evidence = dialogEvidence(dl)
			return res, fmt.Errorf("resume delivery to pane %s, Enter not pressed: %w: %w: %s", d.Pane, ErrEnterHeld, ErrBusy, res.Evidence)
		}
		switch {
		case in.Found && len(in.Lines) == 0:
			res.Evidence = "input box empty: the paste was submitted or cleared without wcomm"
			return res, nil
		case a.Foreign > 0 || !in.Found:
			res.Before = in.State()
			return res, fmt.Errorf("resume delivery to pane %s: %w (%s); not pressing Enter", d.Pane, ErrHumanInput, in.State())
		}
		shown = true
	}
	if p != nil {
		res.Profile = p.Name
	}
	return res, c.submit(ctx, d, &res, shown)
}

// pollEvery is how often the screen is read while waiting on it: a capture costs about 2.5 ms of
// tmux time (measured on tmux 3.3a), so 40 ms keeps waits short and the server idle.
const pollEvery = 40 * time.Millisecond

// awaitBox waits, up to d.BusyWait, until the profile's input box can take a paste, and refuses
// with ErrHumanInput or ErrNotReady when it never can.
func (c *Client) awaitBox(ctx context.Context, d Delivery, res *DeliveryResult) error {
	p := d.Profile
	start := time.Now()
	deadline := start.Add(d.BusyWait)
	r := readiness{p: p}
	if p.HasBox() && p.Verify.TurnStartMS > 0 {
		at, err := c.enteredAt(ctx, d.Pane)
		if err != nil {
			return fmt.Errorf("deliver to pane %s: read the time of its last Enter: %w", d.Pane, err)
		}
		r.enteredAt = at
	}
	for looks := 1; ; looks++ {
		final := !time.Now().Before(deadline)
		var dec profile.Decision
		if p.HasBox() {
			s, err := c.Screen(ctx, d.Pane)
			if err != nil {
				return fmt.Errorf("deliver to pane %s: read its screen: %w", d.Pane, err)
			}
			dec = decideReady(p, p.Inspect(s), final, &r, time.Now())
			if r.busySeen && !r.enteredAt.IsZero() {
				if err := c.turnBegun(ctx, d.Pane); err != nil {
					return fmt.Errorf("deliver to pane %s: %w", d.Pane, err)
				}
				r.enteredAt = time.Time{}
			}
		} else {
			dec = profile.DecideBefore(p, profile.Inspection{}, final)
		}
		if looks > 1 {
			res.Waited = time.Since(start)
		}
		switch dec.Action {
		case profile.ActPaste:
			res.Before = dec.Evidence
			if d.Strict && dec.Busy {
				return notNow(d.Pane, ErrBusy, ": %s; nothing was pasted", dec.Evidence)
			}
			return nil
		case profile.ActRefuseHuman:
			res.Before = dec.Evidence
			return notNow(d.Pane, ErrHumanInput, " (%s, still after %s); nothing was pasted: "+
				"let the person finish or clear the input, or wait longer for the pane", dec.Evidence, d.BusyWait.Round(time.Millisecond))
		case profile.ActRefuseNotReady:
			res.Before = dec.Evidence
			return notNow(d.Pane, ErrNotReady, ": no %s input box on screen after %s (a dialog or menu may be open); "+
				"nothing was pasted: look at the pane, or name the agent whose profile delivers to it", p.Name, d.BusyWait.Round(time.Millisecond))
		}
		// Past the deadline only a readiness wait (decideReady) goes on, at the usual pace.
		wait := pollEvery
		if left := time.Until(deadline); left > 0 && left < wait {
			wait = left
		}
		if err := sleepCtx(ctx, wait); err != nil {
			return fmt.Errorf("deliver to pane %s: waiting for its input box: %w", d.Pane, err)
		}
	}
}

// awaitShown waits until the paste shows in the input box (bounded by the profile's VisibleMS,
// longer for big pastes) and reports whether it did. Text someone else typed meanwhile stops the
// delivery before Enter: ErrNotSubmitted.
func (c *Client) awaitShown(ctx context.Context, d Delivery, res *DeliveryResult) (bool, error) {
	p := d.Profile
	bound := time.Duration(p.Verify.VisibleMS)*time.Millisecond + p.EnterDelay.For(len(d.Content))
	deadline := res.PastedAt.Add(bound)
	for {
		final := !time.Now().Before(deadline)
		s, err := c.Screen(ctx, d.Pane)
		if err != nil {
			return false, fmt.Errorf("pasted into pane %s but not submitted: read its screen: %w", d.Pane, err)
		}
		dec := profile.DecideShown(p, p.Inspect(s), string(d.Content), final)
		switch dec.Action {
		case profile.ActEnter:
			if dec.Verified {
				res.ShownAfter = max(time.Since(res.PastedAt), time.Microsecond)
			}
			return dec.Verified, nil
		case profile.ActGiveUp:
			res.Evidence = dec.Evidence
			return false, fmt.Errorf("pasted into pane %s but not submitted: %w: %s", d.Pane, ErrNotSubmitted, dec.Evidence)
		}
		if err := sleepCtx(ctx, pollEvery); err != nil {
			return false, fmt.Errorf("pasted into pane %s but not submitted: %w", d.Pane, err)
		}
	}
}

// submit presses Enter and, with a box to read, watches it take the message: Enter again, after
// growing waits, while the box holds nothing but the pasted text. A paste never seen is watched
// on without an Enter (ActWatch), for as long again as all the windows, before the empty box is
// taken for its submission; watching spends no Enter.
func (c *Client) submit(ctx context.Context, d Delivery, res *DeliveryResult, shown bool) error {
	p := d.Profile
	windows := []int{0}
	if p.HasBox() && len(p.Verify.WindowsMS) > 0 {
		windows = p.Verify.WindowsMS
	}
	expect := ""
	if d.Strict {
		expect = d.Expect.guardValue()
	}
	watchLeft := 0
	for _, w := range windows {
		watchLeft += w
	}
	k, press := 0, true        // k: the window of the latest Enter
	var before *profile.Screen // the screen just before the latest Enter (RedrawBeforeRetry)
	for {
		if press {
			if p.HasBox() && p.Verify.RedrawBeforeRetry {
				if s, err := c.Screen(ctx, d.Pane); err == nil {
					before = &s
				}
			}
			enter := func(string) []string {
				// Every Enter, the first and each retry, is pressed only while the screen shows
				// the box and no dialog, checked by tmux in the Enter's own call (deliver_screen.go).
				args := enterArgsScreen(d.Pane, d.LiteralEnter, markFor(d.Mark, k), d.Strict, expect, screenRefusal(p, shown))
				if p.HasBox() && p.Verify.TurnStartMS > 0 {
					args = withEnterStamp(args, d.Pane, time.Now())
				}
				return markFenced(args, d.Mark, fenceEnter, time.Now())
			}
			out, _, err := c.runFenced(ctx, d.Pane, nil, enterToken(res.Buffer, d.Mark, res.Enters), enter)
			if err != nil {
				return fmt.Errorf("pasted into pane %s but Enter failed: %w", d.Pane, err)
			}
			switch strings.TrimSpace(out) {
			case "":
			case enterRefused + "-mode":
				res.Evidence = "the pane went into copy mode between paste and Enter; the Enter waits until it leaves it"
				return fmt.Errorf("pasted into pane %s, Enter not pressed: %w: %w: it is in copy mode (someone is reading it)", d.Pane, ErrEnterHeld, ErrBusy)
			case enterRefused + "-screen":
				res.Evidence = c.screenHeld(ctx, d)
				return fmt.Errorf("pasted into pane %s, Enter not pressed: %w: %w: %s", d.Pane, ErrEnterHeld, ErrBusy, res.Evidence)
			case enterRefused:
				res.Evidence = "the pane died, its input went off or its process changed between paste and Enter"
				return fmt.Errorf("pasted into pane %s but not submitted: %w: it died, its input went off or its process changed after the paste", d.Pane, ErrNotSubmitted)
			default:
				return fmt.Errorf("pasted into pane %s, Enter not known to be pressed: unexpected output %q from tmux; look at the pane", d.Pane, out)
			}
			res.Enters++
			if res.Enters == 1 {
				res.EnterAt = time.Now()
			}
			if p == nil {
				res.Submitted = true
				return nil
			}
			if !p.HasBox() {
				dec := profile.DecideAfter(p, profile.Inspection{}, "", shown, true, true, res.Enters)
				res.Submitted, res.Verified, res.Evidence = true, dec.Verified, dec.Evidence
				return nil
			}
		}
		w := windows[k]
		if !press {
			watchLeft -= w
		}
		dec, err := c.watchWindow(ctx, d, res, shown, w, k == len(windows)-1, before)
		if err != nil || res.Submitted {
			return err
		}
		switch {
		case dec.Action == profile.ActRetry:
			// The box holds the paste: it has been seen, and takes the next window's Enter.
			k, press, shown = k+1, true, true
		case watchLeft <= 0 && dec.Holds:
			res.Evidence = dec.Evidence
			return fmt.Errorf("pasted into pane %s but not submitted: %w: %s; the text stays in its input box: "+
				"press Enter there or clear it", d.Pane, ErrNotSubmitted, dec.Evidence)
		case watchLeft <= 0:
			res.Submitted, res.Evidence = true, dec.Evidence
			return nil
		default:
			press = false
		}
	}
}

// watchWindow reads the box for w milliseconds after an Enter (or a window without one) until
// DecideAfter settles: submitted (res.Submitted set), given up (an error), or, at the window's
// end, ActRetry or ActWatch, whose decision it returns. With RedrawBeforeRetry, a retry on a
// screen still equal to before (the screen before the latest Enter) becomes a watch that holds.
func (c *Client) watchWindow(ctx context.Context, d Delivery, res *DeliveryResult, shown bool, w int, last bool, before *profile.Screen) (profile.Decision, error) {
	p := d.Profile
	deadline := time.Now().Add(time.Duration(w) * time.Millisecond)
	for {
		if err := sleepCtx(ctx, pollEvery); err != nil {
			return profile.Decision{}, fmt.Errorf("pasted into pane %s, Enter sent, not verified: %w", d.Pane, err)
		}
		final := !time.Now().Before(deadline)
		s, err := c.Screen(ctx, d.Pane)
		if err != nil {
			// The Enter went out; the pane may have gone since. Say so, do not guess.
			res.Submitted, res.Evidence = true, "Enter sent; the screen could not be read after it: "+err.Error()
			return profile.Decision{}, nil
		}
		in := p.Inspect(s)
		if in.Busy && p.Verify.TurnStartMS > 0 && !res.turnSeen {
			// The agent shows the turn begun: the next paste need not wait for it.
			if err := c.turnBegun(ctx, d.Pane); err == nil {
				res.turnSeen = true
			}
		}
		dec := profile.DecideAfter(p, in, string(d.Content), shown, final, last, res.Enters)
		switch dec.Action {
		case profile.ActSubmitted:
			res.Submitted, res.Verified, res.Evidence = true, dec.Verified, dec.Evidence
			return dec, nil
		case profile.ActGiveUp:
			res.Evidence = dec.Evidence
			return dec, fmt.Errorf("pasted into pane %s but not submitted: %w: %s; the text stays in its input box: "+
				"press Enter there or clear it", d.Pane, ErrNotSubmitted, dec.Evidence)
		case profile.ActRetry:
			switch {
			case !p.Verify.RedrawBeforeRetry:
			case before != nil && s.Same(*before):
				return profile.Decision{Action: profile.ActWatch, Holds: true, Evidence: "input box still holds the message, and the agent has not redrawn since the Enter"}, nil
			case in.Busy:
				// Busy, its box may be a drawing behind: an Enter now would queue the text
				// again should the last one have taken it. Looked at again once it is idle.
				return profile.Decision{Action: profile.ActWatch, Holds: true, Evidence: "input box still holds the message while the agent is busy"}, nil
			}
			return dec, nil
		case profile.ActWatch:
			return dec, nil
		}
	}
}

// markFor is the mark of the i-th Enter: only the first records it, so a retry never moves it.
func markFor(mark string, i int) string {
	if i == 0 {
		return mark
	}
	return ""
}

// copyModeBusy is the refusal of a strict delivery into a pane in copy mode.
func copyModeBusy(pane messages.PaneID, res *DeliveryResult) error {
	res.Before = "pane in copy mode"
	return notNow(pane, ErrBusy, ": it is in copy mode (someone is reading it)")
}

// inMode reports whether the pane is in a mode (copy mode, a chooser).
func (c *Client) inMode(ctx context.Context, pane messages.PaneID) (bool, error) {
	out, err := c.Run(ctx, nil, "display-message", "-p", "-t", string(pane), "#{pane_in_mode}")
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(out) == "1", nil
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// dropBuffer deletes a delivery's buffer after a failure, so no message text stays in the server
// (named buffers are never evicted, and a bare paste-buffer pastes the newest one; measured
// on tmux 3.3a). A missing buffer or server is fine; another failure is added to cause.
func (c *Client) dropBuffer(ctx context.Context, buffer string, cause error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	_, err := c.Run(ctx, nil, "delete-buffer", "-b", buffer)
	if err == nil || errors.Is(err, ErrNoBuffer) || errors.Is(err, ErrNoServer) {
		return cause
	}
	return errors.Join(cause, fmt.Errorf("delete the leftover buffer %s: %w", buffer, err))
}
