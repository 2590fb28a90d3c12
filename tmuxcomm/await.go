package tmuxcomm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/paneops/lease"
	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// awaitOne blocks until the response of the exchange named by ref is complete and returns the
// exchange with both bodies. ref is an id (or its end), a request or response path, or "" for the
// newest request sent from the caller's pane whose response no await has returned yet (so `send;
// await` works even when a fast worker answered before the await started). timeout <= 0 waits
// until ctx ends. The complete exchange is handed to out (when not nil, which prints it) before
// it is recorded that an await returned it: a response whose output failed (a full disk, a
// closed pipe) is not marked read, and the next plain await returns it again. out's error is
// returned as it is. An exchange relayed to another host is readied through e.Relay first
// (Relay.Ready), within timeout.
func (e *Engine) awaitOne(ctx context.Context, ref string, timeout time.Duration, out func(*exchange.Exchange) error) (*exchange.Exchange, error) {
	if messages.IsIDSuffix(ref) {
		// The end of an id (a1b2): the whole one, so a relayed send is readied as well.
		var err error
		if ref, err = e.book.ExchangeID(ref); err != nil {
			return nil, err
		}
	}
	// A plain send's id, claimed in the hints of its second, is found there and is never a relayed
	// send's: the relay's queue and records are not looked at for it.
	var x *exchange.Exchange
	if messages.ValidID(ref) == nil {
		if root, found, err := e.cfg.ReadRoot(); err == nil && found {
			x = exchange.IDClaimedHere(root, ref)
		}
		if x != nil && (x.Status == exchange.StatusUndelivered || x.Status == exchange.StatusCancelled) {
			x = x.Reload(false, false, nil) // with its response, if one came all the same
		}
	}
	remaining := timeout
	if x == nil {
		// The wait for a relayed send counts against the timeout; the words name the one given.
		var err error
		if remaining, err = e.ready(ctx, ref, timeout); err != nil {
			return nil, err
		}
		if x, err = e.book.Locate(ctx, ref, exchange.RoleOrchestrator); err != nil {
			return nil, err
		}
	}
	if x.Status == exchange.StatusUndelivered {
		return x, store.Kindf(store.ErrUndelivered, "request %s (%s) was never delivered (%s); send it again", x.ID, x.RequestPath, x.State)
	}
	if x.Status == exchange.StatusCancelled {
		return x, fmt.Errorf("request %s (%s) was cancelled before it was delivered; nothing will answer it: %w", x.ID, x.RequestPath, store.ErrUndelivered)
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, remaining)
		defer cancel()
	}
	lockPath := filepath.Join(x.Dir, messages.AwaitLockName(x.Seq))
	unlock, err := lock.Existing(lockPath, syscall.LOCK_SH, e.cfg.LockTimeout)
	if err == nil {
		defer unlock()
		holds.handOver(lockPath) // this await holds the lock now: a send's hold for it is let go
	}
	// A command polls awaitQuickWait for a response, before it watches: a process that holds an
	// inotify watch takes about 10 ms longer to exit (the kernel waits out a grace period when
	// the watch goes, measured on Linux 6.18), more than a whole exchange with a scripted worker
	// spends anywhere else, while a look every quickPoll costs a stat and a lease call. A caller
	// that lives on (WatchAwait: the MCP server) watches at once and sleeps until the file lands.
	if !e.cfg.WatchAwait {
		if done, err := e.pollResponse(ctx, x.ResponsePath, awaitQuickWait); err != nil {
			return nil, err
		} else if done {
			return e.markRead(x, nil, out)
		}
		if ctx.Err() != nil {
			if done, c, _ := exchange.ResponseCompleteRead(x.ResponsePath, false); done {
				return e.markRead(x, c, out)
			}
			return x, e.awaitTimeout(ctx, x, timeout)
		}
	}
	// The watch is made before the file is looked at, so a response that lands between the look
	// and the wait is an event, never missed.
	w, release, werr := watchDir(x.Dir, e.cfg.WatchAwait)
	watchOK := true // false: the watch failed, and is not kept
	if werr != nil {
		w = nil
	} else {
		defer func() { release(watchOK) }()
	}
	name := filepath.Base(x.ResponsePath)
	renamed := false
	var nudge *awaitNudge // a notify of this process tells of the response (see awaitNudges)
	if w != nil {
		var forget func()
		nudge, forget = nudges.add(x.ResponsePath, w.Nudge)
		defer forget()
	}
	look := true // the first pass looks: the file may have landed before the watch was made
	for {
		if nudge != nil && nudge.whole.Load() {
			renamed, look = true, true
		}
		if look {
			if done, c, err := exchange.ResponseCompleteRead(x.ResponsePath, renamed); err != nil {
				return nil, err
			} else if done {
				return e.markRead(x, c, out)
			}
		}
		if w == nil {
			// No watcher (no inotify, or its instance or watch limit reached): fall back to a
			// poll every slowPoll, which costs a wake-up and a stat each time but misses nothing.
			resume := store.Waiting()
			select {
			case <-ctx.Done():
			case <-time.After(slowPoll):
			}
			resume()
			if ctx.Err() != nil {
				return x, e.awaitTimeout(ctx, x, timeout)
			}
			continue
		}
		resume := store.Waiting() // the spares of this process are made while it waits
		evs, err := w.Next(ctx)
		resume()
		if ctx.Err() != nil {
			if done, c, _ := exchange.ResponseCompleteRead(x.ResponsePath, renamed); done {
				return e.markRead(x, c, out)
			}
			return x, e.awaitTimeout(ctx, x, timeout)
		}
		if err != nil {
			watchOK = false
			return nil, fmt.Errorf("watch %s: %w", x.Dir, err)
		}
		// A batch of writes alone (IN_MODIFY, a writer still at work) is not looked at: a
		// response is complete only once no writer holds it, and the last writer's close, a
		// rename or a link into the folder are events of their own, which are looked at. Looking
		// on each write found the writer there (the lease refused) and cost an open, a lease call
		// and a close for nothing. The safety tick (no event) and an overflow still look.
		look = len(evs) == 0
		for _, ev := range evs {
			if ev.Name == name && ev.Moved {
				renamed = true
			}
			// A temp file is never the response: a writer's spare, made while it waits
			// (store.KeepSpares), or its next record before its rename, which is an event.
			if !ev.Written && !strings.HasPrefix(ev.Name, store.TempPrefix) {
				look = true
			}
		}
	}
}

// dirWatch is the folder's watch as Await uses it (store.NewDirWatcher's), and watchDir makes it
// or takes a kept one: a variable so that a test can take inotify away.
type dirWatch interface {
	Next(ctx context.Context) ([]store.DirEvent, error)
	Nudge()
	Close() error
}

// keep: the caller lives on (WatchAwait), so the watch is taken from and given back to
// keptWatches; else it is made and closed. release gives it back (ok false: it failed).
var watchDir = func(dir string, keep bool) (dirWatch, func(ok bool), error) {
	if keep {
		w, err := keptWatches.Take(dir)
		if err != nil {
			return nil, nil, err
		}
		return w, func(ok bool) { keptWatches.Give(w, ok) }, nil
	}
	w, err := store.NewDirWatcher(dir)
	if err != nil {
		return nil, nil, err
	}
	return w, func(bool) { w.Close() }, nil
}

// keptWatches are the folder watches a process that lives on keeps between its awaits: a server
// awaiting one session again and again watches its folder once, not at each await (see
// store.DirWatches). A few, for the sessions it awaits in turn: each is an inotify instance, of
// which a user has 128 by default for every server, console and bridge; past them an await makes
// its watch and lets it go as before.
var keptWatches = store.NewDirWatches(4)

// How long Await polls before it watches (a variable so that a test can go straight to the
// watcher), and how often.
var awaitQuickWait = 2 * time.Second

// How often the quick poll looks, and the poll without a watcher (variables for the tests).
var (
	quickPoll = 2 * time.Millisecond
	slowPoll  = 20 * time.Millisecond
)

// pollResponse looks at path every quickPoll for up to d, and reports whether the response became
// complete. It gives up early, to the watcher, when a file is there that the kernel cannot tell
// is still being written (no lease on it): telling that costs a scan of every process, which is
// done on file events only, not on every tick.
func (e *Engine) pollResponse(ctx context.Context, path string, d time.Duration) (bool, error) {
	deadline := time.Now().Add(d)
	t := time.NewTicker(quickPoll)
	defer t.Stop()
	for {
		st, err := os.Lstat(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return false, err
		case !st.Mode().IsRegular():
			return false, fmt.Errorf("response %s is not a regular file; refusing it", path)
		case st.Size() > 0:
			busy, known := lease.WriterState(path)
			if !known {
				return false, nil
			}
			if !busy {
				return true, nil
			}
		}
		if !time.Now().Before(deadline) {
			return false, nil
		}
		resume := store.Waiting()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		resume()
		if ctx.Err() != nil {
			return false, nil
		}
	}
}

func (e *Engine) awaitTimeout(ctx context.Context, x *exchange.Exchange, timeout time.Duration) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return store.Kindf(ctx.Err(), "interrupted while waiting for %s; the response will be at %s", x.ID, x.ResponsePath)
	}
	return store.Kindf(store.ErrTimeout, "no response to %s after %s; it will be at %s (wcomm await %s to wait again)",
		x.ID, messages.DurationText(timeout), x.ResponsePath, x.ID)
}

// markRead loads the answered exchange whole, hands it to out (when not nil), and then records
// that an await returned it, which takes it out of the default choice of the next await. A
// response file that does not parse (no header, a header of another form) is not an answer: it
// is reported, and not marked read, so the exchange stays open for a worker's real notify once
// the file is removed. The read is recorded only once out succeeded, and a record that cannot be
// written (a full disk) fails the await.
func (e *Engine) markRead(x *exchange.Exchange, c *exchange.Complete, out func(*exchange.Exchange) error) (*exchange.Exchange, error) {
	// The request as this await read it and the response as its last look read it (c), neither
	// read again.
	full := x.Reload(!e.cfg.LeanAwait, true, c)
	if full.Response() == nil {
		why := "it could not be read"
		if len(full.Problems) > 0 {
			why = full.Problems[len(full.Problems)-1]
		}
		return nil, fmt.Errorf("the response file of %s is damaged (%s); it was not taken as an answer: "+
			"look at it, remove it and have the worker notify again: %w", orDashID(full), why, store.ErrDamaged)
	}
	if out != nil {
		if err := out(full); err != nil {
			return full, err
		}
	}
	if err := exchange.LogEvent(x.Dir, x.Seq, exchange.StateRead, nil, e.cfg.Now()); err != nil {
		return nil, fmt.Errorf("the response of %s is complete at %s, but recording that it was read failed: %w", orDashID(full), full.ResponsePath, err)
	}
	full.Read = true
	return full, nil
}

func orDashID(x *exchange.Exchange) string {
	if x.ID != "" {
		return x.ID
	}
	return x.RequestPath
}
