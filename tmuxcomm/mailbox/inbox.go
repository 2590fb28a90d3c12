package mailbox

// The inbox: the other side of a pane's outbox. 'wcomm inbox' and an agent's turn-boundary hook
// take what waits for their pane without anything being typed into it, and that counts as its
// delivery: the mail ends as delivered (via "inbox" or "hook") before it is shown, so a deliverer
// never types it afterwards.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// InboxItem is one message for a pane.
type InboxItem struct {
	ID        string            `json:"id"`
	Kind      messages.MailKind `json:"kind"`
	From      messages.PaneID   `json:"from,omitempty"`
	Exchange  string            `json:"exchange,omitempty"`
	Questions []string          `json:"questions,omitempty"`
	// State is "waiting" while it is in the outbox, "held" while a loop cap holds it there (Detail
	// says why), else its outcome: delivered, superseded, expired, undeliverable, cancelled. Via
	// says how a delivered one was delivered (paste, hook, inbox).
	State    string     `json:"state"`
	Via      string     `json:"via,omitempty"`
	QueuedAt time.Time  `json:"queued_at"`
	Expires  time.Time  `json:"expires"`
	EndedAt  *time.Time `json:"ended_at,omitempty"`
	Detail   string     `json:"detail,omitempty"`
	// Text is what the pane's reader is to read: the RESPONSE line, the QUESTION or ANSWER block,
	// or the line pointing at a request's file.
	Text string `json:"text"`
}

// InboxOptions select what Inbox does.
type InboxOptions struct {
	// Pane is whose inbox; "" is the caller's own pane.
	Pane messages.PaneID
	// Take hands over what waits: it ends as delivered via Via ("inbox", "hook").
	Take bool
	Via  string
	// All adds what has ended (outcomes are kept for a week), oldest first.
	All bool
	// Show, with Take, is handed what is about to be taken, under the outbox's drain lock (no
	// deliverer types meanwhile); only when it succeeds does that mail end as delivered. The
	// output that hands mail over is so part of its delivery: a hook or an inbox whose stdout
	// fails takes nothing, and the mail waits as before.
	Show func([]InboxItem) error
	// Dead reads the person's inbox instead of a pane's: what the answer channels tell the person
	// once, the mail of every outbox that ended expired or undeliverable and the requests held
	// over a loop cap, at or after Since (DeadLetters), in Dead.
	Dead  bool
	Since time.Time
}

// InboxResult is the inbox of one pane.
type InboxResult struct {
	Pane     messages.PaneID `json:"pane"`
	Items    []InboxItem     `json:"items"`
	Problems []string        `json:"problems,omitempty"`
	// Taken counts the items this call handed over.
	Taken int `json:"taken"`
	// Dead are the dead letters and held requests, oldest first (InboxOptions.Dead).
	Dead []DeadLetter `json:"dead,omitempty"`
}

// Inbox lists (and with Take, hands over) the mail waiting for a pane, oldest first.
func (of *Office) Inbox(ctx context.Context, o InboxOptions) (*InboxResult, error) {
	if o.Dead {
		dead, problems := of.DeadLetters(o.Since)
		return &InboxResult{Dead: dead, Problems: problems}, nil
	}
	pane := o.Pane
	if pane == "" {
		pane = of.Self
	}
	if pane == "" {
		return nil, core.Needf(core.NeedPane, nil, "not inside a tmux pane: run inbox in the pane whose mail it is, or name that pane")
	}
	if _, err := messages.ParsePaneID(string(pane)); err != nil {
		return nil, err
	}
	res := &InboxResult{Pane: pane, Items: []InboxItem{}}
	root, found, err := of.ReadRoot()
	if err != nil {
		return nil, err
	}
	if !found {
		return res, nil // no root yet: nothing was ever sent
	}
	srv, err := of.Tmux.ServerInfo(ctx)
	if err != nil {
		return nil, err
	}
	ob, err := OpenOutbox(root, srv.Key(), pane, false)
	if err != nil {
		return res, nil // no outbox: nothing was ever queued for this pane
	}
	var taken []InboxItem
	if o.Take {
		unlock, err := ob.lockDrain(of.LockTimeout)
		if err != nil {
			return nil, err
		}
		taken, res.Problems, err = of.take(root, ob, o.Via, o.Show)
		unlock()
		if err != nil {
			return nil, err
		}
		res.Taken = len(taken)
	}
	if o.All {
		outs, probs := ob.outcomes(of.Now())
		res.Problems = append(res.Problems, probs...)
		for _, out := range outs {
			it := inboxItem(root, out.Mail)
			at := out.At
			it.State, it.Via, it.EndedAt, it.Detail = out.State, out.Via, &at, out.Detail
			res.Items = append(res.Items, it)
		}
	} else {
		res.Items = append(res.Items, taken...)
	}
	if !o.Take {
		pend, probs := ob.Pending()
		res.Problems = append(res.Problems, probs...)
		for _, m := range pend {
			res.Items = append(res.Items, inboxItem(root, m))
		}
		if len(pend) > 0 {
			_ = of.EnsureDeliverer(ob, pend[0].Socket)
		}
		// Held requests are listed, never taken: only a person's release hands them over.
		held, probs := ob.held()
		res.Problems = append(res.Problems, probs...)
		for _, m := range held {
			it := inboxItem(root, m)
			it.State, it.Detail = exchange.StateHeld, m.Held+"; release it with 'wcomm release "+m.Exchange+"'"
			res.Items = append(res.Items, it)
		}
	}
	return res, nil
}

// take ends every waiting piece of mail as delivered via via (or superseded, when it is no longer
// wanted), under the drain lock held by the caller, and returns the delivered ones. Mail that a
// stopped deliverer may have half typed is left to the deliverer, which knows from the pane's
// marks how far it got. show, when not nil, is handed the mail first; its error takes nothing.
func (o *Office) take(root string, ob *outbox, via string, show func([]InboxItem) error) ([]InboxItem, []string, error) {
	pend, problems := ob.Pending()
	inFlight := map[string]bool{}
	if f, err := ob.readInflight(); err == nil && f != nil {
		for _, id := range f.IDs {
			inFlight[id] = true
		}
	}
	var want []messages.Mail
	for _, m := range pend {
		if inFlight[m.ID] {
			continue
		}
		if why := o.unwanted(root, m); why != "" {
			o.endMail(root, ob, m, messages.MailSuperseded, "", why, nil)
			continue
		}
		want = append(want, m)
	}
	now := o.Now().UTC()
	items := make([]InboxItem, len(want))
	for i, m := range want {
		items[i] = inboxItem(root, m)
		items[i].State, items[i].Via, items[i].EndedAt = messages.MailDelivered, via, &now
	}
	if show != nil && len(items) > 0 {
		if err := show(items); err != nil {
			return nil, problems, fmt.Errorf("%w; nothing was taken: the %d message(s) still wait", err, len(items))
		}
	}
	var out []InboxItem
	for i, m := range want {
		if err := ob.finish(messages.MailOutcome{Mail: m, State: messages.MailDelivered, At: now, Via: via}); err != nil {
			if show != nil && !errors.Is(err, store.ErrExists) {
				problems = append(problems, fmt.Sprintf("mail %s was handed over but could not be recorded as delivered: %v", m.ID, err))
			}
			continue // ended meanwhile by someone else: not ours to show
		}
		o.recordMail(root, []messages.Mail{m}, evTaken, map[string]string{"pane": string(m.Pane), "mail": m.ID, "via": via}, now)
		out = append(out, items[i])
	}
	return out, problems, nil
}

func inboxItem(root string, m messages.Mail) InboxItem {
	return InboxItem{ID: m.ID, Kind: m.Kind, From: m.From, Exchange: m.Exchange, Questions: m.Question,
		State: "waiting", QueuedAt: m.QueuedAt, Expires: m.Expires, Text: mailText(root, m)}
}
