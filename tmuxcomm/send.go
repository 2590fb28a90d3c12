package tmuxcomm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/loops"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
)

// sendOne writes the next request file of the caller/worker pair and delivers it into the
// worker's pane. The returned exchange is valid whenever the request file was written, also when
// delivery failed (then the error wraps ErrUndelivered and the delivery log says why). A target
// HOST:TARGET whose HOST the settings declare goes to that host through e.Relay (see Relay). The
// request's fsync overlaps its delivery; sendOne returns once both are done.
func (e *Engine) sendOne(ctx context.Context, o core.SendOptions) (*exchange.Exchange, error) {
	defer store.Busy()() // the files taken ahead are made again after it, not in its way
	syncs := &store.Syncs{}
	x, err := e.send(ctx, o, syncs)
	if serr := syncs.Wait(); serr != nil && err == nil {
		err = fmt.Errorf("request %s was delivered, but it is not safe on disk: %w", x.RequestPath, serr)
	}
	return x, err
}

func (e *Engine) send(ctx context.Context, o core.SendOptions, syncs *store.Syncs) (*exchange.Exchange, error) {
	if o.To == "" {
		return nil, core.NeedUsagef(core.NeedTarget, "no target: name the worker's pane or its agent")
	}
	if len(bytes.TrimSpace(o.Body)) == 0 {
		return nil, core.NeedUsagef(core.NeedMessage, "empty message: give the request's text")
	}
	if o.Capability == "" {
		o.Capability = core.DefaultCapability
	}
	root, err := e.cfg.RootDir(true)
	if err != nil {
		return nil, err
	}
	if e.cfg.Self == "" {
		return nil, e.cfg.NeedOwnPane(ctx, "send from the orchestrator's pane, or name the pane you send for")
	}
	if _, err := messages.ParsePaneID(string(e.cfg.Self)); err != nil {
		return nil, fmt.Errorf("own pane %q: %w", messages.SanitizeField(string(e.cfg.Self)), err)
	}
	if h, target, ok, err := e.hostTarget(o.To); err != nil {
		return nil, err
	} else if ok {
		o.To = target
		return e.relayOut(ctx, root, h, o)
	}
	if o.ID != "" {
		if err := messages.ValidID(o.ID); err != nil {
			return nil, err
		}
	}
	lookup := "tmux"
	var worker paneops.Pane
	var srv paneops.ServerInfo
	var ok bool
	if t := o.Target; t != nil {
		worker, srv = t.Pane, t.Server
	} else if worker, srv, ok = e.finder.CachedPane(root, o.To); ok {
		lookup = "record"
	} else {
		worker, srv, err = e.finder.ResolveWithServer(ctx, o.To, o.Scope, o.First)
		if err == nil {
			e.finder.RecordPane(root, worker, srv)
		}
	}
	if err != nil {
		return nil, err
	}
	if worker.ID == e.cfg.Self && !e.cfg.Relayed {
		return nil, fmt.Errorf("target %s is your own pane; send to another pane", worker.ID)
	}
	if worker.Dead && !e.finder.Restartable(srv, worker.ID) {
		return nil, store.Kindf(store.ErrUndelivered, "%w; nothing was written", fleet.DeadPane(worker))
	}
	policy, err := e.inbound(ctx, worker)
	if err != nil {
		return nil, err
	}
	dir, sess, err := e.book.OpenSession(root, e.cfg.Self, worker.ID, srv.Key(), srv.Socket)
	if err != nil {
		return nil, err
	}
	if o.Watch {
		keptNumbers.Keep(dir) // before the request's number is looked for: the claim marks the watch
	}
	chain, depth, verdict := e.chainOf(root, srv.Key(), dir, worker.ID, policy)
	size, sum := messages.BodySum(o.Body)
	header := messages.RequestHeader{Capability: o.Capability, ID: o.ID, StartedAt: sess.StartedAt,
		Orchestrator: e.cfg.Self, Worker: worker.ID, Bytes: size, Sum: sum, Chain: chain, Depth: depth}
	var n int
	var reqPath, id string
	var parts [][]byte
	if o.ID != "" {
		id = o.ID
		n, reqPath, parts, err = e.book.WriteRequest(dir, sess, header, o.Body, syncs)
		if err == nil {
			_ = exchange.RecordID(root, id, filepath.Base(dir), n) // a hint for show and await by id; a scan finds it without
		}
	} else {
		// The id is claimed with its where-link, once the request's number is known.
		n, reqPath, parts, id, err = e.book.WriteNewRequest(dir, sess, header, o.Body, syncs)
	}
	if err != nil {
		return nil, err
	}
	// The request's text as written: what is pasted, and what the exchange returned is loaded
	// from, rather than read back.
	var written []byte
	if size < store.BigFile {
		written = bytes.Join(parts, nil)
	}
	var text []byte
	if size < fleet.NeverPasted {
		text = written
	}
	o.Body, parts = nil, nil // the file holds it now; a large one is let go, and pasted as a pointer line
	detail := map[string]string{"id": id, "bytes": strconv.Itoa(size), "sha256": sum, "lookup": lookup}
	if o.Broadcast != "" {
		detail["broadcast"] = o.Broadcast
	}
	if err := exchange.LogEvent(dir, n, exchange.StateWritten, detail, e.cfg.Now()); err != nil {
		// A request without its log would be delivered with no record of it: take it back, so
		// what is on disk is what happened (nothing was sent).
		os.Remove(reqPath)
		hint := "look at that folder and send again"
		if errors.Is(err, syscall.ENOSPC) {
			hint = "free space on the root's disk and send again"
		}
		return nil, fmt.Errorf("record request %s in %s: %w; nothing was sent: %s", id, dir, err, hint)
	}

	m := messages.Mail{Kind: messages.MailRequest, Pane: worker.ID, Server: srv.Key(), Socket: srv.Socket,
		From: e.cfg.Self, Session: filepath.Base(dir), Seq: n, Exchange: id, Agent: o.Agent, Request: text}
	if verdict.Action == loops.Hold {
		m.Request = nil // read from its file when released
		herr := e.hold(root, m, verdict)
		return exchange.LoadSent(dir, n, written), herr
	}
	if o.HoldForAwait > 0 {
		e.holdForAwait(dir, n, o.HoldForAwait) // before the paste: the worker may answer at once
	}
	_, derr := e.office.Post(ctx, root, m, worker, srv)
	x := exchange.LoadSent(dir, n, written)
	if o.ID == "" {
		exchange.RememberSent(x) // for an await of its id in this process (an MCP server's)
	}
	if derr != nil {
		return x, deliveryError(filepath.Base(reqPath), worker.ID, "", derr)
	}
	return x, nil
}

// deliveryError names a failed delivery: undelivered, or, when the message did reach the pane but
// its record could not be written, that (the command still fails: its state is not on disk).
func deliveryError(name string, pane messages.PaneID, again string, err error) error {
	if errors.Is(err, store.ErrNotRecorded) {
		return fmt.Errorf("%s for pane %s: %w", name, pane, err)
	}
	return fmt.Errorf("deliver %s to pane %s%s: %w: %w", name, pane, again, store.ErrUndelivered, err)
}

// resend delivers a kept request again, under its own id and sequence number, so its response
// still pairs with it: one that was refused, undelivered or expired, or one its worker lost. A
// request already waiting in the worker's outbox, or already answered, is not sent twice.
func (e *Engine) resend(ctx context.Context, ref, agent string) (*exchange.Exchange, error) {
	root, found, err := e.cfg.ReadRoot()
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, store.Kindf(store.ErrNotFound, "no exchanges yet (no root %s)", root)
	}
	x, err := e.book.Locate(ctx, ref, exchange.RoleOrchestrator)
	if err != nil {
		return nil, err
	}
	if x.Request() == nil {
		return x, fmt.Errorf("request %s is damaged (%s); send it anew", x.RequestPath, strings.Join(x.Problems, "; "))
	}
	if x.Status == exchange.StatusAnswered {
		return x, store.Kindf(store.ErrAnswered, "%s is already answered (%s); nothing to send again", x.ID, x.ResponsePath)
	}
	server := ""
	if m, err := exchange.ReadMeta(x.Dir); err == nil && m.Host != "" {
		return x, fmt.Errorf("%s went to a worker on host %s; send it anew with --to %s:TARGET", x.ID, m.Host, m.Host)
	} else if err == nil {
		server = m.Server
	}
	worker, srv, rerr := e.finder.Reach(ctx, root, x.Worker, server, "worker", false)
	var ue *fleet.UnreachableError
	if errors.As(rerr, &ue) && ue.Why == fleet.ServerRestarted {
		return x, fmt.Errorf("the tmux server of %s has restarted since it was sent, so pane %s is not its worker any more; send the request anew", x.ID, x.Worker)
	}
	if x.State == exchange.StateHeld {
		return x, fmt.Errorf("%s is held over a loop cap (%s); a person releases it with 'wcomm release %s'", x.ID, x.Evidence, x.ID)
	}
	if ob, err := mailbox.OpenOutbox(root, srv.Key(), x.Worker, false); rerr == nil && err == nil {
		pend, _ := ob.Pending()
		for _, m := range pend {
			if m.Kind != messages.MailRequest || m.Session != x.Session || m.Seq != x.Seq {
				continue
			}
			switch x.State {
			case exchange.StatePasted, exchange.StateSubmitted, exchange.StateDelivered:
				// Its deliverer logs the delivery a moment before the mail leaves the queue.
				return x, fmt.Errorf("%s was %s to pane %s just now, and its mail is leaving the outbox; to send it once more, resend it again in a moment", x.ID, x.State, x.Worker)
			}
			return x, fmt.Errorf("%s already waits in the outbox of pane %s (queued %s); it is delivered when the pane is ready", x.ID, x.Worker, m.QueuedAt.Local().Format(time.TimeOnly))
		}
	}
	if rerr != nil {
		if ue != nil {
			return x, store.Kindf(store.ErrUndelivered, "%w, so %s was not sent again", rerr, x.ID)
		}
		return x, fmt.Errorf("worker pane %s of %s: %w", x.Worker, x.ID, rerr)
	}
	m := messages.Mail{Kind: messages.MailRequest, Pane: x.Worker, Server: srv.Key(), Socket: srv.Socket,
		From: x.Orchestrator, Session: x.Session, Seq: x.Seq, Exchange: x.ID, Agent: agent}
	_, derr := e.office.Post(ctx, root, m, worker, srv)
	x = exchange.LoadExchange(x.Dir, x.Seq, false)
	if derr != nil {
		return x, deliveryError(filepath.Base(x.RequestPath), x.Worker, " again", derr)
	}
	return x, nil
}
