package paneops

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/wcomm/wcomm/paneops/profile"
)

func TestWithEnterStamp(t *testing.T) {
	at := time.UnixMilli(1795748650522)
	for _, strict := range []bool{false, true} {
		args := enterArgs("%7", false, "m-1", strict, "")
		got := withEnterStamp(args, "%7", at)
		assert.Equal(t, args[:len(args)-1], got[:len(got)-1], "strict=%v: only the branch that presses Enter changes", strict)
		assert.Equal(t, args[len(args)-1]+" ; set-option -p -t %7 @wcomm-entered-at 1795748650522", got[len(got)-1], "strict=%v", strict)
	}
}

// TestDecideReady replays the looks of one wait before a paste: each step is one inspection at
// a time after the start of the wait, with the decision it must get.
func TestDecideReady(t *testing.T) {
	empty := profile.Inspection{Found: true}
	busy := profile.Inspection{Found: true, Busy: true}
	holds := profile.Inspection{Found: true, Lines: []string{"typed"}}
	type step struct {
		at       int // ms after the start of the wait
		in       profile.Inspection
		deadline bool
		want     profile.Action
		wantBusy bool
	}
	tests := []struct {
		name      string
		verify    profile.VerifySpec
		enteredMS int // wcomm's last Enter, ms before the start of the wait; 0: none
		steps     []step
	}{
		{"no readiness asked: empty box pastes at once", profile.VerifySpec{}, 100, []step{{0, empty, false, profile.ActPaste, false}}},
		{"quiet: waits until empty and idle long enough", profile.VerifySpec{QuietMS: 2000}, 0, []step{
			{0, empty, false, profile.ActWait, false},
			{1000, empty, false, profile.ActWait, false},
			{2000, empty, false, profile.ActPaste, false},
		}},
		{"quiet: a busy look starts the quiet time again", profile.VerifySpec{QuietMS: 2000}, 0, []step{
			{0, empty, false, profile.ActWait, false},
			{1500, busy, false, profile.ActWait, false},
			{1600, empty, false, profile.ActWait, false},
			{3500, empty, false, profile.ActWait, false},
			{3600, empty, false, profile.ActPaste, false},
		}},
		{"quiet: runs to its end past the deadline", profile.VerifySpec{QuietMS: 2000}, 0, []step{
			{0, empty, true, profile.ActWait, false},
			{2000, empty, true, profile.ActPaste, false},
		}},
		{"turn start: no Enter recorded, no wait", profile.VerifySpec{TurnStartMS: 5000}, 0, []step{{0, empty, false, profile.ActPaste, false}}},
		{"turn start: waits for busy after the Enter, then for idle", profile.VerifySpec{TurnStartMS: 5000}, 300, []step{
			{0, empty, false, profile.ActWait, false},
			{400, busy, false, profile.ActWait, false},
			{900, empty, false, profile.ActPaste, false},
		}},
		{"turn start: never busy, pastes once the bound since the Enter passed", profile.VerifySpec{TurnStartMS: 5000}, 1000, []step{
			{0, empty, false, profile.ActWait, false},
			{3999, empty, false, profile.ActWait, false},
			{4000, empty, false, profile.ActPaste, false},
		}},
		{"turn start: an Enter long ago asks nothing", profile.VerifySpec{TurnStartMS: 5000}, 6000, []step{{0, empty, false, profile.ActPaste, false}}},
		{"a busy agent at the deadline is pasted into as before, marked busy", profile.VerifySpec{TurnStartMS: 5000}, 100, []step{
			{0, busy, true, profile.ActPaste, true},
		}},
		{"someone's text is refused at the deadline as before", profile.VerifySpec{QuietMS: 2000}, 0, []step{
			{0, holds, false, profile.ActWait, false},
			{100, holds, true, profile.ActRefuseHuman, false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &profile.Profile{Name: "x", Kind: profile.KindAgent, Input: &profile.InputSpec{Prompt: "^> "}, Verify: tt.verify}
			start := time.Unix(1_800_000_000, 0)
			r := readiness{p: p}
			if tt.enteredMS > 0 {
				r.enteredAt = start.Add(-time.Duration(tt.enteredMS) * time.Millisecond)
			}
			for _, s := range tt.steps {
				dec := decideReady(p, s.in, s.deadline, &r, start.Add(time.Duration(s.at)*time.Millisecond))
				assert.Equal(t, s.want, dec.Action, "at %d ms: %s", s.at, dec.Evidence)
				assert.Equal(t, s.wantBusy, dec.Busy, "at %d ms: %s", s.at, dec.Evidence)
				if dec.Action == profile.ActWait {
					assert.NotEmpty(t, dec.Evidence, "at %d ms: a wait says why", s.at)
				}
			}
		})
	}
}

// TestGeminiWaitsForTurnStart: Gemini CLI 0.61 clears its box on Enter before it shows the turn
// begun, and once it shows idle again it may still be closing the turn; an Enter for a paste made
// in either moment was swallowed (another Enter needed), and a message reported submitted never
// reached the model. Its next paste waits for the turn to show, then for a second of quiet.
func TestGeminiWaitsForTurnStart(t *testing.T) {
	p := profile.Defaults().Lookup("gemini")
	start := time.Unix(1_800_000_000, 0)
	r := readiness{p: p, enteredAt: start.Add(-20 * time.Millisecond)}
	empty := profile.Inspection{Found: true}
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	dec := decideReady(p, empty, false, &r, at(0))
	assert.Equal(t, profile.ActWait, dec.Action, "an empty box 20 ms after wcomm's Enter, no turn shown yet: %s", dec.Evidence)
	dec = decideReady(p, profile.Inspection{Found: true, Busy: true}, false, &r, at(200))
	assert.Equal(t, profile.ActWait, dec.Action, "busy")
	dec = decideReady(p, empty, false, &r, at(400))
	assert.Equal(t, profile.ActWait, dec.Action, "idle again just now: %s", dec.Evidence)
	dec = decideReady(p, empty, false, &r, at(1400))
	assert.Equal(t, profile.ActPaste, dec.Action, "idle for a second since the turn showed: %s", dec.Evidence)
}
