package door

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Following a Codex TUI's thread for its approvals. A client of the app-server that resumes a
// thread (thread/resume with excludeTurns, so no history comes back) is sent the thread's server
// requests as the TUI is: item/commandExecution/requestApproval (and item/fileChange/
// requestApproval), a request pending at that moment replayed at once. The first reply to a
// request decides it, whoever sends it, and closes the TUI's dialog; every subscribed client is
// then told serverRequest/resolved {threadId, requestId}, which does not say the decision: the
// item's item/completed status does (completed or failed: it ran; declined: it did not). A reply
// after another client's (the person's answer in the TUI) is dropped without an error, and the
// command's fate is the other answer's (measured on 0.169.0; docs/codex-door.md).

// Approval request methods of the app-server, and the kinds they are.
const (
	codexCommandApproval    = "item/commandExecution/requestApproval"
	codexFileChangeApproval = "item/fileChange/requestApproval"

	CodexCommand    = "command"
	CodexFileChange = "fileChange"
)

// Decisions a reply to an approval request may carry. AcceptForSession is the TUI's "don't ask
// again this session"; Codex 0.169.0 offers a command only accept, a lasting execpolicy rule
// (acceptWithExecpolicyAmendment) and cancel, and takes decline though it does not list it.
const (
	CodexAccept           = "accept"
	CodexAcceptForSession = "acceptForSession"
	CodexDecline          = "decline"
)

// maxFollowMessage bounds one message a follower reads: it sees every item of the thread, and an
// item's completion carries the command's output as Codex keeps it.
const maxFollowMessage = 16 << 20

// maxFollowState bounds the requests and file items a follower remembers; a request is forgotten
// once its waiter is done with it (Forget), so only a thread asking without end reaches it.
const maxFollowState = 256

// ErrCodexResolved is the answer to a request that was resolved before this follower replied:
// another client's answer (the person's, in the TUI) decided it.
var ErrCodexResolved = errors.New("the approval was already answered in Codex (in its TUI): this answer was not sent")

// CodexApproval is an approval the app-server asks of the thread's clients.
type CodexApproval struct {
	// RequestID is the server's request id as JSON text; a reply names it.
	RequestID string
	Kind      string // CodexCommand or CodexFileChange
	ThreadID  string
	TurnID    string
	ItemID    string
	Reason    string
	// Command is the command as the model gave it (the one command action Codex parsed out of
	// it, when there is exactly one), else the command line as run; Shell is that command line
	// ("/bin/bash -lc 'touch x'").
	Command string
	Shell   string
	Cwd     string
	// Files are the paths a file change writes, as its item said when it started.
	Files []string
	// Decisions are the decisions the request lists (an object's by its key); nil when it
	// lists none (a file change).
	Decisions []string
	// Params are the request's parameters whole.
	Params json.RawMessage
}

// Offers reports whether the request lists decision among its decisions.
func (a CodexApproval) Offers(decision string) bool {
	for _, d := range a.Decisions {
		if d == decision {
			return true
		}
	}
	return false
}

// CodexOutcome is what a follower saw of an approval request.
type CodexOutcome struct {
	// Resolved: the app-server said the request is decided (serverRequest/resolved).
	Resolved bool
	// Sent is the decision this follower replied, "" when none.
	Sent string
	// ResolvedFirst: resolved before this follower's reply was sent, so another client decided.
	ResolvedFirst bool
	// ItemStatus is the status the request's item completed with (completed, failed,
	// declined), "" before it completes.
	ItemStatus string
	// ResolvedAt is when the follower read the resolution.
	ResolvedAt time.Time
}

// Ran reports whether the item completed having run (the request was accepted); only meaningful
// once ItemStatus is set.
func (o CodexOutcome) Ran() bool { return o.ItemStatus != "" && o.ItemStatus != "declined" }

// CodexFollower follows one thread of a Codex TUI through its app-server: it hands out the
// thread's approval requests, answers them, and says what became of each.
type CodexFollower struct {
	fd   Finding
	f    Finder
	ws   *wsConn
	stop func() bool

	approvals chan CodexApproval
	done      chan struct{} // closed when the reader has ended
	closed    chan struct{} // closed by Close
	closeOnce sync.Once

	wmu sync.Mutex // one write at a time, with its own deadline

	mu      sync.Mutex
	err     error
	nextID  int
	calls   map[string]chan followMsg
	reqs    map[string]*followReq
	files   map[string][]string // a started file change's paths, by item id
	changed chan struct{}       // closed and replaced at every change of reqs
}

type followReq struct {
	itemID string
	out    CodexOutcome
}

type followMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

type approvalParams struct {
	ThreadID       string  `json:"threadId"`
	TurnID         string  `json:"turnId"`
	ItemID         string  `json:"itemId"`
	Reason         *string `json:"reason"`
	Command        *string `json:"command"`
	Cwd            *string `json:"cwd"`
	CommandActions []struct {
		Command string `json:"command"`
	} `json:"commandActions"`
	AvailableDecisions []json.RawMessage `json:"availableDecisions"`
}

type resolvedParams struct {
	ThreadID  string          `json:"threadId"`
	RequestID json.RawMessage `json:"requestId"`
}

type itemParams struct {
	ThreadID string `json:"threadId"`
	Item     struct {
		Type    string `json:"type"`
		ID      string `json:"id"`
		Status  string `json:"status"`
		Changes []struct {
			Path string `json:"path"`
		} `json:"changes"`
	} `json:"item"`
}

type resumeParams struct {
	ThreadID     string `json:"threadId"`
	ExcludeTurns bool   `json:"excludeTurns"`
}

type approvalReply struct {
	ID     json.RawMessage `json:"id"`
	Result struct {
		Decision string `json:"decision"`
	} `json:"result"`
}

// FollowCodex follows the thread fd matched (a finding of Codex's app-server) until ctx ends or
// Close. It makes the checks a write makes (the TUI process is the one matched, the socket is
// this user's, the thread is still loaded in the TUI's folder) and resumes the thread. A TUI's
// thread cannot be resumed before its first message ("no rollout found"): try again later.
func (f Finder) FollowCodex(ctx context.Context, fd Finding) (*CodexFollower, error) {
	if fd.Door != CodexAppServer || !fd.UsesSocket() {
		return nil, fmt.Errorf("no app-server of a Codex TUI to follow: %s", fd.Why)
	}
	if !f.Alive(fd) {
		return nil, fmt.Errorf("the Codex TUI %d has ended", fd.PID)
	}
	if err := f.checkSocket(fd.Socket); err != nil {
		return nil, fmt.Errorf("app-server socket %s: %w", fd.Socket, err)
	}
	sctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	c, _, err := dialAppServer(sctx, fd.Socket)
	if err != nil {
		return nil, err
	}
	// Before the resume nothing but status notifications comes, which call skips.
	var r threadRead
	if err := c.call(sctx, "thread/read", threadID{ThreadID: fd.Thread}, &r); err != nil {
		c.Close()
		return nil, err
	}
	if r.Thread.Cwd != fd.cwd || r.Thread.Status.Type == "notLoaded" {
		c.Close()
		return nil, fmt.Errorf("thread %s is no longer the one of Codex TUI %d", fd.Thread, fd.PID)
	}
	_ = c.ws.SetReadDeadline(time.Time{})
	_ = c.ws.SetWriteDeadline(time.Time{})
	c.ws.SetReadLimit(maxFollowMessage)
	fl := &CodexFollower{fd: fd, f: f, ws: c.ws, nextID: c.nextID,
		approvals: make(chan CodexApproval, 8), done: make(chan struct{}), closed: make(chan struct{}),
		calls: map[string]chan followMsg{}, reqs: map[string]*followReq{}, files: map[string][]string{},
		changed: make(chan struct{})}
	fl.stop = context.AfterFunc(ctx, fl.Close)
	go fl.read()
	// A request pending now is replayed at once, possibly before this reply: the reader has it.
	if err := fl.call(sctx, "thread/resume", resumeParams{ThreadID: fd.Thread, ExcludeTurns: true}, nil); err != nil {
		fl.Close()
		return nil, err
	}
	return fl, nil
}

// Alive reports whether the agent process fd matched still runs (the same process: its start
// time is the one recorded, so a reused pid is not it).
func (f Finder) Alive(fd Finding) bool {
	start, err := f.procStart(fd.PID)
	return err == nil && fd.PID > 0 && start == fd.procStart
}

// Finding is the finding followed.
func (fl *CodexFollower) Finding() Finding { return fl.fd }

// Approvals delivers each approval request of the thread once, as it comes.
func (fl *CodexFollower) Approvals() <-chan CodexApproval { return fl.approvals }

// Done is closed when the follower has stopped: closed, its context ended, or the connection lost.
func (fl *CodexFollower) Done() <-chan struct{} { return fl.done }

// Err says why the follower stopped (nil while it follows).
func (fl *CodexFollower) Err() error {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.err
}

// Close stops following and waits for the reader to end.
func (fl *CodexFollower) Close() {
	fl.closeOnce.Do(func() {
		close(fl.closed)
		fl.ws.Close()
	})
	<-fl.done
}

// Outcome is what the follower saw of a's request so far, and a channel closed at the next change
// (of any request) or once the follower has stopped.
func (fl *CodexFollower) Outcome(a CodexApproval) (CodexOutcome, <-chan struct{}) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	var out CodexOutcome
	if r := fl.reqs[a.RequestID]; r != nil {
		out = r.out
	}
	return out, fl.changed
}

// Forget drops what the follower keeps of a's request, once its waiter is done with it.
func (fl *CodexFollower) Forget(a CodexApproval) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	delete(fl.reqs, a.RequestID)
}

// Answer replies decision to a's request. ErrCodexResolved when it was resolved before: the reply
// is not sent. A reply sent while another client's was on its way is dropped by the app-server
// without a word; the outcome's ItemStatus then tells which answer counted.
func (fl *CodexFollower) Answer(ctx context.Context, a CodexApproval, decision string) error {
	fl.mu.Lock()
	r := fl.reqs[a.RequestID]
	switch {
	case fl.err != nil:
		fl.mu.Unlock()
		return fmt.Errorf("%w: the app-server connection is gone: %w", ErrNotWritten, fl.err)
	case r == nil:
		fl.mu.Unlock()
		return fmt.Errorf("%w: approval request %s of thread %s is not known to this follower", ErrNotWritten, a.RequestID, fl.fd.Thread)
	case r.out.Resolved:
		fl.mu.Unlock()
		return ErrCodexResolved
	case r.out.Sent != "":
		fl.mu.Unlock()
		return fmt.Errorf("%w: approval request %s was already answered %s from here", ErrNotWritten, a.RequestID, r.out.Sent)
	}
	r.out.Sent = decision
	fl.mu.Unlock()
	var rep approvalReply
	rep.ID, rep.Result.Decision = json.RawMessage(a.RequestID), decision
	data, err := json.Marshal(rep)
	if err == nil {
		err = fl.write(ctx, data)
	}
	if err != nil {
		fl.mu.Lock()
		r.out.Sent = ""
		fl.mu.Unlock()
		// A frame not written whole is not a message the server acts on.
		return fmt.Errorf("%w: reply to approval request %s: %w", ErrNotWritten, a.RequestID, err)
	}
	return nil
}

// Say starts a turn with text in the thread, as writeCodex does (into the running turn when one
// runs). The TUI process is checked to be the one matched first; errors before the message is
// written whole wrap ErrNotWritten.
func (fl *CodexFollower) Say(ctx context.Context, text string) error {
	if !fl.f.Alive(fl.fd) {
		return fmt.Errorf("%w: Codex TUI %d has ended", ErrNotWritten, fl.fd.PID)
	}
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	var ts turnStarted
	err := fl.call(ctx, "turn/start", turnStartParams{ThreadID: fl.fd.Thread, Input: []userInput{{Type: "text", Text: text}}}, &ts)
	if err != nil && !errors.Is(err, ErrNotWritten) && !isRPCError(err) {
		return fmt.Errorf("turn/start was written to Codex's app-server for thread %s, but %w; it may have started a turn, so it is not written again", fl.fd.Thread, err)
	}
	if isRPCError(err) {
		return fmt.Errorf("%w: %w", ErrNotWritten, err)
	}
	return err
}

// call sends a request and waits for its reply, which the reader hands over. An error before the
// request is written whole wraps ErrNotWritten.
func (fl *CodexFollower) call(ctx context.Context, method string, params any, out any) error {
	fl.mu.Lock()
	if fl.err != nil {
		err := fl.err
		fl.mu.Unlock()
		return fmt.Errorf("%w: %s: the app-server connection is gone: %w", ErrNotWritten, method, err)
	}
	fl.nextID++
	id := fl.nextID
	ch := make(chan followMsg, 1)
	fl.calls[fmt.Sprint(id)] = ch
	fl.mu.Unlock()
	defer func() {
		fl.mu.Lock()
		delete(fl.calls, fmt.Sprint(id))
		fl.mu.Unlock()
	}()
	data, err := json.Marshal(rpcRequest{ID: &id, Method: method, Params: params})
	if err == nil {
		err = fl.write(ctx, data)
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrNotWritten, method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("%s: %w", method, m.Error)
		}
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(m.Result, out); err != nil {
			return fmt.Errorf("%s: unexpected reply: %w", method, err)
		}
		return nil
	case <-fl.done:
		return fmt.Errorf("%s: no reply: %w", method, fl.Err())
	case <-ctx.Done():
		return fmt.Errorf("%s: no reply: %w", method, ctx.Err())
	}
}

// write writes one message within ctx's deadline (else writeTimeout), then lifts the deadline: it is
// the connection's, and a deadline left behind would fail every later write, the reader's answers
// to pings included.
func (fl *CodexFollower) write(ctx context.Context, data []byte) error {
	fl.wmu.Lock()
	defer fl.wmu.Unlock()
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(writeTimeout)
	}
	_ = fl.ws.SetWriteDeadline(dl)
	defer fl.ws.SetWriteDeadline(time.Time{})
	return fl.ws.WriteText(data)
}

// read reads the server's messages until the connection ends.
func (fl *CodexFollower) read() {
	var err error
	defer func() {
		fl.stop()
		fl.ws.Close()
		fl.mu.Lock()
		fl.err = err
		close(fl.changed) // and left closed: a waiter sees the end at once
		fl.mu.Unlock()
		close(fl.done)
	}()
	for {
		var typ byte
		var data []byte
		typ, data, err = fl.ws.ReadMessage()
		if err != nil {
			err = fmt.Errorf("app-server connection of thread %s: %w", fl.fd.Thread, err)
			return
		}
		if typ != wsText {
			continue
		}
		var m followMsg
		if json.Unmarshal(data, &m) != nil {
			continue // not ours to judge: the TUI reads the same stream
		}
		id := string(bytes.TrimSpace(m.ID))
		hasID := id != "" && id != "null"
		switch {
		case m.Method == "" && hasID:
			fl.mu.Lock()
			ch := fl.calls[id]
			fl.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case m.Method == codexCommandApproval || m.Method == codexFileChangeApproval:
			if !hasID {
				continue
			}
			a, ok := fl.approval(id, m)
			if !ok {
				continue
			}
			select {
			case fl.approvals <- a:
			case <-fl.closed:
				return
			}
		case m.Method == "serverRequest/resolved":
			var p resolvedParams
			if json.Unmarshal(m.Params, &p) == nil && p.ThreadID == fl.fd.Thread {
				fl.resolved(string(bytes.TrimSpace(p.RequestID)))
			}
		case m.Method == "item/started" || m.Method == "item/completed":
			var p itemParams
			if json.Unmarshal(m.Params, &p) == nil && p.ThreadID == fl.fd.Thread {
				fl.item(m.Method == "item/completed", p)
			}
		}
	}
}

// approval records a request of this thread and returns it as an approval.
func (fl *CodexFollower) approval(id string, m followMsg) (CodexApproval, bool) {
	var p approvalParams
	if json.Unmarshal(m.Params, &p) != nil || p.ThreadID != fl.fd.Thread {
		return CodexApproval{}, false
	}
	a := CodexApproval{RequestID: id, Kind: CodexCommand, ThreadID: p.ThreadID, TurnID: p.TurnID, ItemID: p.ItemID,
		Reason: deref(p.Reason), Shell: deref(p.Command), Cwd: deref(p.Cwd), Params: m.Params}
	if m.Method == codexFileChangeApproval {
		a.Kind = CodexFileChange
	}
	a.Command = a.Shell
	if len(p.CommandActions) == 1 && strings.TrimSpace(p.CommandActions[0].Command) != "" {
		a.Command = p.CommandActions[0].Command
	}
	for _, d := range p.AvailableDecisions {
		var s string
		if json.Unmarshal(d, &s) == nil {
			a.Decisions = append(a.Decisions, s)
			continue
		}
		var o map[string]json.RawMessage
		if json.Unmarshal(d, &o) == nil {
			for k := range o {
				a.Decisions = append(a.Decisions, k)
			}
		}
	}
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if _, seen := fl.reqs[id]; seen {
		return CodexApproval{}, false // replayed to a client that has it already
	}
	if len(fl.reqs) >= maxFollowState {
		return CodexApproval{}, false
	}
	a.Files = fl.files[a.ItemID]
	fl.reqs[id] = &followReq{itemID: a.ItemID}
	return a, true
}

func (fl *CodexFollower) resolved(id string) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	r := fl.reqs[id]
	if r == nil || r.out.Resolved {
		return
	}
	r.out.Resolved, r.out.ResolvedAt = true, time.Now()
	r.out.ResolvedFirst = r.out.Sent == ""
	fl.changedLocked()
}

func (fl *CodexFollower) item(completed bool, p itemParams) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if !completed {
		if p.Item.Type == "fileChange" && len(fl.files) < maxFollowState {
			var paths []string
			for _, c := range p.Item.Changes {
				paths = append(paths, c.Path)
			}
			fl.files[p.Item.ID] = paths
		}
		return
	}
	delete(fl.files, p.Item.ID)
	for _, r := range fl.reqs {
		if r.itemID == p.Item.ID && r.out.ItemStatus == "" {
			r.out.ItemStatus = p.Item.Status
			fl.changedLocked()
		}
	}
}

func (fl *CodexFollower) changedLocked() {
	close(fl.changed)
	fl.changed = make(chan struct{})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
