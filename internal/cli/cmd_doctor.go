package cli

import (
	"flag"
	"io"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/doctor"
)

func init() {
	register(&command{
		Name: "doctor", Args: "[--pane TARGET [--probe]] [--agent NAME]", Role: "admin",
		Summary: "check tmux, its known bugs, the socket and the root, and how a pane would be delivered to",
		Help: `Reports the tmux version and the known tmux bugs of that version (with what wcomm does about each),
the server's socket, and the root folder's owner and mode. With --pane it shows the profile wcomm would
deliver with (and why: the pane's foreground process), the terminal mode, what the input box holds, and
the Enter delay the profile sets. --probe measures the pane live: into an EMPTY input box it pastes a
one-line marker WITHOUT Enter, times until it shows, and erases it again with BackSpace. It never
submits anything, so a live agent starts no turn and a shell runs nothing; the suggested Enter delay is
the profile's floor, or three times the measured time if that is longer. Exit 1 when a problem was found.`,
		Example: "wcomm doctor\nwcomm doctor --pane %7 --probe\nwcomm doctor --pane work:1.0 --json",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			pane := fs.String("pane", "", "a pane to inspect: pane id (%7) or tmux target")
			probe := fs.Bool("probe", false, "with --pane: measure live how long a paste takes to show (pastes and erases a marker; never presses Enter)")
			dv := declareDelivery(fs, flagAgent, flagBusyWait)
			agent, busyWait := &dv.agent, &dv.busyWait
			host := fs.String("host", "", "check a declared remote host: the connection, the wcomm there and its version, its root")
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("doctor takes no arguments; use --pane TARGET")
				}
				if *host != "" {
					return c.doctorHost(*host)
				}
				if (*probe || *agent != "") && *pane == "" {
					return usagef("--probe and --agent need --pane TARGET")
				}
				r := c.doctor(*pane, *agent, *probe, *busyWait)
				if c.json {
					if err := c.printJSON(r); err != nil {
						return err
					}
				} else {
					printDoctor(c.stdout, r)
				}
				if tmuxcomm.ClassOf(r.PaneErr) == tmuxcomm.ClassNotFound {
					return &exitErr{code: exitNotFound, err: errSilent}
				}
				if len(r.Problems) > 0 {
					return &exitErr{code: exitFailure, err: errSilent}
				}
				return nil
			}
		},
	})
}

// doctorReport is what doctor found, with the answer channels' checks (cmd_bridge.go); --json
// prints it.
type doctorReport struct {
	*doctor.Report
	Channels []ChannelCheck `json:"channels,omitempty"`
}

// doctor gathers the report. It changes nothing, except that --probe pastes and erases a marker.
func (c *cli) doctor(target, agent string, probe bool, busyWait time.Duration) *doctorReport {
	s, serr := c.settings()
	r := &doctorReport{Report: tmuxcomm.Doctor(c.ctx, c.engine(), doctor.Options{Tmux: c.tmux(), Root: c.rootDir(),
		Settings: s, SettingsErr: serr, Target: target, Agent: agent, Probe: probe, BusyWait: busyWait})}
	c.doctorChannels(r)
	return r
}

func printDoctor(w io.Writer, r *doctorReport) {
	r.WriteText(w, func(w io.Writer) { printChannels(w, r.Channels) })
}
