package mailbox_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/core/coretest"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// world is one mailbox room over the shared in-memory tmux: panes %1 (the orchestrator) to %4,
// each strict delivery to a pane marked busy refused as a busy agent refuses it, and every start
// of a deliverer recorded instead of a process started.
type world struct {
	t      *testing.T
	tmux   *coretest.Tmux
	cfg    *core.Config
	office *mailbox.Office
	root   string
	srv    paneops.ServerInfo

	mu      sync.Mutex
	busy    map[messages.PaneID]bool
	spawned []messages.PaneID
	pastes  []paneops.Delivery
}

func newWorld(t *testing.T) *world {
	t.Helper()
	f := coretest.NewTmux("%1", "%2", "%3", "%4")
	cfg := coretest.Config(t, f, "%1")
	book := &exchange.Book{Config: cfg}
	finder := &fleet.Finder{Config: cfg}
	o := &mailbox.Office{Config: cfg, Book: book, Finder: finder}
	finder.Mail = o
	o.Desk = &questions.Desk{Config: cfg, Book: book, Finder: finder, Mailer: o}
	w := &world{t: t, tmux: f, cfg: cfg, office: o, busy: map[messages.PaneID]bool{}}
	f.Result = w.result
	cfg.Helpers.Deliverer = func(server, socket string, pane messages.PaneID) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.spawned = append(w.spawned, pane)
		return nil
	}
	root, err := cfg.RootDir(true)
	require.NoError(t, err)
	w.root = root
	w.srv, _ = f.ServerInfo(context.Background())
	return w
}

func (w *world) setBusy(p string, busy bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.busy[messages.PaneID(p)] = busy
}

func (w *world) spawns() []messages.PaneID {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]messages.PaneID(nil), w.spawned...)
}

func (w *world) result(d paneops.Delivery) (paneops.DeliveryResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if d.Strict && w.busy[d.Pane] {
		return paneops.DeliveryResult{}, paneops.ErrBusy
	}
	w.pastes = append(w.pastes, d)
	now := time.Now()
	return paneops.DeliveryResult{Buffer: "wcomm-x", Pasted: true, Submitted: true, PastedAt: now, EnterAt: now}, nil
}

// pane is the pane of the in-memory server.
func (w *world) pane(id string) paneops.Pane {
	w.t.Helper()
	p, err := w.tmux.Pane(context.Background(), id)
	require.NoError(w.t, err)
	return p
}

// request writes a request from %1 to worker as a send does (its session folder, request file,
// log and id hint) and returns its exchange and the mail that carries it.
func (w *world) request(worker, body string) (*exchange.Exchange, messages.Mail) {
	w.t.Helper()
	dir, sess, err := w.office.OpenSession(w.root, "%1", messages.PaneID(worker), w.srv.Key(), w.srv.Socket)
	require.NoError(w.t, err)
	id, err := w.office.ClaimID(w.root)
	require.NoError(w.t, err)
	size, sum := messages.BodySum([]byte(body))
	h := messages.RequestHeader{Capability: messages.ReadOnly, ID: id, StartedAt: sess.StartedAt,
		Orchestrator: "%1", Worker: messages.PaneID(worker), Bytes: size, Sum: sum}
	n, _, _, err := w.office.WriteRequest(dir, sess, h, []byte(body), nil)
	require.NoError(w.t, err)
	require.NoError(w.t, exchange.LogEvent(dir, n, exchange.StateWritten, map[string]string{"id": id}, time.Now()))
	require.NoError(w.t, exchange.RecordID(w.root, id, filepath.Base(dir), n))
	m := messages.Mail{Kind: messages.MailRequest, Pane: messages.PaneID(worker), Server: w.srv.Key(), Socket: w.srv.Socket,
		From: "%1", Session: filepath.Base(dir), Seq: n, Exchange: id}
	return exchange.LoadExchange(dir, n, false), m
}

// answer writes x's response as a worker's notify does, and returns the mail of its RESPONSE line
// for the orchestrator's pane.
func (w *world) answer(x *exchange.Exchange, body string) messages.Mail {
	w.t.Helper()
	req := x.Request()
	require.NotNil(w.t, req)
	h := req.Header
	resp := messages.Response{Header: messages.ResponseHeader{ID: h.ID, StartedAt: h.StartedAt,
		Orchestrator: h.Orchestrator, Worker: h.Worker, RequestBytes: -1}, Body: body}
	require.NoError(w.t, writeFile(x.ResponsePath, messages.FormatResponse(resp)))
	require.NoError(w.t, exchange.LogEvent(x.Dir, x.Seq, exchange.StateAnswered, map[string]string{"response": x.ResponsePath}, time.Now()))
	line := messages.Notification{StartedAt: h.StartedAt, Orchestrator: h.Orchestrator, Worker: h.Worker, Path: x.ResponsePath}.String()
	return messages.Mail{Kind: messages.MailResponse, Pane: x.Orchestrator, Server: w.srv.Key(), Socket: w.srv.Socket,
		From: x.Worker, Session: x.Session, Seq: x.Seq, Exchange: x.ID, Text: line}
}

// post hands m to the room as a send does.
func (w *world) post(m messages.Mail) (*core.Posted, error) {
	w.t.Helper()
	return w.office.Post(context.Background(), w.root, m, w.pane(string(m.Pane)), w.srv)
}

// drain runs the pane's deliverer until its outbox is empty.
func (w *world) drain(pane string) {
	w.t.Helper()
	require.NoError(w.t, w.office.RunDeliverer(context.Background(), w.srv.Key(), messages.PaneID(pane)))
}

// outbox is the pane's outbox.
func (w *world) outbox(pane string) interface {
	Pending() ([]messages.Mail, []string)
	Outcome(id string) (messages.MailOutcome, error)
	SetInflight(f mailbox.Inflight) error
	Path(parts ...string) string
} {
	w.t.Helper()
	ob, err := mailbox.OpenOutbox(w.root, w.srv.Key(), messages.PaneID(pane), true)
	require.NoError(w.t, err)
	return ob
}

// pasted lists the deliveries that typed into a pane (a busy pane's refusals left out).
func (w *world) pasted() []paneops.Delivery {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]paneops.Delivery(nil), w.pastes...)
}

// typed lists what each delivery typed, and into which pane.
func (w *world) typed() []string {
	var out []string
	for _, d := range w.pasted() {
		out = append(out, string(d.Pane)+": "+string(d.Content))
	}
	return out
}

// state is the exchange's state as its files say now.
func state(x *exchange.Exchange) *exchange.Exchange {
	return exchange.LoadExchange(x.Dir, x.Seq, false)
}

func writeFile(path, text string) error { return os.WriteFile(path, []byte(text), 0o600) }
