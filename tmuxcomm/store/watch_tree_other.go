//go:build !linux

package store

import (
	"context"
	"time"
)

// treeWatcher without inotify: every tick reports an overflow, so the caller looks at every folder
// again. Slower, but the feed stays complete.
type treeWatcher struct{}

type treeEvent struct {
	Dir      string
	Name     string
	Moved    bool
	Overflow bool
}

func newTreeWatcher() (*treeWatcher, error) { return &treeWatcher{}, nil }

func (w *treeWatcher) Add(dir string) error { return nil }

func (w *treeWatcher) Close() error { return nil }

func (w *treeWatcher) Next(ctx context.Context) ([]treeEvent, error) {
	t := time.NewTimer(250 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return []treeEvent{{Overflow: true}}, nil
	}
}
