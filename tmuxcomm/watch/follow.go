package watch

// Follow: the feed as a subscription, for the waits that act on a question's change (the
// permission hook, the bridge). Each hears of it from this one watcher of the root, by file
// events, with a slow safety rescan inside, instead of polling the files on its own.

import (
	"context"
	"errors"
)

// DefaultRescan is a follower's safety rescan when its options name none.
const DefaultRescan = 2 * MinRescan

// followBuffer is how many events wait for a slow reader before the feed waits for it.
const followBuffer = 64

// Follower is a running watch of the root (Follow). One built by hand (a test's feed) needs
// only C.
type Follower struct {
	// C receives the events as Watch reports them; it is closed when the watch ends (Err).
	C    <-chan WatchEvent
	done chan struct{}
	err  error
}

// Watcher runs a watch until ctx ends or emit returns an error: a Lookout's Watch, or the
// front door's.
type Watcher func(ctx context.Context, o WatchOptions, emit func(WatchEvent) error) error

// Follow starts watch with o (its Rescan DefaultRescan when 0) and returns once its watches are
// in place: anything that happens after it returns is on C. The watch ends with ctx, or with an
// error that Err reports once C is closed.
func Follow(ctx context.Context, o WatchOptions, watch Watcher) (*Follower, error) {
	if o.Rescan <= 0 {
		o.Rescan = DefaultRescan
	}
	ch := make(chan WatchEvent, followBuffer)
	fl := &Follower{C: ch, done: make(chan struct{})}
	started := make(chan struct{})
	then := o.Started
	o.Started = func() {
		close(started)
		if then != nil {
			then()
		}
	}
	go func() {
		defer close(fl.done)
		defer close(ch)
		fl.err = watch(ctx, o, func(ev WatchEvent) error {
			select {
			case ch <- ev:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	select {
	case <-started:
		return fl, nil
	case <-fl.done:
		if fl.err == nil {
			fl.err = errors.New("the watch ended before it started")
		}
		return nil, fl.err
	}
}

// Err is why the watch ended: nil while it runs and when ctx ended it.
func (f *Follower) Err() error {
	select {
	case <-f.done:
		if errors.Is(f.err, context.Canceled) || errors.Is(f.err, context.DeadlineExceeded) {
			return nil
		}
		return f.err
	default:
		return nil
	}
}

// Wake turns the events into a signal that something changed, for a wait that looks at the
// files itself when woken: many events between two looks are one wake. The channel is closed
// when the watch ends.
func (f *Follower) Wake() <-chan struct{} {
	wake := make(chan struct{}, 1)
	go func() {
		defer close(wake)
		for range f.C {
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	}()
	return wake
}
