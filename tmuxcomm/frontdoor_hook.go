package tmuxcomm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// PermissionHook is an agent's PermissionRequest hook: data is the hook's JSON input. It records
// the request as a question for the person (questions/permission.go), waits up to wait for its
// first answer and returns the agent's decision as the agent reads it on the hook's stdout; nil
// when the question ends otherwise, so that the agent's own dialog decides. The agent's session
// file, found among this process's ancestors, is how an answer given in the pane is seen;
// without it the question still waits, and warn says so, as it says every other problem that does
// not stop the hook, when it is found.
func (e *Engine) PermissionHook(ctx context.Context, agent string, data []byte, wait time.Duration, warn func(string)) ([]byte, error) {
	if err := e.HookPane(ctx); err != nil {
		return nil, err
	}
	var in messages.HookInput
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("hook input is not JSON: %w", err)
	}
	rec := profile.HookAgent(agent)
	if rec == nil || rec.Hooks.Kind(in.Event) != profile.HookPermission {
		return nil, fmt.Errorf("event %q is not a permission prompt of %s: %w", messages.SanitizeField(in.Event), messages.SanitizeField(agent), messages.ErrSyntax)
	}
	req, err := messages.ParsePermissionRequest(agent, in)
	if err != nil {
		return nil, err
	}
	var term questions.Terminal
	if t, err := proc.Scan(); err == nil {
		if sf, err := (door.Finder{}).SessionFile(in.SessionID, t.Ancestors(os.Getpid())); err == nil {
			req.PID, term = sf.PID, sf
		} else {
			warn(fmt.Sprintf("%v; an answer given in the pane is not seen", err))
		}
	}
	w, warnings, err := e.AskPermission(ctx, req)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	for _, s := range warnings {
		warn(s)
	}
	out, err := w.Await(ctx, questions.AwaitOptions{Wait: wait, Terminal: term})
	if err != nil || out.Decision == nil {
		return nil, err
	}
	return messages.FormatDecision(rec.Hooks.Decision, *out.Decision)
}

// ErrNotOwnPane is the error of a hook or command that names a pane it does not run in.
var ErrNotOwnPane = questions.ErrNotOwnPane

// HookPane checks that an agent's hook runs in the pane it names ($TMUX_PANE) before it asks the
// person, takes the pane's mail or tells its channels anything in that pane's name: a process
// elsewhere that sets the variable would otherwise ask in the pane's name, and the reply to its
// notice would be typed into that pane. The error wraps questions.ErrNotOwnPane.
func (e *Engine) HookPane(ctx context.Context) error {
	if err := e.OwnPane(ctx); err != nil {
		return fmt.Errorf("refused to act in pane %s's name (nothing asked, nothing typed): %w", messages.SanitizeField(string(e.Self)), err)
	}
	return nil
}

// AskPermissionIn records req as a permission question of the agent in pane, which is not the
// caller's: the prompts room's sentry (in the bridge or the console) asks for the agents whose
// prompts it sees, Codex's approvals and dialogs on screen. The question lives in that pane's
// own session folder, as its hook's would.
func (e *Engine) AskPermissionIn(ctx context.Context, pane messages.PaneID, req messages.PermissionRequest) (*questions.PermissionWait, error) {
	in := e.derive(func(c *core.Config) { c.Self = pane })
	w, _, err := in.AskPermission(ctx, req)
	return w, err
}
