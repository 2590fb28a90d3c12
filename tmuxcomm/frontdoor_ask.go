package tmuxcomm

// The ask as every face makes it: its task, its defaults from the settings, the relay switched
// off. A face parses its flags or arguments into an Asking and prints what comes back.

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// Asking is one ask as a face gives it. What it leaves unset takes the settings' defaults.
type Asking struct {
	Questions []messages.Question
	// Exchange ties the questions to this request (id or path); To names the orchestrator when
	// no request does (see questions.AskOptions).
	Exchange string
	To       string
	// Wait blocks until every question is decided or the timeout passes.
	Wait bool
	// Timeout and AutoAnswer, when nil, are the settings' (question_relay: timeout,
	// auto_answer_on_timeout, as WCOMM_* override them).
	Timeout    *time.Duration
	AutoAnswer *bool
	BindGit    bool
	// Dir is the worker's working folder (git binding, the hook); "": the folder whose settings
	// apply.
	Dir string
	// Action, when set, makes the one yes-no question an approval of this registered action
	// (actions.IntentOptions; its Settings and Dir are the ask's): its intent is prepared once
	// the relay is known to be on.
	Action *actions.IntentOptions
	// Again, when set, asks nothing: the call waits for the answers of questions asked before
	// (ask --wait), and every other field but Choices is unused.
	Again *Waiting
	// Choices are the call's own (--from, the enter delay of the QUESTION block's delivery).
	Choices
}

// Ask asks a.Questions with the settings' defaults: their timeout and auto-answer, the cap of
// questions per task, the question hook. When the settings turn the question relay off, nothing is
// asked: off holds each question's answer (the worker decides alone) and res is nil. With
// a.Again it asks nothing and waits for the answers of questions asked before instead.
func (e *Engine) Ask(ctx context.Context, a Asking) (res *questions.AskResult, off []messages.Answer, err error) {
	e, err = e.call(ctx, a.Choices, "")
	if err != nil {
		return nil, nil, err
	}
	if a.Again != nil {
		res, err = e.waitAgain(ctx, *a.Again)
		return res, nil, err
	}
	s := e.Settings
	if off := RelayOff(s, a.Questions); off != nil {
		return nil, off, nil
	}
	timeout, auto := s.QuestionTimeout, s.AutoAnswer
	if a.Timeout != nil {
		timeout = *a.Timeout
	}
	if a.AutoAnswer != nil {
		auto = *a.AutoAnswer
	}
	if a.Dir == "" {
		a.Dir = e.cfg.AskedIn
	}
	var intent *messages.Intent
	if a.Action != nil {
		o := *a.Action
		o.Settings, o.Dir = s, a.Dir
		if intent, err = e.registry.PrepareIntent(ctx, o); err != nil {
			return nil, nil, err
		}
	}
	res, err = e.desk.Ask(ctx, questions.AskOptions{
		Questions: a.Questions, Exchange: a.Exchange, To: a.To, Wait: a.Wait, Timeout: timeout,
		AutoAnswer: auto, MaxQuestions: s.MaxQuestions, BindGit: a.BindGit, Dir: a.Dir,
		Hook: s.OnQuestion, HookTimeout: s.OnQuestionTimeout, Intent: intent,
	})
	return res, nil, err
}

// Waiting picks up questions asked before (non-blocking, or by an ask that was stopped).
type Waiting struct {
	// IDs are the questions' ids, or ends of them.
	IDs []string
	// Timeout and AutoAnswer, when set, replace the questions' own.
	Timeout    *time.Duration
	AutoAnswer *bool
	// Afresh bounds the wait from now as a blocking ask is: by Timeout, else by the settings'
	// timeout and auto-answer (a question asked non-blocking never expires by its age). Without
	// it the questions keep their own deadlines unless Timeout is given, for a caller that waits
	// in bounded calls, again and again, until the answer comes.
	Afresh bool
}

// waitAgain waits for the answers of w.IDs as Ask does, with the settings' defaults.
func (e *Engine) waitAgain(ctx context.Context, w Waiting) (*questions.AskResult, error) {
	ids := make([]string, len(w.IDs))
	for i, ref := range w.IDs {
		id, err := e.desk.QuestionID(ref)
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	o := questions.WaitOptions{IDs: ids, AutoAnswer: w.AutoAnswer, TimeoutSet: w.Timeout != nil || w.Afresh}
	if w.Timeout != nil {
		o.Timeout = *w.Timeout
	} else if w.Afresh {
		o.Timeout = e.Settings.QuestionTimeout
	}
	if w.Afresh && o.AutoAnswer == nil {
		auto := e.Settings.AutoAnswer
		o.AutoAnswer = &auto
	}
	return e.desk.WaitQuestions(ctx, o)
}

// Task is the task an ask is about: given, else $WCOMM_TASK, else the id of the request the
// question is about (exchange, or the newest one addressed to the caller's pane). With none of
// them, the call lacks its task (NeedTask, class usage). ch are the ask's choices (its --from).
func (e *Engine) Task(ctx context.Context, given, exchange string, ch Choices) (string, error) {
	if given != "" {
		return given, nil
	}
	getenv := e.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if t := getenv("WCOMM_TASK"); t != "" {
		return t, nil
	}
	in, err := e.call(ctx, ch, "")
	if err != nil {
		return "", err
	}
	x, err := in.book.WorkingOn(ctx, exchange)
	if errors.Is(err, store.ErrUnsafeRoot) {
		return "", err // the root is refused, as by every command, not the call's words
	}
	if err != nil {
		return "", core.NeedUsagef(core.NeedTask, "ask needs a task: no request addressed to your pane names the task (%v)", err)
	}
	return x.ID, nil
}
