package web

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/wcomm/wcomm/internal/ui"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// What the hub keeps and how often it reads, as the console does (internal/ui): tmux once a
// second, the files again after a burst of feed events.
const (
	panesEvery  = time.Second
	reloadAfter = 100 * time.Millisecond
	maxFeed     = 200
	recentRows  = 60
)

// hub holds the page's model: what the console reads through the same Source, kept current by
// the same feed, and tells every open page when it changed.
type hub struct {
	src Source

	mu       sync.Mutex
	version  int
	panes    []fleet.FleetPane
	panesErr string
	server   string
	files    ui.Files
	filesErr string
	loaded   bool
	recent   []*exchange.Exchange
	feed     []watch.WatchEvent // newest first
	seen     map[string]bool
	subs     map[chan struct{}]bool
	kick     chan struct{} // an action was taken: read the files again
	changed  time.Time     // when the last change was published (the bench reads it)
}

func newHub(src Source) *hub {
	return &hub{src: src, seen: map[string]bool{}, subs: map[chan struct{}]bool{}, kick: make(chan struct{}, 1)}
}

// snapshot is the model at one version.
type snapshot struct {
	version  int
	panes    []fleet.FleetPane
	panesErr string
	files    ui.Files
	filesErr string
	loaded   bool
	recent   []*exchange.Exchange
	feed     []watch.WatchEvent
}

func (h *hub) snapshot() snapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	return snapshot{version: h.version, panes: h.panes, panesErr: h.panesErr, files: h.files, filesErr: h.filesErr,
		loaded: h.loaded, recent: h.recent, feed: h.feed}
}

// subscribe returns a channel that receives a value after each change, and its cancel.
func (h *hub) subscribe() (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	h.mu.Lock()
	h.subs[c] = true
	h.mu.Unlock()
	return c, func() {
		h.mu.Lock()
		delete(h.subs, c)
		h.mu.Unlock()
	}
}

// publish bumps the version and wakes every page; the caller holds mu.
func (h *hub) publish() {
	h.version++
	h.changed = time.Now()
	for c := range h.subs {
		select {
		case c <- struct{}{}:
		default: // it has a wake-up pending: it reads the newest model then
		}
	}
}

// run keeps the model current until ctx ends: the panes once a second, the files and the newest
// exchanges after each burst of feed events.
func (h *hub) run(ctx context.Context, feed ui.Watcher) {
	start := time.Now()
	h.readPanes(ctx)
	h.readFiles(ctx)
	h.readRecent(ctx)
	// The newest exchanges' latest events are the feed's first rows, as on the console.
	for _, x := range h.snapshot().recent {
		h.addEvent(ui.LastEvent(x))
	}
	events := make(chan watch.WatchEvent, 256)
	if feed != nil {
		go func() {
			err := feed(ctx, time.Since(start)+2*time.Second, func(ev watch.WatchEvent) {
				select {
				case events <- ev:
				case <-ctx.Done():
				}
			})
			if err != nil && ctx.Err() == nil {
				h.mu.Lock()
				h.filesErr = "the live feed stopped: " + err.Error()
				h.publish()
				h.mu.Unlock()
			}
		}()
	}
	tick := time.NewTicker(panesEvery)
	defer tick.Stop()
	var reload <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			h.readPanes(ctx)
		case ev := <-events:
			h.addEvent(ev)
			if reload == nil {
				reload = time.After(reloadAfter)
			}
		case <-h.kick:
			if reload == nil {
				reload = time.After(0)
			}
		case <-reload:
			reload = nil
			h.readFiles(ctx)
			h.readRecent(ctx)
		}
	}
}

// readPanes reads the panes, and publishes when they changed.
func (h *hub) readPanes(ctx context.Context) {
	p, err := h.src.Panes(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	errs := ""
	if err != nil {
		errs = err.Error()
	}
	if err == nil && p == nil {
		p = []fleet.FleetPane{}
	}
	if err == nil && reflect.DeepEqual(p, h.panes) && errs == h.panesErr {
		return
	}
	if err == nil {
		setChanged := len(p) != len(h.panes)
		for i := range p {
			if setChanged || p[i].ID != h.panes[i].ID {
				setChanged = true
				break
			}
		}
		h.panes = p
		if len(p) > 0 {
			h.server = p[0].Server
		}
		if setChanged {
			// What waits on the panes is read per pane: a new pane set needs a new read.
			go h.readFiles(ctx)
		}
	}
	h.panesErr = errs
	h.publish()
}

// readFiles reads the questions, approvals and what waits on the panes, and publishes them.
func (h *hub) readFiles(ctx context.Context) {
	h.mu.Lock()
	srv := h.server
	ids := make([]messages.PaneID, len(h.panes))
	for i, p := range h.panes {
		ids[i] = p.ID
	}
	h.mu.Unlock()
	f, err := h.src.Files(ctx, srv, ids)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.loaded = true
	if err != nil {
		h.filesErr = err.Error()
	} else {
		h.filesErr = ""
		if f.Waiting == nil {
			f.Waiting = h.files.Waiting
		}
		h.files = f
	}
	h.publish()
}

// readRecent reads the newest exchanges (each pane's latest are shown beside it).
func (h *hub) readRecent(ctx context.Context) {
	xs, err := h.src.Recent(ctx, recentRows)
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recent = xs
	h.publish()
}

// addEvent puts a feed event in the feed, newest first, once.
func (h *hub) addEvent(ev watch.WatchEvent) {
	k := ev.Session + "|" + ev.Kind + "|" + ev.ID + "|" + ev.Event + "|" + ev.At.UTC().Format(time.RFC3339Nano)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen[k] {
		return
	}
	h.seen[k] = true
	i, _ := slices.BinarySearchFunc(h.feed, ev, func(a, b watch.WatchEvent) int { return b.At.Compare(a.At) })
	feed := slices.Insert(slices.Clone(h.feed), i, ev)
	if len(feed) > maxFeed {
		feed = feed[:maxFeed]
	}
	h.feed = feed
	h.publish()
}

// poke makes the hub read the files again soon: an answer or a message from the page shows
// at once, whatever the feed's pace.
func (h *hub) poke() {
	select {
	case h.kick <- struct{}{}:
	default:
	}
}
