package paneops

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wcomm/wcomm/messages"
)

// Delivery is one paste into a pane.
type Delivery struct {
	Pane    messages.PaneID
	Content []byte // already sanitized; must not be empty
	// Submit presses Enter in a separate tmux call EnterDelay after the paste.
	Submit     bool
	EnterDelay time.Duration
	// LockDir holds the per-pane lock files; LockKey names the server (ServerInfo.Key()).
	LockDir     string
	LockKey     string
	LockTimeout time.Duration

	// Profile, when set, makes the delivery read the pane's screen (see verify.go): before the
	// paste it waits up to BusyWait for an empty input box and refuses to paste into one holding
	// text wcomm did not put there; after the paste it waits for the paste to show; after Enter it
	// checks the box took the message and presses Enter again, with backoff, only while the box
	// still holds nothing but the pasted text. EnterDelay is raised to the profile's floor for the
	// content's size. nil: paste and Enter, nothing checked.
	Profile  *Profile
	BusyWait time.Duration
	// LiteralEnter sends Enter as a literal carriage return (send-keys -l), for tmux versions whose
	// named Enter key does not submit (see KnownBugs).
	LiteralEnter bool
	// Strict makes a delivery that would have to wait give up instead: a busy or starting agent is
	// ErrBusy at BusyWait's end rather than pasted into (its own queue would hold the message), and
	// a pane in copy mode is ErrBusy rather than taken out of it (a person is reading there).
	// The mailbox delivers strictly: what is not ready now waits in the outbox.
	Strict bool
	// Mark, when set, is recorded in the pane itself, in the same tmux call as each step: the pane
	// option @wcomm-pasted takes it with the paste, @wcomm-entered with the first Enter. A
	// deliverer killed mid-way leaves the server's own record of how far it got (see Marks).
	// Only [a-z0-9-], since it is spliced into a tmux command string.
	Mark string
	// AfterPaste, when set, is called once tmux confirmed the paste, before the Enter delay (not
	// for a paste whose Enter goes in the same call): the caller makes sure someone presses the
	// Enter should this process die in between.
	AfterPaste func()
	// Expect, with Strict, is the pane's process and its server's as the sender last knew them: the
	// guarded paste then also refuses, in the same call, a pane whose process or server is not
	// those (ErrPaneChanged). It is what lets a sender trust a record of an earlier lookup instead
	// of asking tmux again: the server itself checks the record at the moment of the paste.
	Expect Identity
}

// Identity is what a pane's lookup found that only a new pane or a new server changes.
type Identity struct {
	PanePID   int // #{pane_pid}
	ServerPID int // #{pid}
}

// guardValue is the identity as the guard's format prints it, "" when not set.
func (id Identity) guardValue() string {
	if id.PanePID <= 0 || id.ServerPID <= 0 {
		return ""
	}
	return strconv.Itoa(id.PanePID) + "-" + strconv.Itoa(id.ServerPID)
}

// DeliveryResult says what happened, with the evidence.
type DeliveryResult struct {
	Buffer    string        `json:"buffer"`
	Pasted    bool          `json:"pasted"`
	Submitted bool          `json:"submitted"` // Enter was sent and, where the screen tells, taken
	LockWait  time.Duration `json:"lock_wait_ns"`
	PastedAt  time.Time     `json:"pasted_at"`
	EnterAt   time.Time     `json:"enter_at"`

	// The screen checks of a delivery with a Profile.
	Profile string `json:"profile,omitempty"`
	// Before is what the input box held when the paste went ahead ("input box empty", ...).
	Before string `json:"before,omitempty"`
	// Waited is how long the box was waited for before pasting (busy agent, human text, not ready).
	Waited time.Duration `json:"waited_ns,omitempty"`
	// ShownAfter is the time from the paste until it showed in the box; 0 when never seen.
	ShownAfter time.Duration `json:"shown_after_ns,omitempty"`
	EnterDelay time.Duration `json:"enter_delay_ns,omitempty"`
	Enters     int           `json:"enters,omitempty"`
	// Verified says the screen confirmed the submission; Evidence says what was seen.
	Verified bool   `json:"verified"`
	Evidence string `json:"evidence,omitempty"`
}

// defaultLockTimeout applies when Delivery.LockTimeout is 0, so a hung holder cannot block a
// sender whose context has no deadline forever.
const defaultLockTimeout = 30 * time.Second

// cleanupTimeout bounds the delete-buffer call that runs after a failure, even when the caller's
// context has already been cancelled.
const cleanupTimeout = 5 * time.Second

// guardCondition is true for the panes a paste must never reach: a dead pane (paste-buffer into it
// crashes tmux 3.3a, as measured) and one whose input is off (the paste would be dropped
// silently). tmux evaluates it server-side, in the same call as the paste.
const guardCondition = "#{||:#{pane_dead},#{pane_input_off}}"

// bufferSeq makes buffer names unique within the process; the pid and random part make them
// unique across processes. Sharing a name between senders sent messages to the wrong pane
// (measured on tmux 3.3a).
var bufferSeq atomic.Uint64

// newBufferName returns "wcomm-PID-COUNTER-RANDHEX"; only [A-Za-z0-9-], because the name is also
// spliced into the command strings of guardArgs.
func newBufferName() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+); the counter keeps names unique anyway
	return "wcomm-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(bufferSeq.Add(1), 10) + "-" + hex.EncodeToString(b[:])
}

// refusedMark is what the guarded call prints when it refuses. It names the unique buffer, so it
// cannot be mistaken for anything else: nothing a pane prints reaches the client's stdout, and the
// other commands of the call print nothing.
func refusedMark(buffer string) string { return "wcomm-refused-" + buffer }

// strictGuardCondition adds a pane in a mode (copy mode: a person is reading it) to what a
// strict delivery never pastes into. Checked by the server in the paste's own call, it costs no
// extra tmux call and no moment passes between the look and the paste.
const strictGuardCondition = "#{||:#{pane_dead},#{||:#{pane_input_off},#{pane_in_mode}}}"

// guardArgs is the one tmux call of a delivery (see Deliver). pane and buffer must be generated
// ids (%N, newBufferName): the two command strings go through tmux's command parser. strict
// refuses a pane in a mode too, and the refusal then names the pane's state (see refusal).
func guardArgs(pane messages.PaneID, buffer, mark string, strict bool) []string {
	return guardArgsEnter(pane, buffer, mark, strict, false, "")
}

// guardArgsEnter is guardArgs that, with enter, also presses Enter after the paste in the same
// call, and records the Enter's mark with the paste's (see enterWithPaste). expect, with strict,
// is Identity.guardValue: the call refuses a pane whose "#{pane_pid}-#{pid}" differs, and its
// refusal prints a fourth digit, 1 when they match.
func guardArgsEnter(pane messages.PaneID, buffer, mark string, strict, enter bool, expect string) []string {
	p := string(pane)
	paste := "copy-mode -q -t " + p + " ; paste-buffer -d -p -b " + buffer + " -t " + p
	if mark != "" {
		paste += " ; set-option -p -t " + p + " " + markPasted + " " + mark
	}
	if enter {
		paste += " ; send-keys -t " + p + " Enter"
		if mark != "" {
			paste += " ; set-option -p -t " + p + " " + markEntered + " " + mark
		}
	}
	cond, refuse := guardCondition, "delete-buffer -b "+buffer+" ; display -p "+refusedMark(buffer)
	if strict {
		cond = strictGuardCondition
		bits := "#{pane_dead}#{pane_input_off}#{pane_in_mode}"
		if expect != "" {
			same := "#{==:#{pane_pid}-#{pid}," + expect + "}"
			cond = "#{||:" + strictGuardCondition + ",#{!=:#{pane_pid}-#{pid}," + expect + "}}"
			bits += same
		}
		refuse = "delete-buffer -b " + buffer + " ; display -p -t " + p + " '" + refusedMark(buffer) + "-" + bits + "'"
	}
	return []string{
		"load-buffer", "-b", buffer, "-", ";",
		"if-shell", "-F", "-t", p, cond, refuse,
		// copy-mode -q leaves copy mode first: a pane in a mode drops the paste brackets and
		// swallows keys (measured on tmux 3.3a).
		paste,
	}
}

// enterWithPaste reports whether the Enter can go in the paste's own call: only for a program
// reading lines in cooked mode, when no delay is asked for. There the terminal's line discipline,
// not the program, takes the line, so the moment the Enter arrives cannot matter; it saves one
// tmux client (a process start and a round trip to the server, about 2 ms). Programs that read
// raw keys (agents, shells with line editing, anything unknown) are known to drop an Enter that
// comes with a paste (measured on tmux 3.3a), so they keep the separate call.
func enterWithPaste(d Delivery, delay time.Duration) bool {
	return d.Submit && delay == 0 && !d.LiteralEnter && d.Profile != nil && d.Profile.Kind == KindReader && !d.Profile.HasBox()
}

// refusal reads what the guarded call printed: "" when it pasted; refused when the guard
// refused; inMode when a strict guard refused only because the pane is in a mode.
func refusal(out, buffer string) (refused, inMode, ok bool) {
	refused, inMode, _, ok = refusalOf(out, buffer)
	return refused, inMode, ok
}

// refusalOf is refusal that also reads the identity digit of a guard with an expected identity:
// changed when the pane's process or its server is not the one expected. A dead pane or one
// with its input off is reported as such first; a changed pane comes before copy mode.
func refusalOf(out, buffer string) (refused, inMode, changed, ok bool) {
	out = strings.TrimSpace(out)
	mark := refusedMark(buffer)
	switch {
	case out == "":
		return false, false, false, true
	case out == mark:
		return true, false, false, true
	}
	bits, found := strings.CutPrefix(out, mark+"-")
	if !found || (len(bits) != 3 && len(bits) != 4) || strings.Trim(bits, "01") != "" {
		return false, false, false, false
	}
	if bits[0] == '1' || bits[1] == '1' {
		return true, false, false, true
	}
	if len(bits) == 4 && bits[3] == '0' {
		return true, false, true, true
	}
	return true, bits[2] == '1', false, true
}

// enterArgs presses Enter in the pane, a call of its own (measured on tmux 3.3a), guarded like
// the paste: tmux checks in the same call, with nothing between the look and the key, that the
// pane is still alive and takes input, so a pane that died between paste and Enter is reported
// instead of logged as submitted. A pane in copy mode would swallow the Enter (measured on tmux
// 3.3a), and the next paste would join the line: strict refuses it then, printing
// enterRefused+"-mode" (a person is reading; the Enter waits for them), and otherwise the pane
// is taken out of the mode first, in the same call, as the paste did. expect, with strict, also
// refuses a pane whose "#{pane_pid}-#{pid}" is not that (Identity.guardValue). literal sends the
// carriage return as a literal key instead of the named key Enter. A mark is recorded in the same
// command, so it says only what tmux did. pane and mark must be generated ids: the branches go
// through tmux's command parser.
func enterArgs(pane messages.PaneID, literal bool, mark string, strict bool, expect string) []string {
	p := string(pane)
	enter := "send-keys -t " + p + " Enter"
	if literal {
		enter = "send-keys -t " + p + ` -l "\r"`
	}
	if mark != "" {
		enter += " ; set-option -p -t " + p + " " + markEntered + " " + mark
	}
	if !strict {
		return []string{"if-shell", "-F", "-t", p, guardCondition, "display -p " + enterRefused, "copy-mode -q -t " + p + " ; " + enter}
	}
	cond := strictGuardCondition
	if expect != "" {
		cond = "#{||:" + strictGuardCondition + ",#{!=:#{pane_pid}-#{pid}," + expect + "}}"
	}
	// A dead pane, input off or another process is refused as such; only a pane in a mode and
	// nothing else is the "-mode" refusal, that waits.
	refuse := "display -p -t " + p + " '" + enterRefused + "#{?#{||:#{pane_dead},#{pane_input_off}},," +
		"#{?#{pane_in_mode},-mode,}}'"
	if expect != "" {
		refuse = "display -p -t " + p + " '" + enterRefused + "#{?#{||:#{||:#{pane_dead},#{pane_input_off}},#{!=:#{pane_pid}-#{pid}," + expect + "}},," +
			"#{?#{pane_in_mode},-mode,}}'"
	}
	return []string{"if-shell", "-F", "-t", p, cond, refuse, enter}
}

// enterRefused is what the guarded Enter prints when the pane can no longer take it; with
// "-mode" after it, when it only waits for the pane to leave copy mode.
const enterRefused = "wcomm-enter-refused"

// The pane options that hold a delivery's Mark.
const (
	markPasted  = "@wcomm-pasted"
	markEntered = "@wcomm-entered"
)

// validMark reports whether a mark can be spliced into a tmux command string.
func validMark(m string) bool {
	if len(m) == 0 || len(m) > 64 {
		return false
	}
	for _, r := range m {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// Marks reads the marks of the last marked delivery into a pane: the mark of the last paste and
// of the last Enter ("" when none).
func (c *Client) Marks(ctx context.Context, pane messages.PaneID) (pasted, entered string, err error) {
	if _, err := paneNum(pane); err != nil {
		return "", "", err
	}
	out, err := c.Run(ctx, nil, "display-message", "-p", "-t", string(pane), "#{"+markPasted+"} #{"+markEntered+"}")
	if err != nil {
		return "", "", err
	}
	pasted, entered, _ = strings.Cut(strings.TrimRight(out, "\n"), " ")
	return pasted, entered, nil
}

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
	unlock, err := LockPane(ctx, d.LockDir, key, d.Pane, timeout)
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
	out, err := c.Run(ctx, bytes.NewReader(d.Content), guardArgsEnter(d.Pane, res.Buffer, d.Mark, d.Strict, together, expect)...)
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
		return res, fmt.Errorf("deliver to pane %s: %w: its process or its tmux server is not pid %d of server %d as looked up; nothing was pasted",
			d.Pane, ErrPaneChanged, d.Expect.PanePID, d.Expect.ServerPID)
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
	if d.AfterPaste != nil && !together {
		d.AfterPaste()
	}
	if together {
		res.Enters, res.EnterAt = 1, res.PastedAt
		dec := DecideAfter(p, Inspection{}, "", false, true, true, res.Enters)
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

// Resume finishes a delivery that an earlier process pasted (its mark is the pane's @wcomm-pasted)
// but did not submit, because it died between paste and Enter: under the pane's lock it presses
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
	unlock, err := LockPane(ctx, d.LockDir, d.LockKey, d.Pane, timeout)
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
	for looks := 1; ; looks++ {
		final := !time.Now().Before(deadline)
		var dec Decision
		if p.HasBox() {
			s, err := c.Screen(ctx, d.Pane)
			if err != nil {
				return fmt.Errorf("deliver to pane %s: read its screen: %w", d.Pane, err)
			}
			dec = DecideBefore(p, p.Inspect(s), final)
		} else {
			dec = DecideBefore(p, Inspection{}, final)
		}
		if looks > 1 {
			res.Waited = time.Since(start)
		}
		switch dec.Action {
		case ActPaste:
			res.Before = dec.Evidence
			if d.Strict && dec.Busy {
				return fmt.Errorf("deliver to pane %s: %w: %s; nothing was pasted", d.Pane, ErrBusy, dec.Evidence)
			}
			return nil
		case ActRefuseHuman:
			res.Before = dec.Evidence
			return fmt.Errorf("deliver to pane %s: %w (%s, still after %s); nothing was pasted: "+
				"let the person finish or clear the input, or raise --busy-wait", d.Pane, ErrHumanInput, dec.Evidence, d.BusyWait.Round(time.Millisecond))
		case ActRefuseNotReady:
			res.Before = dec.Evidence
			return fmt.Errorf("deliver to pane %s: %w: no %s input box on screen after %s (a dialog or menu may be open); "+
				"nothing was pasted: look at the pane, or force a profile with --agent", d.Pane, ErrNotReady, p.Name, d.BusyWait.Round(time.Millisecond))
		}
		if err := sleepCtx(ctx, min(pollEvery, max(time.Until(deadline), time.Millisecond))); err != nil {
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
		dec := DecideShown(p, p.Inspect(s), string(d.Content), final)
		switch dec.Action {
		case ActEnter:
			if dec.Verified {
				res.ShownAfter = max(time.Since(res.PastedAt), time.Microsecond)
			}
			return dec.Verified, nil
		case ActGiveUp:
			res.Evidence = dec.Evidence
			return false, fmt.Errorf("pasted into pane %s but not submitted: %w: %s", d.Pane, ErrNotSubmitted, dec.Evidence)
		}
		if err := sleepCtx(ctx, pollEvery); err != nil {
			return false, fmt.Errorf("pasted into pane %s but not submitted: %w", d.Pane, err)
		}
	}
}

// submit presses Enter and, with a box to read, watches it take the message: Enter again, after
// growing waits, while the box holds nothing but the pasted text.
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
	for i, w := range windows {
		out, err := c.Run(ctx, nil, enterArgs(d.Pane, d.LiteralEnter, markFor(d.Mark, i), d.Strict, expect)...)
		if err != nil {
			return fmt.Errorf("pasted into pane %s but Enter failed: %w", d.Pane, err)
		}
		switch strings.TrimSpace(out) {
		case "":
		case enterRefused + "-mode":
			res.Evidence = "the pane went into copy mode between paste and Enter; the Enter waits until it leaves it"
			return fmt.Errorf("pasted into pane %s, Enter not pressed: %w: %w: it is in copy mode (someone is reading it)", d.Pane, ErrEnterHeld, ErrBusy)
		case enterRefused:
			res.Evidence = "the pane died, its input went off or its process changed between paste and Enter"
			return fmt.Errorf("pasted into pane %s but not submitted: %w: it died, its input went off or its process changed after the paste", d.Pane, ErrNotSubmitted)
		default:
			return fmt.Errorf("pasted into pane %s, Enter not known to be pressed: unexpected output %q from tmux; look at the pane", d.Pane, out)
		}
		res.Enters++
		if i == 0 {
			res.EnterAt = time.Now()
		}
		if p == nil {
			res.Submitted = true
			return nil
		}
		if !p.HasBox() {
			dec := DecideAfter(p, Inspection{}, "", shown, true, true, res.Enters)
			res.Submitted, res.Verified, res.Evidence = true, dec.Verified, dec.Evidence
			return nil
		}
		deadline := time.Now().Add(time.Duration(w) * time.Millisecond)
		for {
			if err := sleepCtx(ctx, pollEvery); err != nil {
				return fmt.Errorf("pasted into pane %s, Enter sent, not verified: %w", d.Pane, err)
			}
			final := !time.Now().Before(deadline)
			s, err := c.Screen(ctx, d.Pane)
			if err != nil {
				// The Enter went out; the pane may have gone since. Say so, do not guess.
				res.Submitted, res.Evidence = true, "Enter sent; the screen could not be read after it: "+err.Error()
				return nil
			}
			dec := DecideAfter(p, p.Inspect(s), string(d.Content), shown, final, i == len(windows)-1, res.Enters)
			switch dec.Action {
			case ActSubmitted:
				res.Submitted, res.Verified, res.Evidence = true, dec.Verified, dec.Evidence
				return nil
			case ActGiveUp:
				res.Evidence = dec.Evidence
				return fmt.Errorf("pasted into pane %s but not submitted: %w: %s; the text stays in its input box: "+
					"press Enter there or clear it", d.Pane, ErrNotSubmitted, dec.Evidence)
			}
			if dec.Action == ActRetry {
				break
			}
		}
	}
	return fmt.Errorf("pasted into pane %s but not submitted: %w", d.Pane, ErrNotSubmitted) // not reached: the last window gives up
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
	return fmt.Errorf("deliver to pane %s: %w: it is in copy mode (someone is reading it)", pane, ErrBusy)
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
