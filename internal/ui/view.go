package ui

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// View draws the console: every line fits the width, and there are never more lines than rows.
func (m Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	if m.opts.Mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	if m.view == viewQuestion && m.input.Focused() {
		v.Cursor = nil // the field draws its own cursor
	}
	return v
}

// Render is the screen as text: one line per row, each within the width.
func (m Model) Render() string {
	w, h := max(m.width, 20), max(m.height, 5)
	var lines []string
	lines = append(lines, m.header(w))
	body := h - 2
	switch {
	case m.help:
		lines = append(lines, m.helpLines(w)...)
	case m.view == viewQuestion && m.picked != nil:
		lines = append(lines, m.questionLines(w)...)
	case m.view == viewDetail && m.detail != nil:
		all := m.detailLines()
		end := min(len(all), m.scroll+body)
		lines = append(lines, all[min(m.scroll, end):end]...)
	case m.view == viewFeed:
		lines = append(lines, m.feedLines(w, body)...)
	default:
		lines = append(lines, m.homeLines(w, body)...)
	}
	if len(lines) > h-1 {
		lines = lines[:h-1]
	}
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	lines = append(lines, m.footer(w))
	for i, l := range lines {
		lines[i] = fit(l, w)
	}
	return strings.Join(lines, "\n")
}

// fit cuts a line (styled or not) to at most w cells.
func fit(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// cell is a plain text cell of exactly w cells, cut or padded.
func cell(s string, w int) string {
	s = ansi.Truncate(s, w, "…")
	if n := ansi.StringWidth(s); n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// clean is text from another process made safe for one line of the screen: the CLI's own
// cleaning (escape sequences whole, DCS and APC strings among them, and C0 and C1 controls), so
// the console shows what the printers print. Every string read from a file, a pane or a remote
// host's reply (its state word is an event of the mirror) passes through it, the words the
// engine writes itself too, since a file can be written by hand.
func clean(s string) string { return messages.SanitizeField(s) }

// count is "1 pane", "2 panes": n and the noun, agreeing.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func (m Model) header(w int) string {
	left := "wcomm ui · " + clean(m.title())
	var n int
	for _, q := range m.files.Questions {
		if q.State == questions.QuestionPending {
			n++
		}
	}
	left += " · " + count(len(m.panes), "pane") + " · " + count(n, "question")
	right := "? keys  q quit"
	pad := w - ansi.StringWidth(left) - ansi.StringWidth(right)
	if pad < 1 {
		return m.st.title.Render(cell(left, w))
	}
	return m.st.title.Render(left) + strings.Repeat(" ", pad) + m.st.dim.Render(right)
}

func (m Model) footer(w int) string {
	switch {
	case m.status != "":
		return m.st.warn.Render(cell(clean(m.status), w))
	case m.panesErr != "":
		return m.st.bad.Render(cell("tmux: "+clean(m.panesErr), w))
	case m.filesErr != "":
		return m.st.bad.Render(cell("files: "+clean(m.filesErr), w))
	}
	var hint string
	switch m.view {
	case viewFeed:
		hint = "↑↓ select  Enter open  r re-send  Tab back"
	case viewDetail:
		hint = "↑↓ scroll  r re-send  Esc back"
	case viewQuestion:
		hint = "Esc cancel"
	default:
		hint = "1-9 answer a question  Tab exchanges"
	}
	return m.st.dim.Render(cell(hint, w))
}

// Panes table columns: the fixed ones, then WHERE takes the rest. NAME is the pane's name
// (wcomm spawn --name), what a person sends to: beside the pane id, cut at 9 cells.
var paneCols = []struct {
	name string
	w    int
}{{"PANE", 6}, {"NAME", 10}, {"AGENT", 9}, {"STATE", 11}, {"QUEUE", 6}, {"OPEN", 5}, {"ASK", 4}, {"WAITING", 8}}

// paneColsWidth is the fixed columns' width: WHERE takes what is left of the line.
var paneColsWidth = func() (n int) {
	for _, c := range paneCols {
		n += c.w
	}
	return n
}()

func (m Model) homeLines(w, body int) []string {
	rows := m.rows()
	qs := m.pendingQuestions()
	// The questions take up to 40% of the screen (two rows each), the newest events at least
	// three rows, the panes the rest.
	qRows := min(2*len(qs), max(2, body*2/5-1))
	if len(qs) == 0 {
		qRows = 1
	}
	latest := min(max(len(m.feed), 1), 3)
	paneRows := max(3, body-qRows-latest-7)
	if len(rows) < paneRows {
		paneRows = max(len(rows), 1)
	}
	var out []string
	head := ""
	for _, c := range paneCols {
		head += cell(c.name, c.w)
	}
	title := "PANES"
	if len(rows) > paneRows {
		title = fmt.Sprintf("PANES (%d of %d; the ones waiting on someone first)", paneRows, len(rows))
	}
	out = append(out, m.st.head.Render(title))
	out = append(out, m.st.dim.Render(head+"WHERE"))
	switch {
	case m.panes == nil && m.panesErr == "":
		out = append(out, "reading tmux...")
	case len(rows) == 0:
		out = append(out, "no panes")
	}
	sort.SliceStable(rows, func(i, j int) bool { return urgency(rows[i]) > urgency(rows[j]) })
	for _, r := range rows[:min(paneRows, len(rows))] {
		out = append(out, m.paneLine(r, w))
	}
	out = append(out, "")
	title = "QUESTIONS (blocking first, newest first): press its number, then the option"
	out = append(out, m.st.head.Render(title))
	if len(qs) == 0 {
		if m.loaded {
			out = append(out, m.st.dim.Render("no pending questions"))
		} else {
			out = append(out, "reading questions...")
		}
	}
	used := 0
	for i, q := range qs {
		if used+2 > qRows || i >= 9 {
			out = append(out, m.st.dim.Render(fmt.Sprintf("... %d more", len(qs)-i)))
			break
		}
		out = append(out, m.questionLine(i+1, q, w), "   "+m.optionsLine(q))
		used += 2
	}
	out = append(out, "")
	out = append(out, m.st.head.Render("LATEST (Tab: the whole feed)"))
	left := body - len(out)
	for i := 0; i < left && i < len(m.feed); i++ {
		out = append(out, m.eventLine(m.feed[i], w, false))
	}
	if len(m.feed) == 0 {
		out = append(out, m.st.dim.Render("no exchanges yet"))
	}
	return out
}

// urgency orders panes: those waiting on a person first, then the rest as tmux lists them.
func urgency(r Row) int {
	switch r.State {
	case fleet.PaneAnswer, fleet.PanePermission:
		return 3
	case fleet.PaneTyping:
		return 2
	}
	if r.Queued > 0 {
		return 1
	}
	return 0
}

func (m Model) paneLine(r Row, w int) string {
	age := "-"
	if !r.Oldest.IsZero() {
		age = exchange.Age(m.now, r.Oldest)
	}
	id := string(r.ID)
	if r.Self {
		id += "*"
	}
	num := func(n int) string {
		if n == 0 {
			return "-"
		}
		return fmt.Sprint(n)
	}
	where := r.Target()
	if len(r.Programs) > 0 {
		where += " " + strings.Join(r.Programs, ",")
	}
	if r.Title != "" && r.Title != r.Command && r.Title != m.host {
		where += " " + r.Title
	}
	var b strings.Builder
	b.WriteString(cell(clean(id), 6))
	// A name is set by a process (a pane option): cleaned like every other text from one, and
	// cut inside its column so that a space always parts it from the agent.
	b.WriteString(cell(cell(clean(orDash(r.Name)), 9), 10))
	b.WriteString(cell(clean(r.Agent), 9))
	b.WriteString(m.st.stateStyle(r.State).Render(cell(clean(r.State), 11)))
	b.WriteString(cell(num(r.Queued), 6))
	b.WriteString(cell(num(r.Open), 5))
	b.WriteString(cell(num(r.Asking), 4))
	b.WriteString(cell(age, 8))
	rest := max(0, w-paneColsWidth)
	b.WriteString(cell(clean(where), rest))
	return b.String()
}

func (m Model) questionLine(n int, q *questions.QuestionStatus, w int) string {
	kind := clean(string(q.Urgency))
	if q.Action != "" {
		kind = "approval"
	}
	if q.Type == messages.Permission {
		kind = "permission"
	}
	lead := fmt.Sprintf("%d %-12s %-5s %4s  ", n, "["+kind+"]", clean(string(q.Worker)), exchange.Age(m.now, q.AskedAt))
	return m.st.key.Render(lead[:1]) + lead[1:] + clean(q.Text)
}

// optionsLine is the options of a question on one line, each with its letter.
func (m Model) optionsLine(q *questions.QuestionStatus) string {
	if q.Type == messages.Freeform {
		return m.st.dim.Render("freeform: type the answer")
	}
	if q.Type == messages.Permission {
		// Only the answers the prompt offers: a dialog answered by a key may have no "always".
		var parts []string
		for _, o := range q.Options {
			parts = append(parts, m.st.key.Render(permissionKey[o])+" "+o)
		}
		return strings.Join(parts, "  ")
	}
	var parts []string
	for i, o := range q.Options {
		parts = append(parts, m.st.key.Render(messages.OptionLetter(i))+" "+clean(o))
	}
	s := strings.Join(parts, "  ")
	if a := m.files.Actions[q.ID]; a != nil {
		s += "  · runs: " + clean(strings.Join(a.Definition.Run, " "))
		if a.Stale {
			s += m.st.bad.Render(" · stale: " + clean(strings.Join(a.Reasons, "; ")))
		}
	}
	return s
}

func (m Model) eventLine(it feedItem, w int, selected bool) string {
	ev := it.WatchEvent
	ref := "-"
	switch ev.Kind {
	case watch.FeedExchange:
		ref = fmt.Sprintf("#%d %s", ev.Seq, shortSession(ev.Session))
		if b := m.bcast[exchangeKey(ev)]; len(b) > 4 {
			// A broadcast's exchanges carry its id's end in place of their number: one send to
			// several panes reads as one group of rows.
			ref = "bc" + b[len(b)-4:] + " " + shortSession(ev.Session)
		}
	case watch.FeedQuestion:
		ref = ev.ID
	case watch.FeedSession:
		ref = shortSession(ev.Session)
	}
	at := ev.At.Local().Format("15:04:05")
	detail := m.detailOf(ev)
	line := at + " " + cell(clean(ref), 16) + " "
	name := cell(clean(ev.Event), 14)
	if selected {
		return m.st.sel.Render(cell(line+name+" "+clean(detail), w))
	}
	return m.st.dim.Render(line) + m.st.stateStyle(ev.Event).Render(name) + " " + clean(detail)
}

// shortSession is a session folder's name without its date: the time and the two panes.
func shortSession(s string) string {
	if sn, err := messages.ParseSessionName(s); err == nil {
		return string(sn.Orchestrator) + "→" + string(sn.Worker)
	}
	return s
}

func (m Model) detailOf(ev watch.WatchEvent) string {
	if m.opts.Detail != nil {
		return m.opts.Detail(ev)
	}
	var keys []string
	for k := range ev.Detail {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var kv []string
	for _, k := range keys {
		kv = append(kv, k+"="+ev.Detail[k])
	}
	return strings.Join(kv, " ")
}

func (m Model) feedLines(w, body int) []string {
	out := []string{m.st.head.Render(fmt.Sprintf("EXCHANGES · %d events, newest first", len(m.feed)))}
	rows := body - 1
	if len(m.feed) == 0 {
		return append(out, m.st.dim.Render("no events yet: they show here as they happen"))
	}
	// Keep the selection in view.
	top := 0
	if m.cursor >= rows {
		top = m.cursor - rows + 1
	}
	for i := top; i < len(m.feed) && i < top+rows; i++ {
		out = append(out, m.eventLine(m.feed[i], w, i == m.cursor))
	}
	return out
}

// bodyHeight is how many rows the exchange shown whole gets.
func (m Model) bodyHeight() int { return max(1, max(m.height, 5)-2) }

// detailLines are the exchange shown whole: header, delivery log, request, response.
func (m Model) detailLines() []string {
	x := m.detail
	if x == nil {
		return nil
	}
	var out []string
	add := func(s string) {
		for _, l := range strings.Split(messages.SanitizeTerminal(s), "\n") {
			out = append(out, strings.ReplaceAll(l, "\t", "    "))
		}
	}
	out = append(out, m.st.head.Render(fmt.Sprintf("EXCHANGE %s #%d", clean(x.ID), x.Seq)))
	add(fmt.Sprintf("session %s  %s -> %s  %s  status %s (%s)", x.Session, x.Orchestrator, x.Worker, x.Capability, x.Status, x.State))
	add("request  " + x.RequestPath)
	add("response " + x.ResponsePath)
	if x.Evidence != "" {
		add("evidence " + x.Evidence)
	}
	if x.Broadcast != "" {
		add("one of broadcast " + x.Broadcast + " (wcomm history lists its panes)")
	}
	for _, p := range x.Problems {
		add("! " + p)
	}
	out = append(out, "", m.st.head.Render("DELIVERY LOG"))
	for _, e := range x.Events {
		d := watch.WatchEvent{Event: e.State, Detail: e.Detail, Kind: watch.FeedExchange}
		add(e.At.Local().Format(time.TimeOnly) + "  " + fmt.Sprintf("%-14s", e.State) + " " + m.detailOf(d))
	}
	out = append(out, "", m.st.head.Render("REQUEST"))
	add(x.RequestBody)
	out = append(out, "", m.st.head.Render("RESPONSE"))
	if x.ResponseBody == "" {
		out = append(out, m.st.dim.Render("(none yet)"))
	} else {
		add(x.ResponseBody)
	}
	return out
}

func (m Model) questionLines(w int) []string {
	q := m.picked
	var out []string
	add := func(s string) {
		for _, l := range strings.Split(messages.SanitizeTerminal(s), "\n") {
			out = append(out, strings.ReplaceAll(l, "\t", "    "))
		}
	}
	title := "QUESTION "
	if q.Action != "" {
		title = "APPROVAL "
	}
	if p := q.Permission; p != nil {
		out = append(out, m.st.head.Render("PERMISSION "+clean(q.ID)))
		add(fmt.Sprintf("%s in pane %s asks to run %s, asked %s ago", orDash(p.Agent), q.Worker, p.Tool, exchange.Age(m.now, q.AskedAt)))
		add("")
		add(p.Subject)
		if q.Context != "" {
			add("")
			add(q.Context)
		}
		var always []string
		for _, u := range p.Always {
			always = append(always, u.Words())
		}
		if !slices.Contains(q.Options, messages.PermAlways) {
			// The agent has no rule for this session only to give (Codex): allow or deny.
			return append(out, "",
				m.st.key.Render("a")+"  allow once",
				m.st.key.Render("d")+"  deny",
				"", m.st.dim.Render("press a or d, Esc to cancel"))
		}
		out = append(out, "",
			m.st.key.Render("a")+"  allow once",
			m.st.key.Render("s")+"  always: "+clean(orDash(strings.Join(always, "; "))),
			m.st.key.Render("d")+"  deny",
			"", m.st.dim.Render("press a, s or d (or 1, 2, 3), Esc to cancel"))
		return out
	}
	out = append(out, m.st.head.Render(title+clean(q.ID)))
	add(fmt.Sprintf("from %s (task %s, request %s), %s, asked %s ago", q.Worker, q.Task, orDash(q.Exchange), q.Urgency, exchange.Age(m.now, q.AskedAt)))
	add("")
	add(q.Text)
	if q.Context != "" {
		add("")
		add("CONTEXT: " + q.Context)
	}
	if a := m.files.Actions[q.ID]; a != nil {
		add("")
		add("A yes lets the dispatcher run: " + strings.Join(a.Definition.Run, " "))
		add("in " + a.Definition.Dir)
		if a.Stale {
			out = append(out, m.st.bad.Render("STALE: "+clean(strings.Join(a.Reasons, "; "))))
		}
	}
	out = append(out, "")
	if q.Type == messages.Freeform {
		if q.Pattern != "" {
			add("the answer must match " + q.Pattern)
		}
		out = append(out, "> "+m.input.View())
		out = append(out, m.st.dim.Render("Enter sends, Esc cancels"))
		return out
	}
	for i, o := range q.Options {
		line := m.st.key.Render(fmt.Sprintf("%s %d", messages.OptionLetter(i), i+1)) + "  " + clean(o)
		if i < len(q.Details) && q.Details[i] != "" {
			line += m.st.dim.Render(" — " + clean(q.Details[i]))
		}
		out = append(out, line)
	}
	out = append(out, "", m.st.dim.Render("press the option's letter or number (y/n for yes-no), Esc to cancel"))
	return out
}

func (m Model) helpLines(w int) []string {
	out := []string{m.st.head.Render("KEYS"), ""}
	for _, k := range keyHelp {
		out = append(out, m.st.key.Render(cell(k[0], 12))+" "+k[1])
	}
	out = append(out, "", m.st.dim.Render("any key closes this"))
	return out
}

// title is what the header names: the scope the options give, else the session of the panes
// shown (the console's own session), read with them rather than by a tmux call of its own.
func (m Model) title() string {
	switch {
	case m.opts.Title != "":
		return m.opts.Title
	case len(m.panes) > 0:
		return m.panes[0].Session
	}
	return "current session"
}
