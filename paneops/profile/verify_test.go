package profile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// screen reads a golden screen of testdata/screens: what paneops' Client.Screen's tmux call printed
// (cursor line, then capture-pane -p -e) for a real agent TUI in a known state. The files were
// captured from Claude Code 2.1.330, Codex CLI 0.169.0, Gemini CLI 0.61.0, OpenCode 1.18.33 and
// GitHub Copilot CLI 1.0.102 (the versions
// testdata/agents/install.sh pins) talking to testdata/agents/mockmodel.py.
func screen(t *testing.T, name string) Screen {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "screens", name+".screen"))
	require.NoError(t, err)
	first, rest, _ := strings.Cut(string(data), "\n")
	var x, y int
	_, err = fmt.Sscanf(first, "%d %d", &x, &y)
	require.NoError(t, err, "the cursor line of %s", name)
	return ParseScreen(rest, x, y)
}

func TestVerifyParseScreen(t *testing.T) {
	tests := []struct {
		name      string
		raw       string
		wantText  string
		wantSolid string
	}{
		{"plain", "hello", "hello", "hello"},
		{"faint hint", "\x1b[1m›\x1b[0m \x1b[2mAsk Codex to do anything", "› Ask Codex to do anything", "› "},
		{"bold and faint together", "\x1b[1;2m› \x1b[0mtyped", "› typed", "typed"},
		{"faint ends with 22", "\x1b[2mhint\x1b[22m text", "hint text", " text"},
		{"256-colour 2 is no attribute", "\x1b[38;5;2mgreen\x1b[48;2;2;2;2m too", "green too", "green too"},
		{"reverse cursor before a hint", "❯\u00a0\x1b[7mP\x1b[0;2mress up\x1b[0m", "❯\u00a0Press up", "❯\u00a0"},
		{"reverse cursor on its own", "❯\u00a0ab\x1b[7m \x1b[0m", "❯\u00a0ab ", "❯\u00a0ab "},
		{"hyperlink", "see \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ here", "see link here", "see link here"},
		{"control bytes dropped", "a\x07b\x00c", "abc", "abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ParseScreen(tt.raw+"\n", 0, 0)
			require.Len(t, s.Lines, 1)
			assert.Equal(t, tt.wantText, s.Lines[0].Text)
			assert.Equal(t, tt.wantSolid, s.Lines[0].Solid(0))
		})
	}
}

func TestVerifyInspectGolden(t *testing.T) {
	tests := []struct {
		screen string
		lines  []string
		pasted bool
		busy   bool
	}{
		{"claude-ready-after-turn", nil, false, false},
		{"claude-answered", nil, false, false},
		{"claude-human", []string{"half typed by a human"}, false, false},
		{"claude-pasted-short", []string{"short pasted message"}, false, false},
		{"claude-pasted-l40", []string{"[Pasted text #3 +40 lines]"}, true, false},
		{"claude-pasted-100k", []string{"[Pasted text #4 +1443 lines]"}, true, false},
		{"claude-busy", nil, false, true},
		{"claude-busy-pasted", []string{"queued while busy"}, false, true},
		{"claude-busy-queued", nil, false, true}, // "Press up to edit queued messages" is a hint
		{"codex-ready-after-turn", nil, false, false},
		{"codex-answered", nil, false, false},
		{"codex-human", []string{"half typed by a human"}, false, false},
		{"codex-pasted-short", []string{"short pasted message"}, false, false},
		{"codex-pasted-l40", []string{"[Pasted Content 1911 chars]"}, true, false},
		{"codex-pasted-100k", []string{"[Pasted Content 102453 chars]"}, true, false},
		{"codex-busy", nil, false, true},
		{"codex-busy-pasted", []string{"queued while busy"}, false, true},
		{"codex-busy-queued", nil, false, true},
		{"gemini-ready-after-turn", nil, false, false},
		{"gemini-answered", nil, false, false},
		{"gemini-human", []string{"half typed by a human"}, false, false},
		{"gemini-pasted-short", []string{"short pasted message"}, false, false},
		{"gemini-pasted-l40", []string{"[Pasted Text: 41 lines]"}, true, false},
		{"gemini-pasted-100k", []string{"[Pasted Text: 1444 lines]"}, true, false},
		{"gemini-busy", nil, false, true},
		{"gemini-busy-pasted", []string{"queued while busy"}, false, true},
		{"gemini-busy-queued", nil, false, true},
		{"opencode-ready-after-turn", nil, false, false},
		{"opencode-human", []string{"half typed by a human"}, false, false},
		{"opencode-pasted-l40", []string{"[Pasted ~40 lines]"}, true, false},
		{"opencode-busy", nil, false, true},
		{"copilot-ready-after-turn", nil, false, false},
		{"copilot-human", []string{"half typed by a human"}, false, false},
		{"copilot-pasted-l40", []string{"[Paste #1 - 40 lines]"}, true, false},
		{"copilot-busy", nil, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.screen, func(t *testing.T) {
			agent, _, _ := strings.Cut(tt.screen, "-")
			p := Defaults().Lookup(agent)
			in := p.Inspect(screen(t, tt.screen))
			assert.True(t, in.Found, "the input box is on screen")
			assert.Equal(t, tt.lines, in.Lines)
			assert.Equal(t, tt.pasted, in.Pasted)
			assert.Equal(t, tt.busy, in.Busy)
		})
	}
}

// Copilot CLI's Sessions tab, which Tab on an empty input box opens: a list whose keys act on it
// ("n" a new session, "/" a search). Its prompt is not on screen, so nothing is pasted there: the
// message waits, and is refused at the deadline, never typed into the list.
func TestVerifyCopilotSessionsTab(t *testing.T) {
	p := Defaults().Lookup("copilot")
	in := p.Inspect(screen(t, "copilot-sessions-tab"))
	assert.False(t, in.Found, "the input box is not on screen")
	assert.Equal(t, ActWait, DecideBefore(p, in, false).Action)
	assert.Equal(t, ActRefuseNotReady, DecideBefore(p, in, true).Action)
}

func TestVerifyInspectStarting(t *testing.T) {
	gemini := Defaults().Lookup("gemini")
	for _, tt := range []struct {
		screen   string
		starting bool
		action   Action
	}{
		// The box is drawn, the header not yet: Gemini CLI would queue the message and alter it.
		{"gemini-starting", true, ActWait},
		{"gemini-ready-fresh", false, ActPaste},
		{"gemini-ready-after-turn", false, ActPaste},
		{"gemini-answered", false, ActPaste},
	} {
		t.Run(tt.screen, func(t *testing.T) {
			in := gemini.Inspect(screen(t, tt.screen))
			assert.True(t, in.Empty())
			assert.Equal(t, tt.starting, in.Starting)
			assert.Equal(t, tt.action, DecideBefore(gemini, in, false).Action)
		})
	}
	in := gemini.Inspect(screen(t, "gemini-starting"))
	d := DecideBefore(gemini, in, true)
	assert.Equal(t, ActPaste, d.Action, "at the deadline the message goes anyway")
	assert.Contains(t, d.Evidence, "starting")
	assert.False(t, Defaults().Lookup("claude").Inspect(screen(t, "claude-ready-after-turn")).Starting, "only profiles with start-up rows")
}

func TestVerifyInspectNoBox(t *testing.T) {
	// A Claude Code history with no box drawn below it: its "❯ text" rows are not the box.
	s := ParseScreen("❯ earlier message\n  more\n● ok\n\nSome dialog\n❯ 1. Yes\n  2. No\n", 0, 6)
	in := Defaults().Lookup("claude").Inspect(s)
	assert.False(t, in.Found)
	assert.Equal(t, "not on screen", in.State())
	// Codex's box is found on a screen of another program only by its marker; none here.
	in = Defaults().Lookup("codex").Inspect(ParseScreen("$ ls\nfile\n$ \n", 2, 2))
	assert.False(t, in.Found)
	// Generic has no box at all.
	in = Defaults().Lookup("generic").Inspect(s)
	assert.Equal(t, Inspection{}, in)
}

func TestVerifyInspectCursorLine(t *testing.T) {
	sh := Defaults().Lookup("shell")
	tests := []struct {
		name   string
		screen string
		x, y   int
		found  bool
		lines  []string
	}{
		{"bash prompt", "bash-5.2$ \n", 10, 0, true, nil},
		{"root prompt below output", "x\nbash-5.2# \n\n", 10, 1, true, nil},
		{"zsh prompt", "host% \n", 6, 0, true, nil},
		{"fancy prompt", "~/src ❯ \n", 8, 0, true, nil},
		{"typed text", "bash-5.2$ touch human\n", 21, 0, true, []string{"bash-5.2$ touch human"}},
		{"cursor moved back into typed text", "bash-5.2$ ls -la\n", 12, 0, true, []string{"bash-5.2$ ls -la"}},
		{"no prompt before the cursor", "output without prompt\n", 21, 0, true, []string{"output without prompt"}},
		{"cursor on a blank row", "out\n\n", 0, 1, true, nil},
		{"cursor below the capture", "out\n", 0, 5, true, nil},
		{"cursor right of the capture", "out\n", 3, 5, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := sh.Inspect(ParseScreen(tt.screen, tt.x, tt.y))
			assert.Equal(t, tt.found, in.Found)
			assert.Equal(t, tt.lines, in.Lines)
		})
	}
}

func TestVerifyAttribute(t *testing.T) {
	content := "[WORKER capability=READONLY id=x]\nfirst line of the body\n    indented    code\nline 40 of 40\n\n[RESPONSE INSTRUCTIONS]"
	claude := Defaults().Lookup("claude")
	shell := Defaults().Lookup("shell")
	tests := []struct {
		name    string
		p       *Profile
		lines   []string
		ours    int
		foreign int
	}{
		{"first line", claude, []string{"[WORKER capability=READONLY id=x]"}, 1, 0},
		{"wrapped fragments", claude, []string{"[WORKER capability=READ", "ONLY id=x] first line of", "the body"}, 3, 0},
		{"collapsed white space", claude, []string{"indented code"}, 1, 0},
		{"scroll mark after a gap", claude, []string{"line 40 of 40                 ↑"}, 1, 0},
		{"truncated with an ellipsis", claude, []string{"first line of the…"}, 1, 0},
		{"collapsed paste", claude, []string{"[Pasted text #2 +5 lines]"}, 1, 0},
		{"someone else's words", claude, []string{"half typed by a human"}, 0, 1},
		{"mixed", claude, []string{"first line of the body", "half typed by a human"}, 1, 1},
		{"shell row with its prompt", shell, []string{"bash-5.2$ [WORKER capability=READONLY"}, 1, 0},
		{"shell row with typed text", shell, []string{"bash-5.2$ rm -rf build"}, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.p.Attribute(Inspection{Found: true, Lines: tt.lines}, content)
			assert.Equal(t, Attribution{Ours: tt.ours, Foreign: tt.foreign}, a)
		})
	}
}

func TestVerifyDecideBefore(t *testing.T) {
	set := Defaults()
	claude, generic, reader := set.Lookup("claude"), set.Lookup("generic"), set.Lookup("reader")
	tests := []struct {
		name     string
		p        *Profile
		screen   string // golden screen, or "" for none
		in       Inspection
		deadline bool
		want     Action
		evidence string
	}{
		{"empty box", claude, "claude-ready-after-turn", Inspection{}, false, ActPaste, "input box empty"},
		{"human text: wait", claude, "claude-human", Inspection{}, false, ActWait, "holds text"},
		{"human text at the deadline: refuse", claude, "claude-human", Inspection{}, true, ActRefuseHuman, "half typed by a human"},
		{"someone's collapsed paste: refuse", claude, "claude-pasted-l40", Inspection{}, true, ActRefuseHuman, "Pasted text"},
		{"busy: wait", claude, "claude-busy", Inspection{}, false, ActWait, "busy"},
		{"busy at the deadline: paste, it queues", claude, "claude-busy", Inspection{}, true, ActPaste, "queues"},
		{"no box yet: wait", claude, "", Inspection{}, false, ActWait, "not on screen"},
		{"no box at the deadline: refuse", claude, "", Inspection{}, true, ActRefuseNotReady, "not on screen"},
		{"codex hint is empty", set.Lookup("codex"), "codex-ready-after-turn", Inspection{}, false, ActPaste, "empty"},
		{"gemini human text", set.Lookup("gemini"), "gemini-human", Inspection{}, true, ActRefuseHuman, "half typed"},
		{"generic: nothing to check", generic, "", Inspection{}, false, ActPaste, "no input box"},
		{"reader: nothing to check", reader, "", Inspection{}, false, ActPaste, "reader"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			if tt.screen != "" {
				in = tt.p.Inspect(screen(t, tt.screen))
			}
			d := DecideBefore(tt.p, in, tt.deadline)
			assert.Equal(t, tt.want, d.Action, "%s: %s", d.Action, d.Evidence)
			assert.Contains(t, d.Evidence, tt.evidence)
		})
	}
}

func TestVerifyDecideShown(t *testing.T) {
	claude := Defaults().Lookup("claude")
	tests := []struct {
		name     string
		screen   string
		content  string
		final    bool
		want     Action
		verified bool
	}{
		{"short paste shows", "claude-pasted-short", "short pasted message", false, ActEnter, true},
		{"collapsed paste shows", "claude-pasted-l40", "line 1\nline 2", false, ActEnter, true},
		{"not yet", "claude-ready-after-turn", "short pasted message", false, ActWait, false},
		{"never seen: Enter anyway", "claude-ready-after-turn", "short pasted message", true, ActEnter, false},
		{"someone typed meanwhile", "claude-human", "short pasted message", false, ActWait, false},
		{"someone typed, at the bound: no Enter", "claude-human", "short pasted message", true, ActGiveUp, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := DecideShown(claude, claude.Inspect(screen(t, tt.screen)), tt.content, tt.final)
			assert.Equal(t, tt.want, d.Action, "%s: %s", d.Action, d.Evidence)
			assert.Equal(t, tt.verified, d.Verified)
		})
	}
}

func TestVerifyDecideAfter(t *testing.T) {
	set := Defaults()
	claude, codex := set.Lookup("claude"), set.Lookup("codex")
	const msg = "short pasted message"
	tests := []struct {
		name         string
		p            *Profile
		screen       string // after Enter; "" for no box on screen
		shown        bool
		final, last  bool
		enters       int
		want         Action
		verified     bool
		evidenceHave string
	}{
		{"box emptied", claude, "claude-answered", true, false, false, 1, ActSubmitted, true, "input box empty after Enter"},
		{"box emptied, agent busy", codex, "codex-busy", true, false, false, 1, ActSubmitted, true, "agent busy"},
		{"box emptied after a retry", claude, "claude-answered", true, false, false, 2, ActSubmitted, true, "2 times"},
		// A paste never seen: an empty box or none is watched on without an Enter, even after
		// the last Enter (the caller bounds the watching), with the evidence it ends with.
		{"box emptied, paste never seen, window open", claude, "claude-answered", false, false, false, 1, ActWait, false, ""},
		{"box emptied, paste never seen, window over: watch", claude, "claude-answered", false, true, false, 1, ActWatch, false, "never seen"},
		{"box emptied, paste never seen, last window over: watch", claude, "claude-answered", false, true, true, 1, ActWatch, false, "never seen"},
		{"no box, paste never seen, window over: watch", claude, "", false, true, true, 1, ActWatch, false, "not on screen"},
		{"queued behind a turn", claude, "claude-busy-queued", true, false, false, 1, ActSubmitted, true, "busy"},
		{"still ours, window open: wait", claude, "claude-pasted-short", true, false, false, 1, ActWait, false, ""},
		{"still ours at the window's end: Enter again", claude, "claude-pasted-short", true, true, false, 1, ActRetry, false, "still holds"},
		{"still ours after the last Enter: give up", claude, "claude-pasted-short", true, true, true, 3, ActGiveUp, false, "after 3 Enter"},
		{"collapsed paste still there: Enter again", codex, "codex-pasted-l40", true, true, false, 1, ActRetry, false, "still holds"},
		{"only someone else's text now", claude, "claude-human", true, true, false, 1, ActSubmitted, false, "left the input box"},
		{"no box after Enter, window open", claude, "", true, false, false, 1, ActWait, false, ""},
		{"no box at the window's end", claude, "", true, true, false, 1, ActSubmitted, false, "not on screen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in Inspection
			if tt.screen != "" {
				in = tt.p.Inspect(screen(t, tt.screen))
			}
			d := DecideAfter(tt.p, in, msg, tt.shown, tt.final, tt.last, tt.enters)
			assert.Equal(t, tt.want, d.Action, "%s: %s", d.Action, d.Evidence)
			assert.Equal(t, tt.verified, d.Verified)
			assert.Contains(t, d.Evidence, tt.evidenceHave)
		})
	}

	t.Run("mixed with someone's text: no Enter on it", func(t *testing.T) {
		in := Inspection{Found: true, Lines: []string{"short pasted message", "and more from a person"}}
		d := DecideAfter(claude, in, msg, true, true, false, 1)
		assert.Equal(t, ActGiveUp, d.Action)
		assert.Contains(t, d.Evidence, "not pressing Enter")
	})
	t.Run("profiles without a box", func(t *testing.T) {
		d := DecideAfter(set.Lookup("reader"), Inspection{}, msg, false, true, true, 1)
		assert.Equal(t, Decision{Action: ActSubmitted, Evidence: "cooked reader: Enter sent"}, d)
		d = DecideAfter(set.Lookup("generic"), Inspection{}, msg, false, true, true, 1)
		assert.Equal(t, ActSubmitted, d.Action)
		assert.False(t, d.Verified)
	})
	t.Run("shell prompt back", func(t *testing.T) {
		sh := set.Lookup("shell")
		in := sh.Inspect(ParseScreen("bash-5.2$ # [WORKER x]\nbash-5.2$ \n", 10, 1))
		d := DecideAfter(sh, in, "# [WORKER x]", true, false, false, 1)
		assert.Equal(t, ActSubmitted, d.Action)
		assert.True(t, d.Verified)
		assert.Equal(t, "shell prompt empty after Enter", d.Evidence)
	})
}

func TestVerifyAsideKeepsIndentedInput(t *testing.T) {
	p := Defaults().Lookup("opencode")
	assert.Equal(t, "  typed", p.cutAside("  typed            Context"), "the sidebar beside the box is cut")
	assert.Equal(t, "            indented input", p.cutAside("            indented input"), "indentation is input")
	assert.Equal(t, "a", p.cutAside("a"))
}
