package store

import (
	"context"
	"time"
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

// Next waits for events, the safety tick or ctx, whichever comes first.
func (w *dirWatcher) Next(ctx context.Context) ([]DirEvent, error) {
	evs, err := w.t.Next(ctx)
	out := make([]DirEvent, 0, len(evs))
	for _, ev := range evs {
		if ev.Gone {
			continue
		}
		out = append(out, DirEvent{Name: ev.Name, Moved: ev.Moved})
	}
	return out, err
}
