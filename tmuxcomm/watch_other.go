//go:build !linux

package tmuxcomm

import (
	"context"
	"time"
)

// dirWatcher without inotify: a short poll, so await still wakes within tens of milliseconds.
type dirWatcher struct{}

type fsEvent struct {
	Name  string
	Close bool
	Moved bool
}

func newDirWatcher(dir string) (*dirWatcher, error) { return &dirWatcher{}, nil }

func (w *dirWatcher) Close() error { return nil }

func (w *dirWatcher) Next(ctx context.Context) ([]fsEvent, error) {
	t := time.NewTimer(20 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, nil
	}
}
