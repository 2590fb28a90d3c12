package questions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

// AskOptions are the inputs of one ask.
type AskOptions struct {
	Questions []messages.Question
	// Exchange ties the questions to this request (id or path). "" = the newest unanswered request
	// addressed to the caller's pane, or, when there is none, the pair's folder with To.
	Exchange string
	// To names the orchestrator (pane id, target or agent) when no request ties the question.
	To    string
	Scope paneops.Scope
	// Wait makes the ask block until every question is decided or Timeout passes.
	Wait         bool
	Timeout      time.Duration // 0: no limit
	AutoAnswer   bool          // on timeout, take the first option
	MaxQuestions int           // per worker pane per task
	BindGit      bool
	Dir          string // the worker's working folder (git binding, hook)
	Hook         []string
	HookTimeout  time.Duration
	// Intent, when set, makes the one yes-no question an approval of a registered action: the
	// intent is stored beside the question before anyone can answer it (see PrepareIntent).
	Intent *messages.Intent
}

// AskResult is what an ask did.
type AskResult struct {
	Questions []*QuestionStatus `json:"questions"`
	// Delivered is true when the QUESTION blocks reached the orchestrator's pane.
	Delivered bool `json:"delivered"`
	// Queued is true when they wait in the orchestrator's outbox for its pane to be ready.
	Queued   bool     `json:"queued,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// place is where a question lives and whom it goes to.
type place struct {
	dir    string
	sess   messages.Session
	orch   messages.PaneID
	x      *exchange.Exchange
	server string
	socket string
}

// questionPlace finds the session folder of the caller's questions: the tied exchange's, or the
// pair's (created as send creates it).
func (d *Desk) questionPlace(ctx context.Context, root string, o AskOptions) (*place, error) {
	srv, err := d.Tmux.ServerInfo(ctx)
	if err != nil {
		return nil, fmt.Errorf("no tmux server to relay the question through: %w", err)
	}
	fromExchange := func(x *exchange.Exchange) (*place, error) {
		if x.Worker != d.Self {
			return nil, fmt.Errorf("request %s is addressed to pane %s, not to your pane %s; ask from the worker's pane", x.ID, x.Worker, d.Self)
		}
		if x.Status == exchange.StatusAnswered {
			return nil, store.Kindf(core.ErrStale, "request %s is already answered; a question about it would be stale", x.ID)
		}
		p := &place{dir: x.Dir, orch: x.Orchestrator, x: x, server: srv.Key(), socket: srv.Socket}
		p.sess, _ = messages.ParseSessionName(filepath.Base(x.Dir))
		if m, err := exchange.ReadMeta(x.Dir); err == nil {
			p.server, p.socket = m.Server, m.Socket
			if m.Relayed {
				// Its orchestrator pane is on another host: a pane of the same id here is someone
				// else's, and questions do not cross hosts (package relay).
				return nil, store.Kindf(core.ErrStale, "request %s came from an orchestrator on another host, which questions do not reach", x.ID)
			}
		}
		if p.server != srv.Key() {
			return nil, store.Kindf(core.ErrStale, "request %s came through a tmux server that has since restarted; its orchestrator pane %s is gone", x.ID, x.Orchestrator)
		}
		return p, nil
	}
	if o.Exchange != "" {
		x, err := d.Locate(ctx, o.Exchange, exchange.RoleWorker)
		if err != nil {
			return nil, err
		}
		return fromExchange(x)
	}
	var orch paneops.Pane
	if o.To != "" {
		orch, err = d.Resolve(ctx, o.To, o.Scope, false)
		if err != nil {
			return nil, err
		}
		if orch.ID == d.Self {
			return nil, core.Needf(core.NeedOrchestrator, nil, "%s is your own pane; name the orchestrator's pane", orch.ID)
		}
	}
	x, err := d.Locate(ctx, "", exchange.RoleWorker)
	switch {
	case err == nil && (o.To == "" || x.Orchestrator == orch.ID):
		return fromExchange(x)
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return nil, err
	case o.To == "":
		return nil, core.Needf(core.NeedOrchestrator, store.ErrNotFound, "no unanswered request is addressed to pane %s, so there is no orchestrator to ask; name the orchestrator's pane or the request the question is about", d.Self)
	}
	dir, sess, err := d.OpenSession(root, orch.ID, d.Self, srv.Key(), srv.Socket)
	if err != nil {
		return nil, err
	}
	return &place{dir: dir, sess: sess, orch: orch.ID, server: srv.Key(), socket: srv.Socket}, nil
}

// Ask stores the questions in the session folder, pastes their QUESTION blocks into the
// orchestrator's pane, runs the on_question hook and, with Wait, waits for the answers. The
// result lists every question with its state; the error says why some have no answer (it wraps
// ErrTimeout, ErrNoAnswer or ErrUndelivered) and ends with BestJudgment.
func (d *Desk) Ask(ctx context.Context, o AskOptions) (*AskResult, error) {
	root, err := d.RootDir(true)
	if err != nil {
		return nil, err
	}
	if d.Self == "" {
		return nil, d.NeedOwnPane(ctx, "ask from the worker's pane, or name the pane you ask for")
	}
	if _, err := messages.ParsePaneID(string(d.Self)); err != nil {
		return nil, fmt.Errorf("own pane %q: %w", messages.SanitizeField(string(d.Self)), err)
	}
	if len(o.Questions) == 0 {
		return nil, fmt.Errorf("no question to ask")
	}
	qs := make([]messages.Question, len(o.Questions))
	for i, q := range o.Questions {
		q = q.Normalized()
		q.ID = ""
		if q.Type == messages.Permission {
			return nil, core.Usagef("a permission question is asked by an agent's PermissionRequest hook ('%s hook'), not by ask", d.Command)
		}
		if err := q.Validate(); err != nil {
			return nil, err
		}
		qs[i] = q
	}
	if o.MaxQuestions <= 0 {
		o.MaxQuestions = settings.DefaultMaxQuestions
	}
	if o.Intent != nil && (len(qs) != 1 || qs[0].Type != messages.YesNo) {
		return nil, fmt.Errorf("an action is approved by one yes-no question")
	}
	var git *GitBinding
	if o.BindGit {
		dir := o.Dir
		if dir == "" {
			dir, _ = os.Getwd()
		}
		g, err := gitFingerprint(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("--bind-git: %w", err)
		}
		git = &g
	}
	p, err := d.questionPlace(ctx, root, o)
	if err != nil {
		return nil, err
	}
	base := QuestionRecord{Worker: d.Self, Orchestrator: p.orch, Session: filepath.Base(p.dir), Server: p.server,
		Socket: p.socket, AskedAt: d.Now().UTC(), TimeoutSeconds: o.Timeout.Seconds(), AutoAnswer: o.AutoAnswer,
		MaxQuestions: o.MaxQuestions, Git: git, Channels: d.ChannelsKey, AskedIn: d.AskedIn}
	if p.x != nil {
		base.Exchange, base.ExchangeSeq = p.x.ID, p.x.Seq
	}
	if o.Intent != nil {
		// No timeout may approve an action on the person's behalf.
		base.Action, base.AutoAnswer = o.Intent.Action, false
	}
	// The wait locks are taken as each question is created, before anyone can learn its id, so
	// an answer that comes at once wakes this ask instead of being pasted into the pane.
	locks := &lockSet{}
	defer locks.release()
	sts, err := d.createQuestions(root, p.dir, base, qs, func(st *QuestionStatus) error {
		if o.Intent != nil {
			if err := writeIntent(st, *o.Intent); err != nil {
				return err
			}
		}
		if !o.Wait {
			return nil
		}
		return locks.take(st.WaitLock(), d.LockTimeout)
	})
	if err != nil {
		return nil, err
	}
	res := &AskResult{Questions: sts}
	var relayed []*QuestionStatus
	for _, st := range sts {
		st.deadline = st.QuestionRecord.deadline()
		st.limit = o.Timeout
		if st.State == QuestionPending {
			relayed = append(relayed, st)
		}
	}
	if len(relayed) == 0 {
		return res, nil
	}
	res.Warnings = append(res.Warnings, d.startBridge()...)
	derr := d.relayQuestions(ctx, root, p, relayed, res)
	reached := derr == nil
	if derr != nil {
		res.Warnings = append(res.Warnings, derr.Error())
	}
	if len(o.Hook) > 0 {
		for _, st := range relayed {
			if herr := d.runHook(ctx, o.Hook, o.HookTimeout, o.Dir, st); herr != nil {
				d.LogQ(st, qHookFailed, map[string]string{"error": herr.Error()})
				res.Warnings = append(res.Warnings, fmt.Sprintf("on_question for %s failed: %v", st.ID, herr))
			} else {
				d.LogQ(st, QHookRan, map[string]string{"command": o.Hook[0]})
				reached = true
			}
		}
	}
	if !reached {
		return res, core.Judgedf(core.ErrUnrelayed, "question %s is saved but reached nobody (%v); it stays pending and can still be answered with '%s answer %s ...'",
			ids(relayed), derr, d.Command, relayed[0].ID)
	}
	if !o.Wait {
		return res, nil
	}
	err = d.waitAnswers(ctx, relayed, nil)
	return res, d.settle(relayed, locks, err)
}

// startBridge starts the bridge to the answer channels, if any are configured and none runs.
// A failure is a warning: the question still reaches the orchestrator's pane.
func (d *Desk) startBridge() []string {
	if d.Helpers.Bridge == nil {
		return nil
	}
	err := d.Helpers.Bridge()
	switch {
	case errors.Is(err, core.ErrChannelsUnusable):
		// The settings are at fault: running the bridge by hand would fail the same way.
		return []string{fmt.Sprintf("%v; the question still reaches you by its other routes (your pane, '%s answer')", err, d.Command)}
	case err != nil:
		return []string{fmt.Sprintf("could not start the bridge to your answer channels (%v); run '%s bridge'", err, d.Command)}
	}
	return nil
}

func ids(sts []*QuestionStatus) string {
	s := make([]string, len(sts))
	for i, st := range sts {
		s[i] = st.ID
	}
	return strings.Join(s, ", ")
}

// lockSet holds the wait locks of one ask.
type lockSet struct{ unlocks []func() }

func (l *lockSet) take(path string, timeout time.Duration) error {
	u, err := lock.File(path, syscall.LOCK_SH, timeout)
	if err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	l.unlocks = append(l.unlocks, u)
	return nil
}

func (l *lockSet) release() {
	for _, u := range l.unlocks {
		u()
	}
	l.unlocks = nil
}

// createQuestions stores the questions under the root lock: the per-worker cap is counted, the
// sequence number claimed with link(2) and a question over the cap answered at once with
// DECIDED_BY cap-exceeded. onCreate runs for each stored question before the lock is released.
func (d *Desk) createQuestions(root, dir string, base QuestionRecord, qs []messages.Question, onCreate func(*QuestionStatus) error) ([]*QuestionStatus, error) {
	unlock, err := lock.File(filepath.Join(root, store.RootLockName), syscall.LOCK_EX, d.LockTimeout)
	if err != nil {
		return nil, fmt.Errorf("lock root %s: %w", root, err)
	}
	defer unlock()
	asked := map[string]int{}
	var out []*QuestionStatus
	for _, q := range qs {
		if _, ok := asked[q.Task]; !ok {
			asked[q.Task] = countAsked(root, base.Worker, base.Server, q.Task)
		}
		rec := base
		rec.Question = q
		st, err := d.claimQuestion(root, dir, rec)
		if err != nil {
			return out, err
		}
		if err := onCreate(st); err != nil {
			return out, err
		}
		if asked[q.Task] >= base.MaxQuestions && base.Permission == nil && q.Type != messages.Permission {
			a := AnswerRecord{ID: st.ID, TaskID: st.Task, Seq: st.Seq, DecidedBy: messages.DecidedByCap, Source: "wcomm",
				Answer: fmt.Sprintf("Question cap exceeded (at most %d questions per worker per task). Make the decision yourself and mark it \"assumed — needs review\" in your report.", base.MaxQuestions),
				Type:   st.Type, Form: "cap", At: d.Now().UTC()}
			if err := writeJSONExclusive(st.File(messages.SuffixAnswer), a); err != nil {
				return out, err
			}
			d.LogQ(st, QAccepted, map[string]string{"decided_by": messages.DecidedByCap})
			st.Refresh()
		} else {
			asked[q.Task]++
			d.LogQ(st, QAsked, map[string]string{"worker": string(base.Worker), "orchestrator": string(base.Orchestrator)})
		}
		out = append(out, st)
	}
	return out, nil
}
