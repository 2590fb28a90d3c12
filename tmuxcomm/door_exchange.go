package tmuxcomm

// The door's exchange verbs: send (to one pane, to HOST:TARGET or to several, decided here),
// resend, await (one exchange or several), show and history, and the two sides of a relay to
// another host. What a call chooses (its pane, the enter delay, the busy wait, the queue, a lean
// await) travels in its options: the engine is never changed by a call; a call that chooses
// something runs on rooms built for it (derive).

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/broadcast"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/relay"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

// Choices are what one call chooses over the settings the engine was built from (a command's
// flags, a tool's arguments). The zero value chooses nothing; a nil field leaves the settings'.
type Choices struct {
	// From is the caller's own pane when the call is not made inside it (--from); it must exist.
	From messages.PaneID
	// EnterDelay is the pause between paste and Enter, at most settings.MaxEnterDelay.
	EnterDelay *time.Duration
	// BusyWait bounds how long a delivery made now (no queue, a probe) waits for the target's
	// input box to be empty and idle: 0 does not wait; at most MaxBusyWait.
	BusyWait *time.Duration
	// NoQueue fails a delivery fast when the pane is not ready, instead of queuing it.
	NoQueue *bool
	// TTL bounds how long a queued message waits for its pane.
	TTL *time.Duration
}

// Arg names an argument of a call that the door refused, in the door's words; a face names it in
// its own (Named).
type Arg string

// The arguments the door checks.
const (
	ArgAgent    Arg = "agent"
	ArgFrom     Arg = "from"
	ArgBusyWait Arg = "busy wait"
)

// ArgError is an argument the door refused: what it says of the argument (Value, when given),
// after the argument's name. Its class is Err's.
type ArgError struct {
	Arg   Arg
	Value string
	Err   error
	name  string // the face's name of Arg (Named)
}

func (e *ArgError) Error() string {
	name := e.name
	if name == "" {
		name = string(e.Arg)
	}
	if e.Value != "" {
		name += " " + e.Value
	}
	return name + ": " + e.Err.Error()
}

// Unwrap returns the refusal's own error.
func (e *ArgError) Unwrap() error { return e.Err }

// Named is err, as the door returned it, with the argument it refuses named as the face names it
// (names, by Arg: "--busy-wait", "busy_wait_seconds"); err itself for any other error.
func Named(err error, names map[Arg]string) error {
	var ae *ArgError
	if errors.As(err, &ae) && names[ae.Arg] != "" {
		return &ArgError{Arg: ae.Arg, Value: ae.Value, Err: ae.Err, name: names[ae.Arg]}
	}
	return err
}

// call checks a call's choices and its agent profile (agent, "" for none), and returns the
// engine that runs it: e itself when it chooses nothing, else one derived with the choices
// applied. The argument's words are checked before any pane is looked up.
func (e *Engine) call(ctx context.Context, ch Choices, agent string) (*Engine, error) {
	if d := ch.EnterDelay; d != nil && (*d < 0 || *d > settings.MaxEnterDelay) {
		return nil, Usagef("the enter delay %s is not between 0 and %s", *d, settings.MaxEnterDelay)
	}
	if d := ch.BusyWait; d != nil && (*d < 0 || *d > MaxBusyWait) {
		return nil, &ArgError{Arg: ArgBusyWait, Err: Usagef("the busy wait %s is not between 0 and %s", *d, MaxBusyWait)}
	}
	if ch.From != "" {
		if _, err := messages.ParsePaneID(string(ch.From)); err != nil {
			return nil, &ArgError{Arg: ArgFrom, Err: Usagef("%v", err)}
		}
	}
	if err := e.finder.CheckAgent(agent); err != nil {
		return nil, &ArgError{Arg: ArgAgent, Err: err}
	}
	if ch.From != "" {
		// The worker answers into it: a pane that does not exist would fail only later, at the
		// worker's notify.
		if err := e.finder.CheckPane(ctx, string(ch.From)); err != nil {
			return nil, &ArgError{Arg: ArgFrom, Value: string(ch.From), Err: err}
		}
	}
	if ch == (Choices{}) {
		return e, nil
	}
	cc := callConfig{enterDelay: ch.EnterDelay, busyWait: ch.BusyWait, noQueue: ch.NoQueue, ttl: ch.TTL}
	if ch.From != "" {
		cc.self = &ch.From
	}
	return e.derive(cc), nil
}

// SendOptions are the inputs of a send.
type SendOptions struct {
	// To is the worker: a pane id, a tmux target, an agent name, or HOST:TARGET for a worker on a
	// declared host. Targets are more of them; empty ones are left out. Several, a
	// comma-separated list or a @GROUP of the settings make a broadcast.
	To      string
	Targets []string
	// All, without targets, sends to every other pane of this session that runs an agent (a
	// broadcast); with an agent name, that name is looked for in every session.
	All        bool
	First      bool                // take the first of several agent matches
	Capability messages.Capability // "": DefaultCapability
	Body       []byte
	// Agent names the profile to deliver with; "" detects it from the pane.
	Agent string
	// HoldForAwait, when positive, keeps the RESPONSE line back for up to this long for the
	// caller's await, which follows at once: a caller of two calls, send then await (the MCP
	// server's client), whose worker may answer between them (see awaitHolds).
	HoldForAwait time.Duration
	// Watch: the caller lives on (an MCP server, the resident running a handed command), so the
	// session folder's watch is kept after the send, and the caller's next send into that folder
	// knows its number from the watch instead of looking at the files after the folder's hint
	// (see keptNumbers). A broadcast keeps none: its members' folders would take the few kept
	// watches' places from one another.
	Watch bool
	Choices
}

// Sent is what a send did: one exchange (embedded), or a broadcast's members (Broadcast).
type Sent struct {
	*exchange.Exchange
	Broadcast *broadcast.Result `json:"broadcast,omitempty"`
}

// Send writes a request and delivers it: to one worker (Sent's exchange, valid whenever the
// request file was written, also when delivery failed: then the error wraps ErrUndelivered), to
// a worker on a declared host (HOST:TARGET, through the Relay: the exchange's Host is set), or,
// when the targets are several, a group or every agent, to each in an exchange of its own under
// one broadcast id (Sent.Broadcast; see broadcast.Caster.Broadcast).
func (e *Engine) Send(ctx context.Context, o SendOptions) (*Sent, error) {
	c, err := e.call(ctx, o.Choices, o.Agent)
	if err != nil {
		return nil, err
	}
	var targets []string
	for _, t := range append([]string{o.To}, o.Targets...) {
		if t != "" {
			targets = append(targets, t)
		}
	}
	so := core.SendOptions{Scope: paneops.Scope{All: o.All}, First: o.First, Capability: o.Capability, Body: o.Body, Agent: o.Agent, HoldForAwait: o.HoldForAwait}
	if broadcast.Many(targets, o.All) {
		res, err := c.caster.Broadcast(ctx, broadcast.Options{Targets: targets, All: o.All, Send: so})
		if res == nil {
			return nil, err
		}
		return &Sent{Broadcast: res}, err
	}
	if len(targets) == 1 {
		so.To = targets[0]
	}
	so.Watch = o.Watch
	x, err := c.sendOne(ctx, so)
	if x == nil {
		return nil, err
	}
	return &Sent{Exchange: x}, err
}

// ResendOptions name a kept request to deliver again.
type ResendOptions struct {
	Ref   string // its id (or the id's end) or path
	Agent string // the profile to deliver with; "" detects it
	Choices
}

// Resend delivers a kept request again, under its own id and sequence number, so its response
// still pairs with it: one that was refused, undelivered or expired, or one its worker lost. A
// request already waiting in the worker's outbox, or already answered, is not sent twice.
func (e *Engine) Resend(ctx context.Context, o ResendOptions) (*exchange.Exchange, error) {
	c, err := e.call(ctx, o.Choices, o.Agent)
	if err != nil {
		return nil, err
	}
	ref := o.Ref
	if !strings.ContainsRune(ref, '/') {
		if ref, err = e.book.ExchangeID(ref); err != nil {
			return nil, err
		}
	}
	return c.resend(ctx, ref, o.Agent)
}

// AwaitOptions name the exchanges an await waits for.
type AwaitOptions struct {
	// Refs are ids (or their ends), request or response paths, or broadcast ids. None: the newest
	// request sent from the caller's pane whose response no await has returned yet; several, or a
	// broadcast's id: every one at once.
	Refs []string
	// Timeout bounds the wait; <= 0 waits until ctx ends.
	Timeout time.Duration
	// Lean leaves each request's body out of the exchanges returned, for a caller that prints only
	// the responses: a request of megabytes is then not held beside its response.
	Lean bool
	// Watch waits on the folder's inotify watch at once, for a caller that lives on (a server):
	// a command polls a short while first, since a process holding a watch is slower to exit.
	Watch bool
	// Each, when set, is handed each complete exchange before it is recorded as read (it prints
	// it), one at a time: a response whose output failed is not marked read, and the next await
	// returns it again. pane labels its worker when several are awaited; "" for one.
	Each func(pane string, x *exchange.Exchange) error
}

// Awaited is what an await found: one exchange, with its response (embedded), or of several
// (Many: the answers in the order they came, and those still without one).
type Awaited struct {
	*exchange.Exchange
	Many *broadcast.Awaited `json:"many,omitempty"`
}

// Await blocks until the response of each exchange o names is complete. Of one exchange, it
// returns the exchange with both bodies (and, when the wait ends first, the exchange with an
// error that wraps ErrTimeout); of several, every answer with its pane, and an error naming who
// did not answer (see broadcast.Caster.AwaitAll). An exchange relayed to another host is readied
// through the Relay first, within the timeout.
func (e *Engine) Await(ctx context.Context, o AwaitOptions) (*Awaited, error) {
	var refs []string
	for _, ref := range o.Refs {
		if ref == "" {
			continue
		}
		if err := CheckRef(ref); err != nil {
			return nil, err
		}
		refs = append(refs, ref)
	}
	c := e
	if o.Lean || o.Watch {
		c = e.derive(callConfig{lean: o.Lean, watch: o.Watch})
	}
	if broadcast.ManyRefs(refs) {
		each := o.Each
		if each == nil {
			each = func(string, *exchange.Exchange) error { return nil }
		}
		res, err := c.caster.AwaitAll(ctx, refs, o.Timeout, each)
		if res == nil {
			return nil, err
		}
		return &Awaited{Many: res}, err
	}
	ref := ""
	if len(refs) == 1 {
		ref = refs[0]
	}
	var out func(*exchange.Exchange) error
	if o.Each != nil {
		out = func(x *exchange.Exchange) error { return o.Each("", x) }
	}
	x, err := c.awaitOne(ctx, ref, o.Timeout, out)
	if x == nil {
		return nil, err
	}
	return &Awaited{Exchange: x}, err
}

// ShowOptions name what to show.
type ShowOptions struct {
	// Ref is an exchange's id (or the end of a request's or a question's id), a request or
	// response path, a question's id or a broadcast's id.
	Ref string
	// Text, instead of Ref, holds a [RESPONSE ...] line (as an agent's screen shows it, colours
	// and all): the exchange it names, checked against its files.
	Text string
}

// Shown is what Show found: an exchange (embedded), a question or a broadcast with its exchanges.
type Shown struct {
	*exchange.Exchange
	Question  *questions.QuestionStatus `json:"question,omitempty"`
	Broadcast *broadcast.Shown          `json:"broadcast,omitempty"`
}

// Show returns what o names whole: an exchange with its header, delivery log and both bodies, a
// question with its options and answer, or every exchange of a broadcast.
func (e *Engine) Show(ctx context.Context, o ShowOptions) (*Shown, error) {
	if o.Ref == "" && o.Text != "" {
		x, err := e.book.Parse(ctx, o.Text)
		if err != nil {
			return nil, err
		}
		return &Shown{Exchange: x}, nil
	}
	ref, err := e.desk.AnyID(o.Ref)
	if err != nil {
		return nil, err
	}
	if _, err := messages.ParseQuestionID(ref); err == nil && !strings.ContainsRune(ref, '/') {
		st, err := e.desk.Question(ctx, ref)
		if err != nil {
			return nil, err
		}
		return &Shown{Question: st}, nil
	}
	if messages.IsBroadcastID(ref) {
		s, err := e.caster.ShowBroadcast(ctx, ref)
		if err != nil {
			return nil, err
		}
		return &Shown{Broadcast: s}, nil
	}
	if err := CheckRef(ref); err != nil {
		return nil, err
	}
	x, err := e.book.Show(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &Shown{Exchange: x}, nil
}

// HistoryOptions filter a history, and stream it.
type HistoryOptions struct {
	Session string // a session folder name; "" = all
	Pending bool   // only exchanges without a response (delivered or not)
	// Encoded says the caller only encodes the sessions (SessionSummary.AppendJSON).
	Encoded bool
	// Each, when set, is handed each session as it is read, in order, instead of History
	// returning them all; Start (when set) is called first with the root's foreign names.
	Each  func(exchange.SessionSummary) error
	Start func(foreign []string) error
}

// History lists the sessions under the root with their exchanges, oldest first, and the names of
// the root that are not session folders. Damaged and foreign files are named, never fatal.
func (e *Engine) History(ctx context.Context, o HistoryOptions) ([]exchange.SessionSummary, []string, error) {
	ho := exchange.HistoryOptions{Session: o.Session, Pending: o.Pending, Encoded: o.Encoded}
	if o.Each != nil {
		foreign, err := e.book.HistoryEach(ctx, ho, o.Start, o.Each)
		return nil, foreign, err
	}
	return e.book.History(ctx, ho)
}

// MirrorOptions describe a request relayed to a worker on a declared host (see relay).
type MirrorOptions = relay.MirrorOptions

// Mirror writes the local copy of a request relayed to a worker on a declared host (a Relay's
// Send, and the puller's later relay of a queued one): a session folder of the orchestrator's
// pane (o.From) and the worker's there, marked with the host, so history, show and await see it
// as any other exchange. Mirrors of several hosts are written at once.
func (e *Engine) Mirror(ctx context.Context, o MirrorOptions) (*exchange.Exchange, error) {
	return e.station.MirrorRequest(ctx, o)
}

// RelayedSend is a send relayed to this host by an orchestrator on another host.
type RelayedSend struct {
	ID         string          // the exchange's id, given by the orchestrator's host
	From       messages.PaneID // the orchestrator's pane, on its host
	To         string          // the worker here
	First      bool
	Capability messages.Capability
	Body       []byte
	Agent      string
	NoQueue    bool
}

// RelaySend sends a request relayed from another host under its own id, as the orchestrator
// there sent it: its pane is not one of this host's. A relay repeated after a broken connection
// finds the exchange of the first one and returns it with repeated set: nothing is delivered
// twice. The worker is looked for in every session.
func (e *Engine) RelaySend(ctx context.Context, o RelayedSend) (x *exchange.Exchange, repeated bool, err error) {
	if _, err := messages.ParsePaneID(string(o.From)); err != nil {
		return nil, false, Usagef("the orchestrator's pane: %v", err)
	}
	if err := e.finder.CheckAgent(o.Agent); err != nil {
		return nil, false, &ArgError{Arg: ArgAgent, Err: err}
	}
	cc := callConfig{self: &o.From, relayed: true}
	if o.NoQueue {
		cc.noQueue = &o.NoQueue
	}
	c := e.derive(cc)
	return c.station.RelaySend(ctx, core.SendOptions{ID: o.ID, To: o.To, Capability: o.Capability,
		Body: o.Body, Agent: o.Agent, Scope: paneops.Scope{All: true}, First: o.First})
}

// RelayedResponse returns the response body of exchange id, relayed here from another host; ok
// is false while none came.
func (e *Engine) RelayedResponse(id string) (body string, ok bool, err error) {
	return e.station.RelayedResponse(id)
}
