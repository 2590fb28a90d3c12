package tmuxcomm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
)

// NotifyOptions are the inputs of one notify.
type NotifyOptions struct {
	Ref  string // response/request path or id; "" = newest unanswered request addressed to this pane
	Body []byte
	// BodyFile, when set, names a regular file that holds the response instead of Body. It is read
	// only once the request has been read and let go, so a large answer to a large request is
	// never held together with it.
	BodyFile string
	// Pulled is a response pulled from the worker's host (a relayed exchange's): it is written as
	// from outside any pane, the worker's pane being on that host.
	Pulled bool
	Choices
}

// NotifyResult says what notify did.
type NotifyResult struct {
	Exchange *exchange.Exchange `json:"exchange"`
	// Signal is how the orchestrator learns of the response: SignalPasted, SignalAwait or
	// SignalQueued (Reason says what the line waits for); Say words it.
	Signal core.Signal `json:"signal"`
	// Via is the RESPONSE line's route when it was delivered now: "socket" or "typed".
	Via    string `json:"via,omitempty"`
	Reason string `json:"reason,omitempty"`
	Line   string `json:"line"`
	// Warnings are problems found on the way that did not stop the notify: above all an integrity
	// mismatch (the request file changed after it was sent, so the answer may be to other words).
	Warnings []string `json:"warnings,omitempty"`
	// Newest is set when no request was named: the newest open one addressed to the pane was
	// answered, and StillOpen lists the others that still wait for a response (newest first), so
	// the worker knows which it answered and what is left.
	Newest    bool     `json:"newest,omitempty"`
	StillOpen []string `json:"still_open,omitempty"`
}

// Notify writes the response file atomically (the first response stands) and signals the
// orchestrator. When an await is already waiting on the exchange (or has already returned the
// response), the await is the signal and no line is pasted: a second signal would start a second turn in an agent that already has the
// answer. When the orchestrator's pane is gone, the file is kept and the error wraps
// ErrOrchestratorGone. The response's fsync overlaps the signal (an await waiting wakes as soon as
// the file has its name); Notify returns once both are done.
func (e *Engine) Notify(ctx context.Context, o NotifyOptions) (*NotifyResult, error) {
	c, err := e.call(ctx, o.Choices, "")
	if err != nil {
		return nil, err
	}
	if o.Pulled {
		none := messages.PaneID("")
		c = c.derive(callConfig{self: &none})
	}
	if o.Ref != "" && !strings.ContainsRune(o.Ref, '/') {
		// An id, or its end as a person types it.
		if o.Ref, err = e.book.ExchangeID(o.Ref); err != nil {
			return nil, err
		}
	}
	defer store.Busy()() // the files taken ahead are made again after it, not in its way
	syncs := &store.Syncs{}
	res, err := c.notify(ctx, o, syncs)
	if o.Ref == "" && res != nil && res.Exchange != nil {
		res.Newest = true
		res.StillOpen, _ = c.book.OpenToWorker(ctx, res.Exchange.ID)
	}
	if serr := syncs.Wait(); serr != nil && err == nil {
		err = fmt.Errorf("the response was saved and signalled, but it is not safe on disk: %w", serr)
	}
	return res, err
}

func (e *Engine) notify(ctx context.Context, o NotifyOptions, syncs *store.Syncs) (*NotifyResult, error) {
	empty := core.NeedUsagef(core.NeedMessage, "empty response: give the response's text")
	if o.BodyFile == "" && len(bytes.TrimSpace(o.Body)) == 0 {
		return nil, empty
	}
	x, err := e.book.Locate(ctx, o.Ref, exchange.RoleWorker)
	if err != nil {
		return nil, err
	}
	req := x.Request()
	if req == nil {
		return nil, fmt.Errorf("request %s is damaged (%s); answer cannot be matched to it", x.RequestPath, strings.Join(x.Problems, "; "))
	}
	if x.Status == exchange.StatusAnswered {
		return &NotifyResult{Exchange: x}, store.Kindf(store.ErrAnswered, "%s already holds a response; the first one stands", x.ResponsePath)
	}
	if e.cfg.Self != "" && e.cfg.Self != x.Worker {
		// The first response stands: one from the wrong pane would shut out the worker's own.
		return nil, fmt.Errorf("request %s is addressed to pane %s, not to your pane %s; notify from the worker's pane (or from outside any pane, to answer for it)",
			x.ID, x.Worker, e.cfg.Self)
	}
	h := req.Header
	resp := messages.Response{Header: messages.ResponseHeader{ID: h.ID, StartedAt: h.StartedAt,
		Orchestrator: h.Orchestrator, Worker: h.Worker, RequestBytes: -1}}
	if h.Bytes >= 0 {
		// Echo what the worker's copy of the request holds, so a truncated or edited request shows.
		resp.Header.RequestBytes, resp.Header.RequestSum = x.BodyBytes, x.BodySum
	}
	// x was loaded without bodies: it holds nothing of a large request's text, and is what the
	// call reports once the response is in it, with no second read of the files.
	dir, seq, responsePath := x.Dir, x.Seq, x.ResponsePath
	req = nil
	if o.BodyFile != "" {
		if o.Body, err = store.ReadFileBounded(ctx, o.BodyFile, store.MaxFile); err != nil {
			return nil, fmt.Errorf("read the response file: %w", err)
		}
		if len(bytes.TrimSpace(o.Body)) == 0 {
			return nil, fmt.Errorf("%s: %w", o.BodyFile, empty)
		}
	}
	// FormatResponse's text, written from the caller's bytes rather than copied into one string:
	// the header line, the body without its trailing newlines, one newline.
	body := bytes.TrimRight(o.Body, "\n")
	parts := [][]byte{[]byte(resp.Header.String() + "\n")}
	if len(body) > 0 {
		parts = append(parts, body, []byte("\n"))
	}
	o.Body = nil
	if nudges.waiting(responsePath) {
		// An await of this process takes the response first: its fsync waits (see wake).
		syncs.Hold()
	}
	mtime, err := store.WriteExclusiveLaterStat(responsePath, syncs, parts...)
	if err != nil {
		if errors.Is(err, store.ErrExists) {
			// Only a complete response of this exchange stands: a FIFO, a folder, a symlink or a
			// file that does not parse in its place is not an answer, and nothing was saved.
			if bad := notAResponse(responsePath); bad != "" {
				return nil, store.Kindf(store.ErrDamaged, "%s is %s, not a response; nothing was saved: remove it and notify again", responsePath, bad)
			}
			return &NotifyResult{Exchange: exchange.LoadExchange(dir, seq, false)}, store.Kindf(store.ErrAnswered, "%s already holds a response; the first one stands", responsePath)
		}
		return nil, err
	}
	answered, err := exchange.LogEventAs(dir, seq, exchange.StateAnswered, map[string]string{"response": responsePath}, e.cfg.Now())
	if err != nil {
		// The response file is whole; the orchestrator is not told of a state the log lacks.
		return nil, fmt.Errorf("response saved at %s, but recording it in the delivery log failed, so the orchestrator was not signalled: %w; free space, then run 'wcomm notify' again to signal (the saved response stands)", responsePath, err)
	}
	// An await of this process waiting for this response goes on now (see awaitNudges).
	settle := nudges.wake(responsePath)
	var text strings.Builder
	text.Grow(len(parts[0]) + len(body) + 1)
	for _, p := range parts {
		text.Write(p)
	}
	parts, body = nil, nil
	x.Answered(text.String(), mtime, answered)
	line := messages.Notification{StartedAt: h.StartedAt, Orchestrator: h.Orchestrator, Worker: h.Worker, Path: x.ResponsePath}.String()
	res := &NotifyResult{Exchange: x, Line: line}
	if x.Integrity == "mismatch" {
		res.Warnings = append(res.Warnings, "integrity mismatch: "+x.RequestPath+" is not the request that was sent; the answer was saved, but it may answer other words")
		res.Warnings = append(res.Warnings, x.Problems...)
	}

	// The session's facts, read once: whether its orchestrator is on another host, and its server.
	meta, _ := exchange.ReadMeta(x.Dir)
	if meta != nil && meta.Relayed {
		// The orchestrator is on another host: its wcomm pulls the response (package relay).
		res.Signal = core.SignalRelayed
		return res, nil
	}
	// An await that was waiting either still holds its lock, or has already returned the response,
	// which it logs as read before letting go of the lock: look at the lock first, then the log.
	if lock.IsLocked(filepath.Join(x.Dir, messages.AwaitLockName(x.Seq))) || exchange.WasRead(x.Dir, x.Seq) {
		res.Signal = core.SignalAwait
		if err := exchange.LogEvent(x.Dir, x.Seq, exchange.StateAwaitWoken, nil, e.cfg.Now()); err != nil {
			return res, fmt.Errorf("response saved at %s and the waiting await wakes on it, but recording that failed: %w", x.ResponsePath, err)
		}
		settle(settleBound)
		return res, nil
	}
	posted, err := e.signal(ctx, x, line, meta)
	if err != nil {
		return res, err
	}
	res.Signal, res.Reason = core.SignalOf(posted), posted.Reason
	if res.Signal == core.SignalPasted {
		res.Via = posted.Via
	}
	return res, nil
}

// signal hands the RESPONSE line to the orchestrator's pane through its outbox: pasted and
// submitted now when the pane is ready, else queued, on the session's server as its facts (meta)
// name it (the default one when they do not say).
func (e *Engine) signal(ctx context.Context, x *exchange.Exchange, line string, meta *exchange.SessionMeta) (*core.Posted, error) {
	orch := x.Orchestrator
	server := ""
	if meta != nil {
		server = meta.Server
	}
	gone := func(format string, a ...any) (*core.Posted, error) {
		err := fmt.Errorf(format, a...)
		_ = exchange.LogEvent(x.Dir, x.Seq, exchange.StateNotifyLost, map[string]string{"error": err.Error()}, e.cfg.Now())
		return nil, err
	}
	root := filepath.Dir(x.Dir)
	// The session's server: pane ids start again at %0 on a restarted server, so the pane of that
	// id may now belong to someone else.
	p, srv, err := e.finder.Reach(ctx, root, orch, server, "orchestrator", true)
	if err != nil {
		if !fleet.IsUnreachable(err) {
			return gone("response saved at %s, but no tmux server to notify (%v): %w", x.ResponsePath, err, store.ErrOrchestratorGone)
		}
		return gone("response saved at %s, but %v: %w", x.ResponsePath, err, store.ErrOrchestratorGone)
	}
	m := messages.Mail{Kind: messages.MailResponse, Pane: orch, Server: srv.Key(), Socket: srv.Socket, From: x.Worker,
		Session: filepath.Base(x.Dir), Seq: x.Seq, Exchange: x.ID, Text: line}
	posted, err := e.office.Post(ctx, root, m, p, srv)
	if err != nil {
		if errors.Is(err, store.ErrNotRecorded) {
			return posted, fmt.Errorf("response saved at %s; the RESPONSE line went to orchestrator pane %s, but %w", x.ResponsePath, orch, err)
		}
		if errors.Is(err, paneops.ErrRefused) || fleet.IsNotFound(err) {
			return posted, store.Kindf(store.ErrOrchestratorGone, "response saved at %s, but orchestrator pane %s refused the line (%v)", x.ResponsePath, orch, err)
		}
		return posted, fmt.Errorf("response saved at %s, but the RESPONSE line did not reach orchestrator pane %s: %w", x.ResponsePath, orch, err)
	}
	return posted, nil
}

// notAResponse says what is at path when it is not a complete response file ("" when it is one).
func notAResponse(path string) string {
	st, err := os.Lstat(path)
	switch {
	case err != nil:
		return "unreadable (" + err.Error() + ")"
	case st.Mode()&fs.ModeSymlink != 0:
		return "a symlink"
	case st.IsDir():
		return "a folder"
	case st.Mode()&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case !st.Mode().IsRegular():
		return "not a regular file"
	}
	data, err := store.ReadFile(path)
	if err != nil {
		return "unreadable (" + err.Error() + ")"
	}
	if _, err := messages.ParseResponse(data); err != nil {
		return "damaged (" + err.Error() + ")"
	}
	return ""
}

// Which says which request a notify without an id answered and which others still wait for a
// response; "" when the notify named its request.
func (r *NotifyResult) Which() string {
	if !r.Newest || r.Exchange == nil {
		return ""
	}
	s := "answered request " + r.Exchange.ID + ", the newest open one addressed to your pane"
	switch n := len(r.StillOpen); n {
	case 0:
		return s + "; no other request is open"
	case 1:
		return s + "; still open: " + r.StillOpen[0] + " (answer it with notify --id " + r.StillOpen[0] + ")"
	default:
		return s + fmt.Sprintf("; %d others still open, newest first: %s (answer each with notify --id ID)", n, strings.Join(r.StillOpen, ", "))
	}
}
