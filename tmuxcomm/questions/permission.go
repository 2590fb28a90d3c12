package questions

// An agent's own permission prompt as a question for the person. The agent's PermissionRequest
// hook ('wcomm hook') records it (AskPermission), holding its wait lock, and waits (Await): for
// the first answer from any channel (the chat, the console, 'wcomm answer'), which it hands back
// to the agent; for the person answering in the pane itself, which the agent's own state tells
// (Terminal), and which ends the question as answered at the terminal; or for its time to run out,
// which decides nothing and leaves the dialog to the terminal. A permission question is never
// relayed to another pane, its answer never typed into one: the hook is its only reader.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// SourceTerminal is the source of an answer the person gave in the agent's pane.
const SourceTerminal = "terminal"

// Events of a permission question's log.
const (
	QTerminal = "answered-at-terminal"
	QExpiredP = "expired"
	QDecision = "decision-returned" // the hook handed the answer to the agent
)

// Terminal reads the agent's own state of its dialog: Status returns the state the agent last
// recorded ("waiting" while its permission dialog shows, "busy", "idle") and when it recorded it
// (any number that changes with it), or an error when the state cannot be read.
type Terminal interface {
	Status() (state string, at int64, err error)
}

// StatusWaiting is the state an agent records while its permission dialog waits.
const StatusWaiting = "waiting"

// PermissionWait is a recorded permission question whose hook waits for it.
type PermissionWait struct {
	Question *QuestionStatus
	d        *Desk
	locks    *lockSet
}

// Close releases the hook's hold on the question: an answer after it is refused as stale.
func (w *PermissionWait) Close() { w.locks.release() }

// AskPermission records the permission request of the agent in the caller's pane as a question
// for the person, holding its wait lock from the moment it exists (so an answer is never typed
// into a pane), and starts the bridge to the answer channels. The question lives in the pane's
// own session folder (the pane with itself: there is no orchestrator).
func (de *Desk) AskPermission(ctx context.Context, req messages.PermissionRequest) (*PermissionWait, []string, error) {
	root, err := de.RootDir(true)
	if err != nil {
		return nil, nil, err
	}
	if _, err := messages.ParsePaneID(string(de.Self)); err != nil {
		return nil, nil, fmt.Errorf("own pane %q: %w", messages.SanitizeField(string(de.Self)), err)
	}
	srv, err := de.Tmux.ServerInfo(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("no tmux server: %w", err)
	}
	req = fitPermission(req)
	q := messages.PermissionQuestion(req, de.Self).Normalized()
	if err := q.Validate(); err != nil {
		return nil, nil, err
	}
	dir, _, err := de.OpenSession(root, de.Self, de.Self, srv.Key(), srv.Socket)
	if err != nil {
		return nil, nil, err
	}
	base := QuestionRecord{Worker: de.Self, Orchestrator: de.Self, Session: filepath.Base(dir), Server: srv.Key(), Socket: srv.Socket,
		AskedAt: de.Now().UTC(), MaxQuestions: math.MaxInt32, Channels: de.ChannelsKey, AskedIn: de.AskedIn, Permission: &req}
	if base, err = checkPermissionRecord(base, q); err != nil {
		return nil, nil, err
	}
	locks := &lockSet{}
	sts, err := de.createQuestions(root, dir, base, []messages.Question{q}, func(st *QuestionStatus) error {
		return locks.take(st.WaitLock(), de.LockTimeout)
	})
	if err == nil {
		err = de.readBack(sts[0])
	}
	if err != nil {
		locks.release()
		return nil, nil, err
	}
	return &PermissionWait{Question: sts[0], d: de, locks: locks}, de.startBridge(), nil
}

// PermissionOutcome is how a permission question ended for its hook.
type PermissionOutcome struct {
	// Decision is what the hook hands back to the agent; nil when it hands nothing (answered at
	// the terminal, expired, resolved): the agent's dialog decides.
	Decision *messages.PermissionDecision
	Question *QuestionStatus
}

// AwaitOptions bound a permission hook's wait.
type AwaitOptions struct {
	Wait     time.Duration // 0: until ctx ends
	Terminal Terminal      // nil: the terminal is not watched
	// Changes, when set, starts what wakes the wait when the question's files or the terminal's
	// may have changed (the watch room's feed: watch.Follower.Wake): the wait looks then, and
	// otherwise only every Poll, which defaults to a second, a safety look. It is called once the
	// wait has looked at the terminal a first time: the state the person changes is the one the
	// dialog showed, not one read after a slow start. A nil or closed channel wakes nothing.
	Changes func() <-chan struct{}
	// Poll is how often the files and the terminal are looked at: by default lookEvery without
	// Changes (a terminal that tells no one of its change: a screen, Codex's app server), a
	// second with it.
	Poll time.Duration
	// Ended is the reason recorded when ctx ends and the terminal did not answer; "": the agent
	// ended its hook (its hook timeout), which is what ends a hook's wait.
	Ended string
}

// Await waits until the question is answered from a channel, answered at the terminal, or
// its time runs out (Wait, or ctx ending: the agent ends a hook that has waited its timeout, and
// one whose dialog the person refused at the terminal, with SIGTERM).
func (w *PermissionWait) Await(ctx context.Context, o AwaitOptions) (*PermissionOutcome, error) {
	st := w.Question
	poll := o.Poll
	if poll <= 0 {
		poll = lookEvery
		if o.Changes != nil {
			poll = time.Second
		}
	}
	var changed <-chan struct{}
	var deadline <-chan time.Time
	if o.Wait > 0 {
		t := time.NewTimer(o.Wait)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	watch := newTerminalWatch(o.Terminal)
	for {
		if st.Refresh(); st.Decided() {
			return w.decided()
		}
		if answer, done := watch.look(); done {
			return w.atTerminal(answer)
		}
		if o.Changes != nil {
			changed, o.Changes = o.Changes(), nil
			continue // what changed while it started is looked at now
		}
		select {
		case <-ctx.Done():
			// Ended by the agent: after a No at the terminal (measured: SIGTERM 0.12-0.15 s after
			// it, its state already idle, though a look may catch the file being rewritten), or at
			// its hook timeout (the dialog stays, its state waiting). A short look tells them apart.
			if o.Terminal != nil && watch.settles(terminalSettle, min(poll/2, lookEvery), changed) {
				return w.atTerminal(messages.PermDeny)
			}
			if o.Ended != "" {
				return w.expire(o.Ended)
			}
			return w.expire(endReason(ctx))
		case <-deadline:
			if answer, done := watch.look(); done {
				return w.atTerminal(answer)
			}
			return w.expire(fmt.Sprintf("no answer within %s; the dialog stays for the terminal", o.Wait.Round(time.Second)))
		case <-tick.C:
		case _, ok := <-changed:
			if !ok {
				changed = nil // the feed ended: the safety look goes on
			}
		}
	}
}

// lookEvery is how often a wait looks at a terminal that tells no one of its change.
const lookEvery = 50 * time.Millisecond

// endReason says why ctx's end leaves the dialog: the cause it was ended with (a watcher of the
// agent that stopped or lost the agent says which), else the hook's timeout.
func endReason(ctx context.Context) string {
	if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) && !errors.Is(c, context.DeadlineExceeded) {
		return c.Error()
	}
	return "the agent ended its hook (its hook timeout); the dialog stays for the terminal"
}

// Log records an event of the question in its log: what became of its decision in the agent,
// for a waiter that applies the decision itself (the prompts room's, through Codex's app-server).
func (w *PermissionWait) Log(state string, detail map[string]string) error {
	return w.d.LogQ(w.Question, state, detail)
}

// decided is the outcome of a question decided elsewhere: an answer from a channel becomes the
// agent's decision; anything else hands nothing back.
func (w *PermissionWait) decided() (*PermissionOutcome, error) {
	st := w.Question
	out := &PermissionOutcome{Question: st}
	// Only a person's answer decides: a record decided any other way (a timeout, a cap) hands
	// nothing back, and the dialog decides.
	if st.Answer == nil || st.Answer.Source == SourceTerminal || st.Permission == nil || st.Answer.DecidedBy != messages.DecidedByUser {
		return out, nil
	}
	d, err := messages.DecisionOf(*st.Permission, st.Answer.Answer, st.Answer.Message)
	if err != nil {
		return out, err
	}
	out.Decision = &d
	w.d.LogQ(st, QDecision, map[string]string{"behavior": d.Behavior})
	return out, nil
}

// atTerminal records that the person answered in the pane (answer: allow or deny, as the agent's
// state after the dialog says) unless an answer got there first.
func (w *PermissionWait) atTerminal(answer string) (*PermissionOutcome, error) {
	e, st := w.d, w.Question
	root := filepath.Dir(st.Dir)
	unlock, err := lock.File(filepath.Join(root, store.RootLockName), syscall.LOCK_EX, e.LockTimeout)
	if err != nil {
		return nil, fmt.Errorf("lock root %s: %w", root, err)
	}
	defer unlock()
	if st.Refresh(); st.Decided() {
		// An answer from a channel was recorded first; the agent takes the first of the two
		// it sees, so it is handed back too.
		return w.decided()
	}
	a := AnswerRecord{ID: st.ID, TaskID: st.Task, Seq: st.Seq, Answer: answer, DecidedBy: messages.DecidedByUser,
		Source: SourceTerminal, Type: st.Type, Form: "terminal", Pane: st.Worker, At: e.Now().UTC()}
	if err := writeJSONExclusive(st.File(messages.SuffixAnswer), a); err != nil && !errors.Is(err, store.ErrExists) {
		return nil, err
	}
	e.LogQ(st, QTerminal, map[string]string{"answer": answer})
	st.Refresh()
	return &PermissionOutcome{Question: st}, nil
}

// expire closes the question without an answer: nothing is decided, the dialog stays.
func (w *PermissionWait) expire(reason string) (*PermissionOutcome, error) {
	e, st := w.d, w.Question
	root := filepath.Dir(st.Dir)
	unlock, err := lock.File(filepath.Join(root, store.RootLockName), syscall.LOCK_EX, e.LockTimeout)
	if err != nil {
		return nil, fmt.Errorf("lock root %s: %w", root, err)
	}
	defer unlock()
	if st.Refresh(); st.Decided() {
		return w.decided()
	}
	r := ResolvedRecord{ID: st.ID, Reason: "expired: " + reason, At: e.Now().UTC()}
	if err := writeJSONExclusive(st.File(messages.SuffixResolved), r); err != nil && !errors.Is(err, store.ErrExists) {
		return nil, err
	}
	e.LogQ(st, QExpiredP, map[string]string{"reason": reason})
	st.Refresh()
	return &PermissionOutcome{Question: st}, nil
}

// terminalSettle bounds the look at the agent's state once it has ended the hook.
const terminalSettle = 500 * time.Millisecond

// settles looks at the state until it has left waiting (true) or within bound has not: when
// changed says the state's file changed, else every (polling a state that tells no one).
func (w *terminalWatch) settles(bound, every time.Duration, changed <-chan struct{}) bool {
	end := time.NewTimer(bound)
	defer end.Stop()
	var tick <-chan time.Time
	if changed == nil {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		if _, done := w.look(); done || w.left {
			return true
		}
		select {
		case <-end.C:
			_, done := w.look()
			return done || w.left
		case <-tick:
		case _, ok := <-changed:
			if !ok {
				changed = nil
				t := time.NewTicker(every)
				defer t.Stop()
				tick = t.C
			}
		}
	}
}

// terminalWatch follows the agent's state: the dialog is answered at the terminal once the
// state has been "waiting" and is no longer, or has changed to something else without the
// waiting being seen (a quick answer between two looks).
type terminalWatch struct {
	t        Terminal
	first    bool
	state0   string
	at0      int64
	seenWait bool
	left     bool // the state has left waiting
}

func newTerminalWatch(t Terminal) *terminalWatch { return &terminalWatch{t: t, first: true} }

// look reads the state once; done when the dialog was answered at the terminal, with the answer
// the new state implies: busy (the tool runs) is allow, anything else (the turn ended) deny.
func (w *terminalWatch) look() (string, bool) {
	if w.t == nil {
		return "", false
	}
	state, at, err := w.t.Status()
	if err != nil {
		return "", false
	}
	if w.first {
		w.first, w.state0, w.at0 = false, state, at
	}
	if state == StatusWaiting {
		w.seenWait = true
		return "", false
	}
	if w.seenWait || (at != w.at0 && state != w.state0) {
		w.left = true
		if state == "busy" {
			return messages.PermAllow, true
		}
		return messages.PermDeny, true
	}
	return "", false
}

// mayAnswerForPerson lets the person answer a permission question or an action's approval, and
// nobody else unless the user's own settings name the agent or pane (permissions.answerers): an
// agent approving tools or commands for itself or for another is what they exist to prevent. The bridge and the console are
// the person's channels (a chat's allowed users, the console's secret) and ask no check; the
// command line and the MCP server are judged by what cannot be forged (Caller, OwnPane).
func (d *Desk) mayAnswerForPerson(ctx context.Context, o AnswerOptions, st *QuestionStatus) error {
	if !o.CheckCaller && !o.Agent {
		return nil
	}
	c := d.Caller(ctx)
	if c.Person && !o.Agent {
		return nil
	}
	if c.Agent != "" && slices.Contains(d.PermissionAnswerers, c.Agent) {
		return nil
	}
	if d.Self != "" && slices.Contains(d.PermissionAnswerers, string(d.Self)) && d.OwnPane(ctx) == nil {
		return nil
	}
	who, why := c.Agent, c.Why
	switch {
	case o.Agent && who == "":
		who, why = "an agent's tool", "the MCP server serves an agent"
	case who == "":
		who = "this command"
	}
	what := "an agent's permission prompt"
	if st.Type != messages.Permission {
		what = fmt.Sprintf("the approval of action %q", messages.SanitizeField(st.Action))
	}
	return store.Kindf(core.ErrNotPerson, "this is %s, and %s may not answer it (%s): the person answers it (the chat, the console, or '%s answer' typed in a shell of their own); only your own config file's permissions.answerers can name an agent or pane that may", what, who, why, d.Command)
}

// notPerson names the caller when it is not the person ("" when it is): the MCP server's
// agent, the agent a command runs under, or a program in no terminal of a person. The bridge
// and the console are the person's channels.
func (d *Desk) notPerson(ctx context.Context, o AnswerOptions) string {
	if !o.CheckCaller && !o.Agent {
		return ""
	}
	c := d.Caller(ctx)
	switch {
	case c.Agent != "":
		return "agent " + c.Agent
	case o.Agent:
		return "an agent's tool"
	case !c.Person:
		return "a program, not the person"
	}
	return ""
}

// Tell hands text to the agent of the question's pane as a message from the person, through its
// outbox (its door, or typed when the pane is ready): a deny's message, where the dialog itself
// carries none to the model. It reports whether the message was delivered now or queued.
func (w *PermissionWait) Tell(ctx context.Context, text string) (queued bool, err error) {
	st := w.Question
	// A note, not the question's answer: an answer's mail is dropped once its question's wait
	// has it, and these are the person's words that follow it.
	m := messages.Mail{Kind: messages.MailNote, Pane: st.Worker, Server: st.Server, Socket: st.Socket, From: st.Orchestrator,
		Session: filepath.Base(st.Dir), Text: text,
		Summary: fmt.Sprintf("[message from the person, with a deny of %s] %s", st.ID, messages.SanitizeField(text))}
	posted, err := w.d.postTo(ctx, filepath.Dir(st.Dir), m)
	if err != nil {
		return false, err
	}
	return posted.Queued, nil
}
