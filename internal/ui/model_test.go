package ui

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// fakeSource records what the model asks of it.
type fakeSource struct {
	mu      sync.Mutex
	panes   []fleet.FleetPane
	files   Files
	recent  []*exchange.Exchange
	shown   *exchange.Exchange
	calls   []string
	answers [][2]string
	resends []string
}

func (f *fakeSource) call(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, s)
}

func (f *fakeSource) count(s string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c == s {
			n++
		}
	}
	return n
}

func (f *fakeSource) Panes(context.Context) ([]fleet.FleetPane, error) {
	f.call("panes")
	return f.panes, nil
}

func (f *fakeSource) Files(context.Context, string, []messages.PaneID) (Files, error) {
	f.call("files")
	return f.files, nil
}

func (f *fakeSource) Waiting(context.Context, string, []messages.PaneID) (*fleet.Waiting, error) {
	f.call("waiting")
	return f.files.Waiting, nil
}

func (f *fakeSource) Recent(_ context.Context, n int) ([]*exchange.Exchange, error) {
	f.call("recent")
	return f.recent, nil
}

func (f *fakeSource) Show(_ context.Context, ref string) (*exchange.Exchange, error) {
	f.call("show " + ref)
	if f.shown == nil {
		return nil, errors.New("no such exchange")
	}
	return f.shown, nil
}

func (f *fakeSource) Answer(_ context.Context, id, raw string) (string, error) {
	f.call("answer")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, [2]string{id, raw})
	return id + " answered: " + raw, nil
}

func (f *fakeSource) Resend(_ context.Context, id string) (string, error) {
	f.call("resend")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resends = append(f.resends, id)
	return "re-sent " + id, nil
}

var t0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

func pane(id, agent, state string) fleet.FleetPane {
	return fleet.FleetPane{PaneInfo: fleet.PaneInfo{Pane: paneops.Pane{ID: messages.PaneID(id), Session: "work", PID: 10}},
		Server: "1-1", Agent: agent, State: state}
}

func question(id, worker string, typ messages.QuestionType, u messages.Urgency, asked time.Time, opts ...string) *questions.QuestionStatus {
	q := &questions.QuestionStatus{State: questions.QuestionPending}
	q.ID, q.Text, q.Task, q.Type, q.Urgency, q.Options = id, "Which way for "+id+"?", "t", typ, u, opts
	q.Worker, q.AskedAt, q.Server = messages.PaneID(worker), asked, "1-1"
	return q
}

// world is a model over a fake source, sized and loaded as after its first reads.
func world(t *testing.T, f *fakeSource, w, h int, color bool) Model {
	t.Helper()
	m := New(context.Background(), f, Options{Title: "work", Color: color}, t0)
	m = step(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	m = step(t, m, panesMsg{panes: f.panes})
	m = step(t, m, filesMsg{files: f.files})
	m = step(t, m, recentMsg{xs: f.recent})
	return m
}

// step applies one message and drops the command it returns.
func step(t *testing.T, m Model, msg tea.Msg) Model {
	t.Helper()
	next, _ := m.Update(msg)
	return next.(Model)
}

// press types keys; it returns the model and the command of the last key.
func press(t *testing.T, m Model, keys ...string) (Model, tea.Cmd) {
	t.Helper()
	var cmd tea.Cmd
	for _, k := range keys {
		var next tea.Model
		next, cmd = m.Update(keyMsg(k))
		m = next.(Model)
	}
	return m, cmd
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// finish runs a command that must end in a doneMsg and applies it.
func finish(t *testing.T, m Model, cmd tea.Cmd) Model {
	t.Helper()
	require.NotNil(t, cmd)
	msg := cmd()
	_, ok := msg.(doneMsg)
	require.True(t, ok, "got %T", msg)
	return step(t, m, msg)
}

func TestPanesViewRows(t *testing.T) {
	f := &fakeSource{
		panes: []fleet.FleetPane{pane("%1", "claude", fleet.PaneBusy), pane("%2", "codex", fleet.PaneIdle),
			pane("%3", "shell", fleet.PaneTyping), pane("%4", "claude", fleet.PaneIdle), pane("%5", "generic", fleet.PaneGone),
			pane("%6", "gemini", fleet.PaneStarting)},
		files: Files{Waiting: &fleet.Waiting{
			Queued: map[messages.PaneID][]time.Time{"%1": {t0.Add(-3 * time.Minute), t0.Add(-time.Minute)}},
			Open:   map[messages.PaneID][]time.Time{"%1": {t0.Add(-10 * time.Minute)}, "%2": {t0.Add(-30 * time.Second)}},
		}},
	}
	ask := question("t.q1", "%2", messages.Numbered, messages.Blocking, t0.Add(-2*time.Hour), "A", "B")
	approval := question("t.q2", "%4", messages.YesNo, messages.Blocking, t0.Add(-time.Minute), "yes", "no")
	approval.Action = "publish"
	later := question("t.q3", "%3", messages.Freeform, messages.NonBlocking, t0.Add(-time.Minute))
	f.files.Questions = []*questions.QuestionStatus{ask, approval, later}
	m := world(t, f, 100, 30, false)
	rows := map[messages.PaneID]Row{}
	for _, r := range m.rows() {
		rows[r.ID] = r
	}
	tests := []struct {
		pane                 messages.PaneID
		state                string
		queued, open, asking int
		oldest               time.Time
	}{
		{"%1", fleet.PaneBusy, 2, 1, 0, t0.Add(-10 * time.Minute)},
		{"%2", fleet.PaneAnswer, 0, 1, 1, t0.Add(-2 * time.Hour)}, // its blocking question wins over idle
		{"%3", fleet.PaneTyping, 0, 0, 1, t0.Add(-time.Minute)},   // a non-blocking question leaves the state
		{"%4", fleet.PanePermission, 0, 0, 1, t0.Add(-time.Minute)},
		{"%5", fleet.PaneGone, 0, 0, 0, time.Time{}},
		{"%6", fleet.PaneStarting, 0, 0, 0, time.Time{}},
	}
	for _, tt := range tests {
		r := rows[tt.pane]
		assert.Equal(t, tt.state, r.State, "pane %s", tt.pane)
		assert.Equal(t, []int{tt.queued, tt.open, tt.asking}, []int{r.Queued, r.Open, r.Asking}, "pane %s", tt.pane)
		assert.Equal(t, tt.oldest, r.Oldest, "pane %s", tt.pane)
	}
	screen := ansi.Strip(m.Render())
	assert.Regexp(t, `(?m)^%1\s+-\s+claude\s+busy\s+2\s+1\s+-\s+10m\s+work:0\.0`, screen)
	assert.Regexp(t, `(?m)^%2\s+-\s+codex\s+answer\s+-\s+1\s+1\s+2h\s`, screen)
	assert.Regexp(t, `(?m)^%4\s+-\s+claude\s+permission\s`, screen)
	// Panes waiting on a person come first.
	assert.Less(t, strings.Index(screen, "%4 "), strings.Index(screen, "%1 "))
	assert.Less(t, strings.Index(screen, "%2 "), strings.Index(screen, "%1 "))
}

func TestPanesAllSessions(t *testing.T) {
	a, b := pane("%1", "claude", fleet.PaneIdle), pane("%9", "codex", fleet.PaneIdle)
	b.Session = "other"
	f := &fakeSource{panes: []fleet.FleetPane{a, b}}
	m := New(context.Background(), f, Options{Title: "all sessions"}, t0)
	m = step(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	m = step(t, m, panesMsg{panes: f.panes})
	screen := m.Render()
	assert.Contains(t, screen, "all sessions")
	assert.Contains(t, screen, "work:0.0")
	assert.Contains(t, screen, "other:0.0")
}

// tmux is read once a second, one read at a time (each read schedules the next), and never
// because files changed.
func TestPanesPolledOnTickOnly(t *testing.T) {
	f := &fakeSource{panes: []fleet.FleetPane{pane("%1", "claude", fleet.PaneIdle)}}
	m := world(t, f, 80, 24, false)
	m.every = 0 // the scheduled read runs at once, so it can be counted
	for i := 0; i < sizeTicks+2; i++ {
		next, cmd := m.Update(panesMsg{at: t0.Add(time.Duration(i) * time.Second), panes: f.panes})
		m = next.(Model)
		polls := 0
		for _, msg := range run(cmd) {
			if _, ok := msg.(panesMsg); ok {
				polls++
			}
		}
		assert.Equal(t, 1, polls, "read %d schedules exactly one next read", i)
		assert.Equal(t, t0.Add(time.Duration(i)*time.Second), m.now, "ages count from the read")
	}
	assert.Equal(t, time.Second, New(context.Background(), f, Options{}, t0).every, "a read a second")

	before := f.count("panes")
	next, cmd := m.Update(FeedMsg(watch.WatchEvent{At: t0, Session: "s", Kind: watch.FeedExchange, ID: "x", Event: exchange.StatePasted}))
	m = next.(Model)
	require.NotNil(t, cmd, "a file event schedules a read of the files")
	next, cmd = m.Update(reloadMsg{})
	msg := cmd()
	_, ok := msg.(filesMsg)
	assert.True(t, ok)
	assert.Equal(t, before, f.count("panes"), "file events never read tmux")
	assert.Equal(t, 1, f.count("files"), "the read after the event")
	_ = next
}

// run runs a command (a batch: each of its commands) and returns the messages.
func run(c tea.Cmd) []tea.Msg {
	if c == nil {
		return nil
	}
	msg := c()
	b, ok := msg.(tea.BatchMsg)
	if !ok {
		return []tea.Msg{msg}
	}
	var out []tea.Msg
	for _, c := range b {
		out = append(out, run(c)...)
	}
	return out
}

// A burst of file events is one read of the files.
func TestFeedEventsCoalesce(t *testing.T) {
	f := &fakeSource{}
	m := world(t, f, 80, 24, false)
	var cmds int
	for i := 0; i < 5; i++ {
		next, cmd := m.Update(FeedMsg(watch.WatchEvent{At: t0.Add(time.Duration(i) * time.Second), Session: "s", Kind: watch.FeedExchange, ID: "x", Event: exchange.StatePasted}))
		m = next.(Model)
		if cmd != nil {
			cmds++
		}
	}
	assert.Equal(t, 1, cmds)
	assert.Len(t, m.feed, 5)
}

func TestQuestionsOrderAndTwoKeys(t *testing.T) {
	older := question("a.q1", "%2", messages.Numbered, messages.Blocking, t0.Add(-time.Hour), "Use bcrypt", "Use argon2", "Ask later")
	newer := question("b.q1", "%3", messages.YesNo, messages.Blocking, t0.Add(-time.Minute), "yes", "no")
	nonBlocking := question("c.q1", "%4", messages.Numbered, messages.NonBlocking, t0, "x", "y")
	free := question("d.q1", "%5", messages.Freeform, messages.Blocking, t0.Add(-2*time.Hour))
	f := &fakeSource{files: Files{Questions: []*questions.QuestionStatus{older, nonBlocking, newer, free}}}
	m := world(t, f, 80, 24, false)
	qs := m.pendingQuestions()
	var ids []string
	for _, q := range qs {
		ids = append(ids, q.ID)
	}
	assert.Equal(t, []string{"b.q1", "a.q1", "d.q1", "c.q1"}, ids, "blocking first, newest first")
	screen := ansi.Strip(m.Render())
	assert.Regexp(t, `(?m)^1 \[blocking\]\s+%3\s+1m\s+Which way for b\.q1\?`, screen)
	assert.Contains(t, screen, "A Use bcrypt  B Use argon2  C Ask later")

	t.Run("numbered by letter", func(t *testing.T) {
		m2, cmd := press(t, m, "2", "b")
		m2 = finish(t, m2, cmd)
		assert.Equal(t, [2]string{"a.q1", "B"}, f.answers[len(f.answers)-1])
		assert.Equal(t, viewHome, m2.view)
		assert.Contains(t, m2.Render(), "a.q1 answered: B")
	})
	t.Run("numbered by number", func(t *testing.T) {
		_, cmd := press(t, m, "2", "3")
		finish(t, m, cmd)
		assert.Equal(t, [2]string{"a.q1", "C"}, f.answers[len(f.answers)-1])
	})
	t.Run("yes-no by y", func(t *testing.T) {
		_, cmd := press(t, m, "1", "y")
		finish(t, m, cmd)
		assert.Equal(t, [2]string{"b.q1", "yes"}, f.answers[len(f.answers)-1])
	})
	t.Run("freeform in a text field", func(t *testing.T) {
		m2, _ := press(t, m, "3")
		assert.Equal(t, viewQuestion, m2.view)
		assert.True(t, m2.input.Focused())
		m2, _ = press(t, m2, "u", "s", "e", " ", "q")
		assert.Contains(t, m2.Render(), "use q", "q types into the field, it does not quit")
		_, cmd := press(t, m2, "enter")
		finish(t, m2, cmd)
		assert.Equal(t, [2]string{"d.q1", "use q"}, f.answers[len(f.answers)-1])
	})
	t.Run("a key that is no option answers nothing", func(t *testing.T) {
		n := len(f.answers)
		m2, cmd := press(t, m, "1", "z")
		assert.Nil(t, cmd)
		assert.Equal(t, viewQuestion, m2.view)
		m2, _ = press(t, m2, "esc")
		assert.Equal(t, viewHome, m2.view)
		assert.Len(t, f.answers, n)
	})
	t.Run("no such question", func(t *testing.T) {
		m2, cmd := press(t, m, "9")
		assert.Nil(t, cmd)
		assert.Contains(t, m2.Render(), "no question 9")
	})
}

func TestApprovalShowsRunAndStale(t *testing.T) {
	q := question("t.q4", "%2", messages.YesNo, messages.Blocking, t0.Add(-time.Minute), "yes", "no")
	q.Action = "publish"
	a := &actions.ActionStatus{ID: "t.q4", Stale: true, Reasons: []string{"HEAD moved from abc to def"}}
	a.Definition = messages.ActionDef{Run: []string{"make", "publish"}, Dir: "/src/site"}
	f := &fakeSource{files: Files{Questions: []*questions.QuestionStatus{q}, Actions: map[string]*actions.ActionStatus{"t.q4": a}}}
	m := world(t, f, 120, 30, false)
	screen := ansi.Strip(m.Render())
	assert.Contains(t, screen, "[approval]")
	assert.Contains(t, screen, "runs: make publish")
	assert.Contains(t, screen, "stale: HEAD moved from abc to def")
	m, _ = press(t, m, "1")
	screen = ansi.Strip(m.Render())
	assert.Contains(t, screen, "APPROVAL t.q4")
	assert.Contains(t, screen, "A yes lets the dispatcher run: make publish")
	assert.Contains(t, screen, "STALE: HEAD moved from abc to def")
}

func exchangeEvent(seq int, id, event string, at time.Time) watch.WatchEvent {
	return watch.WatchEvent{At: at, Session: "20261125-095000-o1-w2", Kind: watch.FeedExchange, Seq: seq, ID: id, Event: event,
		Detail: map[string]string{"pane": "%2"}}
}

func TestExchangesFeed(t *testing.T) {
	x := &exchange.Exchange{Session: "20261125-095000-o1-w2", Seq: 1, ID: "20261125-095000-aaaa", Orchestrator: "%1", Worker: "%2",
		Status: exchange.StatusAnswered, State: exchange.StateAnswered, SentAt: t0.Add(-time.Hour), Summary: "look at it",
		Events: []exchange.Event{{State: exchange.StateWritten, At: t0.Add(-time.Hour)}, {State: exchange.StateAnswered, At: t0.Add(-50 * time.Minute)}}}
	f := &fakeSource{recent: []*exchange.Exchange{x}}
	m := world(t, f, 80, 24, false)
	require.Len(t, m.feed, 1)
	assert.Equal(t, exchange.StateAnswered, m.feed[0].Event, "an exchange from disk shows its last event")

	m = step(t, m, FeedMsg(exchangeEvent(3, "20261125-095000-cccc", exchange.StateRefused, t0.Add(-time.Minute))))
	m = step(t, m, FeedMsg(exchangeEvent(5, "20261125-095000-eeee", exchange.StatePasted, t0)))
	m = step(t, m, FeedMsg(exchangeEvent(5, "20261125-095000-eeee", exchange.StatePasted, t0))) // a replay: once
	m = step(t, m, FeedMsg(exchangeEvent(4, "20261125-095000-dddd", exchange.StateQueued, t0.Add(-30*time.Second))))
	var order []int
	for _, it := range m.feed {
		order = append(order, it.Seq)
	}
	assert.Equal(t, []int{5, 4, 3, 1}, order, "newest first, each event once")

	m, _ = press(t, m, "tab")
	assert.Equal(t, viewFeed, m.view)
	screen := ansi.Strip(m.Render())
	assert.Contains(t, screen, "EXCHANGES · 4 events, newest first")
	assert.Regexp(t, `#5 %1→%2\s+pasted`, screen)

	t.Run("enter opens one whole", func(t *testing.T) {
		f.shown = &exchange.Exchange{Session: x.Session, Seq: 5, ID: "20261125-095000-eeee", Orchestrator: "%1", Worker: "%2",
			RequestBody: "Look at the failing test.\nReport what you find.", ResponseBody: "All good.\x1b]2;pwned\x07",
			Events: []exchange.Event{{State: exchange.StatePasted, At: t0, Detail: map[string]string{"pane": "%2"}}}}
		m2, cmd := press(t, m, "enter")
		require.NotNil(t, cmd)
		m2 = step(t, m2, cmd())
		assert.Equal(t, 1, f.count("show 20261125-095000-eeee"))
		assert.Equal(t, viewDetail, m2.view)
		assert.NotContains(t, m2.Render(), "\x1b]", "a worker's escape sequence never reaches the screen")
		screen := ansi.Strip(m2.Render())
		for _, s := range []string{"EXCHANGE 20261125-095000-eeee #5", "DELIVERY LOG", "pasted", "REQUEST", "Look at the failing test.", "Report what you find.", "RESPONSE", "All good."} {
			assert.Contains(t, screen, s)
		}
		m2, _ = press(t, m2, "esc")
		assert.Equal(t, viewHome, m2.view)
	})
	t.Run("r re-sends a refused request", func(t *testing.T) {
		m2, _ := press(t, m, "down", "down") // 5, 4, [3]
		it, _ := m2.selected()
		require.Equal(t, 3, it.Seq)
		m2, cmd := press(t, m2, "r")
		finish(t, m2, cmd)
		assert.Equal(t, []string{"20261125-095000-cccc"}, f.resends)
	})
	t.Run("r re-sends a queued request", func(t *testing.T) {
		m2, _ := press(t, m, "down")
		m2, cmd := press(t, m2, "r")
		finish(t, m2, cmd)
		assert.Equal(t, "20261125-095000-dddd", f.resends[len(f.resends)-1])
	})
	t.Run("r leaves a delivered request alone", func(t *testing.T) {
		n := len(f.resends)
		m2, cmd := press(t, m, "r") // the selection is on #5, pasted
		assert.Nil(t, cmd)
		assert.Contains(t, m2.Render(), "only a queued, refused or dead-lettered request")
		assert.Len(t, f.resends, n)
	})
	t.Run("a request's latest state decides", func(t *testing.T) {
		// #3 was refused, then delivered on a retry: nothing to re-send any more.
		m2 := step(t, m, FeedMsg(exchangeEvent(3, "20261125-095000-cccc", exchange.StateSubmitted, t0.Add(time.Second))))
		m2, _ = press(t, m2, "G")
		for it, _ := m2.selected(); it.Seq != 3 || it.Event != exchange.StateRefused; it, _ = m2.selected() {
			m2, _ = press(t, m2, "up")
		}
		_, cmd := press(t, m2, "r")
		assert.Nil(t, cmd)
	})
}

// colorSGR matches a colour in an SGR sequence: 30-37, 90-97, 38;... (and backgrounds).
var colorSGR = regexp.MustCompile(`\x1b\[(?:[0-9;]*;)?(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])(?:;[0-9;]*)?m`)

func busyWorld(t *testing.T, color bool, w, h int) Model {
	t.Helper()
	wide := "界" + strings.Repeat("長い名前", 40) + "\x1b[31mred\x1b[0m\x1b]2;pwned\x07😀"
	var panes []fleet.FleetPane
	for i := 0; i < 30; i++ {
		p := pane("%"+string(rune('0'+i%10))+"0", "claude", fleet.PaneBusy)
		p.Title = wide
		p.Programs = []string{wide}
		panes = append(panes, p)
	}
	q := question("t.q1", "%10", messages.Numbered, messages.Blocking, t0, wide, wide, wide)
	q.Text = wide
	f := &fakeSource{panes: panes, files: Files{Questions: []*questions.QuestionStatus{q}}}
	m := world(t, f, w, h, color)
	for i := 0; i < 50; i++ {
		ev := exchangeEvent(i, "20261125-095000-aaaa", exchange.StateRefused, t0.Add(time.Duration(i)*time.Second))
		ev.Detail["error"] = wide
		m = step(t, m, FeedMsg(ev))
	}
	return m
}

// Every screen fits: no line wider than the window, no more lines than rows, at 80x24 and up
// (and smaller), whatever width the text from other processes has.
func TestRenderFitsTheWindow(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {100, 30}, {132, 43}, {250, 60}, {40, 10}} {
		m := busyWorld(t, true, size[0], size[1])
		for _, keys := range [][]string{nil, {"?"}, {"1"}, {"tab"}, {"tab", "down"}} {
			m2, _ := press(t, m, keys...)
			if len(keys) > 0 && keys[0] == "tab" {
				f := m2.src.(*fakeSource)
				f.shown = &exchange.Exchange{ID: "x", RequestBody: strings.Repeat("長い ", 200) + "\n\ttab", ResponseBody: strings.Repeat("w", 500)}
				m3, cmd := press(t, m2, "enter")
				m3 = step(t, m3, cmd())
				checkFits(t, m3.Render(), size, append(keys, "enter"))
			}
			checkFits(t, m2.Render(), size, keys)
		}
	}
}

func checkFits(t *testing.T, screen string, size [2]int, keys []string) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	assert.LessOrEqual(t, len(lines), size[1], "%v after %v", size, keys)
	for i, l := range lines {
		assert.LessOrEqual(t, ansi.StringWidth(l), size[0], "%v after %v: line %d %q", size, keys, i, l)
	}
	assert.NotContains(t, screen, "\x1b]", "no OSC from other processes")
	assert.NotContains(t, screen, "pwned\x07")
	assert.NotContains(t, screen, "\x1b[31mred", "no SGR from other processes")
}

func TestNoColor(t *testing.T) {
	plain := busyWorld(t, false, 100, 30).Render()
	assert.NotRegexp(t, colorSGR, plain, "NO_COLOR: no colour at all")
	assert.Contains(t, plain, "\x1b[", "bold and reverse stay")
	colored := busyWorld(t, true, 100, 30).Render()
	assert.Regexp(t, colorSGR, colored, "the same screen with colour has colours")
}

func TestHelpAndQuit(t *testing.T) {
	m := world(t, &fakeSource{}, 80, 24, false)
	m, _ = press(t, m, "?")
	screen := ansi.Strip(m.Render())
	assert.Contains(t, screen, "KEYS")
	for _, k := range keyHelp {
		assert.Contains(t, screen, k[1])
	}
	m, _ = press(t, m, "x")
	assert.NotContains(t, m.Render(), "KEYS", "any key closes the keys")
	_, cmd := press(t, m, "q")
	require.NotNil(t, cmd)
	assert.IsType(t, tea.QuitMsg{}, cmd())
}

func TestMouseOptional(t *testing.T) {
	f := &fakeSource{}
	m := world(t, f, 80, 24, false)
	for i := 0; i < 3; i++ {
		m = step(t, m, FeedMsg(exchangeEvent(i, "x", exchange.StatePasted, t0.Add(time.Duration(i)*time.Second))))
	}
	m, _ = press(t, m, "tab")
	wheel := tea.MouseWheelMsg{Button: tea.MouseWheelDown}
	assert.Equal(t, 0, step(t, m, wheel).cursor, "without --mouse the wheel does nothing")
	assert.Equal(t, tea.MouseModeNone, m.View().MouseMode)
	m.opts.Mouse = true
	assert.Equal(t, 1, step(t, m, wheel).cursor)
	assert.Equal(t, tea.MouseModeCellMotion, m.View().MouseMode)
}

// The first screen's reads start together: the questions do not wait for the panes, and the
// panes' first read asks only what waits on them, which a questions read that comes back later
// does not wipe.
func TestFirstReads(t *testing.T) {
	waiting := &fleet.Waiting{Queued: map[messages.PaneID][]time.Time{"%1": {t0}}, Open: map[messages.PaneID][]time.Time{}}
	f := &fakeSource{panes: []fleet.FleetPane{pane("%1", "claude", fleet.PaneIdle)}, files: Files{Waiting: waiting}}
	m := New(context.Background(), f, Options{Title: "work"}, t0)
	batch, ok := m.Init()().(tea.BatchMsg)
	require.True(t, ok)
	for _, c := range batch {
		if c != nil {
			go c() // the tick's waits a second; the reads return at once
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for f.count("panes")+f.count("files")+f.count("recent") < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, 1, f.count("panes"))
	assert.Equal(t, 1, f.count("files"))
	assert.Equal(t, 1, f.count("recent"))

	m.every = 0
	next, cmd := m.Update(panesMsg{panes: f.panes})
	m = next.(Model)
	var got []string
	for _, msg := range run(cmd) {
		switch msg := msg.(type) {
		case waitingMsg:
			got = append(got, "waiting")
			m = step(t, m, msg)
		case filesMsg:
			got = append(got, "files")
		}
	}
	assert.Equal(t, []string{"waiting"}, got, "the first panes read only what waits on them")
	assert.Equal(t, 1, f.count("files"))
	// The questions read, started before the panes were known, comes back last.
	m = step(t, m, filesMsg{files: Files{}})
	rows := m.rows()
	require.Len(t, rows, 1)
	assert.Equal(t, 1, rows[0].Queued)
}

// The first reads of the panes ask the window's size (a resize just after the start comes
// before Bubble Tea listens for it); later ones leave it to the resize signal.
func TestSizeAskedOnFirstTicks(t *testing.T) {
	f := &fakeSource{panes: []fleet.FleetPane{pane("%1", "claude", fleet.PaneIdle)}}
	m := world(t, f, 80, 24, false)
	m.every = 0
	for i := 2; i <= sizeTicks+2; i++ { // world made the first read
		next, cmd := m.Update(panesMsg{at: t0.Add(time.Duration(i) * time.Second), panes: f.panes})
		m = next.(Model)
		want := 1 // the next read
		if i <= sizeTicks {
			want = 2 // and the size
		}
		assert.Len(t, run(cmd), want, "read %d", i)
	}
}

// ownSGR matches the console's own styling (SGR sequences); anything else that starts with ESC on
// the screen came from another process.
var ownSGR = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// TestControlStringsFromOthersNeverReachTheScreen: a DCS and an APC string (and their 8-bit
// forms) in every field the console shows from files another process wrote, a remote host's reply
// among them (the state word of a relayed request is an event of its mirror), are removed on every
// screen; the text around them stays.
func TestControlStringsFromOthersNeverReachTheScreen(t *testing.T) {
	const evil = "\x1bPq#0;2;0;0;0#0~~\x1b\\\x1b_pwn\x1b\\\u0090dcs\u009c\u009fapc\u009c"
	p := pane("%1"+evil, "claude"+evil, fleet.PaneBusy+evil)
	p.Title = "title" + evil
	q := question("t.q1"+evil, "%2"+evil, messages.Numbered, messages.Blocking+evil, t0, "yes"+evil, "no"+evil)
	q.Task, q.Text, q.Context, q.Details = "task"+evil, "Which way?"+evil, "context"+evil, []string{"why" + evil, ""}
	f := &fakeSource{panes: []fleet.FleetPane{p}, files: Files{Questions: []*questions.QuestionStatus{q}}}
	m := world(t, f, 160, 40, true)
	ev := watch.WatchEvent{At: t0, Session: "20261125-095000-o1-w2" + evil, Kind: watch.FeedExchange, Seq: 1,
		ID: "20261125-095000-aaaa" + evil, Event: "submitted" + evil, Detail: map[string]string{"host": "h1" + evil, "evidence": "seen" + evil}}
	m = step(t, m, FeedMsg(ev))
	f.shown = &exchange.Exchange{Session: ev.Session, Seq: 1, ID: ev.ID, Orchestrator: "%1", Worker: "%2", State: "submitted" + evil,
		Evidence: "evidence" + evil, RequestPath: "/r" + evil, ResponsePath: "/p" + evil, RequestBody: "body" + evil,
		Events: []exchange.Event{{State: "queued" + evil, At: t0, Detail: map[string]string{"host": "h1" + evil}}}}

	screens := map[string]string{"home": m.Render()}
	feed, _ := press(t, m, "tab")
	screens["feed"] = feed.Render()
	detail, cmd := press(t, feed, "enter")
	require.NotNil(t, cmd)
	screens["detail"] = step(t, detail, cmd()).Render()
	picked, _ := press(t, m, "1")
	screens["question"] = picked.Render()
	for name, s := range screens {
		rest := ownSGR.ReplaceAllString(s, "")
		assert.NotContains(t, rest, "\x1b", "%s: an escape from another process: %q", name, rest)
		for _, c := range []string{"\u0090", "\u009c", "\u009f"} {
			assert.NotContains(t, s, c, "%s: a C1 control from another process", name)
		}
	}
	assert.Contains(t, ansi.Strip(screens["feed"]), "submitted")
	assert.Contains(t, ansi.Strip(screens["home"]), "[blocking")
	assert.Contains(t, ansi.Strip(screens["detail"]), "queued")
	assert.Contains(t, ansi.Strip(screens["question"]), "Which way?")
}

// TestHeaderCounts: the header's counts agree with their nouns: "1 pane · 1 question", not
// "1 panes · 1 questions".
func TestHeaderCounts(t *testing.T) {
	one := &fakeSource{panes: []fleet.FleetPane{pane("%1", "claude", "idle")},
		files: Files{Questions: []*questions.QuestionStatus{question("a.q1", "%1", messages.YesNo, messages.Blocking, t0, "yes", "no")}}}
	screen := ansi.Strip(world(t, one, 120, 24, false).Render())
	assert.Contains(t, screen, "· 1 pane · 1 question ")
	assert.NotContains(t, screen, "1 questions")

	two := &fakeSource{panes: []fleet.FleetPane{pane("%1", "claude", "idle"), pane("%2", "codex", "busy")},
		files: Files{Questions: []*questions.QuestionStatus{
			question("a.q1", "%1", messages.YesNo, messages.Blocking, t0, "yes", "no"),
			question("b.q1", "%2", messages.YesNo, messages.Blocking, t0, "yes", "no")}}}
	screen = ansi.Strip(world(t, two, 120, 24, false).Render())
	assert.Contains(t, screen, "· 2 panes · 2 questions ")
}

func TestPermissionPromptOneKeyEach(t *testing.T) {
	q := question("permission.q1-ab12", "%2", messages.Permission, messages.Blocking, t0.Add(-time.Minute), messages.PermissionOptions()...)
	q.Text = "claude in pane %2 asks to run Bash: touch x"
	q.Permission = &messages.PermissionRequest{Agent: "claude", Tool: "Bash", Subject: "touch x",
		Always: []messages.PermissionUpdate{{Type: "addRules", Rules: []messages.PermissionRule{{ToolName: "Bash", RuleContent: "touch x"}}}}}
	q.Refresh()
	f := &fakeSource{panes: []fleet.FleetPane{pane("%2", "claude", fleet.PanePermission)},
		files: Files{Questions: []*questions.QuestionStatus{q}}}
	m := world(t, f, 120, 30, false)
	screen := ansi.Strip(m.Render())
	assert.Contains(t, screen, "[permission]")
	assert.Contains(t, screen, "a allow  s always  d deny")
	rows := m.rows()
	require.Len(t, rows, 1)
	assert.Equal(t, fleet.PanePermission, rows[0].State)
	assert.Contains(t, rows[0].Evidence, "permission: Bash touch x")

	m2, _ := press(t, m, "1")
	screen = ansi.Strip(m2.Render())
	assert.Contains(t, screen, "PERMISSION permission.q1-ab12")
	assert.Contains(t, screen, "always: Bash(touch x) for this session")
	for key, want := range map[string]string{"a": "allow", "s": "always", "d": "deny", "2": "always"} {
		_, cmd := press(t, m, "1", key)
		finish(t, m, cmd)
		assert.Equal(t, [2]string{q.ID, want}, f.answers[len(f.answers)-1], key)
	}
	n := len(f.answers)
	m2, cmd := press(t, m, "1", "y")
	assert.Nil(t, cmd, "no other key answers a permission prompt")
	assert.Contains(t, m2.Render(), "press a (allow), s (always) or d (deny)")
	assert.Len(t, f.answers, n)
}

// Codex's approvals offer no "always": the console shows and takes allow and deny only.
func TestPermissionPromptWithoutAlways(t *testing.T) {
	q := question("permission.q2-cd34", "%3", messages.Permission, messages.Blocking, t0.Add(-time.Minute), messages.PermAllow, messages.PermDeny)
	q.Text = "codex in pane %3 asks to run Bash: touch y"
	q.Permission = &messages.PermissionRequest{Agent: "codex", Tool: "Bash", Subject: "touch y",
		Answers: []string{messages.PermAllow, messages.PermDeny}}
	q.Refresh()
	f := &fakeSource{panes: []fleet.FleetPane{pane("%3", "codex", fleet.PanePermission)},
		files: Files{Questions: []*questions.QuestionStatus{q}}}
	m := world(t, f, 120, 30, false)
	screen := ansi.Strip(m.Render())
	assert.Contains(t, screen, "a allow  d deny")
	assert.NotContains(t, screen, "always")
	m2, _ := press(t, m, "1")
	screen = ansi.Strip(m2.Render())
	assert.Contains(t, screen, "PERMISSION permission.q2-cd34")
	assert.NotContains(t, screen, "always")
	for key, want := range map[string]string{"a": "allow", "d": "deny"} {
		_, cmd := press(t, m, "1", key)
		finish(t, m, cmd)
		assert.Equal(t, [2]string{q.ID, want}, f.answers[len(f.answers)-1], key)
	}
	n := len(f.answers)
	m2, cmd := press(t, m, "1", "s")
	assert.Nil(t, cmd, "no always to take")
	assert.Contains(t, m2.Render(), "offers no rule for this session only")
	assert.Len(t, f.answers, n)
}

// TestBroadcastFeed: the exchanges of one broadcast carry its id's end in the feed, whether they
// came from disk or live, so its rows read as one group; the detail names the broadcast.
func TestBroadcastFeed(t *testing.T) {
	const bid = "bc-20261125-095000-1a2b3c4d"
	x := &exchange.Exchange{Session: "20261125-095000-o1-w2", Seq: 1, ID: "20261125-095000-aaaa", Orchestrator: "%1", Worker: "%2",
		Status: exchange.StatusPending, State: exchange.StateSubmitted, SentAt: t0.Add(-time.Minute), Broadcast: bid,
		Events: []exchange.Event{{State: exchange.StateWritten, At: t0.Add(-time.Minute)}, {State: exchange.StateSubmitted, At: t0.Add(-time.Minute)}}}
	f := &fakeSource{recent: []*exchange.Exchange{x}}
	m := world(t, f, 80, 24, false)
	// A live one of the same broadcast, to %3: its request event names the broadcast, its later
	// events do not.
	req := watch.WatchEvent{At: t0.Add(-30 * time.Second), Session: "20261125-095000-o1-w3", Kind: watch.FeedExchange, Seq: 1,
		ID: "20261125-095000-bbbb", Event: watch.EventRequest, Detail: map[string]string{"bytes": "5", "broadcast": bid}}
	m = step(t, m, FeedMsg(req))
	later := req
	later.At, later.Event, later.Detail = t0, exchange.StateSubmitted, map[string]string{"pane": "%3"}
	m = step(t, m, FeedMsg(later))
	// And one that is no broadcast's.
	m = step(t, m, FeedMsg(exchangeEvent(3, "20261125-095000-cccc", exchange.StatePasted, t0)))

	m, _ = press(t, m, "tab")
	screen := ansi.Strip(m.Render())
	assert.Regexp(t, `bc3c4d %1→%2\s+submitted`, screen)
	assert.Regexp(t, `bc3c4d %1→%3\s+request`, screen)
	assert.Regexp(t, `bc3c4d %1→%3\s+submitted`, screen)
	assert.Regexp(t, `#3 %1→%2\s+pasted`, screen)

	f.shown = x
	m = step(t, m, shownMsg{x: x}) // as the console shows one exchange whole
	m.view = viewDetail
	assert.Contains(t, ansi.Strip(m.Render()), "one of broadcast "+bid)
}

// A pane's name (wcomm spawn --name) shows beside its id, and a name a process set with control
// characters in it reaches the terminal cleaned: no escape sequence, no control byte.
func TestPaneNameShown(t *testing.T) {
	a, b, c := pane("%1", "claude", fleet.PaneIdle), pane("%2", "codex", fleet.PaneIdle), pane("%3", "shell", fleet.PaneIdle)
	a.Name = "alpha"
	b.Name = "ev\x1b]52;c;aGk=\x07il\x9b2J\r\x00"
	f := &fakeSource{panes: []fleet.FleetPane{a, b, c}}
	m := world(t, f, 80, 24, false)
	screen := m.Render()
	var lines = map[string]string{}
	for _, l := range strings.Split(screen, "\n") {
		if id, _, ok := strings.Cut(l, " "); ok && strings.HasPrefix(id, "%") {
			lines[id] = l
		}
	}
	assert.Contains(t, screen, "PANE  NAME      AGENT")
	assert.Regexp(t, `^%1 +alpha +claude +idle`, lines["%1"])
	assert.Regexp(t, `^%3 +- +shell +idle`, lines["%3"], "a pane with no name shows a dash")
	assert.Regexp(t, `^%2 +ev`, lines["%2"])
	for _, l := range lines { // the header is bold even without colour: the pane rows are not styled
		for _, r := range l {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("control character %U reached the screen:\n%q", r, l)
			}
		}
	}
	assert.NotContains(t, screen, "52;c")
}
