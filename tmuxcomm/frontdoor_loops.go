package tmuxcomm

// The door's side of the loops room: a send asks it which chain its request continues and
// whether the request is refused, held or accepted; release and cancel are the person's and the
// sender's ways out of a hold or a queue.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/loops"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// chainWindow is how long after answering a request a pane's next request still continues its
// chain: the rate's window (10 minutes by default).
func (e *Engine) chainWindow() time.Duration {
	if e.Settings.Loops.Per > 0 {
		return e.Settings.Loops.Per
	}
	return 10 * time.Minute
}

// inbound applies the settings' per-source policy to a request from the caller's pane: a refusal
// is an error (nothing is written), a hold a verdict to follow once the request is written.
func (e *Engine) inbound(ctx context.Context, worker paneops.Pane) (loops.Verdict, error) {
	l := e.Settings.Loops
	if len(l.Inbound) == 0 {
		return loops.Verdict{}, nil
	}
	// A request relayed from another host names a pane of that host: never one of this host's.
	names := []string{"relayed:" + string(e.cfg.Self)}
	if !e.cfg.Relayed {
		names = []string{string(e.cfg.Self)}
		if self, err := e.finder.Resolve(ctx, string(e.cfg.Self), paneops.Scope{}, false); err == nil {
			names = append(names, self.Target())
			if det, err := e.finder.Detect(ctx, self, ""); err == nil && det.Name != "" {
				names = append(names, det.Name)
			}
		}
	}
	v := loops.Policy(l, e.cfg.Self, worker.ID, names...)
	if v.Action == loops.Refuse {
		return v, fmt.Errorf("pane %s does not take this request: %s; nothing was written; ask the person to change the settings if it should", worker.ID, v.Why)
	}
	return v, nil
}

// chainOf is the chain and depth of a request the caller's pane sends now, and the verdict of
// the caps on it, given the pair's session folder.
func (e *Engine) chainOf(root, server, dir string, to messages.PaneID, policy loops.Verdict) (chain string, depth int, v loops.Verdict) {
	if e.cfg.Relayed {
		return "", 0, policy
	}
	since := e.cfg.Now().Add(-e.chainWindow())
	chain, depth = loops.Child(loops.Parent(root, e.cfg.Self, server, since))
	if policy.Action != loops.Accept {
		return chain, depth, policy
	}
	l := e.Settings.Loops
	recent := 0
	if depth >= 2 && l.Rate > 0 {
		recent = loops.Recent(dir, e.cfg.Now().Add(-l.Per))
	}
	return chain, depth, loops.Decide(l, e.cfg.Self, to, chain, depth, recent)
}

// hold holds a written request in its worker's outbox and, for the first hold of its chain or
// pair, starts the bridge so the person hears of it.
func (e *Engine) hold(root string, m messages.Mail, v loops.Verdict) error {
	h, err := e.office.Hold(root, m, v.Why, v.Key)
	if err == nil && h.Told && e.cfg.Helpers.Bridge != nil {
		_ = e.cfg.Helpers.Bridge() // the notice waits in the outbox for the next bridge when none starts
	}
	return err
}

// Release hands held requests over to their panes' outboxes: ref names one (the request's id, or
// its mail id), or with to "" and all set, every held request; to names a pane whose held
// requests all go. It returns what it released.
func (e *Engine) Release(ctx context.Context, ref, to string, all bool) ([]messages.Mail, error) {
	// A cap an agent could lift for itself holds nothing: release is the person's call, judged as
	// an answer to a permission prompt is (docs/threat-model.md).
	if err := e.desk.RequirePerson(ctx, "release a request held over a loop cap"); err != nil {
		return nil, err
	}
	root, found, err := e.cfg.ReadRoot()
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("nothing is held (no root %s): %w", root, store.ErrNotFound)
	}
	var pane messages.PaneID
	if to != "" {
		p, err := e.finder.Resolve(ctx, to, paneops.Scope{}, false)
		if err != nil {
			return nil, err
		}
		pane = p.ID
	}
	held, problems := e.office.HeldMail(root)
	var pick []messages.Mail
	for _, m := range held {
		switch {
		case ref != "" && m.Exchange != ref && m.ID != ref:
		case ref == "" && !all && pane == "":
		case pane != "" && m.Pane != pane:
		default:
			pick = append(pick, m)
		}
	}
	if len(pick) == 0 {
		what := "no held request"
		if ref != "" {
			what += " " + ref
		}
		if pane != "" {
			what += " for pane " + string(pane)
		}
		if len(problems) > 0 {
			what += " (" + problems[0] + ")"
		}
		return nil, fmt.Errorf("%s; 'wcomm inbox --pane PANE' lists what a pane's outbox holds: %w", what, store.ErrNotFound)
	}
	var done []messages.Mail
	var errs []error
	for _, m := range pick {
		if _, err := e.office.Release(root, m); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, m)
	}
	return done, errors.Join(errs...)
}

// Cancel withdraws a request of the caller's (ref: its id or path) that waits in its worker's
// outbox, queued or held: it is never delivered, and its exchange says "cancelled". A request
// that has reached its worker cannot be withdrawn.
func (e *Engine) Cancel(ctx context.Context, ref string) (*exchange.Exchange, error) {
	x, err := e.book.Locate(ctx, ref, exchange.RoleOrchestrator)
	if err != nil {
		return nil, err
	}
	root := filepath.Dir(x.Dir)
	m, err := exchange.ReadMeta(x.Dir)
	if err != nil {
		return x, fmt.Errorf("request %s: its session folder says not which tmux server its worker is on (%v); nothing was cancelled", x.ID, err)
	}
	if m.Host != "" {
		return x, fmt.Errorf("request %s went to a worker on host %s; it can be cancelled only there", x.ID, m.Host)
	}
	found, err := e.office.Cancel(root, m.Server, x.Worker, x.Session, x.Seq)
	x = exchange.LoadExchange(x.Dir, x.Seq, false)
	if err != nil {
		return x, err
	}
	if !found {
		switch {
		case x.State == exchange.StateCancelled:
			return x, fmt.Errorf("request %s is cancelled already", x.ID)
		case x.Status == exchange.StatusAnswered:
			return x, fmt.Errorf("request %s is answered already; nothing to cancel: %w", x.ID, store.ErrAnswered)
		case x.Status == exchange.StatusUndelivered:
			return x, fmt.Errorf("request %s was not delivered (%s) and waits nowhere; nothing to cancel", x.ID, x.State)
		}
		return x, fmt.Errorf("request %s has reached pane %s (%s); a delivered request cannot be cancelled: tell its worker instead: %w", x.ID, x.Worker, x.State, mailbox.ErrDelivered)
	}
	return x, nil
}
