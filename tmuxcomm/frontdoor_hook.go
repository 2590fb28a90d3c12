package tmuxcomm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// Hooking is one run of an agent's hook (wcomm hook) in the pane it names ($TMUX_PANE).
type Hooking struct {
	// Agent is whose hook runs: claude, codex or gemini.
	Agent string
	// Input is the hook's JSON input (its stdin).
	Input []byte
	// Out writes the hook's output, which the agent reads on the hook's stdout: the mail handed
	// to its model, or its permission decision. The mail counts as delivered via the hook only
	// once Out has returned.
	Out func([]byte) error
	// Warn says a problem that does not stop the hook.
	Warn func(string)
}

// hookEvent is the part of an agent's hook input that matters here.
type hookEvent struct {
	Event          string `json:"hook_event_name"`
	StopHookActive bool   `json:"stop_hook_active"`
	// LastMessage is the model's last message of the turn (Claude Code's Stop).
	LastMessage string `json:"last_assistant_message"`
}

// Hook runs an agent's hook. At a PermissionRequest it relays the prompt to the person
// (permissionHook) and writes the first answer as the agent's decision. At a turn boundary it
// takes the pane's waiting mail and writes it in the form the agent hands its model: at a
// prompt, added context; at the end of a turn, a reason to go on. With the settings'
// notify_idle, a turn that ends with nothing more to do is told to the answer channels, and the
// notice closes when the agent takes its next prompt. Outside a pane it does nothing; in a pane
// it does not run in, it refuses (ErrNotOwnPane).
func (e *Engine) Hook(ctx context.Context, h Hooking) error {
	var ev hookEvent
	if err := json.Unmarshal(h.Input, &ev); err != nil {
		return fmt.Errorf("hook input is not JSON: %w", err)
	}
	if e.cfg.Self == "" {
		return nil // not in a tmux pane: no inbox, no pane to name in a question
	}
	if err := e.hookPane(ctx); err != nil {
		return err
	}
	out := func(b []byte) error {
		if err := h.Out(append(b, '\n')); err != nil {
			return fmt.Errorf("write the hook's output: %w", err)
		}
		return nil
	}
	rec := profile.HookAgent(h.Agent)
	if rec == nil {
		return fmt.Errorf("%q is not an agent whose hooks wcomm installs: %w", messages.SanitizeField(h.Agent), messages.ErrSyntax)
	}
	kind := rec.Hooks.Kind(ev.Event)
	if kind == profile.HookPermission {
		if e.settingsErr != nil {
			return e.settingsErr // nothing asked on settings that do not load
		}
		reply, err := e.permissionHook(ctx, h.Agent, h.Input, e.Settings.PermissionWait, h.Warn)
		if err != nil || reply == nil {
			return err
		}
		return out(reply)
	}
	if kind == "" {
		return fmt.Errorf("event %q is not one wcomm handles for %s", messages.SanitizeField(ev.Event), h.Agent)
	}
	handed := false
	// The output is the delivery: the mail ends as delivered via the hook only once the agent
	// has been handed it.
	show := func(items []mailbox.InboxItem) error {
		handed = true
		var b strings.Builder
		b.WriteString("wcomm: messages that arrived for this pane while you were busy (they will not be typed in again):")
		for _, it := range items {
			b.WriteString("\n" + messages.Sanitize(it.Text, true))
		}
		o, err := hookOutput(ev.Event, kind, b.String())
		if err != nil {
			return err
		}
		return out(o)
	}
	res, err := e.Inbox(ctx, mailbox.InboxOptions{Take: true, Via: "hook", Show: show})
	if err != nil {
		return err
	}
	for _, p := range res.Problems {
		h.Warn(p)
	}
	if e.settingsErr != nil || !e.Settings.NotifyIdle {
		return e.settingsErr
	}
	if kind == profile.HookPrompt {
		e.desk.CloseIdle(ctx, "the agent took its next prompt")
		return nil
	}
	if handed || ev.StopHookActive {
		return nil
	}
	_, warnings, err := e.desk.NotifyIdle(ctx, h.Agent, ev.LastMessage)
	for _, w := range warnings {
		h.Warn(w)
	}
	return err
}

// hookOutput is the JSON an agent's hook prints to hand text to the model.
func hookOutput(event, kind, text string) ([]byte, error) {
	// The three agents take the same shapes (measured with their pinned versions): context at a
	// prompt, and a blocked stop whose reason goes to the model as the next message.
	if kind == profile.HookPrompt {
		return json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{"hookEventName": event, "additionalContext": text}})
	}
	return json.Marshal(map[string]string{"decision": "block", "reason": text})
}

// permissionHook is an agent's PermissionRequest hook: data is the hook's JSON input. It records
// the request as a question for the person (questions/permission.go), waits up to wait for its
// first answer and returns the agent's decision as the agent reads it on the hook's stdout; nil
// when the question ends otherwise, so that the agent's own dialog decides. The agent's session
// file, found among this process's ancestors, is how an answer given in the pane is seen;
// without it the question still waits, and warn says so, as it says every other problem that does
// not stop the hook, when it is found.
func (e *Engine) permissionHook(ctx context.Context, agent string, data []byte, wait time.Duration, warn func(string)) ([]byte, error) {
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
	var termDir string
	if t, err := proc.Scan(); err == nil {
		if sf, err := (door.Finder{}).SessionFile(in.SessionID, t.Ancestors(os.Getpid())); err == nil {
			req.PID, term, termDir = sf.PID, firstLook(sf), filepath.Dir(sf.Path)
		} else {
			warn(fmt.Sprintf("%v; an answer given in the pane is not seen", err))
		}
	}
	w, warnings, err := e.desk.AskPermission(ctx, req)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	for _, s := range warnings {
		warn(s)
	}
	o := questions.AwaitOptions{Wait: wait, Terminal: term}
	// The wait hears of an answer, and of the agent's state file changing, from the watch room's
	// feed of its question's session folder (and of the state file's folder), which rescans the
	// folder now and then; the wait itself looks once a second against anything both missed. The
	// feed outlives ctx by the wait's last look at the terminal once the agent has ended the hook.
	fctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	wo := watch.WatchOptions{Session: filepath.Base(w.Question.Dir), Questions: true}
	if termDir != "" {
		wo.Also = []string{termDir}
	}
	var fl *watch.Follower
	o.Changes = func() <-chan struct{} {
		var err error
		if fl, err = watch.Follow(fctx, wo, e.Watch); err != nil {
			warn(fmt.Sprintf("no watch of the question's folder (%v): an answer is looked for once a second", err))
			return nil
		}
		return fl.Wake()
	}
	out, err := w.Await(ctx, o)
	if fl != nil && fl.Err() != nil {
		warn(fmt.Sprintf("the answer was looked for once a second: %v", fl.Err()))
	}
	if err != nil || out.Decision == nil {
		return nil, err
	}
	return messages.FormatDecision(rec.Hooks.Decision, *out.Decision)
}

// ErrNotOwnPane is the error of a hook or command that names a pane it does not run in.
var ErrNotOwnPane = questions.ErrNotOwnPane

// hookPane checks that an agent's hook runs in the pane it names ($TMUX_PANE) before it asks the
// person, takes the pane's mail or tells its channels anything in that pane's name: a process
// elsewhere that sets the variable would otherwise ask in the pane's name, and the reply to its
// notice would be typed into that pane. The error wraps questions.ErrNotOwnPane.
func (e *Engine) hookPane(ctx context.Context) error {
	if err := e.desk.OwnPane(ctx); err != nil {
		return fmt.Errorf("refused to act in pane %s's name (nothing asked, nothing typed): %w", messages.SanitizeField(string(e.cfg.Self)), err)
	}
	return nil
}

// askPermissionIn records req as a permission question of the agent in pane, which is not the
// caller's: the prompts room's sentry (in the bridge or the console) asks for the agents whose
// prompts it sees, Codex's approvals and dialogs on screen. The question lives in that pane's
// own session folder, as its hook's would.
func (e *Engine) askPermissionIn(ctx context.Context, pane messages.PaneID, req messages.PermissionRequest) (*questions.PermissionWait, error) {
	in := e.derive(callConfig{self: &pane})
	w, _, err := in.desk.AskPermission(ctx, req)
	return w, err
}

// firstLook reads t's state now, before the question exists, and gives it as t's first state:
// the agent recorded its dialog before it ran the hook, and no one can answer a question not yet
// asked. A wait whose first look came later, on a loaded machine, could take a refusal typed
// in the pane meanwhile for the dialog's own state, and wait for its hook timeout.
func firstLook(t questions.Terminal) questions.Terminal {
	state, at, err := t.Status()
	if err != nil {
		return t
	}
	return &lookedTerminal{Terminal: t, state: state, at: at}
}

// lookedTerminal is a terminal whose first Status is the one read when it was made.
type lookedTerminal struct {
	questions.Terminal
	state  string
	at     int64
	looked bool
}

func (l *lookedTerminal) Status() (string, int64, error) {
	if !l.looked {
		l.looked = true
		return l.state, l.at, nil
	}
	return l.Terminal.Status()
}
