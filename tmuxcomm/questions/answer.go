package questions

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
)

// AnswerOptions are the inputs of one answer.
type AnswerOptions struct {
	ID     string
	Raw    string
	Source string // who answers: "local" (default), "telegram", a name
	// Message is a permission deny's message for the model (the answer's own "deny: ..." text
	// when empty); refused on any other answer.
	Message string
	// Agent says the caller is an agent's tool (the MCP server): it may answer a permission
	// question only when the settings name it.
	Agent bool
	// CheckCaller asks whether the caller runs under an agent (its process or an ancestor is an
	// agent's program): the command line, which a person and an agent's tool call alike run.
	// The bridge and the console are the person's channels and leave it off.
	CheckCaller bool
}

// AnswerResult says what an answer did.
type AnswerResult struct {
	Question *QuestionStatus `json:"question"`
	// Signal is how the worker learns the answer: SignalAsk (its waiting ask woke on the file),
	// SignalPasted (no ask waited: the ANSWER block went into its pane) or SignalQueued (its pane
	// was not ready: the block waits in its outbox); "" when none of these worked. Say words it.
	Signal core.Signal `json:"signal"`
	// Via is the ANSWER block's route when it was delivered now: "socket" (the agent's messaging
	// socket) or "typed" (pasted and submitted).
	Via     string `json:"via,omitempty"`
	Warning string `json:"warning,omitempty"`
}

// Answer validates raw against the question's type and records it when it is the first valid
// answer. An invalid answer wraps messages.ErrInvalidAnswer and leaves the question open; an
// answer to a question that is decided or no longer applies wraps ErrStale. Every attempt is
// logged. The accepted answer wakes a waiting ask, or else is pasted into the worker's pane.
func (de *Desk) Answer(ctx context.Context, o AnswerOptions) (*AnswerResult, error) {
	root, found, err := de.ReadRoot()
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, store.Kindf(store.ErrNotFound, "no questions yet (no root %s)", root)
	}
	st, err := FindQuestion(root, o.ID)
	if err != nil {
		return nil, err
	}
	source := strings.TrimSpace(o.Source)
	if source == "" {
		source = "local"
	}
	attempt := map[string]string{"raw": o.Raw, "source": source}
	if de.Self != "" {
		attempt["pane"] = string(de.Self)
	}
	stale := func(reason string) (*AnswerResult, error) {
		d := map[string]string{"reason": reason}
		for k, v := range attempt {
			d[k] = v
		}
		de.LogQ(st, QStale, d)
		return &AnswerResult{Question: st}, store.Kindf(core.ErrStale, "question %s: %s; your answer was recorded as stale and changed nothing", st.ID, reason)
	}
	if why := decidedReason(st); why != "" {
		return stale(why)
	}
	de.judgeStale(ctx, st, de.liveness(ctx))
	if st.State == QuestionStale {
		return stale(st.Reason)
	}
	invalid := func(err error) (*AnswerResult, error) {
		d := map[string]string{"error": err.Error()}
		for k, v := range attempt {
			d[k] = v
		}
		de.LogQ(st, QInvalid, d)
		return &AnswerResult{Question: st}, fmt.Errorf("question %s: %w; the question stays open", st.ID, err)
	}
	// An agent's permission prompt and an action's approval are the person's to answer: an agent
	// that approves a tool or a registered command for itself or for another is what they exist
	// to prevent.
	if st.Type == messages.Permission || st.Action != "" {
		if err := de.mayAnswerForPerson(ctx, o, st); err != nil {
			return invalid(err)
		}
	}
	m, err := messages.MatchAnswer(st.Question, o.Raw)
	if err != nil {
		return invalid(err)
	}
	message := m.Note
	if o.Message != "" {
		if st.Type != messages.Permission || m.Value != messages.PermDeny {
			return invalid(core.Usagef("a message goes with a permission question's deny only"))
		}
		message = o.Message
	}
	a := AnswerRecord{ID: st.ID, TaskID: st.Task, Seq: st.Seq, Answer: m.Value, Raw: o.Raw, DecidedBy: messages.DecidedByUser,
		Source: source, Type: st.Type, Form: m.Form, Option: m.Option, Pane: de.Self, Message: message, At: de.Now().UTC()}
	if st.Idle != nil {
		// Anyone may give an agent at rest its next instruction (an orchestrator does), but only
		// the person's is handed over as the person's.
		a.NotPerson = de.notPerson(ctx, o)
	}
	unlock, err := lock.File(filepath.Join(root, store.RootLockName), syscall.LOCK_EX, de.LockTimeout)
	if err != nil {
		return nil, fmt.Errorf("lock root %s: %w", root, err)
	}
	st.Refresh()
	if why := decidedReason(st); why != "" {
		unlock()
		return stale(why)
	}
	// Whether an ask waits is decided here, under the root lock that an ask also holds to stop
	// waiting (settle): after the answer is published, a woken ask may exit at once.
	waiting := lock.IsLocked(st.WaitLock())
	if !waiting && st.Type == messages.Permission {
		// Its hook is gone (killed, or the agent closed the dialog): an answer would reach
		// nobody, and no answer of a permission is ever typed into a pane.
		reason := "the agent's hook no longer waits for it (its dialog is gone)"
		r := ResolvedRecord{ID: st.ID, Reason: reason, At: de.Now().UTC()}
		werr := writeJSONExclusive(st.File(messages.SuffixResolved), r)
		unlock()
		if werr == nil {
			de.LogQ(st, QResolvedEvent, map[string]string{"reason": reason})
		}
		st.Refresh()
		return stale(reason)
	}
	err = writeJSONExclusive(st.File(messages.SuffixAnswer), a)
	unlock()
	if errors.Is(err, store.ErrExists) {
		st.Refresh()
		return stale(decidedReason(st))
	}
	if err != nil {
		return nil, err
	}
	d := map[string]string{"answer": a.Answer, "form": a.Form}
	if a.Message != "" {
		d["message"] = a.Message
	}
	for k, v := range attempt {
		d[k] = v
	}
	de.LogQ(st, QAccepted, d)
	st.Refresh()
	res := &AnswerResult{Question: st}
	if waiting {
		res.Signal = core.SignalAsk
		de.LogQ(st, QAskWoken, nil)
		return res, nil
	}
	if res.Signal, res.Via, err = de.pasteAnswer(ctx, st); err != nil {
		res.Warning = fmt.Sprintf("the answer is recorded, but no ask was waiting and pasting it into worker pane %s failed: %v; the worker gets it with 'wcomm ask --wait %s'", st.Worker, err, st.ID)
		return res, nil
	}
	return res, nil
}

// decidedReason says why a question takes no more answers, "" when it does.
func decidedReason(st *QuestionStatus) string {
	switch {
	case st.Answer != nil && st.Answer.Source == SourceTerminal:
		return fmt.Sprintf("already answered %q at the terminal at %s; your answer came too late", st.Answer.Answer, st.Answer.At.Local().Format(time.RFC3339))
	case st.Answer != nil:
		a := st.Answer
		return fmt.Sprintf("already answered %q (decided by %s, source %s, at %s); the first answer stands",
			a.Answer, a.DecidedBy, a.Source, a.At.Local().Format(time.RFC3339))
	case st.Resolved != nil:
		return fmt.Sprintf("it was resolved without an answer at %s (%s)", st.Resolved.At.Local().Format(time.RFC3339), st.Resolved.Reason)
	}
	return ""
}

// ResolveQuestion closes a pending question without an answer, for the reason given; a decided
// question wraps ErrAnswered.
func (d *Desk) ResolveQuestion(ctx context.Context, id, reason string) (*QuestionStatus, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return nil, core.Needf(core.NeedReason, nil, "resolve needs a reason: say why the question is closed without an answer")
	}
	if len(reason) > 1000 {
		return nil, core.Usagef("the reason is %d bytes; keep it under 1000", len(reason))
	}
	root, found, err := d.ReadRoot()
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, store.Kindf(store.ErrNotFound, "no questions yet (no root %s)", root)
	}
	st, err := FindQuestion(root, id)
	if err != nil {
		return nil, err
	}
	unlock, err := lock.File(filepath.Join(root, store.RootLockName), syscall.LOCK_EX, d.LockTimeout)
	if err != nil {
		return nil, fmt.Errorf("lock root %s: %w", root, err)
	}
	defer unlock()
	if st.Refresh(); st.Decided() {
		return st, store.Kindf(store.ErrAnswered, "question %s: %s; nothing to resolve", st.ID, decidedReason(st))
	}
	r := ResolvedRecord{ID: st.ID, Reason: reason, Pane: d.Self, At: d.Now().UTC()}
	if err := writeJSONExclusive(st.File(messages.SuffixResolved), r); err != nil {
		if errors.Is(err, store.ErrExists) {
			st.Refresh()
			return st, store.Kindf(store.ErrAnswered, "question %s is already resolved", st.ID)
		}
		return nil, err
	}
	d.LogQ(st, QResolvedEvent, map[string]string{"reason": reason})
	st.Refresh()
	return st, nil
}
