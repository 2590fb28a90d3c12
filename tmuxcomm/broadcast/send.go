package broadcast

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// Result is what a broadcast did: its id, and each member's send in the order of the targets.
type Result struct {
	ID      string `json:"broadcast"`
	Members []Sent `json:"members"`
}

// Sent is one member's send: its exchange whenever its request was written (also when its
// delivery failed, then Err says why), or only Err when nothing was written for it.
type Sent struct {
	Target   string             `json:"target"`
	Label    string             `json:"pane"`
	Exchange *exchange.Exchange `json:"exchange,omitempty"`
	Error    string             `json:"error,omitempty"`
	Err      error              `json:"-"`
}

// Exchanges are the members' exchanges, those that have one.
func (r *Result) Exchanges() []*exchange.Exchange {
	var out []*exchange.Exchange
	for _, m := range r.Members {
		if m.Exchange != nil {
			out = append(out, m.Exchange)
		}
	}
	return out
}

// Say sums the broadcast up in one line: its id and each member's pane, exchange and state.
func (r *Result) Say() string {
	parts := make([]string, len(r.Members))
	for i, m := range r.Members {
		switch {
		case m.Err != nil && m.Exchange == nil:
			parts[i] = m.Label + " not sent"
		case m.Err != nil:
			parts[i] = m.Label + " " + m.Exchange.ID + " (not delivered, kept)"
		default:
			parts[i] = m.Label + " " + m.Exchange.ID + " (" + m.Exchange.State + ")"
		}
	}
	return fmt.Sprintf("broadcast %s to %s: %s; await %s for every answer", r.ID, messages.Plural(len(r.Members), "pane"), strings.Join(parts, ", "), r.ID)
}

// parallel bounds the sends under way at once: each is a few tmux calls and, into an agent, a
// wait for its screen; the panes' own locks keep each delivery whole.
const parallel = 8

// Broadcast sends o.Send's request to every target of o, each in an exchange of its own (its own
// request file, id and mailbox), all under one broadcast id recorded in each exchange's log and
// in the broadcast's record. Every target is resolved first: when one names no pane, several, the
// caller's own or a dead one, nothing is written and the error names each such target. A
// member whose send fails does not stop the others: the result holds every member, and the error
// names the failed ones.
func (c *Caster) Broadcast(ctx context.Context, o Options) (*Result, error) {
	if len(bytes.TrimSpace(o.Send.Body)) == 0 {
		return nil, core.NeedUsagef(core.NeedMessage, "empty message: give the request's text")
	}
	if err := c.Finder.CheckAgent(o.Send.Agent); err != nil {
		return nil, err
	}
	ms, err := c.resolve(ctx, o)
	if err != nil {
		return nil, err
	}
	root, err := c.RootDir(true)
	if err != nil {
		return nil, err
	}
	rec := &messages.Broadcast{From: c.Self, At: c.Now().UTC()}
	for _, m := range ms {
		bm := messages.BroadcastMember{Target: m.target, Pane: m.pane.ID}
		if m.host {
			bm.Host, _, _ = strings.Cut(m.target, ":")
		}
		rec.Members = append(rec.Members, bm)
	}
	if err := c.claim(root, rec); err != nil {
		return nil, err
	}
	res := &Result{ID: rec.ID, Members: make([]Sent, len(ms))}
	send := func(i int) {
		m := ms[i]
		so := o.Send
		so.To, so.Broadcast, so.Target = m.target, rec.ID, nil
		if !m.host {
			so.To, so.Target = string(m.pane.ID), &core.Target{Pane: m.pane, Server: m.srv}
		}
		x, err := c.Sender.Send(ctx, so)
		res.Members[i] = Sent{Target: m.target, Label: m.label(), Exchange: x, Err: err}
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, parallel)
	// Relays to declared hosts go side by side with the local sends and with each other: each
	// mirrors its exchange under its own host, which its call carries.
	for i := range ms {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			send(i)
		}()
	}
	wg.Wait()
	var failed []error
	for i := range res.Members {
		s := &res.Members[i]
		bm := &rec.Members[i]
		if x := s.Exchange; x != nil {
			if x.Worker != "" {
				s.Label = string(x.Worker)
				if x.Host != "" {
					s.Label = x.Host + ":" + string(x.Worker)
				}
				bm.Pane = x.Worker
			}
			bm.Exchange, bm.Session, bm.Seq = x.ID, x.Session, x.Seq
		}
		if s.Err != nil {
			s.Error = s.Err.Error()
			bm.Error = s.Error
			failed = append(failed, fmt.Errorf("%s: %w", s.Label, s.Err))
		}
	}
	// The exchanges' logs name the broadcast already: a record that cannot be written costs
	// its await a scan, not an answer.
	_ = store.WriteAtomic(recordPath(root, rec.ID), encode(rec))
	if len(failed) > 0 {
		return res, fmt.Errorf("broadcast %s: %d of %d not sent: %w", rec.ID, len(failed), len(ms), errors.Join(failed...))
	}
	return res, nil
}
