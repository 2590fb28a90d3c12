package questions

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
)

// waitAnswers waits until every question is decided or its deadline passes; at its deadline a
// question with auto-answer and options gets its first option (DECIDED_BY auto-timeout); one
// without is marked timed out. autoOverride, when set, replaces each question's own auto-answer
// setting. It wakes on file events in the questions' folders, with a safety tick.
func (d *Desk) waitAnswers(ctx context.Context, sts []*QuestionStatus, autoOverride *bool) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wake := make(chan struct{}, 1)
	poke := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	dirs := map[string]bool{}
	for _, st := range sts {
		dirs[st.Dir] = true
	}
	for dir := range dirs {
		w, err := store.NewDirWatcher(dir)
		if err != nil {
			// No watcher: a short poll still wakes within tens of milliseconds.
			go func() {
				t := time.NewTicker(20 * time.Millisecond)
				defer t.Stop()
				for {
					select {
					case <-wctx.Done():
						return
					case <-t.C:
						poke()
					}
				}
			}()
			continue
		}
		go func() {
			defer w.Close()
			for {
				_, err := w.Next(wctx)
				if wctx.Err() != nil {
					return
				}
				if err != nil {
					time.Sleep(20 * time.Millisecond)
				}
				poke()
			}
		}()
	}
	for {
		now := d.Now()
		var next time.Time
		open := 0
		for _, st := range sts {
			if st.Decided() || st.timedOut {
				continue
			}
			st.Refresh()
			if st.Decided() {
				continue
			}
			if !st.deadline.IsZero() && !now.Before(st.deadline) {
				// An override only turns auto-answer off: a question asked without it (the
				// record's false) is never decided by a waiter's default. A timeout never
				// approves an action nor decides a permission, whatever --auto-answer says.
				auto := st.AutoAnswer && (autoOverride == nil || *autoOverride)
				if auto && len(st.Options) > 0 && st.Action == "" && !st.isPermission() {
					if err := d.autoAnswer(st); err != nil {
						return err
					}
				} else {
					st.timedOut = true
					d.LogQ(st, QTimedOut, nil)
				}
				continue
			}
			open++
			if !st.deadline.IsZero() && (next.IsZero() || st.deadline.Before(next)) {
				next = st.deadline
			}
		}
		if open == 0 {
			return nil
		}
		var timer <-chan time.Time
		var t *time.Timer
		if !next.IsZero() {
			t = time.NewTimer(next.Sub(now))
			timer = t.C
		}
		stop := func() {
			if t != nil {
				t.Stop()
			}
		}
		select {
		case <-ctx.Done():
			stop()
			return core.Judgedf(ctx.Err(), "interrupted while waiting for %s; the question stays pending (%s ask --wait %s picks it up again)",
				ids(sts), d.Command, sts[0].ID)
		case <-wake:
		case <-timer:
		}
		stop()
	}
}

// autoAnswer records the first option as the answer, unless an answer or a resolution got there
// first, under the root lock that also orders answer and resolve.
func (d *Desk) autoAnswer(st *QuestionStatus) error {
	root := filepath.Dir(st.Dir)
	unlock, err := lock.File(filepath.Join(root, store.RootLockName), syscall.LOCK_EX, d.LockTimeout)
	if err != nil {
		return fmt.Errorf("lock root %s: %w", root, err)
	}
	defer unlock()
	if st.Refresh(); st.Decided() || st.isPermission() {
		return nil
	}
	a := AnswerRecord{ID: st.ID, TaskID: st.Task, Seq: st.Seq, Answer: st.Options[0], DecidedBy: messages.DecidedByTimeout,
		Source: "timeout", Type: st.Type, Form: "auto", Option: 1, At: d.Now().UTC()}
	if err := writeJSONExclusive(st.File(messages.SuffixAnswer), a); err != nil && !errors.Is(err, store.ErrExists) {
		return err
	}
	d.LogQ(st, QAccepted, map[string]string{"decided_by": messages.DecidedByTimeout, "answer": a.Answer})
	st.Refresh()
	return nil
}

// settle turns the end of a wait into the ask's error. The wait locks are released under the
// root lock, under which an answer also decides whether an ask waits for it (see Answer): so an
// answer recorded before the release was left to this ask, which looks once more and prints it,
// and one recorded after it is pasted into the worker's pane. None falls between the two.
func (d *Desk) settle(sts []*QuestionStatus, locks *lockSet, werr error) error {
	if len(sts) > 0 {
		root := filepath.Dir(sts[0].Dir)
		if unlock, err := lock.File(filepath.Join(root, store.RootLockName), syscall.LOCK_EX, d.LockTimeout); err == nil {
			locks.release()
			for _, st := range sts {
				if !st.Decided() {
					st.Refresh()
				}
			}
			unlock()
		}
	}
	locks.release()
	var timedOut, closed []*QuestionStatus
	for _, st := range sts {
		if st.Answer != nil && werr == nil && answerQueued(st) {
			// The worker has it now: the ANSWER block still waiting for its pane is not typed.
			d.LogQ(st, QAnswerRead, nil)
		}
		if st.timedOut {
			if st.Refresh(); st.Decided() {
				st.timedOut = false
			}
		}
		switch {
		case st.timedOut || st.State == QuestionPending:
			timedOut = append(timedOut, st)
		case st.State == QuestionResolved || st.State == QuestionStale:
			closed = append(closed, st)
		}
	}
	if werr != nil {
		return werr
	}
	if len(timedOut) > 0 {
		st := timedOut[0]
		if st.isPermission() {
			return core.Judgedf(store.ErrTimeout, "no answer to %s within %s; an agent's permission prompt is decided only by the person's answer, which goes to the agent's hook, never by a wait: it stays pending",
				ids(timedOut), st.limit.Round(time.Millisecond))
		}
		return core.Judgedf(store.ErrTimeout, "no answer to %s within %s; the question stays pending: '%s ask --wait %s' fetches the answer later, and an answer that comes while no ask waits is pasted into this pane",
			ids(timedOut), messages.DurationText(st.limit.Round(time.Millisecond)), d.Command, st.ID)
	}
	if len(closed) > 0 {
		st := closed[0]
		return core.Judgedf(core.ErrNoAnswer, "question %s was closed without an answer (%s)", st.ID, st.Reason)
	}
	return nil
}

// WaitOptions are the inputs of `ask --wait`.
type WaitOptions struct {
	IDs []string
	// Timeout, when TimeoutSet, replaces the questions' own deadlines (asked_at + timeout);
	// 0 then waits without limit.
	Timeout    time.Duration
	TimeoutSet bool
	// AutoAnswer, when set, replaces the questions' own auto-answer settings.
	AutoAnswer *bool
}

// WaitQuestions picks up questions asked earlier (by a non-blocking ask, or an ask that was
// killed) and waits for their answers as Ask does.
func (d *Desk) WaitQuestions(ctx context.Context, o WaitOptions) (*AskResult, error) {
	root, found, err := d.ReadRoot()
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, store.Kindf(store.ErrNotFound, "no questions yet (no root %s)", root)
	}
	if len(o.IDs) == 0 {
		return nil, fmt.Errorf("no question id to wait for")
	}
	res := &AskResult{}
	locks := &lockSet{}
	defer locks.release()
	for _, id := range o.IDs {
		st, err := FindQuestion(root, id)
		if err != nil {
			return nil, err
		}
		if err := locks.take(st.WaitLock(), d.LockTimeout); err != nil {
			return nil, err
		}
		if o.TimeoutSet {
			st.deadline, st.limit = time.Time{}, o.Timeout
			if o.Timeout > 0 {
				st.deadline = d.Now().Add(o.Timeout)
			}
		}
		res.Questions = append(res.Questions, st)
	}
	for _, st := range res.Questions {
		if st.State == QuestionPending {
			res.Warnings = append(res.Warnings, d.startBridge()...)
			break
		}
	}
	err = d.waitAnswers(ctx, res.Questions, o.AutoAnswer)
	return res, d.settle(res.Questions, locks, err)
}

// isPermission reports whether st is an agent's permission prompt: only the person's answer
// decides it, never a timeout.
func (st *QuestionStatus) isPermission() bool {
	return st.Permission != nil || st.Type == messages.Permission
}
