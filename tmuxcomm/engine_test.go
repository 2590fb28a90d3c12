package tmuxcomm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/core/coretest"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
)

// fakeTmux is the rooms' shared tmux server in memory.
type fakeTmux = coretest.Tmux

func newFake(ids ...string) *fakeTmux { return coretest.NewTmux(ids...) }

func newEngine(t *testing.T, f *fakeTmux, self string) *Engine {
	t.Helper()
	e := New(filepath.Join(t.TempDir(), "root"), f)
	e.cfg.Self = messages.PaneID(self)
	e.cfg.Procs = func() (*proc.Table, error) { return nil, fmt.Errorf("no process table in unit tests") }
	e.cfg.PaneProcs = nil // the fake table above is the only one detection may see
	e.cfg.PanesProcs = nil
	return e
}

// awaitRef is the door's Await of one exchange, as most tests wait.
func (e *Engine) awaitRef(ctx context.Context, ref string, timeout time.Duration) (*exchange.Exchange, error) {
	a, err := e.Await(ctx, AwaitOptions{Refs: []string{ref}, Timeout: timeout})
	if a == nil {
		return nil, err
	}
	return a.Exchange, err
}

func (e *Engine) as(self string) *Engine {
	p := messages.PaneID(self)
	return e.derive(callConfig{self: &p})
}

func TestSendWritesRequestAndDelivers(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("list the failing tests\nin ./pkg")})
	require.NoError(t, err)

	assert.Equal(t, 1, x.Seq)
	assert.Equal(t, exchange.StatusPending, x.Status)
	assert.Equal(t, exchange.StateSubmitted, x.State)
	assert.Equal(t, "paste", x.Form)
	assert.Equal(t, "ok", x.Integrity)
	assert.Equal(t, filepath.Join(x.Dir, "002-response.md"), x.ResponsePath)
	assert.Regexp(t, `^\d{8}-\d{6}-o1-w2$`, x.Session)

	data, err := os.ReadFile(x.RequestPath)
	require.NoError(t, err)
	req, err := messages.ParseRequest(data)
	require.NoError(t, err)
	assert.Equal(t, "list the failing tests\nin ./pkg", strings.TrimRight(req.Body, "\n"))
	assert.Equal(t, messages.ReadOnly, req.Header.Capability)
	assert.Equal(t, x.ResponsePath, req.Instructions.ResponsePath)

	for path, want := range map[string]os.FileMode{x.Dir: 0o700, x.RequestPath: 0o600, filepath.Dir(x.Dir): 0o700} {
		st, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, want, st.Mode().Perm(), path)
	}

	ds := f.Delivered()
	require.Len(t, ds, 1)
	assert.Equal(t, messages.PaneID("%2"), ds[0].Pane)
	assert.True(t, ds[0].Submit)
	assert.Contains(t, string(ds[0].Content), "list the failing tests")
	assert.False(t, strings.HasSuffix(string(ds[0].Content), "\n"), "Enter must be the only submit")
}

func TestSendReusesSessionAndPairsNumbers(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	a, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("one")})
	require.NoError(t, err)
	b, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("two")})
	require.NoError(t, err)
	assert.Equal(t, a.Dir, b.Dir)
	assert.Equal(t, 1, a.Seq)
	assert.Equal(t, 3, b.Seq)
	assert.Equal(t, filepath.Join(b.Dir, "004-response.md"), b.ResponsePath)
}

func TestSendAfterServerRestartMakesNewSession(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	a, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("before")})
	require.NoError(t, err)
	f.Mu.Lock()
	f.Server.PID, f.Server.StartTime = 200, 1700000999
	f.Mu.Unlock()
	b, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("after")})
	require.NoError(t, err)
	assert.NotEqual(t, a.Dir, b.Dir, "a restarted server's %%2 is another pane")

	// The old exchange's orchestrator %1 now names a pane of the new server: notify must not paste.
	_, err = e.as("%2").Notify(context.Background(), NotifyOptions{Ref: a.ResponsePath, Body: []byte("late")})
	require.ErrorIs(t, err, store.ErrOrchestratorGone)
	assert.FileExists(t, a.ResponsePath)
}

// A restart within the second: the new server's folder for the same pair is dated a second later
// than the ids of its requests, and looking an exchange up by id must still find it.
func TestLocateByIDInAFolderDatedLater(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	now := time.Date(2026, 11, 22, 2, 18, 9, 0, time.Local)
	e.cfg.Now = func() time.Time { return now }
	a, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("before")})
	require.NoError(t, err)
	f.Mu.Lock()
	f.Server.PID, f.Server.StartTime = 200, 1700000999
	f.Mu.Unlock()
	b, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("after")})
	require.NoError(t, err)
	require.Equal(t, "20261122-021809-o1-w2", a.Session)
	require.Equal(t, "20261122-021810-o1-w2", b.Session, "the second's name was taken: the next second")
	require.True(t, strings.HasPrefix(b.ID, "20261122-021809-"))

	for _, x := range []*exchange.Exchange{a.Exchange, b.Exchange} {
		got, err := e.book.Locate(context.Background(), x.ID, exchange.RoleOrchestrator)
		require.NoError(t, err, x.ID)
		assert.Equal(t, x.RequestPath, got.RequestPath)
	}
}

func TestConcurrentSendsClaimDistinctNumbers(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	const n = 50
	var wg sync.WaitGroup
	seqs := make(chan int, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte(fmt.Sprintf("message %d", i))})
			if assert.NoError(t, err) {
				seqs <- x.Seq
			}
		}(i)
	}
	wg.Wait()
	close(seqs)
	seen := map[int]bool{}
	for s := range seqs {
		assert.False(t, seen[s], "number %d claimed twice", s)
		assert.Equal(t, 1, s%2, "requests take odd numbers here, leaving N+1 to the response")
		seen[s] = true
	}
	assert.Len(t, seen, n)
	// A sender that found another delivery under way left its request queued for the pane's
	// deliverer (none is started in unit tests): run it, and every request is typed once.
	srv, _ := f.ServerInfo(context.Background())
	require.NoError(t, e.office.RunDeliverer(context.Background(), srv.Key(), "%2"))
	assert.Len(t, f.Delivered(), n)
}

func TestSendLongRequestAsPointer(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	body := strings.Repeat("x", 5000) // one line longer than a cooked-mode reader takes
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte(body)})
	require.NoError(t, err)
	assert.Equal(t, "pointer", x.Form)
	ds := f.Delivered()
	require.Len(t, ds, 1)
	assert.NotContains(t, string(ds[0].Content), "\n")
	assert.Contains(t, string(ds[0].Content), x.RequestPath)
	assert.Less(t, len(ds[0].Content), 600)
}

func TestSendRefusedIsUndeliveredButKept(t *testing.T) {
	f := newFake("%1", "%2")
	f.Refuse["%2"] = true
	e := newEngine(t, f, "%1")
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("hello")})
	require.ErrorIs(t, err, store.ErrUndelivered)
	require.NotNil(t, x)
	assert.FileExists(t, x.RequestPath)
	assert.Equal(t, exchange.StatusUndelivered, x.Status)
	assert.Equal(t, exchange.StateRefused, x.State)
}

func TestSendRefusesOwnPaneAndEmptyBody(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	_, err := e.Send(context.Background(), SendOptions{To: "%1", Body: []byte("x")})
	assert.ErrorContains(t, err, "own pane")
	_, err = e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("  \n")})
	assert.ErrorContains(t, err, "empty message")
	_, err = e.Send(context.Background(), SendOptions{To: "%9", Body: []byte("x")})
	assert.ErrorIs(t, err, store.ErrNotFound)
}

func TestNotifyPastesLineThenAwaitReturns(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("question")})
	require.NoError(t, err)

	res, err := e.as("%2").Notify(context.Background(), NotifyOptions{Body: []byte("the answer\nDELTA:\n  changes: [a.go]\n  risks: []\n  alternatives: []\n  needs_consult: no\n")})
	require.NoError(t, err)
	assert.Equal(t, core.SignalPasted, res.Signal)
	ds := f.Delivered()
	require.Len(t, ds, 2)
	assert.Equal(t, messages.PaneID("%1"), ds[1].Pane)
	n, err := messages.FindNotification(string(ds[1].Content))
	require.NoError(t, err)
	assert.Equal(t, x.ResponsePath, n.Path)

	got, err := e.awaitRef(context.Background(), x.ID, time.Second)
	require.NoError(t, err)
	assert.Equal(t, exchange.StatusAnswered, got.Status)
	assert.Contains(t, got.ResponseBody, "the answer")
	require.NotNil(t, got.Delta)
	assert.Equal(t, []string{"a.go"}, got.Delta.Changes)

	_, err = e.as("%2").Notify(context.Background(), NotifyOptions{Ref: x.ID, Body: []byte("second")})
	assert.ErrorIs(t, err, store.ErrAnswered)
	data, _ := os.ReadFile(x.ResponsePath)
	assert.Contains(t, string(data), "the answer")
}

// TestNotifyBodyFile: an answer named by BodyFile is read after the request, and checked as Body is.
func TestNotifyBodyFile(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("question")})
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}

	_, err = e.as("%2").Notify(context.Background(), NotifyOptions{Ref: x.ID, BodyFile: write("blank.md", " \n\t\n")})
	assert.ErrorContains(t, err, "empty response")
	_, err = e.as("%2").Notify(context.Background(), NotifyOptions{Ref: x.ID, BodyFile: filepath.Join(dir, "missing.md")})
	assert.ErrorContains(t, err, "missing.md")
	assert.NoFileExists(t, x.ResponsePath, "a failed read saves nothing")

	res, err := e.as("%2").Notify(context.Background(), NotifyOptions{Ref: x.ID, BodyFile: write("answer.md", "the answer\n\n")})
	require.NoError(t, err)
	assert.Equal(t, core.SignalPasted, res.Signal)
	got, err := e.awaitRef(context.Background(), x.ID, time.Second)
	require.NoError(t, err)
	assert.Equal(t, "the answer", strings.TrimSpace(got.ResponseBody))
}

func TestAwaitWakesOnNotifyWithoutPaste(t *testing.T) {
	for _, tt := range []struct {
		name  string
		quick time.Duration
	}{{"polling first", awaitQuickWait}, {"watching at once", 0}} {
		t.Run(tt.name, func(t *testing.T) {
			defer func(old time.Duration) { awaitQuickWait = old }(awaitQuickWait)
			awaitQuickWait = tt.quick
			testAwaitWakesOnNotifyWithoutPaste(t)
		})
	}
}

func testAwaitWakesOnNotifyWithoutPaste(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("question")})
	require.NoError(t, err)

	type result struct {
		x   *exchange.Exchange
		err error
	}
	done := make(chan result, 1)
	go func() {
		got, err := e.awaitRef(context.Background(), "", 10*time.Second)
		done <- result{got, err}
	}()
	awaitLock := filepath.Join(x.Dir, messages.AwaitLockName(x.Seq))
	require.Eventually(t, func() bool { return lock.IsLocked(awaitLock) }, 5*time.Second, time.Millisecond)
	// The lock is the request file's own: an await makes no file of its own.
	assert.Equal(t, x.RequestPath, awaitLock)
	names, err := os.ReadDir(x.Dir)
	require.NoError(t, err)
	for _, n := range names {
		assert.NotContains(t, n.Name(), "lock", "no lock file made by the await")
	}

	res, err := e.as("%2").Notify(context.Background(), NotifyOptions{Ref: x.ResponsePath, Body: []byte("done")})
	require.NoError(t, err)
	assert.Equal(t, core.SignalAwait, res.Signal)
	r := <-done
	require.NoError(t, r.err)
	assert.Equal(t, "done\n", r.x.ResponseBody)
	assert.Len(t, f.Delivered(), 1, "no RESPONSE line when an await was waiting")
}

// A server's await (Watch) sleeps on the folder's inotify watch from the start: with every poll
// made an hour long, it still wakes when the response lands, and leaves out the request's body (Lean).
func TestAwaitWatchWakesWithoutPolling(t *testing.T) {
	defer func(q, p, s time.Duration) { awaitQuickWait, quickPoll, slowPoll = q, p, s }(awaitQuickWait, quickPoll, slowPoll)
	awaitQuickWait, quickPoll, slowPoll = time.Hour, time.Hour, time.Hour
	testAwaitWatch(t)
}

// Without inotify (no instance left, or the watch limit reached), a server's await falls back to
// the slow poll and still returns the response once.
func TestAwaitWatchFallsBackToPolling(t *testing.T) {
	defer func(q, p, s time.Duration) { awaitQuickWait, quickPoll, slowPoll = q, p, s }(awaitQuickWait, quickPoll, slowPoll)
	defer func(w func(string, bool) (dirWatch, func(bool), error)) { watchDir = w }(watchDir)
	awaitQuickWait, quickPoll, slowPoll = time.Hour, time.Hour, 5*time.Millisecond
	watchDir = func(string, bool) (dirWatch, func(bool), error) {
		return nil, nil, errors.New("inotify: too many open files")
	}
	testAwaitWatch(t)
}

func testAwaitWatch(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("question")})
	require.NoError(t, err)

	type result struct {
		a   *Awaited
		err error
	}
	done := make(chan result, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		a, err := e.Await(ctx, AwaitOptions{Refs: []string{x.ID}, Timeout: time.Hour, Lean: true, Watch: true})
		done <- result{a, err}
	}()
	awaitLock := filepath.Join(x.Dir, messages.AwaitLockName(x.Seq))
	require.Eventually(t, func() bool { return lock.IsLocked(awaitLock) }, 5*time.Second, time.Millisecond)

	_, err = e.as("%2").Notify(context.Background(), NotifyOptions{Ref: x.ID, Body: []byte("done")})
	require.NoError(t, err)
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the await did not wake on the response file")
	}
	require.NoError(t, r.err)
	assert.Equal(t, "done\n", r.a.ResponseBody)
	assert.Empty(t, r.a.RequestBody, "lean: the request's body is not read")
	assert.True(t, r.a.Read)
}

func TestAwaitTimeout(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("q")})
	require.NoError(t, err)
	_, err = e.awaitRef(context.Background(), x.ID, 50*time.Millisecond)
	assert.ErrorIs(t, err, store.ErrTimeout)
}

func TestAwaitWaitsForForeignWriterToClose(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("q")})
	require.NoError(t, err)
	req := x.Request()
	header := messages.ResponseHeader{ID: req.Header.ID, StartedAt: req.Header.StartedAt, Orchestrator: "%1", Worker: "%2", RequestBytes: -1}

	// A plain, non-atomic writer: the file exists, half written, while it is held open.
	w, err := os.OpenFile(x.ResponsePath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	require.NoError(t, err)
	_, err = w.WriteString(header.String() + "\npart one\n")
	require.NoError(t, err)

	done := make(chan *exchange.Exchange, 1)
	go func() {
		got, err := e.awaitRef(context.Background(), x.ID, 10*time.Second)
		assert.NoError(t, err)
		done <- got
	}()
	select {
	case got := <-done:
		t.Fatalf("await returned a half-written response: %q", got.ResponseBody)
	case <-time.After(300 * time.Millisecond):
		// Still waiting, as it should while the writer holds the file: this bound is the test's
		// observation window, not a synchronization.
	}
	_, err = w.WriteString("part two\n")
	require.NoError(t, err)
	require.NoError(t, w.Close())
	got := <-done
	assert.Equal(t, "part one\npart two\n", got.ResponseBody)
}

func TestHistoryNamesDamagedAndForeignFiles(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("fine")})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(x.Dir, "003-request.md"), []byte("garbage\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(x.Dir, "notes.txt"), []byte("mine"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(filepath.Dir(x.Dir), "not-a-session"), 0o700))

	sessions, foreign, err := e.History(context.Background(), HistoryOptions{})
	require.NoError(t, err)
	require.Len(t, sessions, 1)
	require.Len(t, sessions[0].Exchanges, 2)
	assert.Equal(t, exchange.StatusPending, sessions[0].Exchanges[0].Status)
	assert.Equal(t, exchange.StatusDamaged, sessions[0].Exchanges[1].Status)
	assert.NotEmpty(t, sessions[0].Exchanges[1].Problems)
	assert.Equal(t, []string{"notes.txt"}, sessions[0].Foreign)
	assert.Equal(t, []string{"not-a-session"}, foreign)

	pending, _, err := e.History(context.Background(), HistoryOptions{Pending: true})
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Len(t, pending[0].Exchanges, 1)
}

func TestParseRefusesPathsOutsideRoot(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("q")})
	require.NoError(t, err)
	outside := filepath.Join(t.TempDir(), x.Session)
	require.NoError(t, os.MkdirAll(outside, 0o700))
	for _, path := range []string{
		filepath.Join(outside, "002-response.md"),
		filepath.Join(x.Dir, "..", "..", filepath.Base(outside), "002-response.md"),
	} {
		line := fmt.Sprintf("[RESPONSE started_at=%s orchestrator=%%1 worker=%%2] %s", x.StartedAt, path)
		_, err := e.book.Parse(context.Background(), line)
		assert.Error(t, err, path)
	}
	// A symlinked session folder inside the root that points outside is refused too.
	link := filepath.Join(filepath.Dir(x.Dir), "20200101-000000-o1-w2")
	require.NoError(t, os.Symlink(outside, link))
	line := fmt.Sprintf("[RESPONSE started_at=20200101-000000 orchestrator=%%1 worker=%%2] %s", filepath.Join(link, "002-response.md"))
	_, err = e.book.Parse(context.Background(), line)
	assert.ErrorIs(t, err, store.ErrOutsideRoot)
}

func TestRootRefusedWhenSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	require.NoError(t, os.Mkdir(real, 0o700))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(real, link))
	_, err := store.EnsureRoot(link, true)
	assert.ErrorIs(t, err, store.ErrUnsafeRoot)

	loose := filepath.Join(dir, "loose")
	require.NoError(t, os.Mkdir(loose, 0o755))
	_, err = store.EnsureRoot(loose, true)
	require.NoError(t, err)
	st, err := os.Stat(loose)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm())
}

// sameRand returns the same two bytes for ever: every id it makes collides with the last.
type sameRand struct{}

func (sameRand) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 0xab
	}
	return len(p), nil
}

func TestIDsAreUniqueUnderTheRoot(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	fixed := time.Date(2026, 1, 17, 12, 0, 0, 0, time.UTC)
	e.cfg.Now = func() time.Time { return fixed }
	e.cfg.Rand = sameRand{}
	a, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("one")})
	require.NoError(t, err)
	_, err = e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("two")})
	require.Error(t, err, "with one possible id per second, the second send must not reuse it")
	assert.Contains(t, err.Error(), "no free request id")
	assert.Equal(t, "20260117-120000-abab", a.ID)

	// The id is claimed in the hints of its second, which say where its request is: no file
	// of its own.
	root := filepath.Dir(a.Dir)
	hints, err := os.ReadFile(filepath.Join(root, store.WhereDir, "20260117-120000"))
	require.NoError(t, err)
	assert.Equal(t, "abab "+filepath.Base(a.Dir)+"/"+filepath.Base(a.RequestPath)+"\n", string(hints))
	for _, d := range []string{store.WhereDir, store.IDsDir} {
		_, err = os.Lstat(filepath.Join(root, d, a.ID))
		assert.ErrorIs(t, err, os.ErrNotExist, "no file of the id's own in %s", d)
	}
}

func TestLocateByIDFollowsTheClaimsHintAndChecksIt(t *testing.T) {
	f := newFake("%1", "%2", "%3")
	e := newEngine(t, f, "%1")
	ctx := context.Background()
	a, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("first")})
	require.NoError(t, err)
	b, err := e.Send(ctx, SendOptions{To: "%3", Body: []byte("second")})
	require.NoError(t, err)
	root := filepath.Dir(a.Dir)
	second := filepath.Join(root, store.WhereDir, a.ID[:len(messages.StampLayout)])
	hints, err := os.ReadFile(second)
	require.NoError(t, err)
	assert.Contains(t, string(hints), a.ID[len(messages.StampLayout)+1:]+" "+a.Session+"/001-request.md\n", "send records where its request is")

	got, err := e.book.Locate(ctx, a.ID, exchange.RoleOrchestrator)
	require.NoError(t, err)
	assert.Equal(t, a.RequestPath, got.RequestPath)

	// A wrong line in the second's hints costs a scan, never a wrong answer.
	require.NoError(t, os.WriteFile(second, []byte(a.ID[len(messages.StampLayout)+1:]+" "+b.Session+"/001-request.md\n"), 0o600))
	got, err = e.book.Locate(ctx, a.ID, exchange.RoleOrchestrator)
	require.NoError(t, err)
	assert.Equal(t, a.RequestPath, got.RequestPath, "a wrong line")
	require.NoError(t, os.Remove(second))

	// An earlier version's link per id is read as well, and checked the same way.
	claim := filepath.Join(root, store.WhereDir, a.ID)
	require.NoError(t, exchange.RecordID(root, a.ID, a.Session, 1))
	got, err = e.book.Locate(ctx, a.ID, exchange.RoleOrchestrator)
	require.NoError(t, err)
	assert.Equal(t, a.RequestPath, got.RequestPath)

	// A hint is checked against the request's own header, and a wrong one costs a scan, never
	// a wrong answer: another exchange's place, a place outside the root, garbage, a file.
	for _, bad := range []string{b.Session + "/001-request.md", "../elsewhere/001-request.md", "garbage", a.Session + "/002-response.md"} {
		require.NoError(t, os.Remove(claim))
		require.NoError(t, os.Symlink(bad, claim))
		got, err := e.book.Locate(ctx, a.ID, exchange.RoleOrchestrator)
		require.NoError(t, err, "%q", bad)
		assert.Equal(t, a.RequestPath, got.RequestPath, "%q", bad)
	}
	require.NoError(t, os.Remove(claim))
	require.NoError(t, os.WriteFile(claim, []byte(a.Session+"/001-request.md"), 0o600))
	got, err = e.book.Locate(ctx, a.ID, exchange.RoleOrchestrator)
	require.NoError(t, err)
	assert.Equal(t, a.RequestPath, got.RequestPath, "a file where a link should be: the scan")
	require.NoError(t, os.Remove(claim))
	got, err = e.book.Locate(ctx, a.ID, exchange.RoleOrchestrator)
	require.NoError(t, err)
	assert.Equal(t, a.RequestPath, got.RequestPath, "no claim at all: the scan")
}

func TestLargeMessagesAreWrittenWholeAndLeanAwaitLeavesTheRequestOut(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	ctx := context.Background()
	// Larger than bigFile, so loading without bodies detaches from the file's text, and larger
	// than neverPasted, so the request goes as its pointer line without being read whole.
	big := []byte(strings.Repeat("a line of a large request\n", 2<<20/26) + "the end, without a newline")
	x, err := e.Send(ctx, SendOptions{To: "%2", Body: big})
	require.NoError(t, err)
	assert.Equal(t, "ok", x.Integrity, "the body written between header and instructions is the body sent")
	assert.Equal(t, fleet.FormPointer, x.Form)
	assert.Empty(t, x.Request().Body, "an exchange loaded without bodies holds no body")
	assert.Equal(t, "a line of a large request", x.Summary)

	answer := []byte(strings.Repeat("a line of a large answer\n", 2<<20/25) + "\n\n")
	_, err = e.as("%2").Notify(ctx, NotifyOptions{Ref: x.ID, Body: answer})
	require.NoError(t, err)
	data, err := os.ReadFile(x.ResponsePath)
	require.NoError(t, err)
	want := strings.TrimRight(string(answer), "\n") + "\n"
	assert.True(t, strings.HasSuffix(string(data), "]\n"+want), "header, the answer without its extra newlines, one newline")

	a, err := e.as("%1").Await(ctx, AwaitOptions{Refs: []string{x.ID}, Timeout: time.Second, Lean: true})
	require.NoError(t, err)
	got := a.Exchange
	assert.Equal(t, want, got.ResponseBody)
	assert.Empty(t, got.RequestBody)
	assert.Equal(t, "ok", got.Integrity)

	whole, err := e.as("%1").awaitRef(ctx, x.ID, time.Second)
	require.NoError(t, err)
	assert.Equal(t, string(big), whole.RequestBody)
	assert.Equal(t, want, whole.ResponseBody)
}

// Detection reads the pane's tree, not the caller's ancestors up to init (a /proc read each, at
// every delivery): a caller inside the pane's tree is still never taken for the pane's agent,
// as the tree holds the whole line from it up to the pane.
func TestDetectReadsOnlyThePanesTree(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	e.cfg.SelfPID = 3000
	var asked [][]int
	e.cfg.PaneProcs = func(pane int, also ...int) (*proc.Table, error) {
		asked = append(asked, also)
		// %2 (pid 1001): a shell running claude in the foreground, which runs this caller.
		return proc.NewProcTable([]proc.Process{
			{PID: 1001, PPID: 100, SID: 1001, PGRP: 1001, TPGID: 2000, Comm: "bash", Args: []string{"-bash"}},
			{PID: 2000, PPID: 1001, SID: 1001, PGRP: 2000, TPGID: 2000, Comm: "claude", Args: []string{"claude"}},
			{PID: 3000, PPID: 2000, SID: 1001, PGRP: 2000, TPGID: 2000, Comm: "python3", Args: []string{"python3", "tool.py"}},
		}), nil
	}
	det, err := e.finder.Detect(context.Background(), f.PaneMap["%2"], "")
	require.NoError(t, err)
	require.Len(t, asked, 1)
	assert.Empty(t, asked[0], "no ancestors of the caller asked for")
	assert.NotEqual(t, "claude", det.Name, "the caller's own agent is not the pane's: %s", det.Reason)
}

// scriptedWatch is a folder watch whose batches of events a test hands over one at a time; each
// call of Next is told on calls before it waits.
type scriptedWatch struct {
	calls   chan struct{}
	batches chan []store.DirEvent
}

func (w *scriptedWatch) Next(ctx context.Context) ([]store.DirEvent, error) {
	w.calls <- struct{}{}
	select {
	case b := <-w.batches:
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (w *scriptedWatch) Close() error { return nil }
func (w *scriptedWatch) Nudge()       {}

// An await that wakes on writes alone into the response (its writer still at work) does not look
// at the file: it waits for the event that can end the write (here the close), and then returns
// the response. A complete file is put in place before the write event, so an await that looked
// would return at once, before its next wait.
func TestAwaitWatchDoesNotLookOnWritesAlone(t *testing.T) {
	defer func(q time.Duration) { awaitQuickWait = q }(awaitQuickWait)
	defer func(w func(string, bool) (dirWatch, func(bool), error)) { watchDir = w }(watchDir)
	awaitQuickWait = 0
	sw := &scriptedWatch{calls: make(chan struct{}, 4), batches: make(chan []store.DirEvent)}
	watchDir = func(string, bool) (dirWatch, func(bool), error) { return sw, func(bool) {}, nil }

	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("q")})
	require.NoError(t, err)
	req := x.Request()
	header := messages.ResponseHeader{ID: req.Header.ID, StartedAt: req.Header.StartedAt, Orchestrator: "%1", Worker: "%2", RequestBytes: -1}

	type result struct {
		a   *Awaited
		err error
	}
	done := make(chan result, 1)
	go func() {
		a, err := e.Await(context.Background(), AwaitOptions{Refs: []string{x.ID}, Timeout: time.Minute, Watch: true})
		done <- result{a, err}
	}()
	<-sw.calls // the await looked (no file yet) and waits
	require.NoError(t, os.WriteFile(x.ResponsePath, []byte(header.String()+"\nthe answer\n"), 0o600))
	name := filepath.Base(x.ResponsePath)
	sw.batches <- []store.DirEvent{{Name: name, Written: true}, {Name: name, Written: true}}
	select {
	case <-sw.calls: // waiting again, without having taken the response
	case r := <-done:
		t.Fatalf("the await looked at the response on a write event alone (err %v)", r.err)
	}
	sw.batches <- []store.DirEvent{{Name: name}}
	r := <-done
	require.NoError(t, r.err)
	assert.Equal(t, "the answer\n", r.a.ResponseBody)
}

// nudgeWatch is a folder watch that reports no event ever: a wait on it ends only when it is
// nudged (or its ctx ends).
type nudgeWatch struct {
	calls  chan struct{}
	nudged chan struct{}
}

func (w *nudgeWatch) Next(ctx context.Context) ([]store.DirEvent, error) {
	w.calls <- struct{}{}
	select {
	case <-w.nudged:
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (w *nudgeWatch) Close() error { return nil }
func (w *nudgeWatch) Nudge()       { w.nudged <- struct{}{} }

// A notify tells an await of its own process that waits for its response (the resident runs
// both): the await takes the response without an event of its watch, and is forgotten after.
func TestAwaitNudgedByNotifyOfItsProcess(t *testing.T) {
	defer func(q time.Duration) { awaitQuickWait = q }(awaitQuickWait)
	defer func(w func(string, bool) (dirWatch, func(bool), error)) { watchDir = w }(watchDir)
	awaitQuickWait = 0
	nw := &nudgeWatch{calls: make(chan struct{}, 4), nudged: make(chan struct{}, 1)}
	watchDir = func(string, bool) (dirWatch, func(bool), error) { return nw, func(bool) {}, nil }

	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("q")})
	require.NoError(t, err)
	// The await's own bound is far beyond the test's: at its end it would look again and find
	// the response without any nudge.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan *Awaited, 1)
	go func() {
		a, err := e.Await(ctx, AwaitOptions{Refs: []string{x.ID}, Timeout: time.Hour, Watch: true})
		assert.NoError(t, err)
		done <- a
	}()
	<-nw.calls // the await looked (no file yet) and waits on its watch
	_, err = e.as("%2").Notify(context.Background(), NotifyOptions{Ref: x.ID, Body: []byte("the answer")})
	require.NoError(t, err)
	select {
	case a := <-done:
		require.NotNil(t, a)
		assert.Equal(t, "the answer\n", a.ResponseBody)
	case <-time.After(20 * time.Second):
		t.Fatal("the await did not take the response its process's notify published")
	}
	nudges.mu.Lock()
	defer nudges.mu.Unlock()
	assert.Empty(t, nudges.m, "the await is forgotten once done")
}
