package actions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
)

// DefaultActionTimeout bounds one action's run; its whole process group is killed then.
const DefaultActionTimeout = 30 * time.Minute

// Events of an intent, in its question's log (so watch shows them).
const (
	aClaimed  = "action-claimed"
	aExecuted = "action-executed"
	aFailed   = "action-failed"
	aBlocked  = "action-blocked"
)

// What a dispatcher did with one intent.
const (
	DidRun     = "ran"
	DidBlock   = "blocked"
	DidNothing = "skipped"
)

// ActionRun is what one dispatcher did with one intent.
type ActionRun struct {
	*ActionStatus
	Did string `json:"did"`
	// Note says why nothing was done, or what ran.
	Note string `json:"note,omitempty"`
}

// RunOptions are the inputs of RunActions.
type RunOptions struct {
	ActionsOptions
	DryRun  bool
	Timeout time.Duration // per action; 0: DefaultActionTimeout
}

// ErrNotRun: `actions run --id` named an intent that was not run now (blocked, denied, pending,
// already consumed or claimed by another dispatcher).
var ErrNotRun = errors.New("not run")

// RunActions is the dispatcher: each approved intent whose fingerprint still holds is claimed
// and run once; each stale one is claimed and blocked with its reasons, never run. DryRun
// reports what it would do and writes nothing. With an ID, an intent that was not run now is an
// error wrapping ErrNotRun; without, only a failed command is an error.
func (re *Registry) RunActions(ctx context.Context, o RunOptions) ([]*ActionRun, error) {
	list, _, err := re.Actions(ctx, o.ActionsOptions)
	if err != nil {
		return nil, err
	}
	var out []*ActionRun
	var failed []string
	for _, a := range list {
		r := &ActionRun{ActionStatus: a, Did: DidNothing}
		out = append(out, r)
		if o.DryRun {
			continue
		}
		switch a.Status {
		case ActionApproved, ActionStale:
			re.dispatch(ctx, r, o.Timeout)
			if r.Status == ActionFailed {
				failed = append(failed, a.ID)
			}
		default:
			r.Note = notRunNote(a)
		}
	}
	if o.ID != "" && !o.DryRun && len(out) == 1 && out[0].Did != DidRun {
		r := out[0]
		return out, fmt.Errorf("%s was not run: %s: %w", r.ID, r.Note, ErrNotRun)
	}
	if len(failed) > 0 {
		return out, fmt.Errorf("action of %s failed; its output is beside its intent ('wcomm actions --json' names it)", strings.Join(failed, ", "))
	}
	return out, nil
}

// notRunNote says why an intent needs no dispatch.
func notRunNote(a *ActionStatus) string {
	switch a.Status {
	case ActionPending:
		return "not approved yet"
	case ActionExecuted, ActionFailed:
		return fmt.Sprintf("already consumed: it ran at %s (exit %d); an approval runs once", a.Result.StartedAt.Local().Format(time.RFC3339), a.Result.ExitCode)
	case ActionBlocked:
		return "blocked: " + strings.Join(a.Reasons, "; ")
	}
	return a.Status + ": " + strings.Join(a.Reasons, "; ")
}

// dispatch claims one intent, then runs or blocks it as its reasons say.
func (re *Registry) dispatch(ctx context.Context, r *ActionRun, timeout time.Duration) {
	a := r.ActionStatus
	host, _ := os.Hostname()
	d := messages.Dispatch{Decision: messages.DecisionRun, PID: os.Getpid(), Host: host, At: re.Now().UTC()}
	if a.Status == ActionStale {
		d.Decision, d.Reasons = messages.DecisionBlock, a.Reasons
	}
	if err := store.WriteExclusive(a.q.File(messages.SuffixDispatch), messages.FormatDispatch(d)); err != nil {
		if errors.Is(err, store.ErrExists) {
			r.Note = "claimed by another dispatcher"
			if a.refresh() == nil && a.Dispatch != nil {
				r.Note += " (" + a.Dispatch.String() + ")"
			}
		} else {
			r.Note = err.Error()
		}
		return
	}
	a.Dispatch = &d
	if d.Decision == messages.DecisionBlock {
		re.LogQ(a.q, aBlocked, map[string]string{"reason": strings.Join(a.Reasons, "; ")})
		r.Did, a.Status, r.Note = DidBlock, ActionBlocked, "blocked: "+strings.Join(a.Reasons, "; ")
		return
	}
	re.LogQ(a.q, aClaimed, map[string]string{"action": a.Action, "pid": fmt.Sprint(d.PID)})
	res := re.execute(ctx, a, timeout)
	if err := store.WriteExclusive(a.q.File(messages.SuffixResult), messages.FormatActionResult(res)); err != nil {
		r.Note = fmt.Sprintf("ran, but its result could not be recorded: %v", err)
	}
	a.Result = &res
	a.Output = a.q.File(messages.SuffixOutput)
	r.Did, a.Status = DidRun, ActionExecuted
	if res.ExitCode != 0 {
		a.Status = ActionFailed
		a.Reasons = []string{res.Error}
		re.LogQ(a.q, aFailed, map[string]string{"action": a.Action, "exit": fmt.Sprint(res.ExitCode), "reason": res.Error})
		return
	}
	re.LogQ(a.q, aExecuted, map[string]string{"action": a.Action, "exit": "0"})
}

// execute runs the intent's argv (no shell) in its folder, stdin empty, stdout and stderr into
// the output file beside the intent, in its own process group, bounded by timeout.
func (r *Registry) execute(ctx context.Context, a *ActionStatus, timeout time.Duration) messages.ActionResult {
	if timeout <= 0 {
		timeout = DefaultActionTimeout
	}
	name := messages.QuestionFileName(a.q.Task, a.q.Seq, messages.SuffixOutput)
	res := messages.ActionResult{StartedAt: r.Now().UTC(), ExitCode: -1, Output: name}
	finish := func(msg string) messages.ActionResult {
		res.EndedAt, res.Error = r.Now().UTC(), msg
		return res
	}
	out, err := os.OpenFile(a.q.File(messages.SuffixOutput), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, store.FileMode)
	if err != nil {
		res.Output = ""
		return finish(fmt.Sprintf("cannot create the output file: %v", err))
	}
	defer out.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	def := a.Definition
	if def.Hash() != a.DefinitionHash || len(def.Run) == 0 {
		// Checked by changes before the claim; again here, from the argv about to run.
		return finish("not run: the command does not hash to the approved definition")
	}
	cmd := exec.CommandContext(ctx, def.Run[0], def.Run[1:]...)
	cmd.Dir = def.Dir
	cmd.Stdout, cmd.Stderr = out, out
	targets := make([]string, len(a.Targets))
	for i, t := range a.Targets {
		targets[i] = t.Path
	}
	cmd.Env = append(os.Environ(), "WCOMM_ACTION="+a.Action, "WCOMM_INTENT_ID="+a.ID, "WCOMM_ACTION_TARGETS="+strings.Join(targets, "\n"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return finish(fmt.Sprintf("%s did not finish within %s and was killed", def.Run[0], timeout))
	case ctx.Err() != nil:
		return finish(fmt.Sprintf("%s was interrupted: %v", def.Run[0], ctx.Err()))
	case errors.As(err, &ee) && ee.Exited():
		res.ExitCode = ee.ExitCode()
		return finish(fmt.Sprintf("%s exited %d", def.Run[0], res.ExitCode))
	case err != nil:
		return finish(fmt.Sprintf("%s: %v", def.Run[0], err))
	}
	res.ExitCode = 0
	return finish("")
}
