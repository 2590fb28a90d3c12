package cli

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

// The flags of the commands that deliver into a pane (send, notify, ask, answer, doctor), declared
// here once: one name, one meaning and one default each, whichever command takes them.
const (
	flagEnterDelay = "enter-delay"
	flagBusyWait   = "busy-wait"
	flagFrom       = "from"
	flagAgent      = "agent"
)

// deliveryFlags holds the values of the delivery flags a command declared.
type deliveryFlags struct {
	fs         *flag.FlagSet
	enterDelay time.Duration
	busyWait   time.Duration
	from       string
	agent      string
}

// declareDelivery declares the named delivery flags on fs.
func declareDelivery(fs *flag.FlagSet, names ...string) *deliveryFlags {
	d := &deliveryFlags{fs: fs}
	for _, n := range names {
		switch n {
		case flagEnterDelay:
			// No default of its own: without the flag, WCOMM_ENTER_DELAY or the settings file
			// decide, and a target's profile may ask for more.
			// Bounded like the settings file's enter_delay: the pane's lock is held for it.
			fs.Var(cappedDuration{durationFlag{&d.enterDelay}, settings.MaxEnterDelay}, n,
				fmt.Sprintf("pause between paste and Enter, at most %s (default from the settings, %s; a target's profile may take longer)", messages.DurationText(settings.MaxEnterDelay), messages.DurationText(settings.DefaultEnterDelay)))
		case flagBusyWait:
			durationVar(fs, &d.busyWait, n, tmuxcomm.DefaultBusyWait, fmt.Sprintf("when delivering now (--no-queue, --probe): how long to wait for the input box to be empty and idle, at most %s (0: do not wait)", messages.DurationText(tmuxcomm.MaxBusyWait)))
		case flagFrom:
			fs.StringVar(&d.from, n, "", "your own pane id, when not run inside it ($TMUX_PANE)")
		case flagAgent:
			fs.StringVar(&d.agent, n, "", "treat the target as this profile ("+tmuxcomm.ProfileNames()+") instead of the detected one")
		default:
			panic("no delivery flag " + n)
		}
	}
	return d
}

// apply puts the delivery flags given on the command line into e; a flag not given leaves what
// the settings and the environment made of e.
func (d *deliveryFlags) apply(e *tmuxcomm.Engine) error {
	set := flagsSet(d.fs)
	if set[flagEnterDelay] {
		e.EnterDelay = d.enterDelay
	}
	if d.fs.Lookup(flagBusyWait) != nil {
		if err := e.SetBusyWait(d.busyWait); err != nil {
			return usagef("--busy-wait: %v", err)
		}
	}
	if d.from != "" {
		if _, err := messages.ParsePaneID(d.from); err != nil {
			return usagef("--from: %v", err)
		}
		e.Self = messages.PaneID(d.from)
	}
	if d.agent != "" {
		if err := e.CheckAgent(d.agent); err != nil {
			return usagef("--agent: %v", err)
		}
	}
	return nil
}

// checkFrom looks up the pane that --from names, when given: the worker answers into it, so a
// pane that does not exist would fail only later, at the worker's notify. A pane of this
// invocation's own ($TMUX_PANE) is not looked up: it exists, since the command runs in it.
func (d *deliveryFlags) checkFrom(ctx context.Context, e *tmuxcomm.Engine) error {
	if d.from == "" {
		return nil
	}
	if err := e.CheckPane(ctx, d.from); err != nil {
		return fmt.Errorf("--from %s: %w", d.from, err)
	}
	return nil
}
