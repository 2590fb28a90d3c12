package tmuxcomm

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// An await and the notify that answers it may run in one process: the resident runs the handed
// commands of its root, so a `send --wait` waits in it while the worker's `notify` writes the
// response in it. The await wakes on the rename's inotify event, but only once the runtime looks
// at its poller, which it does when nothing else is ready to run: the resident has one P, which
// the notify kept for the rest of its work (its log, its output, the wait for its caller), and
// the await went on 0.36 ms after the rename it was waiting for (median, measured). So a notify
// tells the awaits of its own process that wait for the response it has just published whole,
// and yields: the await runs next, while the notify finishes. Measured in the commands round
// trip (two builds in one tmux server taking turns, both orders, about 1,500 trips each): the
// rename to the waiting send's wake 0.59 -> 0.23 ms, the trip 0.3-0.5 ms shorter. The notify
// also holds its response's fsync until those awaits have returned (wake's settle).

// awaitNudges are this process's awaits that wait on a folder's watch, by the response's path.
type awaitNudges struct {
	mu sync.Mutex
	m  map[string][]*awaitNudge
}

// awaitNudge is one await's: whole is set once a notify of this process published the response,
// wake ends the await's wait on its watch (store.TreeWatcher.Nudge), and done is closed once
// the await has returned.
type awaitNudge struct {
	whole atomic.Bool
	wake  func()
	done  chan struct{}
}

var nudges = &awaitNudges{m: map[string][]*awaitNudge{}}

// add records an await waiting for path; forget removes it once the await is done.
func (a *awaitNudges) add(path string, wake func()) (n *awaitNudge, forget func()) {
	n = &awaitNudge{wake: wake, done: make(chan struct{})}
	a.mu.Lock()
	a.m[path] = append(a.m[path], n)
	a.mu.Unlock()
	return n, func() {
		close(n.done)
		a.mu.Lock()
		defer a.mu.Unlock()
		list := a.m[path]
		for i, m := range list {
			if m == n {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(a.m, path)
		} else {
			a.m[path] = list
		}
	}
}

// waiting reports whether an await of this process waits for path.
func (a *awaitNudges) waiting(path string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.m[path]) > 0
}

// settleBound bounds how long a notify waits for the awaits it woke (settle): a caller that does
// not read the await's output holds it back, and the notify goes on after this.
const settleBound = 2 * time.Millisecond

// wake tells the awaits waiting for path that it was published whole, and yields the P: an
// await readied by its nudge is the next to run, ahead of the caller. settle waits, up to d, for
// those awaits to return, and reports whether they all did: a notify that holds its response's
// fsync until then (store.Syncs.Hold) leaves the resident's P to the await while it prints the
// response and its caller answers, where the fsync held it 0.3 ms or more (measured: from the
// waiting send's wake to its exit 0.65 -> 0.42 ms).
func (a *awaitNudges) wake(path string) (settle func(d time.Duration) bool) {
	a.mu.Lock()
	list := append([]*awaitNudge(nil), a.m[path]...)
	a.mu.Unlock()
	if len(list) == 0 {
		return func(time.Duration) bool { return true }
	}
	for _, n := range list {
		n.whole.Store(true)
		n.wake()
	}
	runtime.Gosched()
	return func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		for _, n := range list {
			select {
			case <-n.done:
			case <-t.C:
				return false
			}
		}
		return true
	}
}
