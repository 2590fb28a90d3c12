package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/broadcast"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
)

// Await's bounds. A tool call must end before the client gives up on it: Codex allows 60 s unless
// its tool_timeout_sec says more, and many clients' requests time out at 60 s, so the default stays
// under that; install-mcp raises Codex's and Gemini CLI's limits above the maximum.
const (
	DefaultAwaitTimeout = 50 * time.Second
	MaxAwaitTimeout     = tmuxcomm.MaxCallWait
)

// AwaitHold is how long a send keeps the RESPONSE line back for the await its client calls next
// (tmuxcomm.SendOptions.HoldForAwait): a worker that answers before that await comes does not
// type the line into the orchestrator's pane, whose agent has the response from the await. A
// scripted client awaits within milliseconds; an agent's model, seconds later, finds the line
// posted once the hold ended, at most this much later than without it.
const AwaitHold = time.Second

type sendIn struct {
	To         string   `json:"to,omitempty" jsonschema:"the worker: a pane id (%7), a tmux target (work:1.0) or an agent name found as the find tool does; several, comma-separated (%3,codex,gpu1:%2), or @NAME for a group of the settings, make a broadcast"`
	Targets    []string `json:"targets,omitempty" jsonschema:"more workers, each as to takes them: with to, or alone, the request goes to every one (a broadcast)"`
	Message    string   `json:"message" jsonschema:"the request's text (markdown); it is written to the request file and pasted into the worker's pane"`
	Capability string   `json:"capability,omitempty" jsonschema:"READONLY (default: look, change nothing) or WRITABLE"`
	Agent      string   `json:"agent,omitempty" jsonschema:"deliver with this profile instead of detecting it"`
	First      bool     `json:"first,omitempty" jsonschema:"with an agent name: take the first of several matches"`
	All        bool     `json:"all,omitempty" jsonschema:"without to and targets: every other pane of this session that runs an agent (a broadcast); with an agent name: search every session"`
	BusyWait   float64  `json:"busy_wait_seconds,omitempty" jsonschema:"with no_queue: how long to wait for the worker's input box to be empty and idle (default 10)"`
	NoQueue    bool     `json:"no_queue,omitempty" jsonschema:"fail instead of queuing when the worker's pane is not ready"`
}

func (s *server) sendTool() tool {
	t := typed(s, mcp.Tool{
		Name:  "send",
		Title: "Send a request to a worker's pane",
		Description: `Writes the next request file of this pane and the worker's pane (under /tmp/worker-comm) with
the header, your message and the response instructions, then delivers it into the worker's pane
(pasted through a uniquely named tmux buffer and submitted; a long one as a line pointing at its
file; never into text someone else typed). When the worker's pane is not ready (busy, someone's
text in its input, a shell running a job) the request waits in its outbox and is delivered at its
next idle moment: the state is then "queued", and the call still succeeds. Returns what names the
request: id, worker, state, request_path, response_path (show returns the whole exchange). Then call
await with the id. With no_queue,
a pane that stays not ready for busy_wait_seconds fails the call (class failure); the request is
kept on disk.

Several workers (to with commas, a @group, targets, or all alone) make a broadcast: every worker is
resolved first, and one that names no pane or several fails the call with nothing sent; each pane
gets an exchange of its own. The result then holds broadcast_id and exchanges, one per pane; call
await with the broadcast id (or the ids) for every answer.`,
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in sendIn) (*sendOut, string, error) {
		capab, err := tmuxcomm.ParseCapability(in.Capability)
		if err != nil {
			return nil, "", err
		}
		e, _, err := s.engine()
		if err != nil {
			return nil, "", err
		}
		o := tmuxcomm.SendOptions{To: in.To, Targets: in.Targets, All: in.All, First: in.First,
			Capability: capab, Body: []byte(in.Message), Agent: in.Agent, HoldForAwait: AwaitHold, Watch: true}
		if in.BusyWait != 0 {
			d := seconds(in.BusyWait)
			o.BusyWait = &d
		}
		if in.NoQueue {
			o.NoQueue = &in.NoQueue
		}
		sent, err := e.Send(ctx, o)
		if sent != nil && sent.Broadcast != nil {
			res := sent.Broadcast
			out := &sendOut{BroadcastID: res.ID}
			for _, x := range res.Exchanges() {
				out.Exchanges = append(out.Exchanges, sentOf(x))
			}
			if err != nil {
				// Some went out: the call fails, and its words say which did not.
				return nil, "", &detailedError{err: err}
			}
			return out, res.Say(), nil
		}
		if err != nil {
			var fe *fleet.FindError
			errors.As(err, &fe)
			kept := ""
			if sent != nil {
				kept = sent.RequestPath
			}
			return nil, "", &detailedError{err: err, detail: func(te *ToolError) {
				if fe != nil {
					te.Panes = fe.Panes
				}
				te.RequestPath = kept
			}}
		}
		x := sent.Exchange
		return &sendOut{sentOut: sentOf(x)}, fmt.Sprintf("sent %s to %s (%s); call await with id %q for the response", x.ID, x.Worker, x.State, x.ID), nil
	})
	// The profiles are the engine's, named from its list.
	t.def.InputSchema.(*jsonschema.Schema).Properties["agent"].Description = "deliver with this profile (" + tmuxcomm.ProfileNames() + ") instead of detecting it"
	// A broadcast's result holds its exchanges, not the fields of one.
	t.out.AnyOf[0].Required = nil
	return t
}

// sendOut is the send tool's result: what names one send's request, or a broadcast's id and what
// names each of its requests.
type sendOut struct {
	*sentOut
	BroadcastID string     `json:"broadcast_id,omitempty" jsonschema:"a broadcast's id: await it for every answer"`
	Exchanges   []*sentOut `json:"exchanges,omitempty" jsonschema:"a broadcast's requests, one per pane"`
}

// sentOut is what an orchestrator needs of a request it sent, as awaitOut is of an answer: its
// id to await, where it went and how far, and the files. The whole exchange (the request's
// summary, its delivery log with the evidence of each step) is the show tool's: every byte of a
// result is encoded, sent and read into the agent's context, and the log was most of it.
type sentOut struct {
	ID           string `json:"id" jsonschema:"the exchange's id: await it for the response"`
	Worker       string `json:"worker" jsonschema:"the worker's pane"`
	Orchestrator string `json:"orchestrator" jsonschema:"this pane, as the request names it"`
	State        string `json:"state" jsonschema:"how far delivery went: submitted (pasted and entered), queued (waits for the pane: reason says why), held (waits for a person's release) or delivered (handed over by its hook or inbox)"`
	Capability   string `json:"capability" jsonschema:"READONLY or WRITABLE, as the request says"`
	RequestPath  string `json:"request_path" jsonschema:"the request's file"`
	ResponsePath string `json:"response_path" jsonschema:"where the response will be"`
	Reason       string `json:"reason,omitempty" jsonschema:"why a request waits (queued, held)"`
	Via          string `json:"via,omitempty" jsonschema:"the request's route into the worker: socket or typed"`
	Host         string `json:"host,omitempty" jsonschema:"the declared host of a relayed request's worker"`
	Broadcast    string `json:"broadcast,omitempty" jsonschema:"the broadcast this request is one of"`
}

// sentOf is what an orchestrator needs of exchange x (sentOut).
func sentOf(x *exchange.Exchange) *sentOut {
	o := &sentOut{ID: x.ID, Worker: string(x.Worker), Orchestrator: string(x.Orchestrator), State: x.State, Capability: x.Capability,
		RequestPath: x.RequestPath, ResponsePath: x.ResponsePath, Via: x.Via, Host: x.Host, Broadcast: x.Broadcast}
	if x.State == exchange.StateQueued || x.State == exchange.StateHeld {
		o.Reason = x.Evidence
	}
	return o
}

type awaitIn struct {
	ID      string   `json:"id,omitempty" jsonschema:"the exchange's id (or its response path) as send returned it, or a broadcast's id (every answer of it); empty: the newest request sent from this pane whose response no await has returned yet"`
	IDs     []string `json:"ids,omitempty" jsonschema:"more exchanges' ids, paths or broadcast ids: waits for every answer at once"`
	Timeout float64  `json:"timeout_seconds,omitempty" jsonschema:"how long this call waits, in seconds (default 50, at most 600); when it passes the result is status waiting, not an error"`
}

// awaitOut is about the size of the answer: the response and what names it. The whole exchange
// (the request's body, its delivery log) is the show tool's; an agent that awaits has the request
// already, and every byte of a result is encoded, sent and read into the agent's context.
type awaitOut struct {
	Status       string   `json:"status" jsonschema:"answered: response holds the worker's answer; waiting: no answer yet, call await again with id"`
	ID           string   `json:"id" jsonschema:"the exchange's id"`
	Worker       string   `json:"worker,omitempty" jsonschema:"the worker's pane, when answered"`
	ResponsePath string   `json:"response_path" jsonschema:"where the response is, or will be"`
	Response     string   `json:"response,omitempty" jsonschema:"the response's body, when answered"`
	Warnings     []string `json:"warnings,omitempty" jsonschema:"what was odd in the exchange's files, when answered"`
	Next         string   `json:"next,omitempty" jsonschema:"what to do next, when waiting"`
	// Of several exchanges: each answer labelled with its pane, and those still without one.
	Answers []broadcast.Answer  `json:"answers,omitempty" jsonschema:"of several exchanges: each answer with its pane, in the order they came"`
	Missing []broadcast.Missing `json:"missing,omitempty" jsonschema:"of several exchanges: those without an answer yet, or that cannot have one (error)"`
}

// withoutText is the result as its JSON text holds it: an answered await's text is its response,
// so the JSON beside it names the response without repeating it.
func (o awaitOut) withoutText() any {
	if o.Status == "answered" {
		o.Response = ""
	}
	return o
}

func (s *server) awaitTool() tool {
	return typed(s, mcp.Tool{
		Name:  "await",
		Title: "Wait for a worker's response",
		Description: `Waits until the worker's response to a request is complete and returns its body (status
"answered"), waking the moment the worker notifies. The wait is bounded by timeout_seconds (default
50, at most 600) so it ends before your client gives up on the call: when it passes, the result is
status "waiting" with the id, not an error; call await again with that id to go on waiting. Returns
at once when the response is already there. The result is the answer and what names it (show
returns the whole exchange). Given several ids (ids), or a broadcast's id, it waits for
every answer at once: answers holds each with its pane; while some are missing the status is
"waiting", and missing says which.`,
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in awaitIn) (awaitOut, string, error) {
		timeout := DefaultAwaitTimeout
		switch {
		case in.Timeout < 0 || math.IsNaN(in.Timeout):
			return awaitOut{}, "", usagef("timeout_seconds must be positive")
		case in.Timeout > MaxAwaitTimeout.Seconds():
			return awaitOut{}, "", usagef("timeout_seconds is at most %d: a tool call must end before the client gives up on it; call await again to wait longer", int(MaxAwaitTimeout.Seconds()))
		case in.Timeout > 0:
			timeout = seconds(in.Timeout)
		}
		e, _, err := s.engine()
		if err != nil {
			return awaitOut{}, "", err
		}
		var many strings.Builder
		// Lean: the request's body is not returned, so not read; Watch: the server lives on, so it
		// sleeps on the folder's watch instead of polling.
		a, err := e.Await(ctx, tmuxcomm.AwaitOptions{Refs: append([]string{in.ID}, in.IDs...), Timeout: timeout, Lean: true, Watch: true,
			Each: func(pane string, x *exchange.Exchange) error {
				if pane != "" {
					fmt.Fprintf(&many, "--- %s %s\n%s\n", pane, x.ID, strings.TrimRight(x.ResponseBody, "\n"))
				}
				return nil
			}})
		if a != nil && a.Many != nil {
			return awaitAll(ctx, a.Many, err, many.String())
		}
		if err != nil {
			if a != nil && errors.Is(err, tmuxcomm.ErrTimeout) && ctx.Err() == nil {
				next := fmt.Sprintf("no response yet after %s; call await again with id %q", messages.DurationText(timeout), a.ID)
				return awaitOut{Status: "waiting", ID: a.ID, ResponsePath: a.ResponsePath, Next: next}, next, nil
			}
			return awaitOut{}, "", err
		}
		x := a.Exchange
		text := x.ResponseBody
		for _, p := range x.Problems {
			text += "\nwarning: " + p
		}
		return awaitOut{Status: "answered", ID: x.ID, Worker: string(x.Worker), ResponsePath: x.ResponsePath, Response: x.ResponseBody, Warnings: x.Problems}, text, nil
	})
}

type notifyIn struct {
	Response string `json:"response,omitempty" jsonschema:"the response file named in the request's instructions"`
	ID       string `json:"id,omitempty" jsonschema:"the request's id (instead of response)"`
	Message  string `json:"message" jsonschema:"your response's text (markdown)"`
}

func (s *server) notifyTool() tool {
	return typed(s, mcp.Tool{
		Name:  "notify",
		Title: "Answer a request (worker)",
		Description: `As a worker: writes your response to the request you were sent (atomically, with its header)
and signals the orchestrator: its waiting await wakes, or a RESPONSE line is pasted into its pane,
or, when that pane is busy, the line waits in its outbox (signal "queued") and is delivered at its
next idle moment or turn boundary; the call returns at once either way. Name the request by response (the path in the request's instructions) or id; with neither, the
newest unanswered request addressed to this pane. The first response stands: a second one fails.`,
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in notifyIn) (*notifyOut, string, error) {
		if in.Response != "" && in.ID != "" {
			return nil, "", usagef("give response or id, not both")
		}
		e, _, err := s.engine()
		if err != nil {
			return nil, "", err
		}
		res, err := e.Notify(ctx, tmuxcomm.NotifyOptions{Ref: in.Response + in.ID, Body: []byte(in.Message)})
		if err != nil {
			return nil, "", err
		}
		x := res.Exchange
		out := &notifyOut{ID: x.ID, Status: x.Status, Orchestrator: string(x.Orchestrator), ResponsePath: x.ResponsePath,
			Signal: string(res.Signal), Via: res.Via, Reason: res.Reason, Warnings: res.Warnings, Newest: res.Newest, StillOpen: res.StillOpen}
		text := "response saved at " + res.Exchange.ResponsePath + "; " + res.Say()
		if which := res.Which(); which != "" {
			text += "\n" + which
		}
		for _, w := range res.Warnings {
			text += "\nwarning: " + w
		}
		return out, text, nil
	})
}

// notifyOut is what a worker needs of its notify, as awaitOut is of an await: which request it
// answered, how the orchestrator learns of it, and what is still open. The whole exchange (the
// request's summary, its delivery log) is the show tool's: every byte of a result is encoded, sent
// and read into the agent's context, and the exchange was nine tenths of this one.
type notifyOut struct {
	ID           string   `json:"id" jsonschema:"the exchange's id"`
	Status       string   `json:"status" jsonschema:"the exchange's status: answered"`
	Orchestrator string   `json:"orchestrator" jsonschema:"the orchestrator's pane"`
	ResponsePath string   `json:"response_path" jsonschema:"where the response was saved"`
	Signal       string   `json:"signal" jsonschema:"how the orchestrator learns of it: pasted (a RESPONSE line was typed into its pane), await (its waiting await wakes), queued (the line waits for its pane: reason says why) or relayed (its host pulls it)"`
	Via          string   `json:"via,omitempty" jsonschema:"the RESPONSE line's route when pasted: socket or typed"`
	Reason       string   `json:"reason,omitempty" jsonschema:"what a queued line waits for"`
	Warnings     []string `json:"warnings,omitempty" jsonschema:"problems that did not stop the notify, above all a request changed after it was sent"`
	Newest       bool     `json:"newest,omitempty" jsonschema:"no request was named: the newest open one addressed to this pane was answered"`
	StillOpen    []string `json:"still_open,omitempty" jsonschema:"with newest: the other requests still waiting for your response, newest first"`
}

type historyIn struct {
	Session string `json:"session,omitempty" jsonschema:"only this session folder"`
	Pending bool   `json:"pending,omitempty" jsonschema:"only exchanges still waiting for a response"`
}

type historyOut struct {
	Sessions []exchange.SessionSummary `json:"sessions" jsonschema:"each session folder with its exchanges: seq, id, status, delivery state, first line"`
	Foreign  []string                  `json:"foreign,omitempty" jsonschema:"entries of the root that are not session folders"`
}

func (s *server) historyTool() tool {
	return typed(s, mcp.Tool{
		Name:  "history",
		Title: "List exchanges on disk",
		Description: `Lists every session folder under the root and its exchanges: seq, id, status (pending,
answered, undelivered, damaged), delivery state, age and the request's first line. The files are
the history; damaged or foreign files are named, not fatal.`,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in historyIn) (historyOut, string, error) {
		e, _, err := s.engine()
		if err != nil {
			return historyOut{}, "", err
		}
		sessions, foreign, err := e.History(ctx, tmuxcomm.HistoryOptions{Session: in.Session, Pending: in.Pending})
		if err != nil {
			return historyOut{}, "", err
		}
		if sessions == nil {
			sessions = []exchange.SessionSummary{}
		}
		n := 0
		for _, ss := range sessions {
			n += len(ss.Exchanges)
		}
		return historyOut{Sessions: sessions, Foreign: foreign}, messages.Plural(len(sessions), "session") + ", " + messages.Plural(n, "exchange"), nil
	})
}

type showIn struct {
	Ref string `json:"ref" jsonschema:"an exchange's id, or its request or response path"`
}

func (s *server) showTool() tool {
	return typed(s, mcp.Tool{
		Name:        "show",
		Title:       "Show one exchange",
		Description: `Returns one exchange whole: ids, panes, status, delivery log with its evidence, the request's and the response's bodies.`,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in showIn) (*exchange.Exchange, string, error) {
		if in.Ref == "" {
			return nil, "", usagef("show takes one ID or PATH")
		}
		e, _, err := s.engine()
		if err != nil {
			return nil, "", err
		}
		sh, err := e.Show(ctx, tmuxcomm.ShowOptions{Ref: in.Ref})
		if err != nil {
			return nil, "", err
		}
		x := sh.Exchange
		if x == nil {
			return nil, "", usagef("show takes an exchange's id or path; %s is not one", in.Ref)
		}
		return x, fmt.Sprintf("%s: %s (%s)", x.ID, x.Status, x.State), nil
	})
}

// seconds converts a tool's seconds argument to a duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// awaitAll is the await tool's result of several exchanges: every answer labelled with its pane
// (text holds them as they came); status waiting, not an error, while some still have none when
// the wait ends.
func awaitAll(ctx context.Context, res *broadcast.Awaited, err error, text string) (awaitOut, string, error) {
	out := awaitOut{Status: "answered", ID: strings.Join(res.Broadcasts, ","), Answers: res.Answered, Missing: res.Missing}
	if err == nil {
		return out, text, nil
	}
	if !errors.Is(err, tmuxcomm.ErrTimeout) || ctx.Err() != nil {
		return awaitOut{}, "", err
	}
	again := res.Broadcasts
	if len(again) == 0 {
		for _, m := range res.Missing {
			if m.TimedOut && m.ID != "" {
				again = append(again, m.ID)
			}
		}
	}
	out.Status = "waiting"
	out.Next = fmt.Sprintf("%v; call await again with ids %q", err, again)
	return out, text + out.Next, nil
}

type cancelIn struct {
	Ref string `json:"ref" jsonschema:"the id of a request of yours still waiting in its worker's outbox"`
}

func (s *server) cancelTool() tool {
	return typed(s, mcp.Tool{
		Name:        "cancel",
		Title:       "Withdraw a queued request",
		Description: `Withdraws a request of yours that waits in its worker's outbox (queued or held), before delivery: it is never delivered. A delivered request cannot be withdrawn.`,
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in cancelIn) (*exchange.Exchange, string, error) {
		if in.Ref == "" {
			return nil, "", usagef("cancel takes the id of one request")
		}
		e, _, err := s.engine()
		if err != nil {
			return nil, "", err
		}
		x, err := e.Cancel(ctx, in.Ref)
		if err != nil {
			return nil, "", err
		}
		return x, fmt.Sprintf("%s: cancelled; it is never delivered", x.ID), nil
	})
}
