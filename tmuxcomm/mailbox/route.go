package mailbox

// Delivery routes. A message goes through the agent's own door where the pane's session has one
// (Claude Code's messaging socket, Codex's app-server: package paneops/door), else it is typed into
// the pane as before. The route is chosen at each delivery, so a session that gains or loses its
// door is met where it stands; it is recorded with the delivery ("via": "socket" or "typed"). What
// the door says of the agent's state (idle or busy) also holds a typed delivery back while the agent
// is mid-turn.
//
// Exactly once: a write through the door that did not complete cannot have reached the agent (a
// partial line is no message), so the message stays queued and the next look picks a route
// again; a complete write is a delivery and is never repeated, not even by recovery after a crash.
// A write whose outcome is unknown (Codex's app-server took the turn/start and gave no reply)
// ends undeliverable with that said, as recovery ends one, and is never written again.

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// deliverByDoor writes a group of mail through the pane's door, under the outbox's drain lock.
// handled is false when nothing was written and the caller may type it now (a fail-fast delivery:
// nothing waits for it); a strict delivery whose write did not complete leaves the mail queued.
func (o *Office) deliverByDoor(ctx context.Context, root string, ob *outbox, group []messages.Mail, pane paneops.Pane,
	det profile.Detection, route door.Finding, content, form string, strict bool) (p *core.Posted, handled bool, err error) {
	m := group[0]
	p = &core.Posted{Mail: m}
	ids := make([]string, len(group))
	for i, g := range group {
		ids[i] = g.ID
	}
	if f := ob.inflightLeft(); f != nil {
		return p, true, fmt.Errorf("%w: the delivery of %s into pane %s is not recorded yet (is the disk full?); nothing is sent until it is", errNotReady, f.Mark, pane.ID)
	}
	if err := ob.SetInflight(o.fence(ob, group, exchange.ViaSocket)); err != nil {
		return p, false, err
	}
	if werr := o.Door.Write(ctx, route, content); werr != nil {
		if !errors.Is(werr, door.ErrNotWritten) {
			o.endDoorUnknown(root, ob, m.ID, ids, group, werr.Error())
			p.Outcome, p.Via = messages.MailUndeliverable, exchange.ViaSocket
			return p, true, werr
		}
		ob.clearInflight()
		if !strict {
			return p, false, nil
		}
		return p, true, fmt.Errorf("%w: %v; it waits for the next look", errNotReady, werr)
	}
	at := o.Now()
	size, sum := messages.BodySum([]byte(content))
	evidence := route.Evidence()
	if route.Status != "" {
		evidence += " (the session was " + route.Status + ")"
	}
	detail := map[string]string{"pane": string(pane.ID), "target": pane.Target(), "form": form, "via": exchange.ViaSocket,
		"bytes": strconv.Itoa(size), "sha256": sum, "mail": m.ID, "profile": det.Name, "detected": det.Reason,
		"evidence": evidence}
	if route.Status != "" {
		detail["agent_status"] = route.Status
	}
	if len(group) > 1 {
		detail["coalesced"] = strconv.Itoa(len(group))
	}
	recErr := o.recordMail(root, group, evSubmitted, detail, at)
	var endErr error
	for _, g := range group {
		endErr = errors.Join(endErr, o.endMail(root, ob, g, messages.MailDelivered, exchange.ViaSocket, evidence, ids))
	}
	p.Outcome, p.Via = messages.MailDelivered, exchange.ViaSocket
	if endErr != nil {
		// inflight.json stays: recovery then records the outcome without writing it again.
		return p, true, fmt.Errorf("written through the agent's door in pane %s, but %w: %w", pane.ID, store.ErrNotRecorded, endErr)
	}
	ob.clearInflight()
	if recErr != nil {
		return p, true, fmt.Errorf("written through the agent's door in pane %s, but %w", pane.ID, recErr)
	}
	return p, true, nil
}

// recoverDoorInflight ends a delivery through the door that a process left unrecorded: whether
// its write completed is unknown, and writing again could deliver it twice, so it ends
// undeliverable with that said ('wcomm resend' sends a request anew).
func (o *Office) recoverDoorInflight(root string, ob *outbox, f *Inflight, group []messages.Mail) {
	why := "a delivery through the agent's door was under way when its process stopped; it may have reached the agent, so it is not written again"
	o.endDoorUnknown(root, ob, f.Mark, f.IDs, group, why)
}

// endDoorUnknown ends group, whose write through the door may or may not have reached the agent,
// as undeliverable with why; inflight.json stays until that is recorded.
func (o *Office) endDoorUnknown(root string, ob *outbox, mark string, ids []string, group []messages.Mail, why string) {
	o.recordMail(root, group, evUndelivered, map[string]string{"pane": string(ob.pane), "mail": mark, "via": exchange.ViaSocket, "error": why}, o.Now())
	var endErr error
	for _, g := range group {
		endErr = errors.Join(endErr, o.endMail(root, ob, g, messages.MailUndeliverable, exchange.ViaSocket, why, ids))
	}
	if endErr == nil {
		ob.clearInflight()
	}
}
