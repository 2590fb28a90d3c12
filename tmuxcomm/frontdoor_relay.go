package tmuxcomm

// Sends to workers on declared hosts: the front door reads HOST:TARGET and hands the send to a
// Relay, so the command line and the MCP server route it, and report it, the same way.

import (
	"context"
	"strings"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

// Relay carries sends to workers on declared hosts. internal/remote implements it (over ssh, or
// the argv a host's via names), and a face passes it in through the Door, so the engine below
// the door never runs a remote command itself.
type Relay interface {
	// Send relays o to its host and returns the exchange as it is recorded here: the mirror of
	// the request in the state the host recorded (queued there included), written with
	// Engine.Mirror, with Host set; or, when the host could not be reached and the send waits
	// here for it, the id, Host, state queued and the reason in Evidence, with no files yet (see
	// QueuedHere). A send that reached the host but was not delivered returns its mirror and
	// the error.
	Send(ctx context.Context, e *Engine, o Outbound) (*exchange.Exchange, error)
	// Ready readies an await of ref under root: a puller runs while responses from hosts are to
	// come, and a send still queued for its host is waited for, within timeout (0: no limit),
	// until it has reached the host and has a mirror to await.
	Ready(ctx context.Context, root, ref string, timeout time.Duration) error
}

// Outbound is one send to a worker on a declared host, as the door hands it to the Relay: all
// that the call chose travels in it, so relays to several hosts go at once.
type Outbound struct {
	Host settings.HostDef
	// Root is the checked root the send's records and mirror go under.
	Root string
	// ID is the exchange's id, claimed here.
	ID string
	// From is the orchestrator's pane here.
	From messages.PaneID
	// Send is the request: To is the target on the host; Capability, Body, Agent and First as
	// given.
	Send core.SendOptions
	// NoQueue: a host that cannot be reached fails the send instead of queuing it here; TTL
	// bounds how long a queued send waits for its host (0: the default).
	NoQueue bool
	TTL     time.Duration
}

// QueuedHere reports whether x is a send that waits here for its host, which could not be
// reached: it has an id and a host but no request file yet.
func QueuedHere(x *exchange.Exchange) bool {
	return x != nil && x.Host != "" && x.RequestPath == ""
}

// hostTarget splits HOST:TARGET when HOST is a host the settings declare and the engine has a
// Relay; ok is false for any other target (a tmux session:window reads as itself unless its
// session name is a declared host's). An engine relaying for another host never relays again.
func (e *Engine) hostTarget(to string) (h settings.HostDef, target string, ok bool, err error) {
	if e.Relay == nil || e.cfg.Relayed {
		return h, "", false, nil
	}
	name, target, found := strings.Cut(to, ":")
	if !found || messages.ValidHostName(name) != nil {
		return h, "", false, nil
	}
	h, ok = e.Settings.Hosts[name]
	if !ok {
		return h, "", false, nil
	}
	if target == "" {
		return h, "", false, Usagef("target %s: give the target there after the colon (%s:%%7 or %s:codex)", to, name, name)
	}
	return h, target, true, nil
}

// relayOut hands a send to HOST:TARGET (o.To is the target there) to the Relay, under an id
// claimed here.
func (e *Engine) relayOut(ctx context.Context, root string, h settings.HostDef, o core.SendOptions) (*exchange.Exchange, error) {
	id, err := e.book.ClaimID(root)
	if err != nil {
		return nil, err
	}
	return e.Relay.Send(ctx, e, Outbound{Host: h, Root: root, ID: id, From: e.cfg.Self, Send: o, NoQueue: e.cfg.NoQueue, TTL: e.cfg.MailTTL})
}

// ready readies an await of ref through the Relay, and returns what is left of timeout.
func (e *Engine) ready(ctx context.Context, ref string, timeout time.Duration) (time.Duration, error) {
	if e.Relay == nil {
		return timeout, nil
	}
	root, err := e.cfg.RootDir(false)
	if err != nil {
		return timeout, nil // no root: nothing was relayed; the await says what is wrong
	}
	start := time.Now()
	if err := e.Relay.Ready(ctx, root, ref, timeout); err != nil {
		return timeout, err
	}
	if timeout > 0 {
		timeout = max(timeout-time.Since(start), time.Millisecond)
	}
	return timeout, nil
}
