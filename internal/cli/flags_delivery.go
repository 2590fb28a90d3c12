package cli

import (
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

// choices are the delivery flags given on the command line, as the call's choices: a flag not
// given leaves what the settings and the environment chose. The door checks them.
func (d *deliveryFlags) choices() tmuxcomm.Choices {
	ch := tmuxcomm.Choices{From: messages.PaneID(d.from)}
	if flagsSet(d.fs)[flagEnterDelay] {
		ch.EnterDelay = &d.enterDelay
	}
	if d.fs.Lookup(flagBusyWait) != nil {
		ch.BusyWait = &d.busyWait
	}
	return ch
}

// argNames name the arguments the door checks as the command line's flags.
var argNames = map[tmuxcomm.Arg]string{
	tmuxcomm.ArgAgent:    "--" + flagAgent,
	tmuxcomm.ArgFrom:     "--" + flagFrom,
	tmuxcomm.ArgBusyWait: "--" + flagBusyWait,
}
