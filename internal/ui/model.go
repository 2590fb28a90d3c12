// Package ui is the fleet console, 'wcomm ui': one screen for a person supervising many agents.
// It shows every pane with its agent and state and what waits on it, the pending questions and
// approvals (answered from the first screen in two keystrokes), and the live feed of exchanges.
//
// The Model is pure state: Update takes messages (keys, the window size, ticks, the panes read
// from tmux, files read from disk, feed events) and returns the next state and the commands to
// run; View draws it. Everything that reads or writes goes through a Source, so the model is
// tested without a terminal, tmux or files. Run wires a Model to a terminal with Bubble Tea.
package ui

import (
	"context"
	"os"
	"sort"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// Source is where the console reads and acts: the engine in production, a fake in tests.
type Source interface {
	// Panes reads the panes from tmux (at most about once a second).
	Panes(ctx context.Context) ([]fleet.FleetPane, error)
	// Files reads what is on disk: pending questions, approvals, what waits on the panes (server
	// "": not the last).
	Files(ctx context.Context, server string, panes []messages.PaneID) (Files, error)
	// Waiting reads only what waits on the panes.
	Waiting(ctx context.Context, server string, panes []messages.PaneID) (*fleet.Waiting, error)
	// Recent returns up to n exchanges, the most recently active first.
	Recent(ctx context.Context, n int) ([]*exchange.Exchange, error)
	// Show reads one exchange whole.
	Show(ctx context.Context, ref string) (*exchange.Exchange, error)
	// Answer answers a question as 'wcomm answer' does, with source "ui"; it returns what was
	// recorded and what became of it.
	Answer(ctx context.Context, id, raw string) (string, error)
	// Resend delivers a kept request again as 'wcomm send --resend' does.
	Resend(ctx context.Context, id string) (string, error)
}

// Files is what the console reads from disk when files change.
type Files struct {
	Questions []*questions.QuestionStatus
	// Actions are the approvals by question id (what a yes would run, and why it is stale).
	Actions  map[string]*actions.ActionStatus
	Waiting  *fleet.Waiting
	Problems []string
}

// view is which screen is up.
type view int

const (
	viewHome     view = iota // panes, questions, the newest events
	viewFeed                 // every event, newest first
	viewDetail               // one exchange whole
	viewQuestion             // one question, waiting for its option
)

// Options configure a Model.
type Options struct {
	Title string // what the header names: the session, or "all sessions" ("": the panes' session)
	Color bool   // false: no colour at all (NO_COLOR)
	Mouse bool   // wheel and clicks move the selection
	// Detail is an event's short detail, as 'wcomm watch' prints it (nil: its fields as k=v).
	Detail func(watch.WatchEvent) string
}

// maxFeed bounds the feed kept in memory; older events are on disk ('wcomm watch --since').
const maxFeed = 1000

// recentRows is how many exchanges the first screen reads from disk.
const recentRows = 60

// Model is the console's whole state.
type Model struct {
	src  Source
	ctx  context.Context
	opts Options
	st   styles

	width, height int
	now           time.Time
	host          string // tmux's default pane title, left out of the table
	view          view
	help          bool

	panes    []fleet.FleetPane
	panesErr string
	server   string
	files    Files
	filesErr string
	loaded   bool // the first Files came in

	feed   []feedItem
	seen   map[string]bool
	states map[string]xState // an exchange's latest event, by exchangeKey
	bcast  map[string]string // the broadcast an exchange is one member of, by exchangeKey

	cursor  int // the selected row of the feed
	picked  *questions.QuestionStatus
	input   textinput.Model
	detail  *exchange.Exchange
	scroll  int
	status  string
	ticks   int           // reads of the panes so far
	every   time.Duration // between reads of the panes: tickEvery (tests: 0)
	pending bool          // a reload of the files is scheduled
	// wake tells of the panes' changes (the Source's Changes): the panes are read when told,
	// not every second; nil: every second.
	wake  <-chan struct{}
	clock bool // a clockMsg is scheduled
	// frames stops the renderer's frames while no message comes (Run's; nil: never stopped).
	frames *frames
}

// changer is a Source that tells of the panes' changes (EngineSource, reading through a tmux
// client kept open that is told of them).
type changer interface {
	Changes() <-chan struct{}
}

// xState is the latest event of one exchange.
type xState struct {
	event string
	at    time.Time
}

// feedItem is one event of the feed.
type feedItem struct {
	watch.WatchEvent
	key string
}

// Messages the model takes besides Bubble Tea's own.
type (
	panesMsg struct {
		at    time.Time // when the read started: the console's clock for ages
		panes []fleet.FleetPane
		err   error
	}
	filesMsg struct {
		files Files
		err   error
	}
	waitingMsg struct {
		w   *fleet.Waiting
		err error
	}
	recentMsg struct{ xs []*exchange.Exchange }
	// FeedMsg is one event of the live feed (tmuxcomm.Engine.Watch).
	FeedMsg   watch.WatchEvent
	reloadMsg struct{}
	// clockMsg moves the console's clock while an age is shown and the panes are read only
	// when they change.
	clockMsg time.Time
	shownMsg struct {
		x   *exchange.Exchange
		err error
	}
	doneMsg struct{ text string }
)

// tickEvery is how often tmux is read and ages are redrawn: a read starts this long after the
// last one came back.
const tickEvery = time.Second

// sizeTicks is how many reads of the panes after the start ask the window's size.
const sizeTicks = 3

// reloadAfter gathers the file events of one burst into one read of the files.
const reloadAfter = 100 * time.Millisecond

// New returns the console's model over src.
func New(ctx context.Context, src Source, o Options, now time.Time) Model {
	host, _ := os.Hostname()
	in := textinput.New()
	in.Placeholder = "your answer"
	in.CharLimit = 4096
	in.SetWidth(80 - 4) // the width New assumes; a window of another size sends its own
	m := Model{src: src, ctx: ctx, opts: o, st: newStyles(o.Color), now: now, width: 80, height: 24,
		seen: map[string]bool{}, states: map[string]xState{}, bcast: map[string]string{}, input: in, host: host, every: tickEvery}
	if c, ok := src.(changer); ok {
		m.wake = c.Changes()
	}
	return m
}

// Init reads the panes, the files and the newest exchanges at once, and starts the tick. The
// questions need no panes, so they are read beside them; what waits on the panes follows the
// first panes.
func (m Model) Init() tea.Cmd {
	return tea.Batch(m.pollPanes(0), m.loadFiles(), m.loadRecent())
}

// pollPanes reads the panes after d (0: now), or, told of the panes' changes (wake), at the next
// change. The wait and the read are one command, one goroutine and one message: while nothing
// changes the console sleeps, and each wake-up costs. Each read schedules the next, so there is
// never more than one.
func (m Model) pollPanes(d time.Duration) tea.Cmd {
	src, ctx, wake := m.src, m.ctx, m.wake
	read := func(t time.Time) tea.Msg {
		p, err := src.Panes(ctx)
		return panesMsg{at: t, panes: p, err: err}
	}
	if d <= 0 {
		return func() tea.Msg { return read(time.Now()) }
	}
	if wake != nil {
		return func() tea.Msg {
			select {
			case <-wake:
			case <-ctx.Done():
				return nil
			}
			return read(time.Now())
		}
	}
	return tea.Tick(d, read)
}

// keepClock schedules the clock's next move when the panes are read only on change and an age
// is shown (what waits on a pane, a pending question): ages are redrawn every second as before.
func (m *Model) keepClock() tea.Cmd {
	if m.wake == nil || m.clock || !m.showsAge() {
		return nil
	}
	m.clock = true
	return tea.Tick(m.every, func(t time.Time) tea.Msg { return clockMsg(t) })
}

// showsAge says whether the screen shows an age that moves with the clock.
func (m Model) showsAge() bool {
	if len(m.files.Questions) > 0 {
		return true
	}
	w := m.files.Waiting
	return w != nil && (len(w.Queued) > 0 || len(w.Open) > 0)
}

func (m Model) loadFiles() tea.Cmd {
	src, ctx, srv := m.src, m.ctx, m.server
	ids := m.paneIDs()
	return func() tea.Msg {
		f, err := src.Files(ctx, srv, ids)
		return filesMsg{f, err}
	}
}

func (m Model) loadWaiting() tea.Cmd {
	src, ctx, srv := m.src, m.ctx, m.server
	ids := m.paneIDs()
	return func() tea.Msg {
		w, err := src.Waiting(ctx, srv, ids)
		return waitingMsg{w, err}
	}
}

func (m Model) paneIDs() []messages.PaneID {
	ids := make([]messages.PaneID, len(m.panes))
	for i, p := range m.panes {
		ids[i] = p.ID
	}
	return ids
}

func (m Model) loadRecent() tea.Cmd {
	src, ctx := m.src, m.ctx
	return func() tea.Msg {
		xs, _ := src.Recent(ctx, recentRows)
		return recentMsg{xs}
	}
}

// Update takes one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m.frames.busy()
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.input.SetWidth(max(10, m.width-4))
		return m, nil
	case panesMsg:
		if !msg.at.IsZero() {
			m.now = msg.at
		}
		m.ticks++
		cmds := []tea.Cmd{m.pollPanes(m.every)}
		// The size is asked again on the first reads: Bubble Tea reads it once at start and
		// then listens for SIGWINCH, so a resize between the two (a window sized just after
		// the console starts, as tmux does for a new pane) would otherwise be lost for good.
		// Later resizes come with their signal.
		if m.ticks <= sizeTicks {
			cmds = append(cmds, tea.RequestWindowSize)
		}
		first := m.panes == nil
		changed := paneSetChanged(m.panes, msg.panes)
		if msg.err != nil {
			m.panesErr = msg.err.Error()
		} else {
			m.panesErr = ""
			m.panes = msg.panes
			if m.panes == nil {
				m.panes = []fleet.FleetPane{}
			}
			if len(msg.panes) > 0 {
				m.server = msg.panes[0].Server
			}
		}
		// What waits on panes is read per pane: a new pane set needs a new read (the first only
		// that: the questions are read from the start).
		switch {
		case msg.err != nil:
		case first:
			cmds = append(cmds, m.loadWaiting())
		case changed:
			cmds = append(cmds, m.loadFiles())
		}
		cmds = append(cmds, m.keepClock())
		return m, tea.Batch(cmds...)
	case clockMsg:
		m.clock = false
		m.now = time.Time(msg)
		clock := m.keepClock()
		return m, clock
	case waitingMsg:
		if msg.err != nil {
			m.filesErr = msg.err.Error()
		} else {
			m.files.Waiting = msg.w
		}
		clock := m.keepClock()
		return m, clock
	case filesMsg:
		m.loaded = true
		if msg.err != nil {
			m.filesErr = msg.err.Error()
		} else {
			m.filesErr = ""
			w := m.files.Waiting
			m.files = msg.files
			if m.files.Waiting == nil {
				m.files.Waiting = w // read before the panes were: keep what the panes' read found
			}
		}
		if m.picked != nil && findQuestion(m.files.Questions, m.picked.ID) == nil && m.view == viewQuestion {
			m.status = m.picked.ID + " is no longer pending"
			m.closeQuestion()
		}
		clock := m.keepClock() // before m is returned: it marks the clock scheduled
		return m, clock
	case recentMsg:
		for i := len(msg.xs) - 1; i >= 0; i-- {
			ev := LastEvent(msg.xs[i])
			if b := msg.xs[i].Broadcast; b != "" {
				m.bcast[exchangeKey(ev)] = b
			}
			m.addEvent(ev)
		}
		return m, nil
	case FeedMsg:
		m.addEvent(watch.WatchEvent(msg))
		if !m.pending {
			m.pending = true
			return m, tea.Tick(reloadAfter, func(time.Time) tea.Msg { return reloadMsg{} })
		}
		return m, nil
	case reloadMsg:
		m.pending = false
		return m, m.loadFiles()
	case shownMsg:
		if msg.err != nil {
			m.status = msg.err.Error()
			return m, nil
		}
		m.detail, m.scroll, m.view = msg.x, 0, viewDetail
		return m, nil
	case doneMsg:
		m.status = msg.text
		return m, m.loadFiles()
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.MouseWheelMsg:
		if m.opts.Mouse {
			if msg.Mouse().Button == tea.MouseWheelUp {
				m.move(-1)
			} else {
				m.move(1)
			}
		}
		return m, nil
	}
	if m.view == viewQuestion && m.input.Focused() {
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return m, cmd
	}
	return m, nil
}

// paneSetChanged reports whether the panes differ in which ids there are.
func paneSetChanged(a, b []fleet.FleetPane) bool {
	if len(a) != len(b) {
		return true
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Server != b[i].Server {
			return true
		}
	}
	return false
}

// LastEvent is an exchange's newest logged event as a feed event: the feed's first rows, before any event comes.
func LastEvent(x *exchange.Exchange) watch.WatchEvent {
	ev := watch.WatchEvent{At: x.SentAt, Session: x.Session, Kind: watch.FeedExchange, Seq: x.Seq, ID: x.ID,
		Event: watch.EventRequest, Path: x.RequestPath,
		Detail: map[string]string{"orchestrator": string(x.Orchestrator), "worker": string(x.Worker), "capability": x.Capability, "summary": x.Summary}}
	if n := len(x.Events); n > 0 {
		last := x.Events[n-1]
		if last.State != exchange.StateWritten {
			ev.At, ev.Event, ev.Detail = last.At, last.State, last.Detail
		}
	}
	return ev
}

func eventKey(ev watch.WatchEvent) string {
	return ev.Session + "|" + ev.Kind + "|" + ev.ID + "|" + ev.Event + "|" + ev.At.UTC().Format(time.RFC3339Nano)
}

// exchangeKey names an exchange across its events.
func exchangeKey(ev watch.WatchEvent) string { return ev.Session + "|" + ev.ID }

// addEvent puts an event into the feed, newest first, once.
func (m *Model) addEvent(ev watch.WatchEvent) {
	k := eventKey(ev)
	if m.seen[k] {
		return
	}
	m.seen[k] = true
	it := feedItem{WatchEvent: ev, key: k}
	// Events come in time order, but the first rows from disk and a replay may interleave with
	// live ones: insert at the place its time gives.
	i := sort.Search(len(m.feed), func(i int) bool { return !m.feed[i].At.After(ev.At) })
	m.feed = append(m.feed, feedItem{})
	copy(m.feed[i+1:], m.feed[i:])
	m.feed[i] = it
	if i <= m.cursor && len(m.feed) > 1 && m.view != viewHome {
		m.cursor++ // the selection stays on the row the person chose
	}
	if ev.Kind == watch.FeedExchange {
		xk := exchangeKey(ev)
		if b := ev.Detail["broadcast"]; b != "" {
			m.bcast[xk] = b // the request's event says it; the later ones of the exchange do not
		}
		if cur, ok := m.states[xk]; !ok || !ev.At.Before(cur.at) {
			m.states[xk] = xState{ev.Event, ev.At}
		}
	}
	if len(m.feed) > maxFeed {
		drop := m.feed[maxFeed:]
		for _, d := range drop {
			delete(m.seen, d.key)
		}
		m.feed = m.feed[:maxFeed]
	}
	m.cursor = min(m.cursor, max(0, len(m.feed)-1))
}

// pendingQuestions are the questions to show, blocking ones first, newest first within each.
func (m Model) pendingQuestions() []*questions.QuestionStatus { return PendingQuestions(m.files) }

// PendingQuestions are the pending questions of f, blocking ones first, newest first within
// each: the order the console and the web page show them in.
func PendingQuestions(f Files) []*questions.QuestionStatus {
	var out []*questions.QuestionStatus
	for _, q := range f.Questions {
		if q.State == questions.QuestionPending {
			out = append(out, q)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		bi, bj := out[i].Urgency == messages.Blocking, out[j].Urgency == messages.Blocking
		if bi != bj {
			return bi
		}
		return out[i].AskedAt.After(out[j].AskedAt)
	})
	return out
}

func findQuestion(qs []*questions.QuestionStatus, id string) *questions.QuestionStatus {
	for _, q := range qs {
		if q.ID == id && q.State == questions.QuestionPending {
			return q
		}
	}
	return nil
}

// Row is one pane as the panes table shows it: its state with what waits on it folded in.
type Row struct {
	fleet.FleetPane
	Queued, Open, Asking int
	Oldest               time.Time
}

func (m Model) rows() []Row { return Rows(m.panes, m.files) }

// Rows joins the panes read from tmux with what the files say waits on them. A pane whose
// worker asked a blocking question waits for a person's answer (or approval) whatever its screen
// shows: that is what the person needs to know. The console and the web page both show these.
func Rows(panes []fleet.FleetPane, files Files) []Row {
	out := make([]Row, len(panes))
	for i, p := range panes {
		r := Row{FleetPane: p}
		older := func(t time.Time) {
			if !t.IsZero() && (r.Oldest.IsZero() || t.Before(r.Oldest)) {
				r.Oldest = t
			}
		}
		if w := files.Waiting; w != nil {
			r.Queued, r.Open = len(w.Queued[p.ID]), len(w.Open[p.ID])
			for _, t := range w.Queued[p.ID] {
				older(t)
			}
			for _, t := range w.Open[p.ID] {
				older(t)
			}
		}
		for _, q := range files.Questions {
			if q.State != questions.QuestionPending || q.Worker != p.ID || (q.Server != "" && q.Server != p.Server) {
				continue
			}
			r.Asking++
			older(q.AskedAt)
			if q.Urgency == messages.Blocking && r.State != fleet.PaneGone {
				if q.Permission != nil {
					r.State, r.Evidence = fleet.PanePermission, clean(q.Waits)+" ("+q.ID+")"
				} else if q.Action != "" {
					r.State, r.Evidence = fleet.PanePermission, "its approval "+q.ID+" waits for a person"
				} else if r.State != fleet.PanePermission {
					r.State, r.Evidence = fleet.PaneAnswer, "its question "+q.ID+" waits for an answer"
				}
			}
		}
		out[i] = r
	}
	return out
}
