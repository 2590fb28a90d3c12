package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/profile"
)

// quitGrace bounds how long a program is given to end after its own quit, before its pane is
// killed.
const quitGrace = 5 * time.Second

// StopOptions are the inputs of one stop.
type StopOptions struct {
	// Target is the pane: its name, id, or any target a send takes.
	Target string
	// RemoveWorktree removes the worktree and branch the spawn made; refused while the worktree
	// holds uncommitted changes unless Force, which throws them away (and says what they were).
	RemoveWorktree bool
	Force          bool
}

// Stopped is what a stop did.
type Stopped struct {
	Pane messages.PaneID `json:"pane"`
	Name string          `json:"name,omitempty"`
	// Quit says how the program ended: "quit" (its own quit), "killed" (the pane was killed
	// after the grace), "dead" (it had ended already).
	Quit     string `json:"quit"`
	Worktree string `json:"worktree_removed,omitempty"`
	// Discarded lists what --force threw away (git status --porcelain of the worktree).
	Discarded string `json:"discarded,omitempty"`
	// Note says what was kept and why (a branch with unmerged commits).
	Note string `json:"note,omitempty"`
}

// Stop ends the agent in a pane: its own quit first (its profile's quit command, or EOF and
// Ctrl-C for a plain program) with a short grace, then the pane; its name goes with the pane.
// With RemoveWorktree its worktree and branch go too, checked before anything ends.
func (r *Room) Stop(ctx context.Context, o StopOptions) (*Stopped, error) {
	p, err := r.Agents.Resolve(ctx, o.Target, paneops.Scope{All: true}, false)
	if err != nil {
		return nil, err
	}
	srv, err := r.Tmux.ServerInfo(ctx)
	if err != nil {
		return nil, err
	}
	rec, lerr := r.load(srv.Key(), p.ID)
	var wt *worktree
	out := &Stopped{Pane: p.ID}
	if rec != nil {
		out.Name = rec.Name
	}
	if o.RemoveWorktree {
		if lerr != nil {
			return nil, fmt.Errorf("--remove-worktree: %w", lerr)
		}
		if rec.Worktree == "" {
			return nil, fmt.Errorf("--remove-worktree: pane %s was not spawned with --worktree; nothing was stopped", p.ID)
		}
		wt = &worktree{Dir: rec.Worktree, Branch: rec.Branch, Repo: rec.Repo}
		d, err := wt.dirty(ctx)
		if err != nil {
			return nil, fmt.Errorf("--remove-worktree: %w; nothing was stopped", err)
		}
		if d != "" && !o.Force {
			return nil, fmt.Errorf("worktree %s has uncommitted changes:\n%s\ncommit them, or add --force to throw them away; nothing was stopped", wt.Dir, messages.SanitizeTerminal(d))
		}
		out.Discarded = d
	}
	out.Quit = r.quit(ctx, p, rec)
	if err := r.Tmux.KillPane(ctx, p.ID); err != nil && !isGone(err) {
		return out, fmt.Errorf("kill pane %s: %w", p.ID, err)
	}
	r.drop(srv.Key(), p.ID)
	if wt != nil {
		if err := wt.remove(ctx, o.Force); err != nil {
			if !errors.Is(err, errKeptBranch) {
				return out, err
			}
			out.Note = err.Error()
		}
		out.Worktree = wt.Dir
	}
	return out, nil
}

// quit asks the program in p to end as its profile says and waits up to quitGrace for it to.
func (r *Room) quit(ctx context.Context, p paneops.Pane, rec *Record) string {
	if p.Dead {
		return "dead"
	}
	var prof *profile.Profile
	if rec != nil && rec.Agent != "" {
		prof = r.Profiles.Lookup(rec.Agent)
	} else if det, err := r.Agents.Detect(ctx, p, ""); err == nil && det.Profile != nil && det.Profile.Kind == profile.KindAgent {
		prof = det.Profile
	}
	switch {
	case prof != nil && prof.Quit != nil && prof.Quit.Text != "":
		// The quit command is a fixed word of the profile, typed as keys, never a message.
		_ = r.Tmux.SendKeys(ctx, p.ID, true, prof.Quit.Text)
		_ = r.Tmux.SendKeys(ctx, p.ID, false, "Enter")
	case prof != nil && prof.Quit != nil && len(prof.Quit.Keys) > 0:
		_ = r.Tmux.SendKeys(ctx, p.ID, false, prof.Quit.Keys...)
	default:
		// A plain program: end of input first (a reader of stdin ends on it), then Ctrl-C.
		_ = r.Tmux.SendKeys(ctx, p.ID, false, "C-d")
		if r.ended(ctx, p.ID, quitGrace/2) {
			return "quit"
		}
		_ = r.Tmux.SendKeys(ctx, p.ID, false, "C-c")
	}
	if r.ended(ctx, p.ID, quitGrace) {
		return "quit"
	}
	return "killed"
}

// ended waits up to d for the program in pane to end (the pane dead, or gone).
func (r *Room) ended(ctx context.Context, pane messages.PaneID, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		p, err := r.Tmux.Pane(ctx, string(pane))
		if err != nil || p.Dead {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(readyPoll):
		}
	}
}

// isGone reports whether err is tmux saying the pane does not exist.
func isGone(err error) bool {
	return errors.Is(err, paneops.ErrPaneNotFound) || errors.Is(err, paneops.ErrTargetNotFound)
}
