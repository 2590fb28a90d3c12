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
func (d *Desk) Caller(ctx context.Context) paneops.Caller {
	var list paneops.PaneLister
	if d.Tmux != nil {
		list = d.Tmux.Panes
	}
	return paneops.IdentifyCaller(ctx, list, d.Procs, d.SelfPID, profile.Defaults(), d.Profiles)
}

// RequirePerson returns nil when the person runs this command, and otherwise an error that says
// who does and why only the person may do what.
func (d *Desk) RequirePerson(ctx context.Context, what string) error {
	c := d.Caller(ctx)
	if c.Person {
		return nil
	}
	return fmt.Errorf("only the person may %s, and this command does not come from them: %s; run it yourself, typed in a shell of your own", what, c.Why)
}

// ErrNotOwnPane is the error of a process that names a pane ($TMUX_PANE) it does not run in.
var ErrNotOwnPane = errors.New("not in the pane it names")

// OwnPane returns nil when this process runs in the pane it claims as its own (Self, from
// $TMUX_PANE), and an error wrapping ErrNotOwnPane that says why not otherwise.
func (d *Desk) OwnPane(ctx context.Context) error {
	if d.Tmux == nil {
		return fmt.Errorf("%w: no tmux server to look pane %s up on", ErrNotOwnPane, d.Self)
	}
	scan := func(panePID int) (*proc.Table, error) {
		if d.PaneProcs != nil {
			return d.PaneProcs(panePID, d.SelfPID)
		}
		if d.Procs != nil {
			return d.Procs()
		}
		return proc.Scan()
	}
	if err := paneops.OwnPane(ctx, d.Tmux.Pane, scan, d.Self, d.SelfPID); err != nil {
		return fmt.Errorf("%w: %w", ErrNotOwnPane, err)
	}
	return nil
}
