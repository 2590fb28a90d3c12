package store

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wcomm/wcomm/messages"
)

// safetyTick bounds every wait on file events: a lost event (an inotify queue overflow) costs
// latency, not a hang, because the waiter re-checks the state at least this often.
const safetyTick = 500 * time.Millisecond

// dirWatcher wakes a waiter when entries of one folder are created, renamed in, or written and
// closed: await and ask return within milliseconds of the file that answers them, instead of
// polling. It is a treeWatcher over a single folder.
type dirWatcher struct{ t *TreeWatcher }

// fsEvent is one event for an entry of the watched folder.
type DirEvent struct {
	Name  string
	Moved bool // renamed or linked in, so published whole
	// Written: a write into the file alone (see TreeEvent.Written), its writer still at work.
	Written bool
}

func NewDirWatcher(dir string) (*dirWatcher, error) {
	t, err := NewTreeWatcher()
	if err != nil {
		return nil, err
	}
	if err := t.Add(dir); err != nil {
		t.Close()
		return nil, err
	}
	return &dirWatcher{t: t}, nil
}

func (w *dirWatcher) Close() error { return w.t.Close() }

// Nudge ends a wait in Next now (TreeWatcher.Nudge).
func (w *dirWatcher) Nudge() { w.t.Nudge() }

// Next waits for events, the safety tick or ctx, whichever comes first.
func (w *dirWatcher) Next(ctx context.Context) ([]DirEvent, error) {
	evs, err := w.t.Next(ctx)
	out := make([]DirEvent, 0, len(evs))
	for _, ev := range evs {
		if ev.Gone {
			continue
		}
		out = append(out, DirEvent{Name: ev.Name, Moved: ev.Moved, Written: ev.Written})
	}
	return out, err
}

// DirWatches keeps the folder watches of a process that lives on (an MCP server, the resident)
// from one wait to the next. Making a watch costs an inotify instance, its registration with the
// runtime's poller, and an add whose kernel cost grows with the folder's entries (a session
// folder holds every exchange's files); closing one waits out a grace period. A server awaiting
// the same session again and again takes the watch it kept instead. Each watch has one user at
// a time: Take hands it out, Give hands it back.
type DirWatches struct {
	mu   sync.Mutex
	max  int
	idle []*DirWatch
}

// DirWatch is a watch of one folder from DirWatches.
type DirWatch struct {
	*dirWatcher
	dir string
	fi  os.FileInfo // the folder watched, nil: not to be kept

	// gen names this watch among every watch the process made (see Newest); newest is the
	// exchange file of the highest number made or renamed into the folder since the watch began,
	// as nextRequestNumber ranks them (a request above its number's response), and lost says an
	// event was lost since, so that newest may not be the highest.
	gen    uint64
	newest Newest
	lost   bool
}

// Newest is the highest numbered exchange file a watch saw made (N 0: none).
type Newest struct {
	N       int
	Request bool
}

// watchGen numbers the watches made.
var watchGen atomic.Uint64

// saw counts an entry made in the folder.
func (d *DirWatch) saw(name string) {
	n, k, ok := messages.ParseSeqFileName(name)
	if !ok || n < d.newest.N || (n == d.newest.N && (d.newest.Request || k != messages.KindRequest)) {
		return
	}
	d.newest = Newest{N: n, Request: k == messages.KindRequest}
}

// Next is dirWatcher's Next, counting what it tells of (see saw).
func (d *DirWatch) Next(ctx context.Context) ([]DirEvent, error) {
	evs, err := d.t.Next(ctx)
	out := make([]DirEvent, 0, len(evs))
	for _, ev := range evs {
		if ev.Overflow || ev.Gone {
			d.lost = true
		}
		if ev.Gone {
			continue
		}
		if !ev.Written {
			d.saw(ev.Name)
		}
		out = append(out, DirEvent{Name: ev.Name, Moved: ev.Moved, Written: ev.Written})
	}
	return out, err
}

// NewDirWatches keeps at most max watches idle (each is an inotify instance, of which a user
// has 128 by default); the oldest goes first.
func NewDirWatches(max int) *DirWatches { return &DirWatches{max: max} }

// Take returns a watch of dir: one kept, when it still watches that very folder (not a folder
// made at its path since) and lost no event, its pending events dropped; else a new one. As with
// NewDirWatcher, the watch is in place when Take returns: a file the caller then looks for and
// does not find is an event to come.
func (p *DirWatches) Take(dir string) (*DirWatch, error) {
	p.mu.Lock()
	var kept *DirWatch
	for i := len(p.idle) - 1; i >= 0; i-- {
		if p.idle[i].dir == dir {
			kept = p.idle[i]
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	if kept != nil {
		if fi, err := os.Lstat(dir); err == nil && os.SameFile(fi, kept.fi) && kept.t.settleSeeing(kept.saw) {
			return kept, nil
		}
		go kept.Close()
	}
	before, berr := os.Lstat(dir)
	w, err := NewDirWatcher(dir)
	if err != nil {
		return nil, err
	}
	d := &DirWatch{dirWatcher: w, dir: dir, gen: watchGen.Add(1)}
	// Kept only when the folder watched is surely the one at dir: the same before and after
	// the add, so not renamed away meanwhile.
	if after, aerr := os.Lstat(dir); berr == nil && aerr == nil && os.SameFile(before, after) {
		d.fi = after
	}
	return d, nil
}

// Give hands w back once its wait is over; ok false (its read failed) lets it go. The watch is
// closed in the background: closing waits out the kernel's grace period, which the caller, who
// has its answer, need not wait for.
func (p *DirWatches) Give(w *DirWatch, ok bool) {
	if !ok || w.fi == nil || p.max <= 0 {
		go w.Close()
		return
	}
	p.mu.Lock()
	p.idle = append(p.idle, w)
	var drop *DirWatch
	if len(p.idle) > p.max {
		drop = p.idle[0]
		p.idle = p.idle[1:]
	}
	p.mu.Unlock()
	if drop != nil {
		go drop.Close()
	}
}

// Newest tells the highest numbered exchange file the watch kept of dir saw made since it began,
// and which watch that is (gen), after taking in the events that wait: ok is false when no watch
// of that very folder is kept idle, or one lost an event (it is let go then, as Take would). A
// sender that looked at the folder's files after a watch's events were taken in knows, with it,
// the folder's newest exchange file from then on without looking again.
func (p *DirWatches) Newest(dir string) (newest Newest, gen uint64, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.idle) - 1; i >= 0; i-- {
		w := p.idle[i]
		if w.dir != dir {
			continue
		}
		if fi, err := os.Lstat(dir); err == nil && os.SameFile(fi, w.fi) && !w.lost && w.t.settleSeeing(w.saw) {
			return w.newest, w.gen, true
		}
		p.idle = append(p.idle[:i], p.idle[i+1:]...)
		go w.Close()
		return Newest{}, 0, false
	}
	return Newest{}, 0, false
}
