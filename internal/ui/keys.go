package ui

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// keyHelp is what '?' shows: every key, by screen.
var keyHelp = [][2]string{
	{"1-9", "pick the question of that number (first screen)"},
	{"A-Z or 1-9", "then answer with that option (y/n for yes-no)"},
	{"a s d", "permission prompt: allow, always (session rule), deny"},
	{"Enter", "freeform question: send the answer typed"},
	{"Esc", "cancel / back to the first screen"},
	{"Tab / x", "exchanges: the live feed, newest first"},
	{"↑ ↓ j k", "move in the feed, scroll an exchange"},
	{"PgUp PgDn", "a page up or down"},
	{"Enter", "feed: open the exchange whole"},
	{"r", "re-send the selected queued, refused or dead-lettered request"},
	{"?", "show or hide these keys"},
	{"q, Ctrl+C", "quit"},
}

// resendable are the states of a request that 'send --resend' can deliver again: it waits, it
// was refused, or it was never delivered (dead-lettered: expired or undeliverable).
var resendable = map[string]bool{
	exchange.StateQueued: true, exchange.StateRefused: true, exchange.StateUndelivered: true,
	exchange.StateExpired: true, exchange.StateUndeliverable: true,
}

func (m Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	s := k.String()
	if s == "ctrl+c" {
		return m, tea.Quit
	}
	if m.view == viewQuestion {
		return m.questionKey(k)
	}
	if m.help {
		switch s {
		case "q":
			return m, tea.Quit
		default:
			m.help = false
		}
		return m, nil
	}
	switch s {
	case "q":
		return m, tea.Quit
	case "?":
		m.help = true
		return m, nil
	case "esc", "h":
		m.view, m.detail, m.status = viewHome, nil, ""
		return m, nil
	case "tab", "x":
		if m.view == viewHome {
			m.view = viewFeed
		} else {
			m.view, m.detail = viewHome, nil
		}
		return m, nil
	case "up", "k":
		m.move(-1)
	case "down", "j":
		m.move(1)
	case "pgup":
		m.move(-m.page())
	case "pgdown", "space":
		m.move(m.page())
	case "home", "g":
		m.move(-1 << 30)
	case "end", "G":
		m.move(1 << 30)
	case "enter":
		if m.view == viewFeed {
			if it, ok := m.selected(); ok && it.Kind == watch.FeedExchange {
				return m, m.show(it)
			}
		}
	case "r":
		return m.resend()
	}
	if m.view == viewHome && len(s) == 1 && s[0] >= '1' && s[0] <= '9' {
		qs := m.pendingQuestions()
		n := int(s[0] - '0')
		if n > len(qs) {
			m.status = fmt.Sprintf("no question %d", n)
			return m, nil
		}
		return m.openQuestion(qs[n-1])
	}
	return m, nil
}

// page is how many rows a page moves.
func (m Model) page() int { return max(1, m.height-4) }

// move moves the feed's selection, or scrolls the exchange shown.
func (m *Model) move(d int) {
	switch m.view {
	case viewDetail:
		m.scroll = max(0, min(m.scroll+d, max(0, len(m.detailLines())-m.bodyHeight())))
	case viewFeed:
		m.cursor = max(0, min(m.cursor+d, len(m.feed)-1))
	}
}

func (m Model) selected() (feedItem, bool) {
	if m.cursor < 0 || m.cursor >= len(m.feed) {
		return feedItem{}, false
	}
	return m.feed[m.cursor], true
}

func (m Model) show(it feedItem) tea.Cmd {
	src, ctx := m.src, m.ctx
	ref := it.ID
	if ref == "" {
		ref = it.Path
	}
	return func() tea.Msg {
		x, err := src.Show(ctx, ref)
		return shownMsg{x, err}
	}
}

// resend re-sends the request selected in the feed (or shown whole) when its latest state says
// it waits or was not delivered.
func (m Model) resend() (tea.Model, tea.Cmd) {
	var id, key string
	switch m.view {
	case viewDetail:
		if m.detail == nil {
			return m, nil
		}
		id, key = m.detail.ID, m.detail.Session+"|"+m.detail.ID
	case viewFeed:
		it, ok := m.selected()
		if !ok || it.Kind != watch.FeedExchange {
			m.status = "select a request to re-send"
			return m, nil
		}
		id, key = it.ID, exchangeKey(it.WatchEvent)
	default:
		m.status = "open the feed (Tab) and select a request to re-send"
		return m, nil
	}
	st, ok := m.states[key]
	if m.view == viewDetail && m.detail.Status == exchange.StatusUndelivered {
		ok, st.event = true, exchange.StateUndelivered
	}
	if !ok || !resendable[st.event] {
		m.status = fmt.Sprintf("%s is %s: only a queued, refused or dead-lettered request is re-sent", id, orDash(st.event))
		return m, nil
	}
	m.status = "re-sending " + id + "..."
	src, ctx := m.src, m.ctx
	return m, func() tea.Msg {
		out, err := src.Resend(ctx, id)
		if err != nil {
			return doneMsg{"re-send " + id + ": " + err.Error()}
		}
		return doneMsg{out}
	}
}

func (m Model) openQuestion(q *questions.QuestionStatus) (tea.Model, tea.Cmd) {
	m.picked, m.view, m.status = q, viewQuestion, ""
	m.input.Reset()
	if q.Type == messages.Freeform {
		return m, m.input.Focus()
	}
	m.input.Blur()
	return m, nil
}

func (m *Model) closeQuestion() {
	m.picked, m.view = nil, viewHome
	m.input.Blur()
	m.input.Reset()
}

func (m Model) questionKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	q := m.picked
	s := k.String()
	if s == "esc" {
		m.closeQuestion()
		return m, nil
	}
	if q.Type == messages.Freeform {
		if s == "enter" {
			text := strings.TrimSpace(m.input.Value())
			if text == "" {
				m.status = "type an answer, or Esc"
				return m, nil
			}
			return m.answer(q, text)
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(k)
		return m, cmd
	}
	if s == "q" {
		return m, tea.Quit
	}
	if s == "?" {
		m.help = !m.help
		return m, nil
	}
	if q.Type == messages.Permission {
		if ans, ok := permissionKeys[s]; ok && slices.Contains(q.Options, ans) {
			return m.answer(q, ans)
		}
		m.status = "press a (allow), s (always) or d (deny), or Esc"
		if !slices.Contains(q.Options, messages.PermAlways) {
			m.status = "press a (allow) or d (deny), or Esc: this agent offers no rule for this session only"
		}
		return m, nil
	}
	i := optionIndex(q.Question, s)
	if i < 0 {
		m.status = "press an option's letter or number, or Esc"
		return m, nil
	}
	raw := q.Options[i]
	if q.Type == messages.Numbered {
		raw = messages.OptionLetter(i)
	}
	return m.answer(q, raw)
}

// permissionKeys are the keys that answer a permission prompt: one each, on the home row.
var permissionKeys = map[string]string{
	"a": messages.PermAllow, "1": messages.PermAllow,
	"s": messages.PermAlways, "2": messages.PermAlways,
	"d": messages.PermDeny, "3": messages.PermDeny,
}

// permissionKey is the letter that answers each permission answer (permissionKeys).
var permissionKey = map[string]string{messages.PermAllow: "a", messages.PermAlways: "s", messages.PermDeny: "d"}

// optionIndex is the option a key names: its letter (either case), its number, or y/n for a
// yes-no question; -1 when none.
func optionIndex(q messages.Question, key string) int {
	if len(key) != 1 {
		return -1
	}
	c := key[0]
	n := -1
	switch {
	case q.Type == messages.YesNo && (c == 'y' || c == 'Y'):
		return indexOf(q.Options, "yes")
	case q.Type == messages.YesNo && (c == 'n' || c == 'N'):
		return indexOf(q.Options, "no")
	case c >= 'a' && c <= 'z':
		n = int(c - 'a')
	case c >= 'A' && c <= 'Z':
		n = int(c - 'A')
	case c >= '1' && c <= '9':
		n = int(c - '1')
	}
	if n >= len(q.Options) {
		return -1
	}
	return n
}

func indexOf(opts []string, s string) int {
	for i, o := range opts {
		if strings.EqualFold(o, s) {
			return i
		}
	}
	return -1
}

func (m Model) answer(q *questions.QuestionStatus, raw string) (tea.Model, tea.Cmd) {
	m.status = "answering " + q.ID + "..."
	id := q.ID
	m.closeQuestion()
	src, ctx := m.src, m.ctx
	return m, func() tea.Msg {
		out, err := src.Answer(ctx, id, raw)
		if err != nil {
			return doneMsg{"answer " + id + ": " + err.Error()}
		}
		return doneMsg{out}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
