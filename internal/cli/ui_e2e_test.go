package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// uiWorld is a world with the console running in a pane of its own.
type uiWorld struct {
	*qWorld
	ui     string // the console's pane
	status string // the file its exit status is written to
}

// openUI starts 'wcomm ui' (with extra environment) in a new window of the test's session, sized
// w x h, and waits for its first screen at that size. A small bash around the console writes its
// exit status to a file: tmux 3.3a sometimes learns a pane's exit status only at the next child
// that exits (measured: 4 of 10 quits left a zombie that was reaped half a minute later), so
// #{pane_dead_status} is not a reliable witness.
func (q *qWorld) openUI(env []string, w, h int, args ...string) *uiWorld {
	q.t.Helper()
	u := &uiWorld{qWorld: q}
	u.status = filepath.Join(q.dir, fmt.Sprintf("ui-status-%d", time.Now().UnixNano()))
	argv := append([]string{"bash", "--norc", "--noprofile", "-c", `"$0" ui "$@"; echo $? > "$WCOMM_TEST_UI_STATUS"`, q.bin}, args...)
	u.ui = q.window(session, append(env, "TERM=xterm-256color", "WCOMM_TEST_UI_STATUS="+u.status), argv...)
	q.tmux("set-option", "-p", "-t", u.ui, "remain-on-exit", "on")
	u.resize(w, h)
	u.waitUIFunc(func(s string) bool {
		if !strings.Contains(s, "wcomm ui · "+session) || !strings.Contains(s, "PANES") {
			return false
		}
		for _, l := range strings.Split(s, "\n") {
			if ansi.StringWidth(l) > w {
				return false
			}
		}
		return true
	}, "its first screen within %dx%d", w, h)
	return u
}

func (u *uiWorld) resize(w, h int) {
	u.t.Helper()
	u.tmux("resize-window", "-t", u.ui, "-x", strconv.Itoa(w), "-y", strconv.Itoa(h))
}

// screen is the console's screen as a person sees it: rows joined where tmux wrapped them (-J),
// so a row drawn past the width shows as a longer line.
func (u *uiWorld) screen(escapes bool) string {
	u.t.Helper()
	args := []string{"capture-pane", "-p", "-J", "-t", u.ui}
	if escapes {
		args = append(args, "-e")
	}
	return u.tmux(args...)
}

// waitUI polls the console's screen until every text shows on it.
func (u *uiWorld) waitUI(texts ...string) string {
	u.t.Helper()
	return u.waitUIFunc(func(s string) bool {
		for _, t := range texts {
			if !strings.Contains(s, t) {
				return false
			}
		}
		return true
	}, "%q", texts)
}

func (u *uiWorld) waitUIRe(re string) string {
	u.t.Helper()
	rx := regexp.MustCompile(re)
	return u.waitUIFunc(rx.MatchString, "%s", re)
}

func (u *uiWorld) waitUIFunc(ok func(string) bool, format string, args ...any) string {
	u.t.Helper()
	var s string
	waitFor(u.t, 15*time.Second, func() bool {
		out, err := u.tmuxErr("capture-pane", "-p", "-J", "-t", u.ui)
		s = out
		return err == nil && ok(out)
	}, "the console to show "+format+"; screen:\n%s", append(args, &s)...)
	return s
}

// keys types keys into the console as a person would.
func (u *uiWorld) keys(keys ...string) {
	u.t.Helper()
	for _, k := range keys {
		u.tmux("send-keys", "-t", u.ui, k)
	}
}

// text types literal text into the console.
func (u *uiWorld) text(s string) {
	u.t.Helper()
	u.tmux("send-keys", "-t", u.ui, "-l", s)
}

// fits checks the screen is within w x h: no row longer than the width, even joined.
func (u *uiWorld) fits(w, h int) {
	u.t.Helper()
	s := strings.TrimRight(u.screen(false), "\n")
	lines := strings.Split(s, "\n")
	assert.LessOrEqual(u.t, len(lines), h, "rows at %dx%d:\n%s", w, h, s)
	for i, l := range lines {
		assert.LessOrEqual(u.t, ansi.StringWidth(l), w, "row %d at %dx%d: %q", i, w, h, l)
	}
}

// exitStatus waits for the console to exit and returns its exit status.
func (u *uiWorld) exitStatus() string {
	u.t.Helper()
	var st string
	waitFor(u.t, 10*time.Second, func() bool {
		b, err := os.ReadFile(u.status)
		st = strings.TrimSpace(string(b))
		return err == nil && st != ""
	}, "the console to exit: %q", &st)
	return st
}

// paneRow is a regexp of one pane's row in the panes table.
func paneRow(pane, agent, state string) string { return namedRow(pane, `\S+`, agent, state) }

// namedRow is paneRow with the pane's NAME column ("-": none).
func namedRow(pane, name, agent, state string) string {
	return `(?m)^` + regexp.QuoteMeta(pane) + `\*?\s+` + name + `\s+` + agent + `\s+` + state + `\s`
}

var colorSGR = regexp.MustCompile(`\x1b\[(?:[0-9;]*;)?(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])(?:;[0-9;]*)?m`)

// The console as a person uses it: the real binary in a pane of a private tmux server, with real
// panes, sends and asks behind it, driven with send-keys and read with capture-pane.
func TestE2EUI(t *testing.T) {
	t.Parallel()
	q := newQWorld(t)
	q.tmux("set-option", "-g", "remain-on-exit", "on")
	idle := q.bashPane("")
	typing := q.bashPane("")
	q.tmux("send-keys", "-t", typing, "-l", "echo half-typed")
	busy := q.bashPane("")
	q.tmux("send-keys", "-t", busy, "-l", "sleep 600")
	q.tmux("send-keys", "-t", busy, "Enter")
	gone := q.pane("", "true")
	waitFor(t, 10*time.Second, func() bool { d, _ := q.paneDead(gone); return d }, "pane %s to die", gone)
	cat := q.catPane()
	// A name as wcomm spawn --name keeps it: the console reads it with the panes.
	q.tmux("set-option", "-p", "-t", cat, "@wcomm-name", "counter")
	q.send(q.orch, cat, "Count the files under testdata.")
	queued := q.run(call{pane: q.orch, env: q.env}, "send", "-S", q.sock, "--to", busy, "--", "Look at the build log.")
	requireCode(t, 0, queued)
	assert.Contains(t, queued.stderr, "queued")

	u := q.openUI(nil, 120, 45)

	// panes view
	{
		s := u.waitUIRe(paneRow(busy, "shell", "busy") + `\s*1\s+1\s+-\s+\d+s`)
		assert.Regexp(t, namedRow(idle, "-", "shell", "idle"), s, "a pane with no name")
		s = u.waitUIRe(paneRow(typing, "shell", "typing"))
		assert.Regexp(t, paneRow(gone, `\S+`, "gone"), s)
		assert.Regexp(t, namedRow(cat, "counter", "reader", "idle")+`\s*-\s+1\s+-\s+\d+s`, s, "the request sent to cat is open, beside its name")
		assert.Regexp(t, paneRow(u.ui, `\S+`, `\S+`), s, "the console's own pane is listed too")
		u.fits(120, 45)
	}

	// states change while the console runs: a screen read once is read again when its pane
	// takes output (a person types, a job starts and ends)
	{
		q.tmux("send-keys", "-t", idle, "-l", "ls")
		u.waitUIRe(paneRow(idle, "shell", "typing"))
		q.tmux("send-keys", "-t", idle, "C-u")
		u.waitUIRe(paneRow(idle, "shell", "idle"))
		q.tmux("send-keys", "-t", idle, "-l", "sleep 4")
		q.tmux("send-keys", "-t", idle, "Enter")
		u.waitUIRe(paneRow(idle, "shell", "busy"))
		u.waitUIRe(paneRow(idle, "shell", "idle"))
	}

	// live: a new exchange shows without a key
	{
		s := q.send(q.orch, cat, "Second request: look \x1b[2J\x1b]2;pwned\x07 here.")
		u.waitUI("#"+strconv.Itoa(s.Seq)+" "+q.orch+"→"+cat, "look")
		title := strings.TrimSpace(q.tmux("display-message", "-p", "-t", u.ui, "#{pane_title}"))
		assert.NotEqual(t, "pwned", title, "a sender's escape sequence never reaches the console's terminal")
		assert.NotContains(t, u.screen(true), "\x1b]2;")
		u.waitUIRe(paneRow(cat, "reader", "idle") + `\s*-\s+2\s`)
	}

	// questions: numbered, answered in two keys
	{
		b := q.startAs(q.worker, nil, qAskArgs("ui-1", "--to", q.orch)...)
		j := q.waitAsking(b, "ui-1")
		s := u.waitUIRe(`(?m)^1 \[blocking\]\s+` + regexp.QuoteMeta(q.worker) + `.*Should the auth module use bcrypt or argon2\?`)
		assert.Contains(t, s, "A Use bcrypt (already in deps)  B Use argon2 (new dep)")
		assert.Regexp(t, paneRow(q.worker, `\S+`, "answer"), s, "the asking worker waits for a person")
		u.keys("1", "b")
		r := b.wait(t, 20*time.Second)
		requireCode(t, 0, r)
		assert.Equal(t, qAnswerBlock("Use argon2 (new dep)", "ui-1", "user", j.ID), r.stdout)
		got := q.question("ui-1")
		require.NotNil(t, got.Answer)
		assert.Equal(t, "ui", got.Answer.Source)
		assert.Equal(t, "B", got.Answer.Raw)
		u.waitUI(j.ID + " answered: Use argon2 (new dep)")
		u.waitUI("no pending questions")
	}

	// questions: freeform in a text field
	{
		b := q.startAs(q.worker, nil, "ask", "-S", q.sock, "--task", "ui-2", "--to", q.orch, "--type", "freeform",
			"--context", "Two caches exist.", "--", "Which cache should the build use?")
		j := q.waitAsking(b, "ui-2")
		u.waitUI("1 [blocking]", "freeform: type the answer")
		u.keys("1")
		u.waitUI("QUESTION "+j.ID, "Enter sends")
		u.text("the quick one, quietly")
		u.waitUI("the quick one, quietly")
		u.keys("Enter")
		r := b.wait(t, 20*time.Second)
		requireCode(t, 0, r)
		assert.Contains(t, r.stdout, "ANSWER: the quick one, quietly")
		assert.Equal(t, "ui", q.question("ui-2").Answer.Source)
	}

	// exchanges: re-send a refused request, open one whole
	{
		// Someone's text in the shell's input: a send that may not queue is refused.
		r := q.run(call{pane: q.orch, env: append(q.env, "WCOMM_NO_QUEUE=1")}, "send", "-S", q.sock, "--to", typing, "--busy-wait", "0", "--", "Refused at first.")
		require.NotEqual(t, 0, r.code, "%s", r)
		id := strings.Fields(r.stdout + " x")[0]
		if !regexp.MustCompile(`^\d{8}-\d{6}-[0-9a-f]{4}$`).MatchString(id) {
			id = regexp.MustCompile(`\d{8}-\d{6}-[0-9a-f]{4}`).FindString(r.stderr)
		}
		require.NotEmpty(t, id, "%s", r)
		q.tmux("send-keys", "-t", typing, "C-u")
		u.keys("Tab")
		u.waitUIRe(`EXCHANGES · \d+ events, newest first`)
		s := u.waitUIRe(`(?m)^\d\d:\d\d:\d\d #\d+ ` + regexp.QuoteMeta(q.orch+"→"+typing) + `\s+refused`)
		first := strings.Split(s, "\n")[2]
		require.Contains(t, first, "refused", "the refused request is the newest event, selected:\n%s", s)
		u.keys("r")
		u.waitUI("re-sent " + id)
		q.waitScreen(typing, "# [WORKER capability=READONLY id="+id)
		u.keys("Enter")
		u.waitUI("EXCHANGE "+id, "DELIVERY LOG", "REQUEST", "Refused at first.", "RESPONSE")
		u.fits(120, 45)
		u.keys("Escape")
		u.waitUI("PANES")
	}

	// 80x24 and larger, keys, colours
	{
		for _, size := range [][2]int{{80, 24}, {100, 30}, {200, 60}} {
			u.resize(size[0], size[1])
			u.waitUIFunc(func(s string) bool {
				return len(strings.Split(strings.TrimRight(s, "\n"), "\n")) <= size[1] && strings.Contains(s, "? keys")
			}, "a redraw at %v", size)
			// Wait for a row only this size draws, then check every row.
			u.waitUI("1-9 answer a question")
			u.fits(size[0], size[1])
			u.keys("Tab")
			u.waitUI("EXCHANGES ·")
			u.fits(size[0], size[1])
			u.keys("Tab")
			u.waitUI("PANES")
		}
		assert.Regexp(t, colorSGR, u.screen(true), "colours without NO_COLOR")
		u.keys("?")
		u.waitUI("KEYS", "re-send the selected queued, refused or dead-lettered request")
		u.keys("Escape")
		u.waitUI("PANES")
		u.keys("q")
		assert.Equal(t, "0", u.exitStatus(), "q quits with exit 0")
	}

	// NO_COLOR
	{
		nc := q.openUI([]string{"NO_COLOR=1"}, 80, 24)
		nc.waitUIRe(paneRow(idle, "shell", "idle"))
		s := nc.screen(true)
		assert.NotRegexp(t, colorSGR, s)
		nc.fits(80, 24)
		nc.keys("q")
		assert.Equal(t, "0", nc.exitStatus())
	}
}

// --popup opens the console in a tmux popup over the caller's pane, as a person attached to the
// session sees it: the test attaches a real tmux client to the world's server, inside a pane of a
// second private server, and reads that pane.
func TestE2EUIPopup(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	caller := w.bashPane("")
	outer := w.dir + "/o"
	t.Cleanup(func() { _, _ = tmuxOn(outer, "kill-server") })
	out, err := tmuxOn(outer, "-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "40", "-s", "outer", "--",
		"env", "-u", "TMUX", "-u", "TMUX_PANE", "tmux", "-u", "-S", w.sock, "attach", "-t", session)
	require.NoError(t, err, "%s", out)
	look := func() string { s, _ := tmuxOn(outer, "capture-pane", "-p", "-t", "outer"); return s }
	var s string
	waitFor(t, 10*time.Second, func() bool { s = look(); return strings.Contains(s, "["+session+"]") }, "the client to attach: %s", &s)

	b := w.start(call{pane: caller}, "ui", "--popup")
	waitFor(t, 15*time.Second, func() bool {
		s = look()
		return strings.Contains(s, "│wcomm ui · "+session) && strings.Contains(s, "wcomm ui ─") && regexp.MustCompile(regexp.QuoteMeta(caller)+`\s+\S+\s+shell\s+idle`).MatchString(s)
	}, "the popup with the console: %s", &s)
	_, err = tmuxOn(outer, "send-keys", "-t", "outer", "q")
	require.NoError(t, err)
	r := b.wait(t, 15*time.Second)
	requireCode(t, 0, r)
	waitFor(t, 10*time.Second, func() bool { s = look(); return !strings.Contains(s, "│wcomm ui") }, "the popup to close: %s", &s)

	r = w.run(call{}, "ui", "--popup")
	assert.Equal(t, 2, r.code, "%s", r)
	assert.Contains(t, r.stderr, "run it inside tmux")
	r = w.run(call{}, "ui")
	assert.Equal(t, 2, r.code, "without a terminal: %s", r)
	assert.Contains(t, r.stderr, "needs a terminal")
}
