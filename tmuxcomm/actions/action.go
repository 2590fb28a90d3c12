package actions

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// Action statuses.
const (
	ActionPending     = "pending"     // not answered yet
	ActionApproved    = "approved"    // yes, fresh, not run yet
	ActionStale       = "stale"       // yes, but the state it approved changed; not claimed yet
	ActionBlocked     = "blocked"     // a dispatcher refused it, with reasons; never runs
	ActionDenied      = "denied"      // no, or closed without a yes
	ActionRunning     = "running"     // claimed by a dispatcher that is still alive
	ActionInterrupted = "interrupted" // claimed by a dispatcher that died before recording a result
	ActionExecuted    = "executed"    // ran and exited 0
	ActionFailed      = "failed"      // ran and failed
)

// AdvisoryAge is the age after which a listing points out that an approval is old. Advisory only:
// validity is the fingerprint's, never the clock's.
const AdvisoryAge = 48 * time.Hour

// ActionStatus is one intent with its status as the files and the world say.
type ActionStatus struct {
	messages.Intent
	ID       string                  `json:"id"` // the question's id, which is the intent's
	Status   string                  `json:"status"`
	Stale    bool                    `json:"stale"`
	Reasons  []string                `json:"reasons"` // why stale, blocked, denied, failed or interrupted
	Question string                  `json:"question"`
	Answer   *questions.AnswerRecord `json:"answer,omitempty"` // the acceptance: time and source
	Dispatch *messages.Dispatch      `json:"dispatch,omitempty"`
	Result   *messages.ActionResult  `json:"result,omitempty"`
	// Output is the path of the command's output, once it ran.
	Output string `json:"output,omitempty"`
	// Age is how long ago it was approved (or asked, while pending); Old past AdvisoryAge.
	Age        time.Duration `json:"-"`
	AgeSeconds int64         `json:"age_seconds"`
	Old        bool          `json:"advisory_old"`

	q *questions.QuestionStatus
}

// ActionsOptions are the inputs of Actions and RunActions.
type ActionsOptions struct {
	// Getenv finds the user's trust list and config (os.Getenv).
	Getenv func(string) string
	// ID, when set, selects one intent by its question's id.
	ID string
}

// Actions lists every intent under the root with its status, oldest first, and names the files
// it could not read.
func (re *Registry) Actions(ctx context.Context, o ActionsOptions) ([]*ActionStatus, []string, error) {
	root, found, err := re.ReadRoot()
	if err != nil || !found {
		return nil, nil, err
	}
	refs, err := questions.QuestionRefs(root)
	if err != nil {
		return nil, nil, err
	}
	var out []*ActionStatus
	var problems []string
	for _, r := range refs {
		path := filepath.Join(r.Dir, messages.QuestionFileName(r.Task, r.Seq, messages.SuffixIntent))
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		a, err := re.loadAction(r)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out = append(out, a)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	settings := map[string]*loadedSettings{}
	for i, a := range out {
		re.judgeAction(ctx, a, out[i+1:], settings, o.Getenv)
		if a.Reasons == nil {
			a.Reasons = []string{}
		}
	}
	if o.ID != "" {
		for _, a := range out {
			if a.ID == o.ID {
				return []*ActionStatus{a}, problems, nil
			}
		}
		return nil, problems, store.Kindf(store.ErrNotFound, "no approved-action intent %s under %s; run 'wcomm actions' to list them", o.ID, root)
	}
	return out, problems, nil
}

// loadAction reads one intent and the records beside it.
func (re *Registry) loadAction(r questions.Qref) (*ActionStatus, error) {
	q, err := questions.LoadQuestion(r.Dir, r.Task, r.Seq)
	if err != nil {
		return nil, err
	}
	path := q.File(messages.SuffixIntent)
	data, err := store.ReadFile(path)
	if err != nil {
		return nil, err
	}
	in, err := messages.ParseIntent(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if in.QuestionID != q.ID {
		return nil, fmt.Errorf("%s: it names question %s, not %s", path, messages.SanitizeTaskID(in.QuestionID), q.ID)
	}
	a := &ActionStatus{Intent: in, ID: q.ID, Question: q.Text, q: q}
	if err := a.refresh(); err != nil {
		return nil, err
	}
	return a, nil
}

// refresh re-reads the question's answer and the dispatch and result files.
func (a *ActionStatus) refresh() error {
	a.q.Refresh()
	a.Answer, a.Dispatch, a.Result, a.Output = a.q.Answer, nil, nil, ""
	if data, err := store.ReadFile(a.q.File(messages.SuffixDispatch)); err == nil {
		d, err := messages.ParseDispatch(data)
		if err != nil {
			return fmt.Errorf("%s: %w", a.q.File(messages.SuffixDispatch), err)
		}
		a.Dispatch = &d
	}
	if data, err := store.ReadFile(a.q.File(messages.SuffixResult)); err == nil {
		r, err := messages.ParseActionResult(data)
		if err != nil {
			return fmt.Errorf("%s: %w", a.q.File(messages.SuffixResult), err)
		}
		a.Result = &r
		if r.Output != "" {
			a.Output = filepath.Join(a.q.Dir, r.Output)
		}
	}
	return nil
}

// approved reports whether the question got a person's yes.
func (a *ActionStatus) approved() bool {
	return a.Answer != nil && a.Answer.DecidedBy == messages.DecidedByUser && a.Answer.Answer == "yes"
}

// judgeAction sets the status, the reasons and the advisory age. newer are the intents created
// after this one: one of the same action in the same folder supersedes it.
func (r *Registry) judgeAction(ctx context.Context, a *ActionStatus, newer []*ActionStatus, settings map[string]*loadedSettings, getenv func(string) string) {
	now := r.Now()
	since := a.CreatedAt
	if a.Answer != nil {
		since = a.Answer.At
	}
	a.Age = now.Sub(since)
	a.AgeSeconds = int64(a.Age / time.Second)
	a.Old = a.Age > AdvisoryAge
	a.Stale, a.Reasons = false, nil
	switch {
	case a.Result != nil:
		a.Status = ActionExecuted
		if a.Result.ExitCode != 0 {
			a.Status = ActionFailed
			if a.Result.Error != "" {
				a.Reasons = []string{a.Result.Error}
			} else {
				a.Reasons = []string{fmt.Sprintf("the command exited %d", a.Result.ExitCode)}
			}
		}
		return
	case a.Dispatch != nil && a.Dispatch.Decision == messages.DecisionBlock:
		a.Status, a.Stale, a.Reasons = ActionBlocked, true, a.Dispatch.Reasons
		return
	case a.Dispatch != nil:
		d := a.Dispatch
		if processAlive(d.PID, d.Host) {
			a.Status = ActionRunning
			a.Reasons = []string{fmt.Sprintf("dispatcher pid %d claimed it at %s and is still running it", d.PID, d.At.Local().Format(time.RFC3339))}
		} else {
			a.Status = ActionInterrupted
			a.Reasons = []string{fmt.Sprintf("dispatcher pid %d claimed it at %s and ended before recording a result; whether the command ran, or finished, is unknown; it is never run again: check its effects and ask again if it is still wanted", d.PID, d.At.Local().Format(time.RFC3339))}
		}
		return
	}
	switch {
	case a.approved():
		a.Status = ActionApproved
	case a.q.State == questions.QuestionPending:
		a.Status = ActionPending
	default:
		a.Status = ActionDenied
		a.Reasons = []string{deniedReason(a.q)}
		return
	}
	for _, n := range newer {
		if n.Action == a.Action && n.Definition.Dir == a.Definition.Dir {
			a.Reasons = append(a.Reasons, fmt.Sprintf("superseded by %s, asked later for the same action", n.ID))
			break
		}
	}
	a.Reasons = append(a.Reasons, r.changes(ctx, a.Intent, settings, getenv)...)
	if len(a.Reasons) > 0 {
		a.Stale = true
		if a.Status == ActionApproved {
			a.Status = ActionStale
		}
	}
}

// deniedReason says why a decided question approved nothing.
func deniedReason(q *questions.QuestionStatus) string {
	switch {
	case q.Answer != nil && q.Answer.DecidedBy == messages.DecidedByUser:
		return fmt.Sprintf("the approval was denied: answered %q (source %s, at %s)", q.Answer.Answer, q.Answer.Source, q.Answer.At.Local().Format(time.RFC3339))
	case q.Answer != nil:
		return fmt.Sprintf("no one approved it: decided by %s", q.Answer.DecidedBy)
	case q.Resolved != nil:
		return fmt.Sprintf("the question was resolved without an answer (%s)", q.Resolved.Reason)
	}
	return fmt.Sprintf("the question is %s: %s", q.State, q.Reason)
}

// processAlive reports whether pid still runs on this host.
func processAlive(pid int, host string) bool {
	if h, _ := os.Hostname(); host != "" && host != h {
		// Another machine's dispatcher: nothing here can tell; assume it runs.
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
