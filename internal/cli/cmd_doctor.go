package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
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
				if r.notFound {
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

// doctorReport is what doctor found; --json prints it.
type doctorReport struct {
	Tmux tmuxReport       `json:"tmux"`
	Bugs []paneops.Bug    `json:"known_bugs"`
	Root store.RootReport `json:"root"`
	Pane *paneReport      `json:"pane,omitempty"`
	// Actions sums up approved actions that wait for the dispatcher or were blocked.
	Actions string `json:"actions,omitempty"`
	// Channels are the answer channels' checks (cmd_bridge.go).
	Channels []ChannelCheck `json:"channels,omitempty"`
	Problems []string       `json:"problems"`
	notFound bool
}

type tmuxReport struct {
	Binary        string `json:"binary"`
	ClientVersion string `json:"client_version"`
	Running       bool   `json:"server_running"`
	Version       string `json:"server_version,omitempty"`
	PID           int    `json:"server_pid,omitempty"`
	Started       string `json:"server_started,omitempty"`
	Socket        string `json:"socket,omitempty"`
	SocketMode    string `json:"socket_mode,omitempty"`
	SocketOwner   int    `json:"socket_owner_uid,omitempty"`
}

// sizedDelay is the Enter delay a delivery of Size would wait.
type sizedDelay struct {
	Size  string `json:"size"`
	Delay string `json:"delay"`
}

type paneReport struct {
	ID        messages.PaneID       `json:"pane_id"`
	Target    string                `json:"target"`
	Command   string                `json:"current_command"`
	TTY       string                `json:"tty"`
	Detection profile.Detection     `json:"detection"`
	Profile   *profile.Profile      `json:"profile"`
	Input     *profile.Inspection   `json:"input,omitempty"`
	InputNote string                `json:"input_state"`
	Delay     []sizedDelay          `json:"enter_delay"`
	Form      string                `json:"small_request_form"`
	Probes    []paneops.ProbeResult `json:"probes,omitempty"`
	Suggested string                `json:"suggested_enter_delay,omitempty"`
	// Route is the route a delivery into the pane takes now and why (socket or typed).
	Route door.Finding `json:"route"`
}

// doctor gathers the report. It changes nothing, except that --probe pastes and erases a marker.
func (c *cli) doctor(target, agent string, probe bool, busyWait time.Duration) *doctorReport {
	r := &doctorReport{Problems: []string{}}
	client := c.tmux()
	ctx := c.ctx
	bin := client.Bin
	if bin == "" {
		bin = "tmux"
	}
	if path, err := exec.LookPath(bin); err == nil {
		r.Tmux.Binary = path
	} else {
		r.Problems = append(r.Problems, "tmux is not installed or not on PATH: install tmux")
	}
	if out, err := client.Run(ctx, nil, "-V"); err == nil {
		r.Tmux.ClientVersion = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(out), "tmux"))
	}
	version := r.Tmux.ClientVersion
	srv, err := client.ServerInfo(ctx)
	if err == nil {
		r.Tmux.Running, r.Tmux.Version, r.Tmux.PID, r.Tmux.Socket = true, srv.Version, srv.PID, srv.Socket
		r.Tmux.Started = time.Unix(srv.StartTime, 0).UTC().Format(time.RFC3339)
		version = srv.Version
		if st, err := os.Stat(srv.Socket); err == nil {
			r.Tmux.SocketMode = st.Mode().String()
			if sys, ok := st.Sys().(*syscall.Stat_t); ok {
				r.Tmux.SocketOwner = int(sys.Uid)
				if int(sys.Uid) != os.Getuid() {
					r.Problems = append(r.Problems, fmt.Sprintf("socket %s belongs to uid %d, not to you", srv.Socket, sys.Uid))
				}
			}
			if p := paneops.SocketExposure(srv.Socket, st); p != "" {
				r.Problems = append(r.Problems, p)
			}
		}
	} else if r.Tmux.Binary != "" {
		r.Problems = append(r.Problems, fmt.Sprintf("no tmux server: %v", err))
	}
	r.Bugs = paneops.KnownBugs(version)
	r.Root = store.Inspect(c.rootDir())
	if !r.Root.OK {
		r.Problems = append(r.Problems, r.Root.Note)
	}
	if s, err := c.settings(); err != nil {
		r.Problems = append(r.Problems, err.Error())
	} else if note := s.IgnoredNote(); note != "" {
		r.Problems = append(r.Problems, note)
	}
	if list, _, err := c.engine().Actions(ctx, actions.ActionsOptions{Getenv: c.getenv}); err == nil {
		r.Actions = actionsSummary(list)
	}
	c.doctorChannels(r)
	if target == "" || !r.Tmux.Running {
		return r
	}

	e := c.engine()
	// The same targets as send --to: a pane id, a tmux target, or an agent name.
	p, err := e.Resolve(ctx, target, paneops.Scope{}, false)
	if err != nil {
		r.Problems = append(r.Problems, fmt.Sprintf("pane %s: %v", messages.SanitizeField(target), err))
		r.notFound = tmuxcomm.ClassOf(err) == tmuxcomm.ClassNotFound
		return r
	}
	det, err := e.Detect(ctx, p, agent)
	if err != nil {
		r.Problems = append(r.Problems, err.Error())
		return r
	}
	pr := &paneReport{ID: p.ID, Target: p.Target(), Command: p.Command, TTY: p.TTY, Detection: det, Profile: det.Profile}
	r.Pane = pr
	pr.Route = e.Route(ctx, p, det)
	prof := det.Profile
	for _, size := range []int{1 << 10, 100 << 10, 1 << 20} {
		pr.Delay = append(pr.Delay, sizedDelay{store.SizeText(int64(size)), max(prof.EnterDelay.For(size), e.EnterDelay).String()})
	}
	switch prof.Kind {
	case profile.KindShell:
		pr.Form = fleet.FormComment + " (a shell would run the request: only a comment line pointing at its file is typed)"
	default:
		pr.Form = fleet.FormPaste
	}
	if p.Dead {
		pr.InputNote = "the pane is dead: nothing can be delivered"
		r.Problems = append(r.Problems, fmt.Sprintf("pane %s is dead", p.ID))
		return r
	}
	if prof.HasBox() {
		if s, err := client.Screen(ctx, p.ID); err == nil {
			in := prof.Inspect(s)
			pr.Input = &in
			pr.InputNote = in.State()
			if len(in.Lines) > 0 {
				pr.InputNote += ": " + strings.Join(in.Lines, " / ")
			}
		} else {
			pr.InputNote = "screen unreadable: " + err.Error()
		}
	} else {
		pr.InputNote = "not read (" + prof.Kind + ": no input box on screen to check)"
	}
	if !probe {
		return r
	}
	d := paneops.Delivery{Pane: p.ID, Profile: prof, BusyWait: busyWait,
		LockDir: store.LockDir(e.Root), LockKey: srv.Key(), LockTimeout: e.LockTimeout}
	var worst time.Duration
	for range 3 {
		res, err := client.Probe(ctx, d)
		if err != nil {
			r.Problems = append(r.Problems, "probe: "+err.Error())
			break
		}
		pr.Probes = append(pr.Probes, res)
		if res.ShownAfter == 0 {
			r.Problems = append(r.Problems, "probe: the marker never showed on screen (echo off, or the program ignores pastes)")
			break
		}
		worst = max(worst, res.ShownAfter)
	}
	if worst > 0 {
		floor := max(prof.EnterDelay.For(1<<10), e.EnterDelay)
		pr.Suggested = max(floor, (3 * worst).Round(10*time.Millisecond)).String()
	}
	return r
}

func printDoctor(w io.Writer, r *doctorReport) {
	t := r.Tmux
	fmt.Fprintf(w, "tmux:         %s (client %s)\n", orDash(t.Binary), orDash(t.ClientVersion))
	if t.Running {
		fmt.Fprintf(w, "server:       tmux %s, pid %d, started %s\n", t.Version, t.PID, t.Started)
		fmt.Fprintf(w, "socket:       %s (%s, uid %d)\n", t.Socket, t.SocketMode, t.SocketOwner)
	} else {
		fmt.Fprintln(w, "server:       not running")
	}
	// Not marked '!': wcomm works around each, so none is a problem; '!' marks only problems.
	fmt.Fprintln(w, "known tmux bugs (* = this version has it; wcomm works around each, nothing to do):")
	for _, b := range r.Bugs {
		mark := " "
		if b.Applies {
			mark = "*"
		}
		fmt.Fprintf(w, "  %s %s (%s): %s\n      wcomm: %s\n", mark, b.ID, b.Versions, b.Summary, b.Mitigation)
	}
	fmt.Fprintf(w, "root:         %s: %s\n", r.Root.Path, r.Root.Note)
	printChannels(w, r.Channels)
	if p := r.Pane; p != nil {
		d := p.Detection
		fmt.Fprintf(w, "pane:         %s (%s), current command %s, terminal %s\n", p.ID, messages.SanitizeField(p.Target),
			messages.SanitizeField(p.Command), p.TTY)
		fmt.Fprintf(w, "profile:      %s: %s\n", d.Name, messages.SanitizeField(d.Reason))
		if d.Foreground != nil {
			fmt.Fprintf(w, "foreground:   pid %d: %s\n", d.Foreground.PID, messages.SanitizeField(d.Foreground.CommandLine()))
		}
		if d.TTYMode != "" {
			fmt.Fprintf(w, "terminal:     %s mode\n", d.TTYMode)
		}
		fmt.Fprintf(w, "input box:    %s\n", messages.SanitizeField(p.InputNote))
		route := p.Route.Route + ": " + p.Route.Why
		if p.Route.Status != "" {
			route += "; the agent's session says " + p.Route.Status
		}
		fmt.Fprintf(w, "route:        %s\n", messages.SanitizeField(route))
		var delays []string
		for _, d := range p.Delay {
			delays = append(delays, d.Size+": "+d.Delay)
		}
		fmt.Fprintf(w, "enter delay:  %s (the profile's floor, or --enter-delay if longer)\n", strings.Join(delays, ", "))
		prof := p.Profile
		limits := fmt.Sprintf("bracketed paste %v", prof.BracketedPaste)
		if prof.PasteLimit > 0 {
			limits += fmt.Sprintf(", pointer above %d bytes", prof.PasteLimit)
		}
		if prof.LineLimit > 0 {
			limits += fmt.Sprintf(", pointer for lines over %d bytes", prof.LineLimit)
		}
		fmt.Fprintf(w, "delivery:     %s; %s\n", p.Form, limits)
		for i, pr := range p.Probes {
			fmt.Fprintf(w, "probe %d:      marker shown after %s, erased %v\n", i+1, pr.ShownAfter.Round(100*time.Microsecond), pr.Erased)
		}
		if p.Suggested != "" {
			fmt.Fprintf(w, "suggested:    --enter-delay %s for this pane\n", p.Suggested)
		}
	}
	if r.Actions != "" {
		fmt.Fprintf(w, "actions:      %s\n", r.Actions)
	}
	if len(r.Problems) == 0 {
		fmt.Fprintln(w, "problems:     none")
		return
	}
	fmt.Fprintln(w, "problems:")
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  ! %s\n", messages.SanitizeField(p))
	}
}
