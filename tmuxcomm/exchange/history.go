package exchange

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
)

// Parse reads a RESPONSE line (with any text around it, as a prompt shows it) and returns the
// exchange it names with both bodies. The path must lie inside the root: a notification is text a
// worker controls, and following it elsewhere would read any file.
func (b *Book) Parse(ctx context.Context, text string) (*Exchange, error) {
	n, err := messages.FindNotification(text)
	if err != nil {
		return nil, err
	}
	root, err := b.RootDir(false)
	if err != nil {
		return nil, err
	}
	x, err := b.byPath(root, n.Path)
	if err != nil {
		return nil, err
	}
	x = LoadExchange(x.Dir, x.Seq, true)
	if x.StartedAt != n.StartedAt || x.Orchestrator != n.Orchestrator || x.Worker != n.Worker {
		x.Problems = append(x.Problems, fmt.Sprintf("the line says started_at=%s orchestrator=%s worker=%s; the files say started_at=%s orchestrator=%s worker=%s",
			n.StartedAt, n.Orchestrator, n.Worker, x.StartedAt, x.Orchestrator, x.Worker))
	}
	return x, nil
}

// Show returns one exchange whole, by id or path.
func (b *Book) Show(ctx context.Context, ref string) (*Exchange, error) {
	if ref == "" {
		return nil, fmt.Errorf("name the exchange by id or path")
	}
	x, err := b.Locate(ctx, ref, RoleOrchestrator)
	if err != nil {
		return nil, err
	}
	x = LoadExchange(x.Dir, x.Seq, true)
	x.Host = MirrorHost(x)
	return x, nil
}

// SessionSummary is one session folder with its exchanges.
type SessionSummary struct {
	Name         string          `json:"session"`
	Dir          string          `json:"dir"`
	StartedAt    string          `json:"started_at"`
	Orchestrator messages.PaneID `json:"orchestrator"`
	Worker       messages.PaneID `json:"worker"`
	Server       string          `json:"server,omitempty"`
	Exchanges    []*Exchange     `json:"exchanges"`
	// Foreign names files in the folder that are not part of the protocol.
	Foreign []string `json:"foreign,omitempty"`
	// Orphans are response files without a request.
	Orphans  []string `json:"orphans,omitempty"`
	Problems []string `json:"problems,omitempty"`
}

// HistoryOptions filter History.
type HistoryOptions struct {
	Session string // a session folder name; "" = all
	Pending bool   // only exchanges without a response (delivered or not)
	// Encoded says the caller only encodes the sessions (SessionSummary.AppendJSON): an exchange
	// the index holds then comes as its encoding, with only Seq, Status, Dir and ResponsePath set.
	Encoded bool
}

// History lists the sessions under the root with their exchanges, oldest first. Damaged and
// foreign files are named, never fatal.
func (b *Book) History(ctx context.Context, o HistoryOptions) ([]SessionSummary, []string, error) {
	var out []SessionSummary
	foreign, err := b.HistoryEach(ctx, o, nil, func(s SessionSummary) error {
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, foreign, nil
}

// HistoryEach is History one session at a time, in the same order, so a caller can print each as
// it comes instead of holding thousands of exchanges: start is called first with the foreign
// names (nil start: not called), then each with every session. Sessions are read by as many
// goroutines as there are CPUs, a few ahead of the one being handed over; reading 30,000 small
// files is mostly system-call time, which the CPUs share.
func (b *Book) HistoryEach(ctx context.Context, o HistoryOptions, start func(foreign []string) error, each func(SessionSummary) error) ([]string, error) {
	root, found, err := b.ReadRoot()
	if err != nil {
		return nil, err
	}
	if !found {
		// No root yet: no exchanges, which is a listing like any other.
		if start != nil {
			return nil, start(nil)
		}
		return nil, nil
	}
	var dirs, foreign []string
	if o.Session != "" {
		if _, err := messages.ParseSessionName(o.Session); err != nil {
			return nil, fmt.Errorf("session %q: %w", messages.SanitizeField(o.Session), err)
		}
		dirs = []string{filepath.Join(root, o.Session)}
	} else {
		dirs, foreign, err = SessionDirs(root)
		if err != nil {
			return nil, err
		}
	}
	// One reading of the file system's clock for every folder, before anything is stamped (none
	// for a root of no session folder, which gets no index folder either).
	var clk fsClock
	if !b.noIndex && len(dirs) > 0 {
		clk = b.readClock(root)
	}
	if o.Session != "" {
		// One named session: its problems decide whether it exists, before anything is printed.
		s := b.summarize(dirs[0], o, clk)
		if len(s.Problems) > 0 && len(s.Exchanges) == 0 {
			return nil, store.Kindf(store.ErrNotFound, "session %s: %s", o.Session, s.Problems[0])
		}
		if start != nil {
			if err := start(foreign); err != nil {
				return nil, err
			}
		}
		if o.Pending && len(s.Exchanges) == 0 {
			return foreign, nil
		}
		return foreign, each(s)
	}
	if start != nil {
		if err := start(foreign); err != nil {
			return nil, err
		}
	}
	ahead := 2 * runtime.GOMAXPROCS(0)
	results := make([]chan SessionSummary, len(dirs))
	for i := range results {
		results[i] = make(chan SessionSummary, 1)
	}
	slots := make(chan struct{}, ahead)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i, dir := range dirs {
			select {
			case slots <- struct{}{}:
			case <-stop:
				return
			}
			go func() { results[i] <- b.summarize(dir, o, clk) }()
		}
	}()
	for i := range dirs {
		var s SessionSummary
		select {
		case s = <-results[i]:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		<-slots
		if o.Pending && len(s.Exchanges) == 0 {
			continue
		}
		if err := each(s); err != nil {
			return nil, err
		}
	}
	if !b.noIndex {
		pruneIndex(root, dirs)
	}
	return foreign, nil
}

// readClock reads the file system's clock under root (readFSClock); the test's clock when set.
func (b *Book) readClock(root string) fsClock {
	c := readFSClock(root)
	if b.clock != nil {
		c.ns = b.clock()
	}
	return c
}

// summarize lists one session folder, from its index where the index still holds, else from its
// files; clk is the file system's clock read before the listing began.
func (b *Book) summarize(dir string, o HistoryOptions, clk fsClock) SessionSummary {
	name := filepath.Base(dir)
	s := SessionSummary{Name: name, Dir: dir}
	if sn, err := messages.ParseSessionName(name); err == nil {
		s.StartedAt, s.Orchestrator, s.Worker = sn.StartedAt, sn.Orchestrator, sn.Worker
	}
	if m, err := ReadMeta(dir); err == nil {
		s.Server = m.Server
	}
	// st nil: nothing is stamped or indexed, every exchange is read from its files.
	var st *stamper
	var old *sessionIndex
	idx := &sessionIndex{dir: dir, entries: map[int]*indexEntry{}}
	folderOK := false
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	wall := now().Add(-indexSettle).UnixNano()
	if !b.noIndex {
		if st, _ = openStamper(dir); st != nil {
			defer st.close()
			var dev uint64
			idx.folder, dev, folderOK = st.folder()
			old = readIndex(dir)
			// The bound (see index.go): the file system's clock when it is this folder's, else
			// the wall clock less indexSettle, both read before anything here is stamped.
			if clk.ok && folderOK && dev == clk.dev {
				idx.bound = clk.ns
			} else {
				idx.bound = wall
			}
		}
	}
	// Written only when the next reader will trust some of it (its listing or an entry, settled):
	// an index of files all changed at or after its bound is never trusted, so a first history
	// of files written in the clock's last tick writes none.
	write := false
	var names []string
	var err error
	if old != nil && folderOK && old.folder == idx.folder && settled(old.bound, old.folder) {
		names = old.names // no name was added, removed or renamed since
	} else if names, err = readNames(dir); err != nil {
		s.Problems = append(s.Problems, err.Error())
		return s
	} else {
		// Worth writing when the next reader will trust the listing.
		write = write || (folderOK && settled(idx.bound, idx.folder))
	}
	idx.names = names
	files, other := classifySeq(slices.Clone(names))
	s.Foreign = other
	var order []int
	claimed := map[string]bool{}
	for _, f := range files {
		if f.Kind != messages.KindRequest {
			continue
		}
		x := indexed(old, st, dir, f.N, o.Encoded)
		if x == nil {
			// Each file read by name in the folder and stamped as it is opened to be read, not by
			// a stat of its own (fileReads).
			var r *fileReads
			if st != nil {
				r = &fileReads{dirfd: st.fd}
			}
			x = loadExchange(dir, f.N, false, false, r)
			var stamped [3]fileStamp
			ok := r != nil
			if ok {
				stamped, ok = r.stamped()
			}
			if b.loads != nil {
				b.loads.Add(1)
			}
			if ok && indexable(x, dir) {
				if raw, err := x.indented(); err == nil {
					x.raw = raw
					idx.entries[f.N] = &indexEntry{seq: f.N, status: x.Status, stamps: stamped, raw: raw}
					// Worth writing when the next reader will trust it.
					write = write || settled(idx.bound, stamped[:]...)
				}
			}
		} else {
			idx.entries[f.N] = old.entries[f.N]
		}
		if idx.entries[f.N] != nil {
			order = append(order, f.N)
		}
		claimed[filepath.Base(x.ResponsePath)] = true
		// Pending: everything without a response, refused, undelivered, queued and expired
		// requests included (they can be sent again with send --resend).
		if o.Pending && x.Status != StatusPending && x.Status != StatusUndelivered {
			continue
		}
		s.Exchanges = append(s.Exchanges, x)
	}
	for _, f := range files {
		if f.Kind == messages.KindResponse && !claimed[f.Name] {
			s.Orphans = append(s.Orphans, f.Name)
		}
	}
	if write || (old != nil && len(old.entries) != len(order)) {
		writeIndex(idx, order)
	}
	return s
}

// indexed is request n's exchange as old holds it; nil when old has no entry for it, or one whose
// files no longer carry its stamps or had not settled.
func indexed(old *sessionIndex, st *stamper, dir string, n int, encoded bool) *Exchange {
	if old == nil || st == nil {
		return nil
	}
	ent := old.entries[n]
	if ent == nil || !settled(old.bound, ent.stamps[:]...) {
		return nil
	}
	now, ok := st.stamps(n)
	if !ok || now != ent.stamps {
		return nil
	}
	x, err := ent.exchange(dir, encoded)
	if err != nil {
		return nil
	}
	return x
}

// Age formats how long ago t was, for listings: "4s", "3m", "2h", "5d".
func Age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}

var _ = context.Background
