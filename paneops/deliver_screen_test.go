package paneops

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/paneops/profile"
)

// A permission dialog that comes up between a delivery's paste and its Enter, or between two of
// its Enters, never gets an Enter (it would approve it): tmux checks the screen in the Enter's own
// call. A real tmux server; paneops/testdata/fakeagent.py draws Claude Code's box and dialog and
// logs every byte it reads while the dialog shows.
func TestVerifyRealNoEnterIntoDialog(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tests := []struct {
		mode   string
		strict bool
		enters int // Enters pressed before the dialog came
	}{
		{"replace", false, 0}, // in place of the box, as Claude Code draws it
		{"replace", true, 0},
		{"above", false, 0},   // the box still holding the paste below it
		{"on-enter", true, 1}, // after the first Enter, which the agent took for its own: the retry
	}
	for _, tt := range tests {
		name := tt.mode
		if tt.strict {
			name += " strict"
		}
		t.Run(name, func(t *testing.T) {
			f := s.startFake("--dialog-on-paste", tt.mode)
			msg := "a message that must not answer a dialog (" + name + ")"
			d := f.delivery(msg, 5*time.Second)
			d.Strict, d.Mark = tt.strict, "m-"+strings.ReplaceAll(name, " ", "-")
			res, err := s.c.Deliver(context.Background(), d)
			require.ErrorIs(t, err, ErrEnterHeld, "evidence: %s", res.Evidence)
			assert.ErrorIs(t, err, ErrBusy)
			assert.True(t, res.Pasted)
			assert.False(t, res.Submitted, "a held Enter is not a submission")
			assert.Equal(t, tt.enters, res.Enters)
			assert.Contains(t, res.Evidence, "a dialog is on screen (Bash rm -rf build)")
			recs := f.records()
			require.NotEmpty(t, recs)
			assert.Equal(t, map[string]string{"pasted": msg}, recs[0])
			for _, r := range recs[1:] {
				assert.NotContains(t, r, "approved", "an Enter reached the dialog and approved it")
				assert.NotContains(t, r["dialog_read"], "\r", "an Enter reached the dialog")
				assert.NotContains(t, r, "submitted")
			}
			noKeys(t, recs)
			// The pane records the paste and no Enter for it, so recovery knows the Enter is
			// still owed (Resume) and types nothing again.
			pasted, entered, err := s.c.Marks(context.Background(), f.pane, "")
			require.NoError(t, err)
			assert.Equal(t, d.Mark, pasted)
			if tt.enters == 0 {
				assert.Empty(t, entered)
			}

			// While the dialog shows, Resume does not press the Enter either.
			res, err = s.c.Resume(context.Background(), d)
			require.ErrorIs(t, err, ErrEnterHeld)
			assert.False(t, res.Submitted)
			for _, r := range f.records() {
				assert.NotContains(t, r, "approved")
			}
		})
	}
}

// The screen's format for every built-in profile is one tmux takes, and it finds Claude Code's
// dialog on a real screen and not on its box (TestVerifyRealNoEnterIntoDialog presses through it).
func TestScreenRefusalFormats(t *testing.T) {
	t.Parallel()
	for _, name := range profile.Defaults().Names() {
		p := profile.Defaults().Lookup(name)
		f := screenRefusal(p, true)
		if len(p.Dialogs) == 0 && (!p.HasBox() || p.Input.CursorLine) {
			assert.Empty(t, f, p.Name)
			continue
		}
		assert.NotEmpty(t, f, p.Name)
		for _, d := range p.Dialogs {
			for _, m := range d.Markers {
				_, ok := toERE(m, true)
				assert.True(t, ok, "%s: marker %q", p.Name, m)
			}
		}
	}
	s := startServer(t)
	rows := "printf '\\033[2J\\033[H%s' \"$1\"; sleep 86400"
	claude := profile.Defaults().Lookup("claude")
	for _, tt := range []struct {
		name, screen string
		refuse       bool
	}{
		{"box with text", "history\r\n────\r\n❯\u00a0hello\r\n────\r\n", false},
		{"box with a collapsed paste", "────\r\n❯\u00a0[Pasted text #1 +3 lines]\r\n────\r\n", false},
		{"empty box", "────\r\n❯\u00a0\r\n────\r\n", true},
		{"no box", "some program\r\n", true},
		{"dialog", "Bash command\r\n\r\n  ls\r\n\r\nDo you want to proceed?\r\n❯ 1. Yes\r\n  2. No\r\n\r\nEsc to cancel\r\n", true},
		{"framed dialog", "│ Bash command │\r\n│ Do you want to proceed? │\r\n│ ❯ 1. Yes │\r\n│ Esc to cancel │\r\n", true},
		{"dialog above the box", "Do you want to proceed?\r\n❯ 1. Yes\r\nEsc to cancel\r\n────\r\n❯\u00a0hi\r\n────\r\n", true},
		{"the markers' words in the box", "────\r\n❯\u00a0Do you want to proceed? ❯ 1. Yes Esc to cancel\r\n────\r\n", false},
	} {
		pane := s.newWindow("sh", "-c", rows, "sh", tt.screen)
		last := strings.TrimSpace(strings.Split(strings.TrimSpace(tt.screen), "\r\n")[0])
		waitFor(t, 10*time.Second, func() bool {
			out, err := s.c.Capture(context.Background(), pane, 0)
			return err == nil && strings.Contains(out, strings.TrimSpace(strings.Split(last, "\u00a0")[0]))
		})
		out := strings.TrimSpace(s.tmux("display-message", "-p", "-t", string(pane), "#{?"+screenRefusal(claude, true)+",1,0}"))
		want := map[bool]string{true: "1", false: "0"}[tt.refuse]
		assert.Equal(t, want, out, "%s: %q", tt.name, tt.screen)
	}
}

// Each built-in profile's box, drawn with text in it, lets the Enter through, and a screen without
// it does not: a pattern tmux's regcomp took otherwise, or did not take at all, would hold every
// Enter into that program back.
func TestScreenRefusalBoxes(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	rows := "printf '\\033[2J\\033[H%s' \"$1\"; sleep 86400"
	boxes := map[string]string{
		"claude":   "────\r\n❯\u00a0hello there\r\n────\r\n",
		"codex":    "› hello there\r\n\r\n  ? for shortcuts\r\n",
		"gemini":   "─────\r\n > hello there\r\n─────\r\n",
		"opencode": "\r\n  ┃ hello there\r\n  ┃ Build · model\r\n",
		"copilot":  "────\r\n❯ hello there\r\n────\r\n",
		"qwen":     "────\r\n> hello there\r\n────\r\n",
		"aider":    "ask > hello there\r\n",
	}
	for _, name := range profile.Defaults().Names() {
		p := profile.Defaults().Lookup(name)
		f := screenRefusal(p, true)
		if f == "" {
			continue
		}
		box, ok := boxes[name]
		require.True(t, ok, "no sample box for profile %s", name)
		for screen, want := range map[string]string{box: "0", "a program that is not " + name + "\r\n": "1"} {
			pane := s.newWindow("sh", "-c", rows, "sh", screen)
			waitFor(t, 10*time.Second, func() bool {
				out, err := s.c.Capture(context.Background(), pane, 0)
				return err == nil && (strings.Contains(out, "hello there") || strings.Contains(out, "not "+name))
			})
			if want == "0" {
				sc, err := s.c.Screen(context.Background(), pane)
				require.NoError(t, err)
				in := p.Inspect(sc)
				require.True(t, in.Found && len(in.Lines) > 0, "the sample is %s's box with text: %s", name, in.State())
			}
			got := strings.TrimSpace(s.tmux("display-message", "-p", "-t", string(pane), "#{?"+f+",1,0}"))
			assert.Equal(t, want, got, "%s on %q", name, screen)
		}
	}
}

// toERE writes what RE2 patterns mean for regcomp, matching at least what they match.
func TestToERE(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		re      string
		trimmed bool
		want    string
	}{
		{`^Do you want to proceed\?$`, true, `^[^[:alnum:]]*Do you want to proceed\?[^[:alnum:]]*$`},
		{`^❯ 1\. Yes`, false, `^❯ 1\. Yes`},
		{`^─{3,}`, false, `^──(─)+`},
		{`(?i)ok`, false, `[Oo][Kk]`},
		{`\d+`, false, `(([0123456789]))+`},
		{`[^"]*`, false, `((.*))*`},
		{`a|b{2}`, false, `(a|bb)`},
		{`\bword`, false, `word`},
		{`[\]^-]`, false, `([]^-])`},
		{`x{}y`, false, `x\{\}y`},
		{`a.b`, false, `a(.*)b`},
	} {
		got, ok := toERE(tt.re, tt.trimmed)
		assert.True(t, ok, tt.re)
		assert.Equal(t, tt.want, got, tt.re)
	}
	_, ok := toERE(`(`, false)
	assert.False(t, ok, "a pattern that does not parse")
	assert.Equal(t, `a#}b#,c##d`, formatEscape(`a}b,c#d`))
}
