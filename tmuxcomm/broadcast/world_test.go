package broadcast_test

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

	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/broadcast"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/core/coretest"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// world is a broadcast room over the shared in-memory tmux, panes %1 (the caller) to %4, with a
// door of its own (sender) that writes each send's exchange as the real one does.
type world struct {
	t      *testing.T
	tmux   *coretest.Tmux
	cfg    *core.Config
	caster *broadcast.Caster
	send   *sender
	groups map[string][]string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	f := coretest.NewTmux("%1", "%2", "%3", "%4")
	cfg := coretest.Config(t, f, "%1")
	book := &exchange.Book{Config: cfg}
	w := &world{t: t, tmux: f, cfg: cfg}
	w.send = &sender{t: t, book: book, tmux: f, hosts: map[string]bool{"box": true},
		refuse: map[string]error{}, fail: map[string]error{}, answers: map[string]string{}}
	w.caster = &broadcast.Caster{Config: cfg, Book: book, Finder: &fleet.Finder{Config: cfg}, Sender: w.send,
		Groups: func() map[string][]string { return w.groups }}
	return w
}

func (w *world) root() string {
	root, err := w.cfg.RootDir(false)
	require.NoError(w.t, err)
	return root
}

func opts(targets ...string) broadcast.Options {
	return broadcast.Options{Targets: targets, Send: core.SendOptions{Body: []byte("review the diff")}}
}

// sender is the door as the room sees it (broadcast.Sender). Its sends write a real exchange
// (session folder, request file, log naming the broadcast), or for HOST:TARGET one in memory as
// a relay returns it; refuse fails a send before anything is written, fail after. Its await hands
// over the answers set in answers (by exchange id) and waits for the others until ctx ends.
type sender struct {
	t    *testing.T
	book *exchange.Book
	tmux *coretest.Tmux

	mu      sync.Mutex
	hosts   map[string]bool
	sent    []core.SendOptions
	refuse  map[string]error
	fail    map[string]error
	remote  []*exchange.Exchange
	answers map[string]string
	// hostGate, when set, is called by each send to another host before it returns.
	hostGate func(to string)
}

func (s *sender) HostTarget(to string) (bool, error) {
	host, _, ok := strings.Cut(to, ":")
	if !ok {
		return false, nil
	}
	if !s.hosts[host] {
		return false, fmt.Errorf("target %s: no host %q in the settings", to, host)
	}
	return true, nil
}

func (s *sender) sends() []core.SendOptions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]core.SendOptions(nil), s.sent...)
}

func (s *sender) Send(ctx context.Context, o core.SendOptions) (*exchange.Exchange, error) {
	s.mu.Lock()
	s.sent = append(s.sent, o)
	refuse, fail := s.refuse[o.To], s.fail[o.To]
	s.mu.Unlock()
	if refuse != nil {
		return nil, refuse
	}
	root, err := s.book.RootDir(true)
	if err != nil {
		return nil, err
	}
	id, err := s.book.ClaimID(root)
	if err != nil {
		return nil, err
	}
	if host, pane, ok := strings.Cut(o.To, ":"); ok {
		if s.hostGate != nil {
			s.hostGate(o.To)
		}
		x := &exchange.Exchange{ID: id, Host: host, Worker: messages.PaneID(pane), Orchestrator: s.book.Self,
			Broadcast: o.Broadcast, State: exchange.StateSubmitted}
		s.mu.Lock()
		s.remote = append(s.remote, x)
		s.mu.Unlock()
		return x, fail
	}
	if o.Target == nil {
		return nil, errors.New("a local member's send carries its resolved pane")
	}
	srv := o.Target.Server
	dir, sess, err := s.book.OpenSession(root, s.book.Self, o.Target.Pane.ID, srv.Key(), srv.Socket)
	if err != nil {
		return nil, err
	}
	size, sum := messages.BodySum(o.Body)
	h := messages.RequestHeader{Capability: messages.ReadOnly, ID: id, StartedAt: sess.StartedAt,
		Orchestrator: s.book.Self, Worker: o.Target.Pane.ID, Bytes: size, Sum: sum}
	n, _, _, err := s.book.WriteRequest(dir, sess, h, o.Body, nil)
	if err != nil {
		return nil, err
	}
	written := map[string]string{"id": id}
	if o.Broadcast != "" {
		written["broadcast"] = o.Broadcast
	}
	if err := exchange.LogEvent(dir, n, exchange.StateWritten, written, time.Now()); err != nil {
		return nil, err
	}
	if err := exchange.RecordID(root, id, filepath.Base(dir), n); err != nil {
		return nil, err
	}
	if fail == nil {
		_, err = s.tmux.Deliver(ctx, paneops.Delivery{Pane: o.Target.Pane.ID, Content: o.Body, Submit: true})
		fail = err
	}
	return exchange.LoadExchange(dir, n, false), fail
}

// answer makes the worker of x answer body.
func (s *sender) answer(x *exchange.Exchange, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[x.ID] = body
}

func (s *sender) AwaitThen(ctx context.Context, ref string, timeout time.Duration, out func(*exchange.Exchange) error) (*exchange.Exchange, error) {
	x, err := s.find(ctx, ref)
	if err != nil {
		return nil, err
	}
	for {
		s.mu.Lock()
		body, ok := s.answers[x.ID]
		s.mu.Unlock()
		if ok {
			got := *x
			got.Status, got.ResponseBody = exchange.StatusAnswered, body
			if err := out(&got); err != nil {
				return &got, err
			}
			return &got, nil
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return x, store.Kindf(ctx.Err(), "interrupted while waiting for %s", x.ID)
			}
			return x, store.Kindf(store.ErrTimeout, "no response from pane %s yet", x.Worker)
		case <-time.After(5 * time.Millisecond): // polling interval
		}
	}
}

// find locates ref as the door does: a local exchange by id or path, a relayed one by id.
func (s *sender) find(ctx context.Context, ref string) (*exchange.Exchange, error) {
	s.mu.Lock()
	for _, x := range s.remote {
		if x.ID == ref {
			s.mu.Unlock()
			return x, nil
		}
	}
	s.mu.Unlock()
	if filepath.IsAbs(ref) {
		if _, err := os.Lstat(filepath.Dir(ref)); err != nil {
			return nil, store.Kindf(store.ErrNotFound, "no exchange at %s", ref)
		}
	}
	return s.book.Locate(ctx, ref, exchange.RoleOrchestrator)
}
