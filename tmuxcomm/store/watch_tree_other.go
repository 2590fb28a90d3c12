//go:build !linux

package store

import (
	"context"
	"time"
)

// TreeWatcher without inotify: every tick reports an overflow, so the caller looks at every folder
// again. Slower, but the feed stays complete.
type TreeWatcher struct{}

// TreeEvent is Linux's; here every event is an Overflow.
type TreeEvent struct {
	Dir      string
	Name     string
	Moved    bool
	Written  bool
	Overflow bool
	Gone     bool
}

// NewTreeWatcher returns a watcher that only ticks.
func NewTreeWatcher() (*TreeWatcher, error) { return &TreeWatcher{}, nil }

// Add does nothing: every tick is an overflow.
func (w *TreeWatcher) Add(dir string) error { return nil }

// Close does nothing.
func (w *TreeWatcher) Close() error { return nil }

// Nudge does nothing: the ticks wake the waiter.
func (w *TreeWatcher) Nudge() {}

// NextUntil is Next: without events to wait for, the ticks are the watch.
func (w *TreeWatcher) NextUntil(ctx context.Context, until time.Time) ([]TreeEvent, error) {
	return w.Next(ctx)
}

// Next reports an overflow every 250 ms until ctx ends.
func (w *TreeWatcher) Next(ctx context.Context) ([]TreeEvent, error) {
	t := time.NewTimer(250 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return []TreeEvent{{Overflow: true}}, nil
	}
}

// settleSeeing says the watch cannot be kept: without inotify there is nothing to keep.
func (w *TreeWatcher) settleSeeing(saw func(name string)) bool { return false }
