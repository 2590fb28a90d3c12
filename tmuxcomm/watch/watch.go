package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
)

// The feed's kinds of subject.
const (
	FeedSession  = "session"  // a session folder appeared
	FeedExchange = "exchange" // a request and its response
	FeedQuestion = "question" // a question and its answer
	FeedFile     = "file"     // an entry changed in one of WatchOptions.Also's folders
)

// Feed event names. An exchange's delivery states (StatePasted, StateSubmitted, StateRefused,
// StateUndelivered, StateAnswered, StateNotified, StateAwaitWoken, StateNotifyLost) are event
// names as they are; "written" is reported as EventRequest.
const (
	EventSession       = "session"
	EventRequest       = "request"
	EventBroadcast     = "broadcast" // the request is one of a broadcast (Detail["broadcast"])
	EventAsked         = "asked"
	EventAnswered      = "answered"
	EventAutoAnswered  = "auto-answered"
	EventCapExceeded   = "cap-exceeded"
	EventStale         = "stale"
	EventResolved      = "resolved"
	EventAnswerInvalid = "answer-invalid" // an answer attempt was refused; the question stays open
	EventAnswerLate    = "answer-stale"   // an answer came after the question was closed
	EventChanged       = "changed"        // an entry of a FeedFile folder was written or added
)

// MinRescan is the shortest safety rescan: a watch that others act on hears of a change by its
// file events, and looks again only against events lost.
const MinRescan = time.Second

// WatchEvent is one thing that happened under the root.
type WatchEvent struct {
	At      time.Time `json:"at"`
	Session string    `json:"session"`
	Kind    string    `json:"kind"`
	// Seq is the request's number for an exchange, the question's number for a question.
	Seq int `json:"seq,omitempty"`
	// ID is the request id of an exchange, "{task}.q{seq}" for a question.
	ID     string            `json:"id,omitempty"`
	Event  string            `json:"event"`
	Detail map[string]string `json:"detail,omitempty"`
	Path   string            `json:"path,omitempty"`
}

// Options filter and start a Watch.
type WatchOptions struct {
	// Session is one session folder's name; "" watches every session.
	Session string
	// Since replays, at the start, the events of the last Since found on disk; 0 reports only
	// what happens from now on.
	Since time.Duration
	// Questions reports the questions' events alone (and the sessions'): an exchange's files are
	// not read. The waits that act on a question's change (Follow) want nothing else.
	Questions bool
	// Rescan, when more than 0, looks at the whole root again this often, as after lost events:
	// the safety rescan of a feed that others act on (raised to MinRescan when shorter).
	Rescan time.Duration
	// Also names more folders whose changes are news to the watcher (the folder of the agent's
	// own state file, which the permission hook reads): each change in one is reported as an
	// event of kind FeedFile, its Path the entry's. One inotify instance watches them all.
	Also []string

	// Started, when set, is called once the watches are in place and the replay is done (tests).
	Started func()
}

// ErrStopWatch may be returned by a Watch callback to end the watch without an error.
var ErrStopWatch = errors.New("stop watching")

// Watch reports events under the root as they happen, by file events (one inotify instance for
// the root and every session folder), until ctx ends or emit returns an error: ErrStopWatch ends
// it with a nil error, any other error is returned. Memory grows with the number of files under
// the root, never with the time watched or the size of a log: logs are read from where the last
// read stopped, a bounded chunk at a time.
func (l *Lookout) Watch(ctx context.Context, o WatchOptions, emit func(WatchEvent) error) error {
	root, err := l.RootDir(true)
	if err != nil {
		return err
	}
	if o.Session != "" {
		if _, err := messages.ParseSessionName(o.Session); err != nil {
			return fmt.Errorf("session %q is not a session folder name such as 20260117-120000-o6-w7: %w",
				messages.SanitizeField(o.Session), err)
		}
		// A session folder is made by the first send between two panes, never later under the
		// same name (its stamp is that send's time): one that is not there will not come.
		if _, err := os.Lstat(filepath.Join(root, o.Session)); errors.Is(err, fs.ErrNotExist) {
			return store.Kindf(store.ErrNotFound, "no session folder %s under %s; run 'wcomm history' to list them", o.Session, root)
		}
	}
	tw, err := store.NewTreeWatcher()
	if err != nil {
		return err
	}
	defer tw.Close()
	if err := tw.Add(root); err != nil {
		return err
	}
	f := &feed{root: root, only: o.Session, tw: tw, sessions: map[string]*feedSession{}, questionsOnly: o.Questions}
	for _, dir := range o.Also {
		dir = filepath.Clean(dir)
		if err := tw.Add(dir); err != nil {
			return err
		}
		if f.also == nil {
			f.also = map[string]bool{}
		}
		f.also[dir] = true
	}

	// The watches are in place before the first look, so nothing that happens in between is lost;
	// what the look and a later event both see is reported once, as the state remembers it.
	f.quiet, f.initial = o.Since <= 0, true
	if o.Since > 0 {
		f.cutoff = time.Now().Add(-o.Since) // held against file times: the real clock
	}
	f.rescanRoot()
	f.quiet, f.initial, f.cutoff = false, false, time.Time{}
	if o.Since > 0 {
		cutoff := l.Now().Add(-o.Since)
		var keep []keyedEvent
		for _, k := range f.out {
			if !k.ev.At.Before(cutoff) {
				keep = append(keep, k)
			}
		}
		f.out = keep
	}
	stop := func(err error) error {
		if errors.Is(err, ErrStopWatch) {
			return nil
		}
		return err
	}
	if err := f.flush(emit); err != nil {
		return stop(err)
	}
	if o.Started != nil {
		o.Started()
	}
	rescan := o.Rescan
	if rescan > 0 && rescan < MinRescan {
		rescan = MinRescan
	}
	lastLook := time.Now()
	for {
		// The watch sleeps until an event or its rescan: a daemon (the bridge, the console)
		// watches all day, and a wake-up it does not need is a cost a laptop pays all day.
		var until time.Time
		if rescan > 0 {
			until = lastLook.Add(rescan)
		}
		evs, err := tw.NextUntil(ctx, until)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return fmt.Errorf("watch %s: %w", root, err)
		}
		if rescan > 0 && time.Since(lastLook) >= rescan {
			lastLook = time.Now()
			evs = append(evs, store.TreeEvent{Overflow: true})
		}
		for _, ev := range evs {
			if ev.Gone && ev.Dir == root {
				// Nothing more can happen under it: those who follow the feed hear that it ended.
				return store.Kindf(store.ErrNotFound, "the root %s is gone (removed while watched); watch again once it is back", root)
			}
		}
		f.handle(evs)
		if err := f.flush(emit); err != nil {
			return stop(err)
		}
	}
}
