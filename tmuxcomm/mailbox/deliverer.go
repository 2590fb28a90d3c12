package mailbox

// The deliverer of one pane's outbox: started detached by the command that queued (the engine's
// Helpers.Deliverer), it looks at the pane a few times a second, delivers what waits as soon as the
// pane is ready, ends what expired or can no longer be delivered, and exits when the outbox is
// empty. No daemon: at most one per pane (deliverer.lock), none when nothing waits.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
)

// Polling intervals of a deliverer: quick at first (a person clearing the box, an agent ending
// its turn), slower once a message has waited a while. A look costs one tmux call and a read of
// the pane's own process tree (proc.ScanPane), plus what the pane's profile reads of its
// screen; not a scan of the whole process table.
const (
	delivererPoll     = 200 * time.Millisecond
	delivererSlowPoll = time.Second
	delivererSlowAt   = time.Minute
)

// RunDeliverer drains the outbox of pane on the tmux server whose key is server, and returns when
// the outbox is empty or ctx ends. It returns at once when another deliverer holds the outbox.
func (o *Office) RunDeliverer(ctx context.Context, server string, pane messages.PaneID) error {
	root, err := o.RootDir(false)
	if err != nil {
		return err
	}
	ob, err := OpenOutbox(root, server, pane, false)
	if err != nil {
		return err
	}
	var last []string
	stuck := 0
	for {
		unlock, err := lock.File(ob.Path(store.DelivererLockName), syscall.LOCK_EX, 0)
		if err != nil {
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil // another deliverer has it
			}
			return err
		}
		// Who holds it, for a person (or a test) that looks: the lock file holds the pid.
		_ = os.WriteFile(ob.Path(store.DelivererLockName), []byte(strconv.Itoa(os.Getpid())+"\n"), store.FileMode)
		derr := o.drain(ctx, root, ob)
		unlock()
		if derr != nil {
			return derr
		}
		// Mail queued after the last look, by a sender whose own deliverer found this one still
		// holding the lock, would wait for nobody: look once more after letting go.
		pend, _ := ob.Pending()
		if len(pend) == 0 {
			return nil
		}
		// The same messages again, though the pass ended: they could not be ended (a full
		// disk). Look again slowly, and not for ever: they stay queued for the next look.
		ids := mailIDs(pend)
		if slices.Equal(ids, last) {
			if stuck++; stuck >= delivererStuckPasses {
				return fmt.Errorf("the outbox of pane %s makes no progress; its %d message(s) stay queued", pane, len(pend))
			}
			if err := sleepFor(ctx, delivererSlowPoll); err != nil {
				return err
			}
		} else {
			stuck = 0
		}
		last = ids
	}
}

// GuardDelivery guards the deliveries that process pid makes into pane: it sleeps until pid
// ends (waitExit), then, when the outbox's in-flight record is still pid's (killed between paste
// and Enter), runs the pane's deliverer, which finishes that delivery first; otherwise it
// returns, typing nothing. So a delivery's paste always has someone to press its Enter, and a
// sender that lives never races its own guard.
func (o *Office) GuardDelivery(ctx context.Context, server string, pane messages.PaneID, pid int) error {
	return o.GuardDeliveryWait(ctx, server, pane, pid, func(ctx context.Context) error { return waitExit(ctx, pid) })
}

// GuardDeliveryWait is GuardDelivery with the wait for pid's end given: the resident tmux client
// waits on a pidfd it opened while pid was still connected to it, so the pid cannot be another
// process's by then.
func (o *Office) GuardDeliveryWait(ctx context.Context, server string, pane messages.PaneID, pid int, wait func(context.Context) error) error {
	if err := wait(ctx); err != nil {
		return err
	}
	root, err := o.RootDir(false)
	if err != nil {
		return err
	}
	ob, err := OpenOutbox(root, server, pane, false)
	if err != nil {
		return err
	}
	if f, err := ob.readInflight(); err != nil || f == nil || f.PID != pid {
		return nil
	}
	return o.RunDeliverer(ctx, server, pane)
}

// ensureGuard starts this process's guard of the pane's deliveries, once (see GuardDelivery).
func (o *Office) ensureGuard(ob *outbox, socket string) {
	if o.Helpers.Guard == nil {
		return
	}
	key := ob.server + "/" + string(ob.pane)
	if _, started := guarded.LoadOrStore(key, true); started {
		return
	}
	if err := o.Helpers.Guard(ob.server, socket, ob.pane, os.Getpid()); err != nil {
		guarded.Delete(key) // the next delivery tries again
	}
}

// guarded holds the panes this process has started a guard for: a guard lives as long as the
// process it guards, so one per pane is enough.
var guarded sync.Map

// processGone reports whether pid has exited: no such process, or a zombie not yet reaped.
func processGone(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) != nil
	}
	i := bytes.LastIndexByte(data, ')')
	return i > 0 && i+2 < len(data) && (data[i+2] == 'Z' || data[i+2] == 'X')
}

// delivererStuckPasses bounds the passes over an outbox that end nothing.
const delivererStuckPasses = 30

func mailIDs(ms []messages.Mail) []string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return ids
}

// drain delivers until the outbox is empty.
func (o *Office) drain(ctx context.Context, root string, ob *outbox) error {
	start := time.Now()
	for {
		wait, err := o.drainOnce(ctx, root, ob)
		if err != nil || wait < 0 {
			return err
		}
		if wait == 0 {
			continue
		}
		if time.Since(start) > delivererSlowAt {
			wait = delivererSlowPoll
		}
		if err := sleepFor(ctx, wait); err != nil {
			return err
		}
	}
}

// drainOnce makes one pass under the drain lock: it ends expired mail, and delivers the head of
// the queue (with the RESPONSE lines right behind it) if the pane is ready. It returns how long to
// wait before the next pass: -1 when the outbox is empty, 0 to go on at once.
func (o *Office) drainOnce(ctx context.Context, root string, ob *outbox) (time.Duration, error) {
	unlock, err := ob.lockDrain(o.LockTimeout)
	if err != nil {
		if _, serr := os.Lstat(ob.Dir); errors.Is(serr, fs.ErrNotExist) {
			// The outbox (or its whole root) was removed: nothing is left to deliver.
			return -1, nil
		}
		return delivererPoll, nil
	}
	defer unlock()
	pend, _ := ob.Pending()
	// Mail of the direct path has no queue record: a delivery of it that its process left
	// between paste and Enter is known by its fence alone, and is finished like a queued one.
	fenced := ob.fencedMail(pend)
	if len(pend) == 0 && len(fenced) == 0 {
		return -1, nil
	}
	now := o.Now()
	var live []messages.Mail
	for _, m := range pend {
		if !m.Expires.IsZero() && now.After(m.Expires) {
			why := fmt.Sprintf("waited %s, its time to live, for pane %s to be ready", m.Expires.Sub(m.QueuedAt).Round(time.Second), m.Pane)
			o.recordMail(root, []messages.Mail{m}, evExpired, map[string]string{"pane": string(m.Pane), "mail": m.ID, "reason": why}, now)
			o.endMail(root, ob, m, messages.MailExpired, "", why, nil)
			continue
		}
		live = append(live, m)
	}
	if len(live) == 0 && len(fenced) == 0 {
		return -1, nil
	}
	srv, pane, gone := o.lookPane(ctx, ob)
	if gone != nil {
		var endErr error
		for _, m := range append(live, fenced...) {
			o.recordMail(root, []messages.Mail{m}, evUndeliverable, map[string]string{"pane": string(m.Pane), "mail": m.ID, "error": gone.Error()}, now)
			endErr = errors.Join(endErr, o.endMail(root, ob, m, messages.MailUndeliverable, "", gone.Error(), nil))
		}
		if endErr != nil {
			// The pane is gone and its messages cannot be ended (a full disk): stop here rather
			// than look again and again; they stay queued for whoever looks next.
			return -1, fmt.Errorf("%s, and its waiting messages could not be recorded as undeliverable: %w", gone, endErr)
		}
		return -1, nil
	}
	if pane == nil {
		return delivererPoll, nil // tmux did not answer this time
	}
	if held := o.recoverInflight(ctx, root, ob, *pane, srv); held != nil {
		return delivererPoll, nil
	}
	if live, _ = ob.Pending(); len(live) == 0 {
		return -1, nil
	}
	_, err = o.deliverGroup(ctx, root, ob, headGroup(live), *pane, srv, true)
	if err != nil && notReady(err) {
		return delivererPoll, nil
	}
	return 0, nil
}

// lookPane finds the outbox's pane on its server. gone is set when it can never be delivered to
// (the server restarted or stopped, the pane closed); pane is nil when tmux could not tell now.
func (o *Office) lookPane(ctx context.Context, ob *outbox) (paneops.ServerInfo, *paneops.Pane, error) {
	p, srv, err := o.Reach(ctx, "", ob.pane, ob.server, "", false)
	switch {
	case fleet.IsUnreachable(err):
		return srv, nil, err
	case err != nil:
		return srv, nil, nil // tmux could not tell now: look again
	}
	return srv, &p, nil
}

// OpenDelivererLog opens (creates, 0600, appending) the diagnostics file of a pane's deliverer in
// its outbox folder.
func OpenDelivererLog(root, server string, pane messages.PaneID) (*os.File, error) {
	root, err := store.EnsureRoot(root, true)
	if err != nil {
		return nil, err
	}
	ob, err := OpenOutbox(root, server, pane, true)
	if err != nil {
		return nil, err
	}
	return os.OpenFile(ob.Path(store.DelivererLogName), os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, store.FileMode)
}

// sleepFor waits d or until ctx ends.
func sleepFor(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
