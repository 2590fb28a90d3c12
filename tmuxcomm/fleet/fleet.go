package fleet

// The fleet: a read-only view of every pane and what waits on it, for a person supervising many
// agents (the console, 'wcomm ui'). Fleet.Panes is the tmux half, bounded to two tmux calls however
// many panes there are (the pane list, then every screen in one command list) and meant to run at
// most about once a second; a screen whose pane took no output since it was captured (and whose
// cursor, size and process are the same) is not captured again, so a quiet fleet costs one call; Engine.Waiting and Engine.RecentExchanges are the disk half, read when
// files change. Nothing here writes, types or starts anything.

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// A pane's state as the fleet view names it.
const (
	PaneIdle       = "idle"       // its input is empty and it is not working
	PaneBusy       = "busy"       // it works on a turn (or a shell runs a job)
	PaneTyping     = "typing"     // its input box holds text wcomm did not put there: a person typing
	PaneAnswer     = "answer"     // it waits for a person's answer to its question
	PanePermission = "permission" // it waits for an approval, or shows no input box (a menu or permission prompt)
	PaneStarting   = "starting"   // the program is still starting
	PaneGone       = "gone"       // the pane is dead
	PaneUnknown    = "unknown"    // nothing on screen tells (a program no profile knows)
)

// FleetPane is one pane with its agent and the state its screen shows.
type FleetPane struct {
	PaneInfo
	// Server is the tmux server's key (PID-STARTTIME), which outboxes and session folders record.
	Server string `json:"server"`
	// Agent is the profile detection chose (claude, codex, shell, reader, generic...).
	Agent    string `json:"agent"`
	State    string `json:"state"`
	Evidence string `json:"evidence,omitempty"`
}

// screensReader is the optional paneops call that captures many panes at once.
type screensReader interface {
	Screens(ctx context.Context, panes []messages.PaneID) (map[messages.PaneID]profile.Screen, error)
}

type screenReader interface {
	Screen(ctx context.Context, pane messages.PaneID) (profile.Screen, error)
}

// sigsReader is the optional paneops call that lists the panes with their screen signatures.
type sigsReader interface {
	PanesSigs(ctx context.Context, scope paneops.Scope) ([]paneops.Pane, []paneops.ScreenSig, error)
}

// fleetShot is a pane's last capture and what its screen looked like to tmux then.
type fleetShot struct {
	sig    paneops.ScreenSig
	pid    int
	at     int64 // the second (unix) the capture was asked in
	screen profile.Screen
}

// fresh says whether shot still shows the pane: same process, cursor and size, and no output in
// its window since the second the capture was asked in (tmux counts activity in whole seconds,
// so output in that same second counts as after it).
func (sh fleetShot) fresh(pid int, sig paneops.ScreenSig) bool {
	return sh.pid == pid && sh.sig.CursorX == sig.CursorX && sh.sig.CursorY == sig.CursorY &&
		sh.sig.Width == sig.Width && sh.sig.Height == sig.Height && sig.Activity < sh.at
}

// Tmux is what the fleet reads from tmux; a paneops.Client, or one that keeps a tmux client
// open for reads that repeat (paneops.Control). Screens, when it has it, captures many panes in
// one call.
type Tmux interface {
	ServerInfo(ctx context.Context) (paneops.ServerInfo, error)
	Panes(ctx context.Context, scope paneops.Scope) ([]paneops.Pane, error)
}

// Fleet reads the panes of a scope again and again, detecting each pane's profile only when the
// pane's process or foreground command changed since the last read.
type Fleet struct {
	e     *Finder
	tmux  Tmux
	scope paneops.Scope
	srv   string
	known map[messages.PaneID]fleetDet
	shots map[messages.PaneID]fleetShot
}

type fleetDet struct {
	pid     int
	command string
	det     profile.Detection
}

// NewFleet returns a Fleet over the panes of scope.
func (f *Finder) NewFleet(scope paneops.Scope) *Fleet {
	return &Fleet{e: f, tmux: f.Tmux, scope: scope, known: map[messages.PaneID]fleetDet{}, shots: map[messages.PaneID]fleetShot{}}
}

// ReadThrough makes the fleet read tmux through t instead of the engine's client.
func (f *Fleet) ReadThrough(t Tmux) { f.tmux = t }

// Waiting is what waits on panes of server srv, read from disk (see Finder.Waiting).
func (f *Fleet) Waiting(ctx context.Context, srv string, panes []messages.PaneID) (*Waiting, error) {
	return f.e.Waiting(ctx, srv, panes)
}

// Recent returns up to n recent exchanges, the most recently active first (see
// Finder.RecentExchanges).
func (f *Fleet) Recent(ctx context.Context, n int) ([]*exchange.Exchange, error) {
	return f.e.RecentExchanges(ctx, n)
}

// Server returns the key of the tmux server last read ("" before the first read).
func (f *Fleet) Server() string { return f.srv }

// Read lists the panes in scope with their agent and state.
func (f *Fleet) Read(ctx context.Context) ([]FleetPane, error) {
	e := f.e
	if f.srv == "" {
		si, err := f.tmux.ServerInfo(ctx)
		if err != nil {
			return nil, err
		}
		f.srv = si.Key()
	}
	scope := f.scope
	scope.Self = e.Self
	var panes []paneops.Pane
	var sigs []paneops.ScreenSig
	var err error
	if sr, ok := f.tmux.(sigsReader); ok {
		panes, sigs, err = sr.PanesSigs(ctx, scope)
	} else {
		panes, err = f.tmux.Panes(ctx, scope)
	}
	if err != nil {
		f.srv = "" // the server may have restarted: ask again next time
		return nil, err
	}
	var names map[messages.PaneID]string
	if sigs == nil {
		names = namesOf(ctx, f.tmux) // the names come with the signatures where the client has them
	}
	seen := make(map[messages.PaneID]bool, len(panes))
	out := make([]FleetPane, len(panes))
	var boxes []messages.PaneID
	screens := map[messages.PaneID]profile.Screen{}
	sigOf := map[messages.PaneID]paneops.ScreenSig{}
	for i, p := range panes {
		seen[p.ID] = true
		k, ok := f.known[p.ID]
		if !ok || k.pid != p.PID || k.command != p.Command {
			det, _ := e.Detect(ctx, p, "")
			k = fleetDet{pid: p.PID, command: p.Command, det: det}
			f.known[p.ID] = k
		}
		out[i] = FleetPane{PaneInfo: PaneInfo{Pane: p, Self: p.ID == e.Self && e.Self != ""}, Server: f.srv, Agent: k.det.Name}
		if sigs != nil {
			out[i].Name = sigs[i].Name
		} else {
			out[i].Name = names[p.ID]
		}
		if k.det.Job != "" {
			out[i].Agent = profile.KindShell // its own shell runs a job: the shell is what a person sees
		}
		if k.det.Matched != nil {
			out[i].Programs = []string{k.det.Matched.Comm}
		} else if k.det.Foreground != nil {
			out[i].Programs = []string{k.det.Foreground.Comm}
		}
		if !p.Dead && k.det.Profile != nil && k.det.Profile.HasBox() {
			if sigs != nil {
				sigOf[p.ID] = sigs[i]
				if sh, ok := f.shots[p.ID]; ok && sh.fresh(p.PID, sigs[i]) {
					screens[p.ID] = sh.screen
					continue
				}
			}
			boxes = append(boxes, p.ID)
		}
	}
	for id := range f.known {
		if !seen[id] {
			delete(f.known, id)
		}
	}
	asked := time.Now().Unix()
	got := f.screens(ctx, boxes)
	pids := make(map[messages.PaneID]int, len(panes))
	for _, p := range panes {
		pids[p.ID] = p.PID
	}
	for _, id := range boxes {
		sc, ok := got[id]
		sig, signed := sigOf[id]
		if !ok || !signed {
			delete(f.shots, id)
		} else {
			f.shots[id] = fleetShot{sig: sig, pid: pids[id], at: asked, screen: sc}
		}
		if ok {
			screens[id] = sc
		}
	}
	for id := range f.shots {
		if _, ok := sigOf[id]; !ok {
			delete(f.shots, id) // gone, or no longer a pane with an input box
		}
	}
	for i := range out {
		k := f.known[out[i].ID]
		sc, ok := screens[out[i].ID]
		out[i].State, out[i].Evidence = PaneStateOf(out[i].Pane, k.det, sc, ok)
	}
	return out, nil
}

// screens captures the panes in one tmux call when the client can, else one call each; a pane
// that cannot be captured (it closed in between) is left out.
func (f *Fleet) screens(ctx context.Context, panes []messages.PaneID) map[messages.PaneID]profile.Screen {
	if len(panes) == 0 {
		return nil
	}
	if sr, ok := f.tmux.(screensReader); ok {
		if m, err := sr.Screens(ctx, panes); err == nil {
			return m
		}
	}
	m := map[messages.PaneID]profile.Screen{}
	if sr, ok := f.tmux.(screenReader); ok {
		for _, p := range panes {
			if s, err := sr.Screen(ctx, p); err == nil {
				m[p] = s
			}
		}
	}
	return m
}

// PaneStateOf names a pane's state from its detection and, for a profile with an input box, its
// screen (captured says whether sc holds one). It returns the state and the evidence for it.
func PaneStateOf(p paneops.Pane, det profile.Detection, sc profile.Screen, captured bool) (string, string) {
	if p.Dead {
		return PaneGone, "the pane's program has exited"
	}
	if det.Job != "" {
		return PaneBusy, det.Job
	}
	prof := det.Profile
	if prof == nil || !prof.HasBox() {
		if prof != nil && prof.Kind == profile.KindReader {
			return PaneIdle, "a line reader waits for input"
		}
		return PaneUnknown, det.Reason
	}
	if !captured {
		return PaneUnknown, "its screen could not be read"
	}
	in := prof.Inspect(sc)
	switch {
	case in.Found && len(in.Lines) > 0 && !in.Pasted:
		return PaneTyping, "its input holds " + messages.SanitizeField(strings.Join(in.Lines, " "))
	case in.Busy:
		return PaneBusy, "its screen shows it working (" + in.State() + ")"
	case in.Starting:
		return PaneStarting, "only its start-up rows are on screen"
	case in.Found && in.Pasted:
		return PaneBusy, "a paste waits in its input"
	case in.Found:
		return PaneIdle, "its input is empty"
	case prof.Kind == profile.KindAgent:
		return PanePermission, "its input box is not on screen: a menu or a permission prompt"
	}
	return PaneUnknown, "its input is not on screen"
}

// Waiting is what waits on panes, read from disk: mail queued in each pane's outbox and requests
// sent to each pane that have no response yet, each with the time it started waiting.
type Waiting struct {
	Queued map[messages.PaneID][]time.Time `json:"queued"`
	Open   map[messages.PaneID][]time.Time `json:"open"`
}

// Waiting reads the outboxes of panes on server srv and the session folders whose worker is one
// of panes (on that server) for requests without a response. Only those folders are read, so the
// cost follows the panes shown, not the size of the root.
func (fi *Finder) Waiting(ctx context.Context, srv string, panes []messages.PaneID) (*Waiting, error) {
	w := &Waiting{Queued: map[messages.PaneID][]time.Time{}, Open: map[messages.PaneID][]time.Time{}}
	root, found, err := fi.ReadRoot()
	if err != nil {
		return nil, err
	}
	if !found {
		return w, nil // no root yet: nothing waits
	}
	want := make(map[messages.PaneID]bool, len(panes))
	for _, p := range panes {
		want[p] = true
		for _, m := range fi.Mail.Pending(root, srv, p) {
			w.Queued[p] = append(w.Queued[p], m.QueuedAt)
		}
	}
	dirs, _, err := exchange.SessionDirs(root)
	if err != nil {
		return nil, err
	}
	for _, dir := range dirs {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		sn, err := messages.ParseSessionName(filepath.Base(dir))
		if err != nil || !want[sn.Worker] {
			continue
		}
		if m, err := exchange.ReadMeta(dir); err != nil || m.Server != srv {
			continue
		}
		files, _, err := exchange.ListSeq(dir)
		if err != nil {
			continue
		}
		answered := map[int]bool{}
		for _, f := range files {
			if f.Kind == messages.KindResponse {
				answered[f.N-1] = true
			}
		}
		for _, f := range files {
			if f.Kind != messages.KindRequest || answered[f.N] {
				continue
			}
			x := exchange.LoadExchange(dir, f.N, false)
			if x.Status == exchange.StatusPending {
				w.Open[sn.Worker] = append(w.Open[sn.Worker], x.SentAt)
			}
		}
	}
	return w, nil
}

// RecentExchanges returns up to n recent exchanges, the most recently active first: session
// folders are read in the order of their last change (a new file in a folder changes its time),
// newest first, each from its newest request, and only until n are found, so the first rows of a
// root of thousands of exchanges come in milliseconds. An exchange's activity is its last logged
// event (else when it was sent).
func (f *Finder) RecentExchanges(ctx context.Context, n int) ([]*exchange.Exchange, error) {
	root, found, err := f.ReadRoot()
	if err != nil || !found {
		return nil, err
	}
	dirs, _, err := exchange.SessionDirs(root)
	if err != nil {
		return nil, err
	}
	type dated struct {
		dir string
		mod time.Time
	}
	ds := make([]dated, 0, len(dirs))
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil {
			ds = append(ds, dated{d, st.ModTime()})
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].mod.After(ds[j].mod) })
	var out []*exchange.Exchange
	for _, d := range ds {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// Enough rows: the feed shows what happens from now on, and 'wcomm history' has the rest.
		// (An older folder may hold an exchange whose log changed later; its next event reaches
		// the live feed anyway.)
		if len(out) >= n {
			break
		}
		files, _, err := exchange.ListSeq(d.dir)
		if err != nil {
			continue
		}
		for i := len(files) - 1; i >= 0; i-- {
			if files[i].Kind != messages.KindRequest {
				continue
			}
			x := exchange.LoadExchange(d.dir, files[i].N, false)
			out = append(out, x)
			if len(out) >= n {
				break // newest requests first: the folder's older ones would not be shown
			}
		}
		sort.SliceStable(out, func(i, j int) bool { return Activity(out[i]).After(Activity(out[j])) })
		if len(out) > n {
			out = out[:n]
		}
	}
	return out, nil
}

// Activity is when an exchange last changed: its last logged event, else when it was sent.
func Activity(x *exchange.Exchange) time.Time {
	if len(x.Events) > 0 {
		return x.Events[len(x.Events)-1].At
	}
	return x.SentAt
}
