package questions

// Who may decide: the person, told by what a process of an agent's tree cannot forge
// (paneops.WhoCalls), and the pane a process claims ($TMUX_PANE), believed only when the process
// runs in that pane (paneops.OwnPane). Permission answers, trusting a settings file and the
// hooks that ask in a pane's name all go through these two.

import (
	"context"
	"errors"
	"fmt"

	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/paneops/profile"
)

// Caller judges who runs this command (the process SelfPID). An agent is a program the built-in
// profiles or the settings' agent_profiles name: settings may add an agent, never hide one.
func (e *Desk) Caller(ctx context.Context) paneops.Caller {
	var list paneops.PaneLister
	if e.Tmux != nil {
		list = e.Tmux.Panes
	}
	return paneops.IdentifyCaller(ctx, list, e.Procs, e.SelfPID, profile.Defaults(), e.Profiles)
}

// RequirePerson returns nil when the person runs this command, and otherwise an error that says
// who does and why only the person may do what.
func (e *Desk) RequirePerson(ctx context.Context, what string) error {
	c := e.Caller(ctx)
	if c.Person {
		return nil
	}
	return fmt.Errorf("only the person may %s, and this command does not come from them: %s; run it yourself, typed in a shell of your own", what, c.Why)
}

// ErrNotOwnPane is the error of a process that names a pane ($TMUX_PANE) it does not run in.
var ErrNotOwnPane = errors.New("not in the pane it names")

// OwnPane returns nil when this process runs in the pane it claims as its own (Self, from
// $TMUX_PANE), and an error wrapping ErrNotOwnPane that says why not otherwise.
func (e *Desk) OwnPane(ctx context.Context) error {
	if e.Tmux == nil {
		return fmt.Errorf("%w: no tmux server to look pane %s up on", ErrNotOwnPane, e.Self)
	}
	scan := func(panePID int) (*proc.Table, error) {
		if e.PaneProcs != nil {
			return e.PaneProcs(panePID, e.SelfPID)
		}
		if e.Procs != nil {
			return e.Procs()
		}
		return proc.Scan()
	}
	if err := paneops.OwnPane(ctx, e.Tmux.Pane, scan, e.Self, e.SelfPID); err != nil {
		return fmt.Errorf("%w: %w", ErrNotOwnPane, err)
	}
	return nil
}
