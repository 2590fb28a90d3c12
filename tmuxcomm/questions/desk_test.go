package questions_test

// The questions room against the shared in-memory tmux (core/coretest): %1 is the orchestrator,
// %2 the worker. The room is built as the door builds it, with a small Mailer of its own in
// place of the mailbox room: it types each block into its pane at once through the in-memory
// tmux, or queues it when told to, and records what it was handed.

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/core/coretest"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// fakeMailer stands in for the mailbox: a mail is typed into its pane now, unless the pane is
// queued (then it waits, and nothing is typed) or the pane refuses (then nothing is queued).
type fakeMailer struct {
	mu     sync.Mutex
	tmux   *coretest.Tmux
	queue  map[messages.PaneID]bool
	posted []messages.Mail
}

func (m *fakeMailer) Post(ctx context.Context, root string, mail messages.Mail, pane paneops.Pane, srv paneops.ServerInfo) (*core.Posted, error) {
	m.mu.Lock()
	m.posted = append(m.posted, mail)
	queued := m.queue[pane.ID]
	m.mu.Unlock()
	if queued {
		return &core.Posted{Mail: mail, Queued: true, Reason: "the pane is busy"}, nil
	}
	if _, err := m.tmux.Deliver(ctx, paneops.Delivery{Pane: pane.ID, Content: []byte(mail.Text), Submit: true}); err != nil {
		return nil, err
	}
	return &core.Posted{Mail: mail, Outcome: messages.MailDelivered, Via: exchange.ViaTyped}, nil
}

func (m *fakeMailer) setQueue(pane messages.PaneID, on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.queue == nil {
		m.queue = map[messages.PaneID]bool{}
	}
	m.queue[pane] = on
}

func (m *fakeMailer) mails() []messages.Mail {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]messages.Mail(nil), m.posted...)
}

// world is one root, one tmux server and the mailer every desk of it shares.
type world struct {
	t      *testing.T
	tmux   *coretest.Tmux
	mailer *fakeMailer
	root   string
}

func newWorld(t *testing.T, panes ...string) *world {
	t.Helper()
	if len(panes) == 0 {
		panes = []string{"%1", "%2"}
	}
	f := coretest.NewTmux(panes...)
	return &world{t: t, tmux: f, mailer: &fakeMailer{tmux: f}, root: filepath.Join(t.TempDir(), "root")}
}

// desk is the questions room as pane self sees it (self "" for a caller outside tmux).
func (w *world) desk(self string) *questions.Desk {
	cfg := coretest.Config(w.t, w.tmux, self)
	cfg.Root = w.root
	return &questions.Desk{Config: cfg, Book: &exchange.Book{Config: cfg}, Finder: &fleet.Finder{Config: cfg}, Mailer: w.mailer}
}

// request writes a request from orch to worker, as a send writes it, and returns its exchange.
func (w *world) request(orch, worker string) *exchange.Exchange {
	w.t.Helper()
	d := w.desk(orch)
	root, err := d.RootDir(true)
	require.NoError(w.t, err)
	srv, err := w.tmux.ServerInfo(context.Background())
	require.NoError(w.t, err)
	dir, sess, err := d.OpenSession(root, messages.PaneID(orch), messages.PaneID(worker), srv.Key(), srv.Socket)
	require.NoError(w.t, err)
	id, err := d.ClaimID(root)
	require.NoError(w.t, err)
	body := []byte("implement the auth module")
	size, sum := messages.BodySum(body)
	h := messages.RequestHeader{Capability: messages.ReadOnly, ID: id, StartedAt: sess.StartedAt,
		Orchestrator: messages.PaneID(orch), Worker: messages.PaneID(worker), Bytes: size, Sum: sum}
	n, _, _, err := d.WriteRequest(dir, sess, h, body, nil)
	require.NoError(w.t, err)
	require.NoError(w.t, exchange.LogEvent(dir, n, exchange.StateSubmitted, nil, time.Now()))
	return exchange.LoadExchange(dir, n, false)
}

// respond writes the response of x, as a notify does.
func (w *world) respond(x *exchange.Exchange) {
	w.t.Helper()
	h := x.Request().Header
	resp := messages.ResponseHeader{ID: h.ID, StartedAt: h.StartedAt, Orchestrator: h.Orchestrator, Worker: h.Worker, RequestBytes: -1}
	require.NoError(w.t, store.WriteExclusive(x.ResponsePath, []byte(resp.String()+"\ndone anyway\n")))
	require.Equal(w.t, exchange.StatusAnswered, exchange.LoadExchange(x.Dir, x.Seq, false).Status)
}

// delivered is what was typed into pane, in order.
func (w *world) delivered(pane string) []string {
	var out []string
	for _, d := range w.tmux.Delivered() {
		if d.Pane == messages.PaneID(pane) {
			out = append(out, string(d.Content))
		}
	}
	return out
}

func numbered(text string) messages.Question {
	return messages.Question{Text: text, Task: "task-3", Urgency: messages.Blocking, Type: messages.Numbered,
		Options: []string{"Use bcrypt (already in deps)", "Use argon2 (stronger but new dep)"},
		Context: "The plan names no hash; bcrypt is already a dependency."}
}

// nonBlocking is q asked without waiting.
func nonBlocking(q messages.Question) messages.Question {
	q.Urgency = messages.NonBlocking
	return q
}

type askOutcome struct {
	res *questions.AskResult
	err error
}

// askAsync runs an ask in the background.
func askAsync(d *questions.Desk, o questions.AskOptions) <-chan askOutcome {
	ch := make(chan askOutcome, 1)
	go func() {
		res, err := d.Ask(context.Background(), o)
		ch <- askOutcome{res, err}
	}()
	return ch
}

// waitAsked polls until n questions exist under the root, the newest held by a waiting ask.
func (w *world) waitAsked(n int) *questions.QuestionStatus {
	w.t.Helper()
	var list []*questions.QuestionStatus
	require.Eventually(w.t, func() bool {
		list, _, _ = w.desk("").Questions(context.Background(), questions.QuestionsOptions{FilesOnly: true})
		return len(list) == n && lock.IsLocked(list[n-1].WaitLock())
	}, 10*time.Second, 5*time.Millisecond)
	return list[n-1]
}

func outcome(t *testing.T, ch <-chan askOutcome) askOutcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(20 * time.Second):
		t.Fatal("the ask did not end")
	}
	return askOutcome{}
}

func events(st *questions.QuestionStatus) []string {
	var out []string
	for _, ev := range questions.QuestionEvents(st) {
		out = append(out, ev.State)
	}
	return out
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// isStale reports whether err says the answer came too late or no longer applies.
func isStale(err error) bool { return errors.Is(err, core.ErrStale) }
