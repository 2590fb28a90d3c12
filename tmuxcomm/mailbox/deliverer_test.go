package mailbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/core/coretest"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// runDeliverer starts the pane's deliverer and returns what it returns.
func (w *world) runDeliverer(ctx context.Context, pane string) <-chan error {
	done := make(chan error, 1)
	go func() { done <- w.office.RunDeliverer(ctx, w.srv.Key(), messages.PaneID(pane)) }()
	return done
}

func ended(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the deliverer is still running")
		return nil
	}
}

// The deliverer looks at a busy pane until its next idle moment, then types what waits there
// once and ends: nothing is typed while the pane is busy, nothing twice after.
func TestDelivererTypesAtTheNextIdleMomentOnceThenEnds(t *testing.T) {
	w := newWorld(t)
	w.setBusy("%2", true)
	x, m := w.request("%2", "the task")
	p, err := w.post(m)
	require.NoError(t, err)
	looks := len(w.tmux.Delivered())
	done := w.runDeliverer(context.Background(), "%2")
	// It looks again and again while the pane is busy, typing nothing.
	require.Eventually(t, func() bool { return len(w.tmux.Delivered()) >= looks+2 }, 30*time.Second, 5*time.Millisecond)
	assert.Empty(t, w.pasted())
	assert.Equal(t, exchange.StateQueued, state(x).State)
	w.setBusy("%2", false)
	require.NoError(t, ended(t, done), "it ends once the outbox is empty")
	typed := w.pasted()
	require.Len(t, typed, 1, "typed once")
	assert.Equal(t, p.Mail.ID, typed[0].Mark)
	assert.Contains(t, string(typed[0].Content), "the task")
	assert.Equal(t, exchange.StateSubmitted, state(x).State)
	o, err := w.outbox("%2").Outcome(p.Mail.ID)
	require.NoError(t, err)
	assert.Equal(t, messages.MailDelivered, o.State)
	w.drain("%2")
	assert.Len(t, w.pasted(), 1, "a second deliverer finds nothing to do")
}

// At most one deliverer per pane: one that finds the lock held returns at once.
func TestDelivererReturnsAtOnceWhenAnotherHoldsTheOutbox(t *testing.T) {
	w := newWorld(t)
	w.setBusy("%2", true)
	_, m := w.request("%2", "task")
	_, err := w.post(m)
	require.NoError(t, err)
	unlock, err := lock.File(w.outbox("%2").Path(store.DelivererLockName), syscall.LOCK_EX, time.Second)
	require.NoError(t, err)
	defer unlock()
	looks := len(w.tmux.Delivered())
	w.setBusy("%2", false)
	w.drain("%2")
	assert.Len(t, w.tmux.Delivered(), looks, "it did not look at the pane")
	pend, _ := w.outbox("%2").Pending()
	assert.Len(t, pend, 1)
}

func TestDelivererEndsWithItsContext(t *testing.T) {
	w := newWorld(t)
	w.setBusy("%2", true)
	_, m := w.request("%2", "task")
	_, err := w.post(m)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	looks := len(w.tmux.Delivered())
	done := w.runDeliverer(ctx, "%2")
	require.Eventually(t, func() bool { return len(w.tmux.Delivered()) > looks }, 30*time.Second, 5*time.Millisecond)
	cancel()
	require.ErrorIs(t, ended(t, done), context.Canceled)
	pend, _ := w.outbox("%2").Pending()
	assert.Len(t, pend, 1, "the message still waits")
	assert.False(t, lock.IsLocked(w.outbox("%2").Path(store.DelivererLockName)), "its lock is let go")
}

func TestDelivererEndsWhenItsOutboxIsRemoved(t *testing.T) {
	w := newWorld(t)
	w.setBusy("%2", true)
	_, m := w.request("%2", "task")
	_, err := w.post(m)
	require.NoError(t, err)
	ob := w.outbox("%2")
	done := w.runDeliverer(context.Background(), "%2")
	require.Eventually(t, func() bool { return lock.IsLocked(ob.Path(store.DelivererLockName)) }, 10*time.Second, 5*time.Millisecond,
		"the deliverer to start")
	// The pane stays busy, so the deliverer waits on it, until its outbox is removed under it.
	// Renamed away at once (removing it file by file races the deliverer's own writes).
	require.NoError(t, os.Rename(filepath.Join(w.root, store.OutboxDir), filepath.Join(t.TempDir(), "gone")))
	assert.NoError(t, ended(t, done))
}

// Mail whose pane closed ends undeliverable, and is a dead letter for the person.
func TestMailForAGonePaneIsUndeliverable(t *testing.T) {
	w := newWorld(t)
	w.setBusy("%2", true)
	x, m := w.request("%2", "task")
	_, err := w.post(m)
	require.NoError(t, err)
	w.tmux.Mu.Lock()
	delete(w.tmux.PaneMap, "%2")
	w.tmux.Mu.Unlock()
	w.drain("%2")
	got := state(x)
	assert.Equal(t, exchange.StateUndeliverable, got.State)
	assert.Equal(t, exchange.StatusUndelivered, got.Status)
	assert.Contains(t, got.Evidence, "no longer exists")
}

// Mail that waits past its time to live ends expired without being typed, and is a dead letter.
func TestMailPastItsTimeToLiveExpires(t *testing.T) {
	w := newWorld(t)
	w.cfg.MailTTL = time.Minute
	w.setBusy("%3", true)
	x, m := w.request("%3", "never ready")
	p, err := w.post(m)
	require.NoError(t, err)
	assert.Equal(t, p.Mail.QueuedAt.Add(time.Minute), p.Mail.Expires)
	later := time.Now().Add(2 * time.Minute)
	w.cfg.Now = func() time.Time { return later }
	w.setBusy("%3", false)
	w.drain("%3")
	assert.Empty(t, w.pasted(), "nothing typed")
	got := state(x)
	assert.Equal(t, exchange.StateExpired, got.State)
	assert.Equal(t, exchange.StatusUndelivered, got.Status)
	o, err := w.outbox("%3").Outcome(p.Mail.ID)
	require.NoError(t, err)
	assert.Equal(t, messages.MailExpired, o.State)
	assert.Contains(t, o.Detail, "1m0s, its time to live")

	dead, problems := w.office.DeadLetters(time.Now().Add(-time.Minute))
	assert.Empty(t, problems)
	require.Len(t, dead, 1)
	assert.Equal(t, messages.MailExpired, dead[0].State)
	assert.Equal(t, x.ID, dead[0].Exchange)
	assert.Equal(t, messages.PaneID("%3"), dead[0].Pane)
	assert.Equal(t, messages.PaneID("%1"), dead[0].From)
}

// marking is a server that records the pane marks of a delivery a stopped process left behind, as
// a real server's pane options do, and whose Enter may be held (copy mode).
type marking struct {
	*coretest.Tmux
	mu              sync.Mutex
	pasted, entered string
	resumed         int
	held            bool
}

func (m *marking) Marks(ctx context.Context, pane messages.PaneID, mark string) (string, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pasted, m.entered, nil
}

func (m *marking) Resume(ctx context.Context, d paneops.Delivery) (paneops.DeliveryResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held {
		return paneops.DeliveryResult{Pasted: true}, paneops.ErrEnterHeld
	}
	m.resumed++
	m.entered = d.Mark
	return paneops.DeliveryResult{Pasted: true, Submitted: true, Enters: 1, Evidence: "Enter sent"}, nil
}

// stoppedMidway queues a request for %2 and leaves what a deliverer killed mid-way leaves: its
// in-flight record. It returns the mail.
func stoppedMidway(t *testing.T, w *world) messages.Mail {
	t.Helper()
	w.setBusy("%2", true)
	_, m := w.request("%2", "task")
	_, err := w.post(m)
	require.NoError(t, err)
	pend, _ := w.outbox("%2").Pending()
	require.Len(t, pend, 1)
	require.NoError(t, w.outbox("%2").SetInflight(mailbox.Inflight{Mark: pend[0].ID, IDs: []string{pend[0].ID}, PID: 1}))
	w.setBusy("%2", false)
	return pend[0]
}

func TestDelivererRecoversAStoppedDelivery(t *testing.T) {
	for _, tt := range []struct {
		name            string
		pasted, entered bool
		wantTyped       int
		wantResumed     int
	}{
		{"stopped before the paste: pasted now", false, false, 1, 0},
		{"stopped between paste and Enter: Enter now", true, false, 0, 1},
		{"stopped after the Enter: nothing typed", true, true, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			mf := &marking{Tmux: w.tmux}
			w.cfg.Tmux = mf
			m := stoppedMidway(t, w)
			if tt.pasted {
				mf.pasted = m.ID
			}
			if tt.entered {
				mf.entered = m.ID
			}
			w.drain("%2")
			assert.Len(t, w.pasted(), tt.wantTyped)
			assert.Equal(t, tt.wantResumed, mf.resumed)
			out, err := w.outbox("%2").Outcome(m.ID)
			require.NoError(t, err)
			assert.Equal(t, messages.MailDelivered, out.State)
			st, err := os.Stat(w.outbox("%2").Path(store.InflightName))
			require.NoError(t, err, "the in-flight record is kept, emptied")
			assert.Zero(t, st.Size(), "the in-flight record is cleared")
		})
	}
}

// A paste whose Enter waits (the pane is in copy mode) holds everything behind it: a sender's
// message waits, or with NoQueue ends undeliverable saying why, and nothing is typed onto that line.
func TestAPasteWaitingForItsEnterHoldsWhatFollows(t *testing.T) {
	w := newWorld(t)
	mf := &marking{Tmux: w.tmux, held: true}
	w.cfg.Tmux = mf
	m := stoppedMidway(t, w)
	mf.pasted = m.ID

	_, next := w.request("%2", "next")
	p, err := w.post(next)
	require.NoError(t, err)
	assert.True(t, p.Queued)
	assert.Contains(t, p.Reason, "copy mode")

	w.cfg.NoQueue = true
	_, third := w.request("%2", "third")
	p, err = w.post(third)
	require.ErrorIs(t, err, paneops.ErrBusy)
	assert.Contains(t, err.Error(), "leave copy mode")
	assert.Equal(t, messages.MailUndeliverable, p.Outcome)
	assert.Empty(t, w.pasted(), "nothing typed onto the held line")
	w.cfg.NoQueue = false

	// Out of copy mode, the deliverer presses the held Enter, then types what waited, once.
	mf.mu.Lock()
	mf.held = false
	mf.mu.Unlock()
	w.drain("%2")
	assert.Equal(t, 1, mf.resumed)
	typed := w.pasted()
	require.Len(t, typed, 1)
	assert.Contains(t, string(typed[0].Content), "next")
	for _, id := range []string{m.ID, p.Mail.ID} {
		_, err := w.outbox("%2").Outcome(id)
		assert.NoError(t, err, "ended")
	}
}

// The guard sleeps until the process it guards ends; when that process stopped between a paste
// and its Enter, the guard runs the pane's deliverer, which presses the Enter. Otherwise it types
// nothing.
func TestGuardFinishesADeliveryItsProcessLeft(t *testing.T) {
	w := newWorld(t)
	mf := &marking{Tmux: w.tmux}
	w.cfg.Tmux = mf
	w.setBusy("%2", true)
	_, m := w.request("%2", "task")
	_, err := w.post(m)
	require.NoError(t, err)
	pend, _ := w.outbox("%2").Pending()
	require.Len(t, pend, 1)

	// A real process, killed between its paste and its Enter.
	cmd := exec.Command("cat")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	require.NoError(t, w.outbox("%2").SetInflight(mailbox.Inflight{Mark: pend[0].ID, IDs: []string{pend[0].ID}, PID: pid}))
	mf.mu.Lock()
	mf.pasted = pend[0].ID
	mf.mu.Unlock()
	w.setBusy("%2", false)

	done := make(chan error, 1)
	go func() { done <- w.office.GuardDelivery(context.Background(), w.srv.Key(), "%2", pid) }()
	select {
	case err := <-done:
		t.Fatalf("the guard returned while its process lives: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	mf.mu.Lock()
	assert.Zero(t, mf.resumed, "nothing is pressed while the process lives")
	mf.mu.Unlock()
	stdin.Close()
	require.NoError(t, cmd.Wait())
	require.NoError(t, ended(t, done))
	assert.Equal(t, 1, mf.resumed, "the guard pressed the Enter")
	assert.Empty(t, w.pasted(), "nothing typed again")
	o, err := w.outbox("%2").Outcome(pend[0].ID)
	require.NoError(t, err)
	assert.Equal(t, messages.MailDelivered, o.State)
}

func TestGuardOfAnotherProcessesDeliveryTypesNothing(t *testing.T) {
	w := newWorld(t)
	m := stoppedMidway(t, w) // in flight for pid 1
	now := func(context.Context) error { return nil }
	require.NoError(t, w.office.GuardDeliveryWait(context.Background(), w.srv.Key(), "%2", 2, now))
	assert.Empty(t, w.pasted(), "not its process's delivery: left to the deliverer")
	pend, _ := w.outbox("%2").Pending()
	require.Len(t, pend, 1)
	assert.Equal(t, m.ID, pend[0].ID)

	// The wait's own error ends the guard.
	stop := func(context.Context) error { return context.Canceled }
	require.ErrorIs(t, w.office.GuardDeliveryWait(context.Background(), w.srv.Key(), "%2", 1, stop), context.Canceled)
	assert.Empty(t, w.pasted())

	// Its own process's delivery: finished.
	require.NoError(t, w.office.GuardDeliveryWait(context.Background(), w.srv.Key(), "%2", 1, now))
	assert.Len(t, w.pasted(), 1, "the paste never happened (no mark): pasted now")
}

// Each process starts one guard per pane it delivers into, before the paste.
func TestOneGuardPerProcessAndPane(t *testing.T) {
	w := newWorld(t)
	// The guards this process started are remembered by server and pane: a server of its own.
	w.tmux.Mu.Lock()
	w.tmux.Server.StartTime = time.Now().UnixNano()
	w.tmux.Mu.Unlock()
	w.srv, _ = w.tmux.ServerInfo(context.Background())
	var guards []string
	w.cfg.Helpers.Guard = func(server, socket string, pane messages.PaneID, pid int) error {
		guards = append(guards, string(pane))
		assert.Equal(t, os.Getpid(), pid)
		for _, d := range w.pasted() {
			assert.NotEqual(t, pane, d.Pane, "started before the pane's first paste")
		}
		return nil
	}
	for _, to := range []string{"%2", "%2", "%3"} {
		_, m := w.request(to, "task")
		_, err := w.post(m)
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"%2", "%3"}, guards)
}

func TestDelivererLogIsPrivate(t *testing.T) {
	w := newWorld(t)
	f, err := mailbox.OpenDelivererLog(w.root, w.srv.Key(), "%2")
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	_, err = mailbox.OpenDelivererLog(w.root, "../x", "%2")
	assert.Error(t, err, "a server key that is no key names no folder")
}

// killedAfterPaste is a tmux whose deliveries paste, and then keep a copy of the outbox as it
// is at that moment: what a sender killed -9 between the paste and the Enter leaves on disk.
type killedAfterPaste struct {
	*marking
	dir  string
	left map[string][]byte // path in the outbox -> its bytes
}

func (k *killedAfterPaste) Deliver(ctx context.Context, d paneops.Delivery) (paneops.DeliveryResult, error) {
	res, err := k.marking.Tmux.Deliver(ctx, d)
	k.mu.Lock()
	k.pasted = d.Mark
	k.mu.Unlock()
	k.left = map[string][]byte{}
	_ = filepath.WalkDir(k.dir, func(path string, e os.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			data, _ := os.ReadFile(path)
			k.left[path] = data
		}
		return nil
	})
	return res, err
}

// restore puts the outbox back as the killed sender left it.
func (k *killedAfterPaste) restore(t *testing.T) {
	t.Helper()
	for _, sub := range []string{store.OutboxQueueDir, store.OutboxDoneDir} {
		ents, err := os.ReadDir(filepath.Join(k.dir, sub))
		require.NoError(t, err)
		for _, e := range ents {
			require.NoError(t, os.Remove(filepath.Join(k.dir, sub, e.Name())))
		}
	}
	for path, data := range k.left {
		require.NoError(t, os.WriteFile(path, data, 0o600))
	}
}

// A message typed at once has no outbox record; a sender killed between its paste and its
// Enter still leaves a fence that names it, so the guard presses that Enter, once, and types
// nothing again.
func TestGuardFinishesADirectDeliveryItsProcessLeft(t *testing.T) {
	w := newWorld(t)
	k := &killedAfterPaste{marking: &marking{Tmux: w.tmux}, dir: w.outbox("%2").Path()}
	w.cfg.Tmux = k
	x, m := w.request("%2", "task")
	p, err := w.post(m)
	require.NoError(t, err)
	require.False(t, p.Queued, "the pane was ready")
	require.NotEmpty(t, k.left, "the fence was on disk at the paste")
	k.restore(t)

	done := func(context.Context) error { return nil } // the sender has ended
	require.NoError(t, w.office.GuardDeliveryWait(context.Background(), w.srv.Key(), "%2", os.Getpid(), done))
	k.mu.Lock()
	assert.Equal(t, 1, k.resumed, "the guard pressed the Enter")
	k.mu.Unlock()
	assert.Len(t, w.pasted(), 1, "nothing typed again")
	assert.Equal(t, exchange.StateSubmitted, state(x).State)
	st, err := os.Stat(w.outbox("%2").Path(store.InflightName))
	require.NoError(t, err)
	assert.Zero(t, st.Size(), "the in-flight record is cleared")
}

// A RESPONSE line for a ready orchestrator takes the direct path as a request does: no outbox
// record, its delivery log the record. Its fence stays: a sender killed between the paste and the
// Enter leaves the line typed in the orchestrator's input, and the guard presses that Enter, once,
// from the fence alone (nothing else names the line), so the next message is not typed onto it.
func TestGuardFinishesADirectResponseLineItsProcessLeft(t *testing.T) {
	w := newWorld(t)
	x, m := w.request("%2", "task")
	_, err := w.post(m)
	require.NoError(t, err)
	k := &killedAfterPaste{marking: &marking{Tmux: w.tmux}, dir: w.outbox("%1").Path()}
	w.cfg.Tmux = k
	line := w.answer(state(x), "done")
	p, err := w.post(line)
	require.NoError(t, err)
	require.False(t, p.Queued, "the orchestrator's pane was ready")
	noOutboxRecords(t, w, "%1")
	require.NotEmpty(t, k.left[filepath.Join(k.dir, store.InflightName)], "the fence was on disk at the paste")
	k.restore(t)

	done := func(context.Context) error { return nil } // the sender has ended
	require.NoError(t, w.office.GuardDeliveryWait(context.Background(), w.srv.Key(), "%1", os.Getpid(), done))
	k.mu.Lock()
	assert.Equal(t, 1, k.resumed, "the guard pressed the Enter")
	k.mu.Unlock()
	require.Len(t, w.pasted(), 2, "the request and the line, each typed once")
	assert.Contains(t, string(w.pasted()[1].Content), "[RESPONSE ")
	recovered := false
	for _, ev := range state(x).Events {
		if ev.State == exchange.StateNotified && strings.HasPrefix(ev.Detail["evidence"], "recovered") {
			recovered = true
		}
	}
	assert.True(t, recovered, "the log says the guard's Enter delivered the line: %+v", state(x).Events)
}
