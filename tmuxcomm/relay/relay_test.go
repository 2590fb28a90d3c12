package relay_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/core/coretest"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/relay"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// world is a relay station over the shared in-memory tmux, panes %0 to %3, with a door of its own
// (sender) whose sends write the exchange as the real one does, under the id they are given.
type world struct {
	t       *testing.T
	tmux    *coretest.Tmux
	cfg     *core.Config
	station *relay.Station
	send    *sender
}

// newWorld is the worker's host (relayed: Self is the orchestrator's pane on the other host) or,
// with relayed false, the orchestrator's host.
func newWorld(t *testing.T, relayed bool) *world {
	t.Helper()
	f := coretest.NewTmux("%0", "%1", "%2", "%3")
	cfg := coretest.Config(t, f, "%0")
	cfg.Relayed = relayed
	book := &exchange.Book{Config: cfg}
	s := &sender{book: book}
	return &world{t: t, tmux: f, cfg: cfg, station: &relay.Station{Config: cfg, Book: book, Sender: s}, send: s}
}

func (w *world) root() string {
	root, err := w.cfg.RootDir(true)
	require.NoError(w.t, err)
	return root
}

// sender is the door as the relay room sees it (relay.Sender).
type sender struct {
	book *exchange.Book
	mu   sync.Mutex
	sent []core.SendOptions
}

func (s *sender) sends() []core.SendOptions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]core.SendOptions(nil), s.sent...)
}

func (s *sender) Send(ctx context.Context, o core.SendOptions) (*exchange.Exchange, error) {
	s.mu.Lock()
	s.sent = append(s.sent, o)
	s.mu.Unlock()
	root, err := s.book.RootDir(true)
	if err != nil {
		return nil, err
	}
	srv, _ := s.book.Tmux.ServerInfo(ctx)
	worker := messages.PaneID(o.To)
	dir, sess, err := s.book.OpenSession(root, s.book.Self, worker, srv.Key(), srv.Socket)
	if err != nil {
		return nil, err
	}
	size, sum := messages.BodySum(o.Body)
	h := messages.RequestHeader{Capability: messages.ReadOnly, ID: o.ID, StartedAt: sess.StartedAt,
		Orchestrator: s.book.Self, Worker: worker, Bytes: size, Sum: sum}
	n, _, _, err := s.book.WriteRequest(dir, sess, h, o.Body, nil)
	if err != nil {
		return nil, err
	}
	if err := exchange.LogEvent(dir, n, exchange.StateWritten, map[string]string{"id": o.ID}, time.Now()); err != nil {
		return nil, err
	}
	if err := exchange.RecordID(root, o.ID, filepath.Base(dir), n); err != nil {
		return nil, err
	}
	return exchange.LoadExchange(dir, n, false), nil
}

// answer writes x's response as the worker's notify does.
func answer(t *testing.T, x *exchange.Exchange, body string) {
	t.Helper()
	h := x.Request().Header
	resp := messages.Response{Header: messages.ResponseHeader{ID: h.ID, StartedAt: h.StartedAt,
		Orchestrator: h.Orchestrator, Worker: h.Worker, RequestBytes: -1}, Body: body}
	require.NoError(t, os.WriteFile(x.ResponsePath, []byte(messages.FormatResponse(resp)), 0o600))
	require.NoError(t, exchange.LogEvent(x.Dir, x.Seq, exchange.StateAnswered, map[string]string{"response": x.ResponsePath}, time.Now()))
}

// hostile are ids and paths a caller on another host might send to name something else.
var hostile = []string{"", "x", "../../etc/passwd", "20260101-000000-abcd/../../x", "/tmp/x", "20260101-000000-ABCD", ".where/x", "20260101-000000-abcd\n"}

// The worker's host sends a relayed request under its own id, in a session folder marked relayed;
// a relay repeated after a broken connection finds the first one, and nothing is sent twice.
func TestRelaySendOnceUnderItsOwnID(t *testing.T) {
	w := newWorld(t, true)
	id, err := w.station.NewID()
	require.NoError(t, err)
	require.NoError(t, messages.ValidID(id))
	x, repeated, err := w.station.RelaySend(context.Background(), core.SendOptions{ID: id, To: "%2", Body: []byte("relayed work")})
	require.NoError(t, err)
	assert.False(t, repeated)
	assert.Equal(t, id, x.ID)
	assert.True(t, relay.RelayedHere(x.Dir), "its session folder is marked relayed")
	assert.Equal(t, messages.PaneID("%0"), x.Orchestrator, "the orchestrator's pane on its own host")

	again, repeated, err := w.station.RelaySend(context.Background(), core.SendOptions{ID: id, To: "%2", Body: []byte("relayed work")})
	require.NoError(t, err)
	assert.True(t, repeated)
	assert.Equal(t, x.RequestPath, again.RequestPath)
	assert.Len(t, w.send.sends(), 1, "sent once")
}

// Relays of one id at once: one sends, the others find it.
func TestConcurrentRelaysOfOneIDSendOnce(t *testing.T) {
	w := newWorld(t, true)
	id, err := w.station.NewID()
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	firsts, paths := 0, map[string]bool{}
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x, repeated, err := w.station.RelaySend(context.Background(), core.SendOptions{ID: id, To: "%2", Body: []byte("work")})
			if !assert.NoError(t, err) {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if !repeated {
				firsts++
			}
			paths[x.RequestPath] = true
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, firsts)
	assert.Len(t, paths, 1)
	assert.Len(t, w.send.sends(), 1)
}

// Another relay of the id under way holds its lock: this one times out, sending nothing.
func TestRelaySendWaitsForAnotherRelayOfItsID(t *testing.T) {
	w := newWorld(t, true)
	w.cfg.LockTimeout = 20 * time.Millisecond
	id, err := w.station.NewID()
	require.NoError(t, err)
	dir := filepath.Join(w.root(), store.RelayDir)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	unlock, err := lock.File(filepath.Join(dir, id+".lock"), syscall.LOCK_EX, time.Second)
	require.NoError(t, err)
	defer unlock()
	_, _, err = w.station.RelaySend(context.Background(), core.SendOptions{ID: id, To: "%2", Body: []byte("work")})
	require.ErrorIs(t, err, store.ErrTimeout)
	assert.Contains(t, err.Error(), "another relay of "+id)
	assert.Empty(t, w.send.sends())
}

// An exchange of the same id that was not relayed here is not a first relay of it.
func TestRelaySendIgnoresALocalExchangeOfItsID(t *testing.T) {
	local := newWorld(t, false)
	id, err := local.station.NewID()
	require.NoError(t, err)
	_, err = local.send.Send(context.Background(), core.SendOptions{ID: id, To: "%2", Body: []byte("local")})
	require.NoError(t, err)
	w := &world{t: t, tmux: local.tmux, cfg: local.cfg, send: local.send}
	local.cfg.Relayed = true
	w.station = local.station
	x, repeated, err := w.station.RelaySend(context.Background(), core.SendOptions{ID: id, To: "%2", Body: []byte("relayed")})
	require.NoError(t, err)
	assert.False(t, repeated)
	assert.True(t, relay.RelayedHere(x.Dir))
	assert.Len(t, w.send.sends(), 2)
}

func TestRelaySendRefusals(t *testing.T) {
	local := newWorld(t, false)
	_, _, err := local.station.RelaySend(context.Background(), core.SendOptions{ID: "20260101-000000-abcd", To: "%2", Body: []byte("x")})
	require.Error(t, err, "only a relayed engine relays")
	w := newWorld(t, true)
	for _, id := range hostile {
		_, _, err := w.station.RelaySend(context.Background(), core.SendOptions{ID: id, To: "%2", Body: []byte("x")})
		assert.Error(t, err, "%q", id)
	}
	assert.Empty(t, w.send.sends())
	assert.Empty(t, local.send.sends())
	// Nothing was written for them: no lock named by them, in the relay folder or elsewhere.
	var files []string
	filepath.WalkDir(filepath.Dir(w.cfg.Root), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	assert.Empty(t, files)
}

// The worker's host hands back the response of a relayed exchange once it is complete, and
// nothing of an exchange that was not relayed from another host.
func TestRelayedResponse(t *testing.T) {
	w := newWorld(t, true)
	_, _, err := w.station.RelayedResponse("20260101-000000-abcd")
	require.ErrorIs(t, err, store.ErrNotFound, "no root yet")

	id, err := w.station.NewID()
	require.NoError(t, err)
	x, _, err := w.station.RelaySend(context.Background(), core.SendOptions{ID: id, To: "%2", Body: []byte("relayed work")})
	require.NoError(t, err)
	body, ok, err := w.station.RelayedResponse(id)
	require.NoError(t, err)
	assert.False(t, ok, "no response yet")
	assert.Empty(t, body)

	answer(t, x, "done, all green")
	body, ok, err = w.station.RelayedResponse(id)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "done, all green\n", body)

	_, _, err = w.station.RelayedResponse("20200101-000000-abcd")
	require.ErrorIs(t, err, store.ErrNotFound, "no such exchange")

	// A local exchange is not handed to another host.
	w.cfg.Relayed = false
	lid, err := w.station.NewID()
	require.NoError(t, err)
	lx, err := w.send.Send(context.Background(), core.SendOptions{ID: lid, To: "%3", Body: []byte("local")})
	require.NoError(t, err)
	answer(t, lx, "secret")
	_, ok, err = w.station.RelayedResponse(lid)
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Contains(t, err.Error(), "was not relayed from another host")
	assert.False(t, ok)
}

// An id from another host that is no id is refused, naming nothing under the root.
func TestRelayedResponseRefusesHostileIDs(t *testing.T) {
	w := newWorld(t, true)
	id, err := w.station.NewID()
	require.NoError(t, err)
	_, _, err = w.station.RelaySend(context.Background(), core.SendOptions{ID: id, To: "%2", Body: []byte("relayed work")})
	require.NoError(t, err)
	for _, bad := range hostile {
		assert.NotPanics(t, func() {
			body, ok, err := w.station.RelayedResponse(bad)
			assert.Error(t, err, "%q", bad)
			assert.False(t, ok)
			assert.Empty(t, body)
		}, "%q", bad)
	}
}
