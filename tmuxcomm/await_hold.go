package tmuxcomm

import (
	"context"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// A client of the MCP server sends and then awaits: two calls, and a worker quick to answer can
// publish its response between them. Its notify, finding no await waiting, then typed the
// RESPONSE line into the orchestrator's pane, whose agent was about to have the response from
// the await tool (measured with 8 scripted pairs on 2 cores: a line was typed in 84 % of the
// trips, and typing it cost the sender's engine, the tmux server and the pane about 1.3 ms of
// CPU a trip, 14 % of the whole).
//
// So a send made for such a client (SendOptions.HoldForAwait) holds the exchange's await lock
// itself, the shared flock on the request file that every await takes, from before the paste
// until the client's await has its own, or until the hold's time is up. A notify that finds the
// lock held records await-woken and types nothing, as for an await. When the time runs out, or
// the process ends, with no await come, the hold is let go and the line handed on: if the
// exchange was answered meanwhile and its notify, seeing the hold, typed nothing, the holder
// posts the RESPONSE line as that notify would have. A holder killed in that window leaves the
// response on disk unsignalled, as an await killed just after a notify looked at its lock does:
// `wcomm await`, `show` and `history` still find it.

// awaitHolds are this process's holds, by the path of the lock they hold.
type awaitHolds struct {
	mu sync.Mutex
	m  map[string]*awaitHold
}

// awaitHold is one: end lets it go, once; handOver true when an await took the lock over.
type awaitHold struct {
	once  sync.Once
	end   func(handOver bool)
	timer *time.Timer
}

var holds = &awaitHolds{m: map[string]*awaitHold{}}

// holdSettle bounds the wait, once a hold is let go, for the notify of an answer recorded while
// it stood to say whether it saw the hold: it logs that a moment after the answer.
const holdSettle = 2 * time.Second

// holdLockWait bounds a send's wait for the lock it holds: only a notify's or a delivery's probe
// (lock.IsLocked, an instant's exclusive lock) stands in its way, and a send never waits long
// for a hold it can do without.
const holdLockWait = 100 * time.Millisecond

// holdForAwait takes request n's await lock for up to d. A lock that cannot be taken is no hold:
// the exchange then goes as without one.
func (e *Engine) holdForAwait(dir string, n int, d time.Duration) {
	path := filepath.Join(dir, messages.AwaitLockName(n))
	unlock, err := lock.Existing(path, syscall.LOCK_SH, holdLockWait)
	if err != nil {
		return
	}
	h := &awaitHold{}
	h.end = func(handOver bool) {
		h.once.Do(func() {
			holds.mu.Lock()
			h.timer.Stop() // set under the same lock, before a timer could fire
			if holds.m[path] == h {
				delete(holds.m, path)
			}
			holds.mu.Unlock()
			unlock()
			if !handOver {
				e.afterHold(dir, n)
			}
		})
	}
	holds.mu.Lock()
	if old := holds.m[path]; old != nil {
		defer old.end(false)
	}
	holds.m[path] = h
	h.timer = time.AfterFunc(d, func() { h.end(false) })
	holds.mu.Unlock()
}

// handOver lets go of the hold on path once an await of this process holds the lock itself.
func (a *awaitHolds) handOver(path string) {
	a.mu.Lock()
	h := a.m[path]
	a.mu.Unlock()
	if h != nil {
		h.end(true)
	}
}

// EndHolds lets go of every hold of this process, posting the RESPONSE lines they kept back: for
// a server about to exit, whose client will call no await.
func EndHolds() {
	holds.mu.Lock()
	list := make([]*awaitHold, 0, len(holds.m))
	for _, h := range holds.m {
		list = append(list, h)
	}
	holds.mu.Unlock()
	for _, h := range list {
		h.end(false)
	}
}

// afterHold runs once a hold is let go with no await come: it posts the RESPONSE line a notify
// held back because of the hold. The lock is free by now, so a notify that has not yet looked at
// it types the line itself; one that answered and has not yet said is waited for.
func (e *Engine) afterHold(dir string, n int) {
	deadline := time.Now().Add(holdSettle)
	for {
		answered, read, signal := exchange.SignalOf(dir, n)
		switch {
		case !answered || read || signal != "" && signal != exchange.StateAwaitWoken:
			return // no answer yet (its notify will find no hold), or it was read, or signalled
		case signal == exchange.StateAwaitWoken || time.Now().After(deadline):
			// Held back (or its notify ended between the answer and its look): post it now.
			x := exchange.LoadExchange(dir, n, false)
			if x == nil || x.ResponsePath == "" {
				return
			}
			line := messages.Notification{StartedAt: x.StartedAt, Orchestrator: x.Orchestrator, Worker: x.Worker, Path: x.ResponsePath}.String()
			meta, _ := exchange.ReadMeta(dir)
			ctx, cancel := context.WithTimeout(context.Background(), e.cfg.LockTimeout)
			defer cancel()
			_, _ = e.signal(ctx, x, line, meta) // its outcome, or its failure, is in the log
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
