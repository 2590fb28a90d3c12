package prompts

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// Codex's approvals through its own door. For every pane whose Codex TUI has an app-server (its
// daemon), one watch follows the TUI's thread (door.CodexFollower): each approval request becomes
// a permission question in that pane's name; the first answer from a channel is replied through
// the app-server, which closes the TUI's dialog; an answer the person gives in the TUI first is
// told by the app-server (the request resolved, the item's status saying which way) and ends the
// question as answered at the terminal. Nothing is ever typed into the pane.

// Events of a Codex approval's question log, after the answer was handed over (decision-returned).
const (
	// QApplied: the decision was replied through the app-server and counted.
	QApplied = "decision-applied"
	// QNotApplied: it was not replied, or Codex kept another answer (the person's in the TUI).
	QNotApplied = "decision-not-applied"
	// QMessage: a deny's message was sent into the thread as the person's message.
	QMessage = "message-delivered"
)

// Retry pauses of a pane's watch: a TUI's thread cannot be followed before its first message (the
// app-server has no rollout of it yet), so that is tried again soon; a pane without a door (no
// daemon, several threads that cannot be told apart) is looked at again more slowly.
const (
	codexRetrySoon = time.Second
	codexRetryLate = 5 * time.Second
	// codexAliveEvery is how often a followed TUI is checked to still run: its daemon outlives it
	// and keeps its thread, so the connection does not tell.
	codexAliveEvery = time.Second
	// codexSettle bounds the wait for the app-server to say what became of a reply.
	codexSettle = 10 * time.Second
	// codexItemLag is how long a resolution without the item's status is still taken as
	// undecided: a decline's item completes within a millisecond of it, an accepted command's only
	// when the command ends.
	codexItemLag = 300 * time.Millisecond
)

// errSentryStopped ends the questions of a sentry that stops: nothing answers them then.
var errSentryStopped = errors.New("wcomm stopped watching Codex's approvals (the console or bridge ended); the dialog stays in the pane")

// codexWatches are the Codex panes whose thread is followed for approvals: one watch a pane.
type codexWatches struct {
	mu    sync.Mutex
	panes map[messages.PaneID]*codexWatch
}

// codexWatch follows one pane's Codex for as long as the pane runs the same process.
type codexWatch struct {
	panePID int
	stop    context.CancelCauseFunc
	done    chan struct{}
	stopped bool
}

// lookCodex follows the thread of every Codex pane with a door, and stops following those gone.
func (s *Sentry) lookCodex(ctx context.Context, panes []fleet.FleetPane) {
	w := &s.codex
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.panes == nil {
		w.panes = map[messages.PaneID]*codexWatch{}
	}
	live := map[messages.PaneID]fleet.FleetPane{}
	for _, p := range panes {
		if p.Agent == "codex" && !p.Dead && p.PID > 0 {
			live[p.ID] = p
		}
	}
	for id, cw := range w.panes {
		p, ok := live[id]
		switch {
		case !ok && !cw.stopped:
			cw.stopped = true
			cw.stop(fmt.Errorf("pane %s no longer runs Codex; the dialog's question ends with it", id))
		case ok && p.PID != cw.panePID && !cw.stopped:
			cw.stopped = true
			cw.stop(fmt.Errorf("pane %s runs another process now; the dialog's question ends with the old one", id))
		}
		select {
		case <-cw.done:
			delete(w.panes, id)
		default:
		}
	}
	if ctx.Err() != nil {
		return
	}
	for id, p := range live {
		if w.panes[id] != nil {
			continue // followed, or its old watch still ending: never two
		}
		pctx, stop := context.WithCancelCause(context.WithoutCancel(ctx))
		unhook := context.AfterFunc(ctx, func() { stop(errSentryStopped) })
		cw := &codexWatch{panePID: p.PID, stop: stop, done: make(chan struct{})}
		w.panes[id] = cw
		s.spawn(func() {
			defer close(cw.done)
			defer unhook()
			defer stop(nil)
			s.watchCodex(pctx, p)
		})
	}
}

// watchCodex follows pane p's Codex TUI until ctx ends: found and followed again whenever the
// follower is lost (a new thread, a restarted daemon).
func (s *Sentry) watchCodex(ctx context.Context, p fleet.FleetPane) {
	lastWhy := ""
	for ctx.Err() == nil {
		fl, why, soon := s.followCodex(ctx, p)
		if fl == nil {
			if why != lastWhy {
				s.logf("prompts: pane %s: Codex's approvals are not followed yet: %s", p.ID, why)
				lastWhy = why
			}
			pause := codexRetryLate
			if soon {
				pause = codexRetrySoon
			}
			t := time.NewTimer(pause)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
			continue
		}
		lastWhy = ""
		fd := fl.Finding()
		s.logf("prompts: pane %s: following thread %s of Codex TUI %d for its approvals", p.ID, fd.Thread, fd.PID)
		s.serveCodex(ctx, p, fl)
		fl.Close()
	}
}

// followCodex finds pane p's door and follows its thread; else why not, and whether to try again
// soon (a thread not yet resumable).
func (s *Sentry) followCodex(ctx context.Context, p fleet.FleetPane) (*door.CodexFollower, string, bool) {
	det, err := s.Finder.Detect(ctx, p.Pane, "codex")
	if err != nil {
		return nil, err.Error(), false
	}
	fd := s.Finder.Route(ctx, p.Pane, det)
	if fd.Door != door.CodexAppServer || !fd.UsesSocket() {
		return nil, fd.Why, false
	}
	fl, err := s.Finder.Door.FollowCodex(ctx, fd)
	if err != nil {
		return nil, err.Error(), true
	}
	return fl, "", false
}

// serveCodex opens a question for each approval fl hands out, until fl stops, its TUI ends or ctx
// ends; the questions still waiting then end with the reason.
func (s *Sentry) serveCodex(ctx context.Context, p fleet.FleetPane, fl *door.CodexFollower) {
	fctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	alive := time.NewTicker(codexAliveEvery)
	defer alive.Stop()
	fd := fl.Finding()
	for {
		select {
		case a := <-fl.Approvals():
			s.spawn(func() { s.codexApproval(fctx, p, fl, a) })
		case <-fl.Done():
			cancel(fmt.Errorf("wcomm lost its connection to Codex's app-server (%v); the dialog stays in the pane", fl.Err()))
			return
		case <-alive.C:
			if !s.Finder.Door.Alive(fd) {
				cancel(fmt.Errorf("the Codex TUI %d in pane %s has ended", fd.PID, p.ID))
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// codexApproval asks the person about approval a of pane p's Codex and applies the first answer.
func (s *Sentry) codexApproval(ctx context.Context, p fleet.FleetPane, fl *door.CodexFollower, a door.CodexApproval) {
	defer fl.Forget(a)
	req := codexRequest(a, fl.Finding().PID)
	w, err := s.Asker.AskPermissionIn(ctx, p.ID, req)
	if err != nil {
		s.logf("prompts: pane %s: Codex asks to run %s; no question could be opened (%v): the dialog waits in the pane", p.ID, req.Summary(80), err)
		return
	}
	defer w.Close()
	s.logf("prompts: pane %s: Codex's approval %s is question %s", p.ID, req.Summary(80), w.Question.ID)
	out, err := w.Await(ctx, questions.AwaitOptions{Terminal: &codexTerminal{fl: fl, a: a}})
	if err != nil {
		s.logf("prompts: question %s: %v", w.Question.ID, err)
	}
	if out == nil || out.Decision == nil {
		return // answered at the terminal, or expired: Codex's dialog decided or still decides
	}
	answer, message := "", ""
	if ans := out.Question.Answer; ans != nil {
		answer, message = ans.Answer, ans.Message
	}
	decision := codexDecision(answer, a)
	log := func(state string, detail map[string]string) {
		if err := w.Log(state, detail); err != nil {
			s.logf("prompts: question %s: its log: %v", w.Question.ID, err)
		}
	}
	if err := fl.Answer(ctx, a, decision); err != nil {
		why := err.Error()
		if errors.Is(err, door.ErrCodexResolved) {
			why = "answered in Codex's TUI before this answer could be sent: Codex keeps that answer, this one was not sent"
		}
		log(QNotApplied, map[string]string{"decision": decision, "why": why})
		s.logf("prompts: question %s: %s not applied: %s", w.Question.ID, decision, why)
		return
	}
	got := codexSettled(ctx, fl, a, decision)
	applied, why := codexApplied(decision, got)
	detail := map[string]string{"decision": decision, "via": "app-server", "item": got.ItemStatus}
	if !applied {
		detail["why"] = why
		log(QNotApplied, detail)
		s.logf("prompts: question %s: %s not applied: %s", w.Question.ID, decision, why)
		return
	}
	log(QApplied, detail)
	if decision != door.CodexDecline || strings.TrimSpace(message) == "" {
		return
	}
	// A reply to an approval carries no message: the model sees only that the person rejected
	// the command. The message goes into the thread as the person's next words, which the
	// app-server steers into the running turn (or starts a turn with, when it has ended).
	text := fmt.Sprintf("I declined running `%s` (answered from wcomm): %s", oneLine(req.Subject, 200), message)
	if err := fl.Say(ctx, text); err != nil {
		log(QMessage+"-failed", map[string]string{"why": err.Error()})
		s.logf("prompts: question %s: the deny's message did not reach Codex: %v", w.Question.ID, err)
		return
	}
	log(QMessage, map[string]string{"via": "turn/start"})
}

// codexRequest is the permission request of approval a of the Codex TUI pid.
func codexRequest(a door.CodexApproval, pid int) messages.PermissionRequest {
	req := messages.PermissionRequest{Agent: "codex", Tool: "Bash", Subject: a.Command, Description: a.Reason,
		Input: a.Params, SessionID: a.ThreadID, Cwd: a.Cwd, PID: pid}
	if a.Kind == door.CodexFileChange {
		req.Tool, req.Subject = "Edit", strings.Join(a.Files, "\n")
		if req.Subject == "" {
			req.Subject = "a change of files"
		}
	}
	if len(req.Subject) > messages.MaxPermissionSubject {
		req.Subject = req.Subject[:messages.MaxPermissionSubject] + "\n… (cut: longer than 64 KiB)"
	}
	// "always" is the agent's session rule or nothing: Codex offers a command a lasting rule
	// (an execpolicy amendment written to its config), which is broader than this session.
	if !a.Offers(door.CodexAcceptForSession) {
		req.Answers = []string{messages.PermAllow, messages.PermDeny}
	}
	return req
}

// codexDecision is the reply for a person's answer.
func codexDecision(answer string, a door.CodexApproval) string {
	switch answer {
	case messages.PermAlways:
		if a.Offers(door.CodexAcceptForSession) {
			return door.CodexAcceptForSession
		}
		return door.CodexAccept
	case messages.PermDeny:
		return door.CodexDecline
	}
	return door.CodexAccept
}

// codexSettled waits, within codexSettle, until the app-server has said what became of the reply:
// resolved, and for a decline the item's status (an accepted command's comes when it ends).
func codexSettled(ctx context.Context, fl codexState, a door.CodexApproval, decision string) door.CodexOutcome {
	t := time.NewTimer(codexSettle)
	defer t.Stop()
	for {
		out, changed := fl.Outcome(a)
		if out.ItemStatus != "" || out.Resolved && decision != door.CodexDecline {
			return out
		}
		select {
		case <-changed:
			select {
			case <-fl.Done():
				out, _ = fl.Outcome(a)
				return out
			default:
			}
		case <-t.C:
			out, _ = fl.Outcome(a)
			return out
		case <-ctx.Done():
			out, _ = fl.Outcome(a)
			return out
		}
	}
}

// codexApplied says whether the reply decision counted, from what the app-server said after it.
func codexApplied(decision string, out door.CodexOutcome) (bool, string) {
	switch {
	case !out.Resolved:
		return false, "sent, but Codex did not say the approval was resolved; whether it counted is not known"
	case out.ResolvedFirst:
		return false, "answered in Codex's TUI first: Codex keeps that answer"
	case out.ItemStatus == "":
		return true, "" // accepted: the command runs
	case out.Ran() != (decision != door.CodexDecline):
		ran := "did not run"
		if out.Ran() {
			ran = "ran"
		}
		return false, fmt.Sprintf("answered in Codex's TUI at the same moment: Codex kept that answer (the command %s: %s)", ran, out.ItemStatus)
	}
	return true, ""
}

// codexTerminal is the TUI's side of an approval as the app-server tells it: waiting until the
// request is resolved by another client (the person in the TUI), then busy when the item ran,
// idle when it was declined.
type codexTerminal struct {
	fl     codexState
	a      door.CodexApproval
	looked bool
}

// codexState is what is read of a follower: its end, and what became of a request.
type codexState interface {
	Done() <-chan struct{}
	Err() error
	Outcome(a door.CodexApproval) (door.CodexOutcome, <-chan struct{})
}

// Status implements questions.Terminal.
func (t *codexTerminal) Status() (string, int64, error) {
	select {
	case <-t.fl.Done():
		return "", 0, fmt.Errorf("the app-server connection is gone: %w", t.fl.Err())
	default:
	}
	out, _ := t.fl.Outcome(t.a)
	if !t.looked || !out.Resolved {
		// The request was pending when it came: the first look says so, however fast the
		// person was, so that the answer after it is seen as an answer.
		t.looked = true
		return questions.StatusWaiting, 1, nil
	}
	switch {
	case out.ItemStatus == "" && time.Since(out.ResolvedAt) < codexItemLag:
		return questions.StatusWaiting, 1, nil
	case out.ItemStatus == "" || out.Ran():
		return "busy", 2, nil
	}
	return "idle", 2, nil
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}
