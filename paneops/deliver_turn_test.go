package paneops

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
	empty := Inspection{Found: true}
	busy := Inspection{Found: true, Busy: true}
	holds := Inspection{Found: true, Lines: []string{"typed"}}
	type step struct {
		at       int // ms after the start of the wait
		in       Inspection
		deadline bool
		want     Action
		wantBusy bool
	}
	tests := []struct {
		name      string
		verify    VerifySpec
		enteredMS int // wcomm's last Enter, ms before the start of the wait; 0: none
		steps     []step
	}{
		{"no readiness asked: empty box pastes at once", VerifySpec{}, 100, []step{{0, empty, false, ActPaste, false}}},
		{"quiet: waits until empty and idle long enough", VerifySpec{QuietMS: 2000}, 0, []step{
			{0, empty, false, ActWait, false},
			{1000, empty, false, ActWait, false},
			{2000, empty, false, ActPaste, false},
		}},
		{"quiet: a busy look starts the quiet time again", VerifySpec{QuietMS: 2000}, 0, []step{
			{0, empty, false, ActWait, false},
			{1500, busy, false, ActWait, false},
			{1600, empty, false, ActWait, false},
			{3500, empty, false, ActWait, false},
			{3600, empty, false, ActPaste, false},
		}},
		{"quiet: runs to its end past the deadline", VerifySpec{QuietMS: 2000}, 0, []step{
			{0, empty, true, ActWait, false},
			{2000, empty, true, ActPaste, false},
		}},
		{"turn start: no Enter recorded, no wait", VerifySpec{TurnStartMS: 5000}, 0, []step{{0, empty, false, ActPaste, false}}},
		{"turn start: waits for busy after the Enter, then for idle", VerifySpec{TurnStartMS: 5000}, 300, []step{
			{0, empty, false, ActWait, false},
			{400, busy, false, ActWait, false},
			{900, empty, false, ActPaste, false},
		}},
		{"turn start: never busy, pastes once the bound since the Enter passed", VerifySpec{TurnStartMS: 5000}, 1000, []step{
			{0, empty, false, ActWait, false},
			{3999, empty, false, ActWait, false},
			{4000, empty, false, ActPaste, false},
		}},
		{"turn start: an Enter long ago asks nothing", VerifySpec{TurnStartMS: 5000}, 6000, []step{{0, empty, false, ActPaste, false}}},
		{"a busy agent at the deadline is pasted into as before, marked busy", VerifySpec{TurnStartMS: 5000}, 100, []step{
			{0, busy, true, ActPaste, true},
		}},
		{"someone's text is refused at the deadline as before", VerifySpec{QuietMS: 2000}, 0, []step{
			{0, holds, false, ActWait, false},
			{100, holds, true, ActRefuseHuman, false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Profile{Name: "x", Kind: KindAgent, Input: &InputSpec{Prompt: "^> "}, Verify: tt.verify}
			start := time.Unix(1_800_000_000, 0)
			r := readiness{p: p}
			if tt.enteredMS > 0 {
				r.enteredAt = start.Add(-time.Duration(tt.enteredMS) * time.Millisecond)
			}
			for _, s := range tt.steps {
				dec := decideReady(p, s.in, s.deadline, &r, start.Add(time.Duration(s.at)*time.Millisecond))
				assert.Equal(t, s.want, dec.Action, "at %d ms: %s", s.at, dec.Evidence)
				assert.Equal(t, s.wantBusy, dec.Busy, "at %d ms: %s", s.at, dec.Evidence)
				if dec.Action == ActWait {
					assert.NotEmpty(t, dec.Evidence, "at %d ms: a wait says why", s.at)
				}
			}
		})
	}
}
