package watch

// The watch feed's state: what one Watch has reported, per session folder, and how it
// looks again at the folders a batch of file events names.

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// feed is the state of one Watch: what it has reported, per session folder.
type feed struct {
	root     string
	only     string
	tw       *store.TreeWatcher
	sessions map[string]*feedSession
	quiet    bool // record what exists without reporting it (the start without replay)
	initial  bool // the first look, at the start
	// cutoff, during the first look with a replay (--since), is the oldest time replayed: an
	// exchange whose files were all last written before it is recorded quietly, not read.
	cutoff time.Time
	out    []keyedEvent
	// questionsOnly reads no exchange (WatchOptions.Questions); also holds the folders whose
	// changes are reported as they are (WatchOptions.Also).
	questionsOnly bool
	also          map[string]bool
	lastFile      time.Time
}

type feedSession struct {
	name string
	dir  string
	born time.Time // sort key of the session's own event: its files' events come after it
	ex   map[int]*feedExchange
	qs   map[string]*feedQuestion
}

type feedExchange struct {
	request   bool // reported (or there before the feed began)
	broadcast bool // its broadcast reported (the log's written event names it)
	answered  bool
	id        string
	unread    bool   // recorded before the feed began without reading its request (id unknown)
	respName  string // the response file's name, from the request's instructions
	logOff    int64
	last      time.Time // sort key of the last event: keeps the exchange's events in order
}

type feedQuestion struct {
	id      string // the question's id from its file, else "{task}.q{seq}"
	asked   bool
	decided bool
	closed  bool
	logOff  int64
	last    time.Time
}

// keyedEvent orders events of one batch: by time, except that an exchange's or a question's own
// events never swap. File times come from the kernel's coarse clock (a few ms behind), log times
// from the writer's clock, so time alone could put an answer before its submit.
type keyedEvent struct {
	key time.Time
	ev  WatchEvent
}

func (f *feed) add(last *time.Time, ev WatchEvent) {
	if f.quiet {
		return
	}
	key := ev.At
	if key.Before(*last) {
		key = *last
	}
	*last = key
	f.out = append(f.out, keyedEvent{key: key, ev: ev})
}

func (f *feed) flush(emit func(WatchEvent) error) error {
	out := f.out
	f.out = nil
	sort.SliceStable(out, func(i, j int) bool { return out[i].key.Before(out[j].key) })
	for _, k := range out {
		if err := emit(k.ev); err != nil {
			return err
		}
	}
	return nil
}

// handle looks again at the folders the events name, each once, in the order first named.
func (f *feed) handle(evs []store.TreeEvent) {
	var dirs []string
	seen := map[string]bool{}
	names := map[string][]string{} // per folder, the entries named; nil: every one
	overflow := false
	for _, ev := range evs {
		if ev.Overflow {
			overflow = true
			continue
		}
		if ev.Gone {
			continue // a folder removed: nothing in it to read
		}
		if f.also[ev.Dir] {
			// Not the root's: reported as it is, for the watcher to look at what it reads there.
			f.add(&f.lastFile, WatchEvent{At: time.Now(), Kind: FeedFile, Event: EventChanged, Path: filepath.Join(ev.Dir, ev.Name)})
			continue
		}
		if overflow {
			continue
		}
		if ev.Dir == f.root {
			if ev.Name != "" {
				f.newEntry(ev.Name)
			}
			continue
		}
		if !seen[ev.Dir] {
			seen[ev.Dir] = true
			dirs = append(dirs, ev.Dir)
			names[ev.Dir] = []string{}
		}
		if names[ev.Dir] != nil && ev.Name != "" {
			names[ev.Dir] = append(names[ev.Dir], ev.Name)
		} else {
			names[ev.Dir] = nil // the folder itself: look at all of it
		}
	}
	if overflow {
		// Lost events may have been the other folders' too: each is reported changed.
		for _, dir := range slices.Sorted(maps.Keys(f.also)) {
			f.add(&f.lastFile, WatchEvent{At: time.Now(), Kind: FeedFile, Event: EventChanged, Path: dir})
		}
		f.rescanRoot()
		return
	}
	for _, dir := range dirs {
		if s := f.sessions[filepath.Base(dir)]; s != nil && s.dir == dir {
			f.scanSession(s, names[dir]...)
		}
	}
}

// rescanRoot looks at every session folder: at the start, and after lost events.
func (f *feed) rescanRoot() {
	entries, err := os.ReadDir(f.root)
	if err != nil {
		return
	}
	for _, ent := range entries {
		f.newEntry(ent.Name())
	}
	for _, s := range f.sortedSessions() {
		f.scanSession(s)
	}
}

func (f *feed) sortedSessions() []*feedSession {
	out := make([]*feedSession, 0, len(f.sessions))
	for _, s := range f.sessions {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// newEntry takes up an entry of the root when it is a session folder (of the filter) not yet
// watched: it is watched, reported, and looked at.
func (f *feed) newEntry(name string) {
	if _, known := f.sessions[name]; known || strings.HasPrefix(name, ".") || (f.only != "" && name != f.only) {
		return
	}
	sn, err := messages.ParseSessionName(name)
	if err != nil {
		return
	}
	dir := filepath.Join(f.root, name)
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() {
		return
	}
	if err := f.tw.Add(dir); err != nil {
		return
	}
	s := &feedSession{name: name, dir: dir, ex: map[int]*feedExchange{}, qs: map[string]*feedQuestion{}}
	f.sessions[name] = s
	detail := map[string]string{"orchestrator": string(sn.Orchestrator), "worker": string(sn.Worker)}
	// The folder's birth: its metadata's time; else, while the folder is new, now; else its
	// name's stamp.
	at := time.Now()
	if m, err := exchange.ReadMeta(dir); err == nil && !m.Created.IsZero() {
		at = m.Created
	} else if f.initial {
		at, _ = time.ParseInLocation(messages.StampLayout, sn.StartedAt, time.Local)
	}
	f.add(&s.born, WatchEvent{At: at, Session: name, Kind: FeedSession, Event: EventSession, Detail: detail, Path: dir})
	if !f.quiet {
		f.scanSession(s)
	}
}
