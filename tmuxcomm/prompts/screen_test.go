package prompts

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

const dialogRows = ` Bash command

   Run the requested command
   touch k1.txt

 Do you want to proceed?
 ❯ 1. Yes
   2. No

 Esc to cancel · Tab to amend`

// screens is a pane whose captures are played in turn, the last one again once they run out.
type screens struct{ shots []string }

func (f *screens) Screen(context.Context, messages.PaneID) (profile.Screen, error) {
	s := f.shots[0]
	if len(f.shots) > 1 {
		f.shots = f.shots[1:]
	}
	return profile.ParseScreen(s, 0, 0), nil
}

func (f *screens) PressKey(context.Context, messages.PaneID, string) error { return nil }

func TestGoneForSettles(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var g goneFor
	assert.False(t, g.settled(t0))
	assert.False(t, g.settled(t0.Add(100*time.Millisecond)))
	assert.False(t, g.settled(t0.Add(200*time.Millisecond)), "three looks, but a moment")
	assert.True(t, g.settled(t0.Add(goneSettle)))

	g.reset()
	assert.False(t, g.settled(t0.Add(10*time.Second)), "back on screen: the count starts again")
	assert.False(t, g.settled(t0.Add(20*time.Second)), "a long time, but two looks")
	assert.True(t, g.settled(t0.Add(30*time.Second)))
}

// A dialog a redraw takes off the screen for a look or two still waits: the question is kept.
func TestScreenTerminalRedrawIsNoAnswer(t *testing.T) {
	prof := profile.Defaults().Lookup("claude")
	d, ok := prof.Dialog(profile.ParseScreen(dialogRows, 0, 0))
	require.True(t, ok)
	redraw := "● I'll run it.\n\n"
	f := &screens{shots: []string{dialogRows, redraw, redraw, dialogRows, dialogRows}}
	term := &screenTerminal{s: &Sentry{Tmux: f}, ctx: context.Background(), pane: "%1", prof: prof, d: d, denials: -1}
	for i := range 5 {
		st, _, err := term.Status()
		require.NoError(t, err)
		assert.Equal(t, questions.StatusWaiting, st, "look %d", i)
	}
}

// A dialog answered at the terminal before the question's first look: the denied rows of the
// screen it was found on tell the Escape (one more of them) from a Yes (as many, the tool at work).
func TestScreenTerminalAnsweredBeforeItsFirstLook(t *testing.T) {
	prof := profile.Defaults().Lookup("claude")
	found := profile.ParseScreen(dialogRows, 0, 0)
	d, ok := prof.Dialog(found)
	require.True(t, ok)
	base, known := prof.Denials(d, found)
	require.True(t, known)
	for _, tt := range []struct{ name, after, want string }{
		{"denied", "⎿  Interrupted · What should Claude do instead?\n\n> ", "idle"},
		{"allowed", "● Bash(touch k1.txt)\n  ⎿  Running…\n", "busy"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			term := &screenTerminal{s: &Sentry{Tmux: &screens{shots: []string{tt.after}}}, ctx: context.Background(),
				pane: "%1", prof: prof, d: d, denials: base}
			var st string
			require.Eventually(t, func() bool {
				var err error
				st, _, err = term.Status()
				require.NoError(t, err)
				return st != questions.StatusWaiting
			}, 10*time.Second, 50*time.Millisecond, "the dialog gone settles")
			assert.Equal(t, tt.want, st)
		})
	}
}

// The person's answer finds the dialog in the middle of a redraw: its key waits for it to show
// again, rather than giving the answer up.
func TestShowsAgainAfterARedraw(t *testing.T) {
	prof := profile.Defaults().Lookup("claude")
	d, ok := prof.Dialog(profile.ParseScreen(dialogRows, 0, 0))
	require.True(t, ok)
	redraw := "● I'll run it.\n\n"
	s := &Sentry{Tmux: &screens{shots: []string{redraw, redraw, dialogRows}}}
	assert.True(t, s.showsAgain(context.Background(), "%1", prof, d.Fingerprint))
	s = &Sentry{Tmux: &screens{shots: []string{redraw}}}
	assert.False(t, s.showsAgain(context.Background(), "%1", prof, d.Fingerprint), "gone for good")
}
