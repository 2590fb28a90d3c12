// Package doctor is what 'wcomm doctor' checks: tmux (its binary, version and known bugs, the
// server and its socket's owner and mode), the root folder, the settings, approved actions that wait,
// and, for one pane, the profile a delivery would use and why, its input box, its route and Enter
// delays, and (--probe) how long a paste takes to show. It changes nothing, except that a probe
// pastes and erases a marker. What it needs of the panes (find, profile, route) it names as the
// small interface Panes; it imports paneops, the fleet, actions, settings, store and messages.
package doctor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// Report is what doctor found.
type Report struct {
	Tmux Tmux             `json:"tmux"`
	Bugs []paneops.Bug    `json:"known_bugs"`
	Root store.RootReport `json:"root"`
	Pane *Pane            `json:"pane,omitempty"`
	// Actions sums up approved actions that wait for the dispatcher or were blocked.
	Actions  string   `json:"actions,omitempty"`
	Problems []string `json:"problems"`
	// PaneErr is why the pane asked about was not found; nil when it was, or none was asked about.
	PaneErr error `json:"-"`
}

// Tmux is the tmux binary and server found.
type Tmux struct {
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

// SizedDelay is the Enter delay a delivery of Size would wait.
type SizedDelay struct {
	Size  string `json:"size"`
	Delay string `json:"delay"`
}

// Pane is what a delivery into one pane would meet.
type Pane struct {
	ID        messages.PaneID       `json:"pane_id"`
	Target    string                `json:"target"`
	Command   string                `json:"current_command"`
	TTY       string                `json:"tty"`
	Detection profile.Detection     `json:"detection"`
	Profile   *profile.Profile      `json:"profile"`
	Input     *profile.Inspection   `json:"input,omitempty"`
	InputNote string                `json:"input_state"`
	Delay     []SizedDelay          `json:"enter_delay"`
	Form      string                `json:"small_request_form"`
	Probes    []paneops.ProbeResult `json:"probes,omitempty"`
	Suggested string                `json:"suggested_enter_delay,omitempty"`
	// Route is the route a delivery into the pane takes now and why (socket or typed).
	Route door.Finding `json:"route"`
}

// Panes finds a pane as send --to does, tells which profile it runs, and the route into it.
type Panes interface {
	Resolve(ctx context.Context, target string, scope paneops.Scope, first bool) (paneops.Pane, error)
	Detect(ctx context.Context, p paneops.Pane, agent string) (profile.Detection, error)
	Route(ctx context.Context, p paneops.Pane, det profile.Detection) door.Finding
}

// Options is what to check and with what.
type Options struct {
	Tmux  *paneops.Client
	Panes Panes
	Root  string
	// Settings are the settings loaded, or SettingsErr why they could not be.
	Settings    settings.Values
	SettingsErr error
	// Actions are the approved-action intents under the root (nil: none, or unreadable).
	Actions []*actions.ActionStatus
	// EnterDelay is the least Enter delay of a delivery (the command line's or the settings').
	EnterDelay time.Duration
	// LockDir and LockTimeout are the delivery lock's, which a probe takes as a delivery does.
	LockDir     string
	LockTimeout time.Duration
	// Target is the pane to inspect ("": none); Agent forces its profile; Probe pastes and erases
	// a marker to time it, waiting up to BusyWait for a busy pane.
	Target, Agent string
	Probe         bool
	BusyWait      time.Duration
}

// Check gathers the report.
func Check(ctx context.Context, o Options) *Report {
	r := &Report{Problems: []string{}}
	client := o.Tmux
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
		r.socket(srv.Socket)
	} else if r.Tmux.Binary != "" {
		r.Problems = append(r.Problems, fmt.Sprintf("no tmux server: %v", err))
	}
	r.Bugs = paneops.KnownBugs(version)
	r.Root = store.Inspect(o.Root)
	if !r.Root.OK {
		r.Problems = append(r.Problems, r.Root.Note)
	}
	if o.SettingsErr != nil {
		r.Problems = append(r.Problems, o.SettingsErr.Error())
	} else if note := o.Settings.IgnoredNote(); note != "" {
		r.Problems = append(r.Problems, note)
	}
	r.Actions = actions.Summary(o.Actions)
	if o.Target != "" && r.Tmux.Running {
		r.pane(ctx, o, srv)
	}
	return r
}

// socket checks the server's socket: yours, and reachable by no one else.
func (r *Report) socket(path string) {
	st, err := os.Stat(path)
	if err != nil {
		return
	}
	r.Tmux.SocketMode = st.Mode().String()
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		r.Tmux.SocketOwner = int(sys.Uid)
		if int(sys.Uid) != os.Getuid() {
			r.Problems = append(r.Problems, fmt.Sprintf("socket %s belongs to uid %d, not to you", path, sys.Uid))
		}
	}
	if p := paneops.SocketExposure(path, st); p != "" {
		r.Problems = append(r.Problems, p)
	}
}

// pane inspects o.Target: the same targets as send --to (a pane id, a tmux target, an agent name).
func (r *Report) pane(ctx context.Context, o Options, srv paneops.ServerInfo) {
	client := o.Tmux
	p, err := o.Panes.Resolve(ctx, o.Target, paneops.Scope{}, false)
	if err != nil {
		r.Problems = append(r.Problems, fmt.Sprintf("pane %s: %v", messages.SanitizeField(o.Target), err))
		r.PaneErr = err
		return
	}
	det, err := o.Panes.Detect(ctx, p, o.Agent)
	if err != nil {
		r.Problems = append(r.Problems, err.Error())
		return
	}
	pr := &Pane{ID: p.ID, Target: p.Target(), Command: p.Command, TTY: p.TTY, Detection: det, Profile: det.Profile}
	r.Pane = pr
	pr.Route = o.Panes.Route(ctx, p, det)
	prof := det.Profile
	for _, size := range []int{1 << 10, 100 << 10, 1 << 20} {
		pr.Delay = append(pr.Delay, SizedDelay{store.SizeText(int64(size)), max(prof.EnterDelay.For(size), o.EnterDelay).String()})
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
		return
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
	if !o.Probe {
		return
	}
	d := paneops.Delivery{Pane: p.ID, Profile: prof, BusyWait: o.BusyWait,
		LockDir: o.LockDir, LockKey: srv.Key(), LockTimeout: o.LockTimeout}
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
		floor := max(prof.EnterDelay.For(1<<10), o.EnterDelay)
		pr.Suggested = max(floor, (3 * worst).Round(10*time.Millisecond)).String()
	}
}
