package mailbox

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

// postLockWait bounds how long a sender waits for another process's delivery to the same pane
// before it leaves its message queued: a sender never waits on a pane, and that pane is about to
// be busy with what the other process typed anyway.
const postLockWait = 250 * time.Millisecond

// errNotReady marks a delivery that found the pane not ready now; nothing was typed.
var errNotReady = errors.New("pane not ready")

// notReadyError is errNotReady with what the pane is not ready for, in words for the sender.
type notReadyError struct{ reason string }

func (e *notReadyError) Error() string        { return errNotReady.Error() + ": " + e.reason }
func (e *notReadyError) Is(target error) bool { return target == errNotReady }

// notReady reports whether err means "not now" rather than "never".
func notReady(err error) bool {
	return errors.Is(err, errNotReady) || errors.Is(err, paneops.ErrBusy) || errors.Is(err, paneops.ErrHumanInput) ||
		errors.Is(err, paneops.ErrNotReady) || errors.Is(err, paneops.ErrLockTimeout) || errors.Is(err, paneops.ErrPaneChanged)
}

// mailTTL is how long a message may wait for its pane.
func (o *Office) mailTTL() time.Duration {
	if o.MailTTL > 0 {
		return o.MailTTL
	}
	return settings.DefaultMailTTL
}

// Post writes m to the outbox of its pane and delivers it now when it is first in line and the
// pane is ready; else it leaves it queued and makes sure a deliverer runs. With e.NoQueue, the
// message is delivered now as before the mailbox existed (waiting up to BusyWait) or ends
// undeliverable with the error: it never waits in the outbox.
func (of *Office) Post(ctx context.Context, root string, m messages.Mail, pane paneops.Pane, srv paneops.ServerInfo) (*core.Posted, error) {
	now := of.Now()
	// Not e.Rand: tests fix it to replay ids, and mail ids must differ within a nanosecond.
	id, err := messages.NewMailID(now, rand.Reader)
	if err != nil {
		return nil, err
	}
	m.ID, m.QueuedAt, m.Expires = id, now.UTC(), now.UTC().Add(of.mailTTL())
	ob, err := OpenOutbox(root, m.Server, m.Pane, true)
	if err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("queue mail: %w", err)
	}
	// The outbox record is written only when the message waits: one for a ready pane with
	// nothing ahead of it goes the direct path (below), and its delivery log is its record.
	onDisk := false
	put := func() error {
		if onDisk {
			return nil
		}
		if err := ob.put(m); err != nil {
			return err
		}
		onDisk = true
		return nil
	}
	if of.NoQueue {
		if err := put(); err != nil {
			return nil, err
		}
	}
	queued := func(reason string) (*core.Posted, error) {
		if err := put(); err != nil {
			return nil, err
		}
		rerr := of.recordMail(root, []messages.Mail{m}, evQueued, map[string]string{"pane": string(m.Pane), "mail": m.ID, "reason": reason}, of.Now())
		p := &core.Posted{Mail: m, Queued: true, Reason: reason}
		if err := of.EnsureDeliverer(ob, m.Socket); err != nil {
			p.Reason += "; " + err.Error()
		}
		if rerr != nil {
			return p, fmt.Errorf("queued in the outbox of pane %s, but %w", m.Pane, rerr)
		}
		return p, nil
	}
	wait := min(of.LockTimeout, postLockWait)
	if of.NoQueue {
		wait = of.LockTimeout
	}
	unlock, err := ob.lockDrain(wait)
	if err != nil {
		return queued("another delivery to this pane is under way")
	}
	defer unlock()
	// A delivery a killed process left between paste and Enter is finished first, fail-fast or
	// not: typed after it, this message would join that text on one line. One whose Enter still
	// waits (copy mode) holds everything behind it.
	if held := of.recoverInflight(ctx, root, ob, pane, srv); held != nil {
		if of.NoQueue {
			why := "nothing was pasted: " + heldReason
			of.recordMail(root, []messages.Mail{m}, evRefused, map[string]string{"pane": string(m.Pane), "mail": m.ID, "error": why}, of.Now())
			of.endMail(root, ob, m, messages.MailUndeliverable, "", why, nil)
			return &core.Posted{Mail: m, Outcome: messages.MailUndeliverable}, fmt.Errorf("deliver to pane %s: %s; leave copy mode there (q), or send without --no-queue to queue it: %w", m.Pane, why, paneops.ErrBusy)
		}
		return queued(heldReason)
	}
	if of.NoQueue {
		return of.deliverGroup(ctx, root, ob, []messages.Mail{m}, pane, srv, false)
	}
	if empty, err := ob.queueEmpty(); err == nil && empty {
		// The direct path: nothing waits ahead, so m is typed now with no outbox record.
		// inflight.json carries m itself, so a guard finishes a paste this process leaves
		// without its Enter as it would a queued one's.
		ob.direct = m.ID
		p, err := of.deliverGroup(ctx, root, ob, []messages.Mail{m}, pane, srv, true)
		switch {
		case err != nil && notReady(err):
			return queued(reasonOf(err))
		case errors.Is(err, paneops.ErrEnterHeld):
			// Pasted, its Enter refused: it stays queued, as a queued one does, for recovery.
			if perr := put(); perr != nil {
				return p, errors.Join(err, perr)
			}
		}
		return p, err
	}
	if err := put(); err != nil {
		return nil, err
	}
	// Order is kept: what waits ahead of m goes first, delivered by this process while the pane
	// is ready, so concurrent senders to a ready pane need no deliverer.
	prev := ""
	for {
		pend, _ := ob.Pending()
		if !slices.ContainsFunc(pend, func(p messages.Mail) bool { return p.ID == m.ID }) {
			break
		}
		group := headGroup(pend)
		for i := range group {
			if group[i].ID == m.ID {
				group[i].Request = m.Request // what the sender holds, not read back
			}
		}
		if group[0].ID == prev {
			// The message ahead was handled but its outcome could not be written (a full disk):
			// typing it again would deliver it twice. It waits, with m behind it, for recovery.
			return queued("the message ahead of it in the outbox could not be recorded as delivered")
		}
		prev = group[0].ID
		p, err := of.deliverGroup(ctx, root, ob, group, pane, srv, true)
		if err != nil && notReady(err) {
			return queued(reasonOf(err))
		}
		if slices.ContainsFunc(group, func(g messages.Mail) bool { return g.ID == m.ID }) {
			return p, err
		}
	}
	// Ended by another process meanwhile (a deliverer, a hook): report what it recorded.
	o, err := ob.Outcome(m.ID)
	if err != nil {
		return nil, err
	}
	p := &core.Posted{Mail: m, Outcome: o.State}
	if o.State == messages.MailUndeliverable || o.State == messages.MailExpired {
		return p, fmt.Errorf("%s: %s", o.State, o.Detail)
	}
	return p, nil
}

// headGroup is what the next delivery types: the oldest message, and when it is a RESPONSE line,
// the RESPONSE lines right behind it, coalesced into one paste.
func headGroup(pend []messages.Mail) []messages.Mail {
	group := pend[:1]
	if pend[0].Kind == messages.MailResponse {
		for _, m := range pend[1:] {
			if m.Kind != messages.MailResponse {
				break
			}
			group = append(group, m)
		}
	}
	return group
}

// heldReason says why nothing is typed into a pane whose last paste waits for its Enter. Its
// words are about the pane, not the paste: the sender's own message was never pasted, and the
// held error's "pasted into pane %N" would read as if it had been.
const heldReason = "the pane is in copy mode (someone is reading it) and the message pasted there before waits for its Enter until it leaves it"

// reasonOf is the short reason of a not-ready error, for the log and the sender: what the engine
// or paneops said the pane is not ready for, else the error's own words (a lock held too long).
func reasonOf(err error) string {
	var nr *notReadyError
	var nn *paneops.NotNowError
	switch {
	case errors.As(err, &nr):
		return nr.reason
	case errors.As(err, &nn):
		return nn.Reason
	}
	return err.Error()
}

// deliverGroup delivers one message, or several RESPONSE lines coalesced into one paste, into
// pane, under the outbox's drain lock (held by the caller). strict: a pane that is not ready
// is errNotReady-class and the mail stays queued. Any other failure ends the mail as
// undeliverable and is returned.
func (o *Office) deliverGroup(ctx context.Context, root string, ob *outbox, group []messages.Mail, pane paneops.Pane, srv paneops.ServerInfo, strict bool) (*core.Posted, error) {
	m := group[0]
	p := &core.Posted{Mail: m}
	// Mail no longer wanted ends without typing anything.
	var keep []messages.Mail
	for _, g := range group {
		if g.ID == ob.direct && g.Kind == messages.MailRequest {
			// Written by this very call: nothing can have answered it yet.
			keep = append(keep, g)
			continue
		}
		if why := o.unwanted(root, g); why != "" {
			o.endMail(root, ob, g, messages.MailSuperseded, "", why, nil)
			continue
		}
		keep = append(keep, g)
	}
	if len(keep) == 0 {
		p.Outcome = messages.MailSuperseded
		return p, nil
	}
	group = keep
	m = group[0] // the mark and the profile are the first wanted message's
	p.Mail = m
	fail := func(err error) (*core.Posted, error) {
		for _, g := range group {
			o.endMail(root, ob, g, messages.MailUndeliverable, "", err.Error(), nil)
		}
		o.recordMail(root, group, evUndeliverable, map[string]string{"pane": string(m.Pane), "error": err.Error()}, o.Now())
		p.Outcome = messages.MailUndeliverable
		return p, err
	}
	if pane.Dead && strict && o.Restartable(srv, pane.ID) {
		// A spawned pane whose program ended is brought back by a restart in the same pane.
		return p, &notReadyError{reason: "its program has ended; the message waits until 'wcomm restart' brings it back"}
	}
	if pane.Dead {
		return fail(fmt.Errorf("pane %s is dead: %w", m.Pane, paneops.ErrRefused))
	}
	det, err := o.Detect(ctx, pane, m.Agent)
	if err != nil {
		return fail(err)
	}
	if strict && det.Job != "" {
		return p, &notReadyError{reason: det.Job + " (a line typed now would run when it ends)"}
	}
	content, form, err := o.mailContent(root, group, det)
	if err != nil {
		return fail(err)
	}
	if route := o.Route(ctx, pane, det); route.UsesSocket() {
		if p, handled, err := o.deliverByDoor(ctx, root, ob, group, pane, det, route, content, form, strict); handled {
			return p, err
		}
	} else if strict && route.Status == door.StatusBusy {
		return p, fmt.Errorf("%w: the agent's session says it is busy", errNotReady)
	}
	d := o.Delivery(pane, content, det, root, srv)
	d.Strict, d.Mark = strict, m.ID
	if strict {
		d.BusyWait = 0
	}
	ids := make([]string, len(group))
	for i, g := range group {
		ids[i] = g.ID
	}
	if f := ob.inflightLeft(); f != nil {
		// Only a delivery whose outcome could not be written leaves this behind once recovery
		// has run: nothing is typed until it is recorded, or that message would be typed twice.
		return p, &notReadyError{reason: fmt.Sprintf("the delivery of %s into pane %s is not recorded yet (is the disk full?); nothing is typed until it is", f.Mark, pane.ID)}
	}
	if err := ob.SetInflight(o.fence(ob, group, "")); err != nil {
		return fail(err)
	}
	// Before the paste, a guard: should this process die between paste and Enter, the guard
	// becomes the pane's deliverer and presses the Enter (recoverInflight). One per process and
	// pane, asleep until this process ends; started before the paste, so its start-up never
	// lands between a paste and its Enter, where the agent is busy taking the paste.
	o.ensureGuard(ob, m.Socket)
	res, derr := o.Tmux.Deliver(ctx, d)
	size, sum := messages.BodySum([]byte(content))
	detail := map[string]string{"pane": string(pane.ID), "target": pane.Target(), "form": form,
		"bytes": strconv.Itoa(size), "sha256": sum, "buffer": res.Buffer, "mail": m.ID,
		"profile": det.Name, "detected": det.Reason, "before": res.Before}
	if len(group) > 1 {
		detail["coalesced"] = strconv.Itoa(len(group))
	}
	if res.Waited > 0 {
		detail["waited"] = res.Waited.Round(time.Millisecond).String()
	}
	if !res.Pasted {
		ob.clearInflight()
		if derr == nil {
			derr = fmt.Errorf("deliver to pane %s: nothing was pasted", pane.ID)
		}
		if strict && notReady(derr) {
			return p, derr
		}
		detail["error"] = derr.Error()
		state := evUndelivered
		if errors.Is(derr, paneops.ErrRefused) || notReady(derr) {
			state = evRefused
		}
		o.recordMail(root, group, state, detail, o.Now())
		for _, g := range group {
			o.endMail(root, ob, g, messages.MailUndeliverable, "", derr.Error(), nil)
		}
		p.Outcome = messages.MailUndeliverable
		return p, derr
	}
	pasted := mailRecord{evPasted, detail, res.PastedAt}
	if derr != nil {
		o.recordMails(root, group, pasted)
	}
	if errors.Is(derr, paneops.ErrEnterHeld) {
		// Pasted, and tmux refused the Enter: the pane went into copy mode. The mail stays
		// queued and inflight.json stays, so nothing else is typed onto that line; recovery
		// presses the Enter once the mode ends (recoverInflight).
		return p, derr
	}
	if derr != nil {
		d := map[string]string{"pane": string(pane.ID), "profile": det.Name, "form": form, "error": derr.Error(), "mail": m.ID}
		if res.Evidence != "" {
			d["evidence"] = res.Evidence
		}
		if res.Enters > 0 {
			d["enters"] = strconv.Itoa(res.Enters)
		}
		o.recordMail(root, group, evUndelivered, d, o.Now())
		var endErr error
		for _, g := range group {
			endErr = errors.Join(endErr, o.endMail(root, ob, g, messages.MailUndeliverable, "paste", derr.Error(), ids))
		}
		if endErr == nil {
			// Kept otherwise: the pasted text must not be typed again by the next delivery.
			ob.clearInflight()
		}
		p.Outcome = messages.MailUndeliverable
		return p, derr
	}
	sd := submittedDetail(pane.ID, form, det.Name, res)
	sd["mail"] = m.ID
	if len(group) > 1 {
		sd["coalesced"] = strconv.Itoa(len(group))
	}
	// The paste and its Enter are recorded together, once both are done, in one append to each
	// log (nothing reads the log between them: the sender reports once both are written).
	recErr := o.recordMails(root, group, pasted, mailRecord{evSubmitted, sd, res.EnterAt})
	var endErr error
	for _, g := range group {
		endErr = errors.Join(endErr, o.endMail(root, ob, g, messages.MailDelivered, "paste", res.Evidence, ids))
	}
	p.Outcome, p.Via = messages.MailDelivered, exchange.ViaTyped
	if endErr != nil {
		// inflight.json stays: with the pane's marks it lets the next delivery record the outcome
		// without typing the message again.
		return p, fmt.Errorf("typed into pane %s and submitted, but %w: %w", pane.ID, store.ErrNotRecorded, endErr)
	}
	ob.clearInflight()
	if recErr != nil {
		return p, fmt.Errorf("typed into pane %s and submitted, but %w", pane.ID, recErr)
	}
	return p, nil
}

// fence is the inflight record of a delivery of group by this process (route: "" typed,
// exchange.ViaSocket through the door). Mail with no queue record (the direct path) is carried
// in it whole, so that recovery has it.
func (o *Office) fence(ob *outbox, group []messages.Mail, route string) Inflight {
	f := Inflight{Mark: group[0].ID, PID: proc.SelfPID(), At: o.Now().UTC(), Route: route}
	for _, g := range group {
		f.IDs = append(f.IDs, g.ID)
		if g.ID == ob.direct {
			g.Request = nil // read from its file, as a queued one's
			f.Mail = append(f.Mail, g)
		}
	}
	return f
}

// endMail records how a piece of mail ended; an outcome already there stands. Any other failure
// to write it is returned.
func (o *Office) endMail(root string, ob *outbox, m messages.Mail, state, via, detail string, with []string) error {
	var others []string
	for _, id := range with {
		if id != m.ID {
			others = append(others, id)
		}
	}
	if m.ID == ob.direct && (state == messages.MailDelivered || state == messages.MailSuperseded) {
		// Never queued: its delivery log says what became of it, and no other process can
		// have it to deliver.
		return nil
	}
	err := ob.finish(messages.MailOutcome{Mail: m, State: state, At: o.Now().UTC(), Via: via, With: others, Detail: detail})
	if errors.Is(err, store.ErrExists) {
		return nil
	}
	return err
}

// recoverInflight finishes a delivery that a process killed mid-way left behind, or whose Enter
// tmux refused because the pane went into copy mode: the pane's own marks say whether the paste
// and the Enter happened, so nothing is typed twice. Called with the drain lock held; it changes
// nothing when the pane cannot be read now. held, when not nil, says why that delivery's Enter
// still waits (the pane is in copy mode): nothing may be typed into the pane until it is pressed.
func (o *Office) recoverInflight(ctx context.Context, root string, ob *outbox, pane paneops.Pane, srv paneops.ServerInfo) (held error) {
	f, err := ob.readInflight()
	if err != nil {
		ob.clearInflight() // unreadable: a torn record of a paste that then never happened
		return nil
	}
	if f == nil {
		ob.noInflight = true
		return nil
	}
	pend, _ := ob.Pending()
	var group []messages.Mail
	for _, id := range f.IDs {
		if i := slices.IndexFunc(pend, func(m messages.Mail) bool { return m.ID == id }); i >= 0 {
			group = append(group, pend[i])
			continue
		}
		// Mail of the direct path has no queue record: the fence carries it. One with an
		// outcome already recorded has ended.
		if i := slices.IndexFunc(f.Mail, func(m messages.Mail) bool { return m.ID == id }); i >= 0 && !ob.ended(id) {
			group = append(group, f.Mail[i])
		}
	}
	if len(group) == 0 {
		ob.clearInflight()
		return nil
	}
	if f.Route == exchange.ViaSocket {
		o.recoverDoorInflight(root, ob, f, group)
		return
	}
	pasted, entered, err := o.Tmux.Marks(ctx, ob.pane, f.Mark)
	if err != nil {
		if fleet.IsNotFound(err) {
			ob.clearInflight() // the pane is gone: the next delivery says so
		}
		return nil
	}
	ids := f.IDs
	switch {
	case pasted != f.Mark:
		// The paste never happened: deliver as usual.
		ob.clearInflight()
		return nil
	case entered == f.Mark:
		ev := "recovered: the pane recorded the paste and the Enter of a deliverer that stopped before recording them"
		o.recordMail(root, group, evSubmitted, map[string]string{"pane": string(ob.pane), "mail": f.Mark, "evidence": ev}, o.Now())
		var endErr error
		for _, g := range group {
			endErr = errors.Join(endErr, o.endMail(root, ob, g, messages.MailDelivered, "paste", ev, ids))
		}
		if endErr == nil {
			// Kept otherwise (a full disk): the record is what stops the message being typed again.
			ob.clearInflight()
		}
		return nil
	}
	// Pasted, not submitted: press Enter only while the pane shows nothing but that paste.
	det, err := o.Detect(ctx, pane, group[0].Agent)
	if err != nil {
		return nil
	}
	content, form, err := o.mailContent(root, group, det)
	if err != nil {
		return nil
	}
	d := o.Delivery(pane, content, det, root, srv)
	// Strict: a pane in copy mode keeps its Enter waiting rather than being taken out of it.
	d.Mark, d.Strict = f.Mark, true
	res, rerr := o.Tmux.Resume(ctx, d)
	var endErr error
	switch {
	case errors.Is(rerr, paneops.ErrEnterHeld):
		return rerr
	case rerr != nil:
		detail := map[string]string{"pane": string(ob.pane), "mail": f.Mark, "form": form,
			"error": "a deliverer stopped between paste and Enter, and the pane now holds other text: " + rerr.Error()}
		o.recordMail(root, group, evUndelivered, detail, o.Now())
		for _, g := range group {
			endErr = errors.Join(endErr, o.endMail(root, ob, g, messages.MailUndeliverable, "paste", detail["error"], ids))
		}
	default:
		sd := submittedDetail(ob.pane, form, det.Name, res)
		sd["mail"] = f.Mark
		if !res.Submitted {
			sd["evidence"] = "recovered: " + res.Evidence
		} else {
			sd["evidence"] = "recovered, Enter pressed for a paste a stopped deliverer left: " + res.Evidence
		}
		o.recordMail(root, group, evSubmitted, sd, o.Now())
		for _, g := range group {
			endErr = errors.Join(endErr, o.endMail(root, ob, g, messages.MailDelivered, "paste", sd["evidence"], ids))
		}
	}
	if endErr == nil {
		ob.clearInflight()
	}
	return nil
}

// EnsureDeliverer starts the pane's deliverer when none runs (see RunDeliverer).
func (o *Office) EnsureDeliverer(ob *outbox, socket string) error {
	if o.Helpers.Deliverer == nil || ob.delivererRunning() {
		return nil
	}
	if err := o.Helpers.Deliverer(ob.server, socket, ob.pane); err != nil {
		return fmt.Errorf("start the deliverer of pane %s: %w; the message waits until the next send to that pane, its agent's next turn boundary, or an inbox run in it", ob.pane, err)
	}
	return nil
}
