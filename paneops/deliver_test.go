package paneops

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/profile"
)

func TestGuardArgs(t *testing.T) {
	tests := []struct {
		name   string
		pane   string
		buffer string
		mark   string
		want   []string
	}{
		{
			name: "marked: the pane records the paste in the same call", pane: "%3", buffer: "wcomm-7-2-00ff00ff", mark: "m-1a2b",
			want: []string{
				"load-buffer", "-b", "wcomm-7-2-00ff00ff", "-", ";",
				"if-shell", "-F", "-t", "%3", "#{||:#{pane_dead},#{pane_input_off}}",
				"delete-buffer -b wcomm-7-2-00ff00ff ; display -p wcomm-refused-wcomm-7-2-00ff00ff",
				"copy-mode -q -t %3 ; paste-buffer -d -p -b wcomm-7-2-00ff00ff -t %3 ; set-environment -g -h WCOMM_PASTED_3 m-1a2b",
			},
		},
		{
			name: "the guarded call", pane: "%7", buffer: "wcomm-42-1-0a1b2c3d",
			want: []string{
				"load-buffer", "-b", "wcomm-42-1-0a1b2c3d", "-", ";",
				"if-shell", "-F", "-t", "%7", "#{||:#{pane_dead},#{pane_input_off}}",
				"delete-buffer -b wcomm-42-1-0a1b2c3d ; display -p wcomm-refused-wcomm-42-1-0a1b2c3d",
				"copy-mode -q -t %7 ; paste-buffer -d -p -b wcomm-42-1-0a1b2c3d -t %7",
			},
		},
		{
			name: "pane zero", pane: "%0", buffer: "wcomm-1-99-ffffffff",
			want: []string{
				"load-buffer", "-b", "wcomm-1-99-ffffffff", "-", ";",
				"if-shell", "-F", "-t", "%0", "#{||:#{pane_dead},#{pane_input_off}}",
				"delete-buffer -b wcomm-1-99-ffffffff ; display -p wcomm-refused-wcomm-1-99-ffffffff",
				"copy-mode -q -t %0 ; paste-buffer -d -p -b wcomm-1-99-ffffffff -t %0",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := guardArgs(messages.PaneID(tt.pane), tt.buffer, tt.mark, false)
			assert.Equal(t, tt.want, got)
			// Only the lone ";" separates commands: no other argument may end in one, or tmux
			// would split it too (measured on tmux 3.3a).
			for i, a := range got {
				if a != ";" {
					assert.False(t, strings.HasSuffix(a, ";"), "argument %d %q ends in ';'", i, a)
				}
			}
		})
	}
	guard := []string{"if-shell", "-F", "-t", "%7", "#{||:#{pane_dead},#{pane_input_off}}", "display -p wcomm-enter-refused"}
	// Not strict: a pane in copy mode is taken out of it in the Enter's own call, as the paste did.
	assert.Equal(t, append(guard, "copy-mode -q -t %7 ; send-keys -t %7 Enter"), enterArgs("%7", false, "", false, ""))
	assert.Equal(t, append(guard, `copy-mode -q -t %7 ; send-keys -t %7 -l "\r"`), enterArgs("%7", true, "", false, ""))
	assert.Equal(t, append(guard, "copy-mode -q -t %7 ; send-keys -t %7 Enter ; set-environment -g -h WCOMM_ENTERED_7 m-1"), enterArgs("%7", false, "m-1", false, ""))
	// Strict: tmux refuses the Enter into a pane in a mode, and says so ("-mode").
	assert.Equal(t, []string{"if-shell", "-F", "-t", "%7", "#{||:#{pane_dead},#{||:#{pane_input_off},#{pane_in_mode}}}",
		"display -p -t %7 'wcomm-enter-refused#{?#{||:#{pane_dead},#{pane_input_off}},,#{?#{pane_in_mode},-mode,}}'",
		"send-keys -t %7 Enter ; set-environment -g -h WCOMM_ENTERED_7 m-1"}, enterArgs("%7", false, "m-1", true, ""))
	strictExpect := enterArgs("%7", false, "", true, "321-12")
	assert.Equal(t, "#{||:#{||:#{pane_dead},#{||:#{pane_input_off},#{pane_in_mode}}},#{!=:#{pane_pid}-#{pid},321-12}}", strictExpect[4])
	for _, bad := range []string{"", "M-1", "a;b", "a b", "a\nb", strings.Repeat("a", 65)} {
		assert.False(t, validMark(bad), "%q", bad)
	}
	assert.True(t, validMark("1732512000123456789-0a1b"))
}

func TestStrictGuardRefusesCopyModeInTheSameCall(t *testing.T) {
	got := guardArgs("%4", "wcomm-9-1-0a0b0c0d", "m-1", true)
	assert.Equal(t, []string{
		"load-buffer", "-b", "wcomm-9-1-0a0b0c0d", "-", ";",
		"if-shell", "-F", "-t", "%4", "#{||:#{pane_dead},#{||:#{pane_input_off},#{pane_in_mode}}}",
		"delete-buffer -b wcomm-9-1-0a0b0c0d ; display -p -t %4 'wcomm-refused-wcomm-9-1-0a0b0c0d-#{pane_dead}#{pane_input_off}#{pane_in_mode}'",
		"copy-mode -q -t %4 ; paste-buffer -d -p -b wcomm-9-1-0a0b0c0d -t %4 ; set-environment -g -h WCOMM_PASTED_4 m-1",
	}, got)
	const buf = "wcomm-9-1-0a0b0c0d"
	for _, tt := range []struct {
		out                   string
		refused, inMode, okay bool
	}{
		{"", false, false, true},
		{"\n", false, false, true},
		{"wcomm-refused-" + buf + "\n", true, false, true},
		{"wcomm-refused-" + buf + "-001\n", true, true, true},
		{"wcomm-refused-" + buf + "-101\n", true, false, true}, // dead wins over copy mode
		{"wcomm-refused-" + buf + "-010\n", true, false, true},
		{"wcomm-refused-" + buf + "-01\n", false, false, false},
		{"wcomm-refused-wcomm-9-1-ffffffff-001\n", false, false, false}, // another buffer's
		{"hello\n", false, false, false},
	} {
		refused, inMode, ok := refusal(tt.out, buf)
		assert.Equal(t, []bool{tt.refused, tt.inMode, tt.okay}, []bool{refused, inMode, ok}, "%q", tt.out)
	}
}

// TestStrictGuardChecksTheExpectedIdentity: with the pane's and the server's pids expected, the
// same call refuses a pane whose process or server is another, and says so in a fourth digit.
func TestStrictGuardChecksTheExpectedIdentity(t *testing.T) {
	const buf = "wcomm-9-1-0a0b0c0d"
	got := guardArgsEnter("%4", buf, "m-1", true, false, Identity{PanePID: 321, ServerPID: 12}.guardValue())
	assert.Equal(t, []string{
		"load-buffer", "-b", buf, "-", ";",
		"if-shell", "-F", "-t", "%4", "#{||:#{||:#{pane_dead},#{||:#{pane_input_off},#{pane_in_mode}}},#{!=:#{pane_pid}-#{pid},321-12}}",
		"delete-buffer -b " + buf + " ; display -p -t %4 'wcomm-refused-" + buf + "-#{pane_dead}#{pane_input_off}#{pane_in_mode}#{==:#{pane_pid}-#{pid},321-12}'",
		"copy-mode -q -t %4 ; paste-buffer -d -p -b " + buf + " -t %4 ; set-environment -g -h WCOMM_PASTED_4 m-1",
	}, got)
	assert.Equal(t, "", Identity{PanePID: 321}.guardValue(), "half an identity checks nothing")
	assert.Equal(t, guardArgs("%4", buf, "m-1", true), guardArgsEnter("%4", buf, "m-1", true, false, ""))
	for _, tt := range []struct {
		out                            string
		refused, inMode, changed, okay bool
	}{
		{"", false, false, false, true},
		{"wcomm-refused-" + buf + "-0011\n", true, true, false, true},  // copy mode, same pane
		{"wcomm-refused-" + buf + "-0000\n", true, false, true, true},  // another pane process or server
		{"wcomm-refused-" + buf + "-0010\n", true, false, true, true},  // changed comes before copy mode
		{"wcomm-refused-" + buf + "-1000\n", true, false, false, true}, // dead comes first
		{"wcomm-refused-" + buf + "-00x1\n", false, false, false, false},
		{"wcomm-refused-" + buf + "-00001\n", false, false, false, false},
	} {
		refused, inMode, changed, ok := refusalOf(tt.out, buf)
		assert.Equal(t, []bool{tt.refused, tt.inMode, tt.changed, tt.okay}, []bool{refused, inMode, changed, ok}, "%q", tt.out)
	}
}

func TestEnterGoesWithThePasteOnlyForACookedReaderWithoutDelay(t *testing.T) {
	got := guardArgsEnter("%4", "wcomm-9-1-0a0b0c0d", "m-1", true, true, "")
	assert.Equal(t, "copy-mode -q -t %4 ; paste-buffer -d -p -b wcomm-9-1-0a0b0c0d -t %4"+
		" ; send-keys -t %4 Enter ; set-environment -g -h WCOMM_ENTERED_4 m-1", got[len(got)-1], "one option: the Enter's mark says the paste was made")
	set := profile.Defaults()
	reader, shell, generic := set.Lookup("reader"), set.Lookup("shell"), set.Lookup("generic")
	require.NotNil(t, reader)
	require.NotNil(t, generic)
	require.NotNil(t, shell)
	d := Delivery{Submit: true, Profile: reader}
	assert.True(t, enterWithPaste(d, 0))
	assert.False(t, enterWithPaste(d, time.Millisecond), "a delay asked for keeps its own call")
	noSubmit := d
	noSubmit.Submit = false
	assert.False(t, enterWithPaste(noSubmit, 0))
	literal := d
	literal.LiteralEnter = true
	assert.False(t, enterWithPaste(literal, 0))
	for _, p := range []*profile.Profile{shell, generic, set.Lookup("claude"), nil} {
		o := d
		o.Profile = p
		assert.False(t, enterWithPaste(o, 0), "%v reads raw keys or is unknown", p)
	}
}

func TestNewBufferName(t *testing.T) {
	re := regexp.MustCompile(`^wcomm-` + strconv.Itoa(os.Getpid()) + `-[0-9]+-[0-9a-f]{8}$`)
	seen := map[string]bool{}
	for range 1000 {
		name := newBufferName()
		require.Regexp(t, re, name)
		require.False(t, seen[name], "duplicate buffer name %s", name)
		seen[name] = true
	}
	// The name is spliced into tmux command strings: nothing but [A-Za-z0-9-].
	assert.Regexp(t, `^[A-Za-z0-9-]+$`, refusedMark(newBufferName()))
}

func TestDeliverRefusesBadInputBeforeTmux(t *testing.T) {
	// A binary that does not exist proves that no tmux call was attempted: it would fail with ErrNoTmux.
	c := &Client{Bin: "/nonexistent/wcomm-test/tmux"}
	dir := t.TempDir()
	tests := []struct {
		name string
		d    Delivery
		want string
	}{
		{"empty content", Delivery{Pane: "%1", LockDir: dir, LockKey: "1-2"}, "content is empty"},
		{"bad pane id", Delivery{Pane: "1", Content: []byte("x"), LockDir: dir, LockKey: "1-2"}, "invalid pane id"},
		{"bad lock key", Delivery{Pane: "%1", Content: []byte("x"), LockDir: dir, LockKey: "../x"}, "invalid lock key"},
		{"no lock dir", Delivery{Pane: "%1", Content: []byte("x"), LockKey: "1-2"}, "no lock folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Deliver(context.Background(), tt.d)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotErrorIs(t, err, ErrNoTmux)
			assert.False(t, res.Pasted)
		})
	}
}

// A paste or an Enter through a kept-open client sets no pane option and one record: its fence
// token goes in the value of its mark's record, not in a record of its own; a call without a
// mark records the token in its own record. Every pane option set makes tmux recompute every
// window's size and redraw every attached client.
func TestFencedCallsSetOneRecordAndNoOption(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"paste", guardArgs("%4", "wcomm-9-1-0a0b0c0d", "m-1", true), "set-environment -g -h WCOMM_PASTED_4 m-1.tok"},
		{"paste and Enter", guardArgsEnter("%4", "wcomm-9-1-0a0b0c0d", "m-1", true, true, ""), "set-environment -g -h WCOMM_ENTERED_4 m-1.tok"},
		{"Enter", enterArgs("%4", false, "m-1", true, ""), "set-environment -g -h WCOMM_ENTERED_4 m-1.tok"},
		{"Enter, stamped", withEnterStamp(enterArgs("%4", false, "m-1", true, ""), "%4", time.UnixMilli(5)), "set-environment -g -h WCOMM_ENTERED_4 m-1.tok ; set-option -p -t %4 @wcomm-entered-at 5"},
		{"no mark", guardArgs("%4", "wcomm-9-1-0a0b0c0d", "", true), "set-environment -g -h WCOMM_OP_4 tok"},
	} {
		got := fenced(tt.args, "%4", "tok")
		do := got[len(got)-1]
		assert.True(t, strings.HasSuffix(do, tt.want), "%s: %q", tt.name, do)
		sets := strings.Count(do, "set-option")
		if strings.Contains(tt.name, "stamped") {
			sets-- // the time of the Enter, for the profiles that ask for it
		}
		assert.Equal(t, 0, sets, "%s: no pane option set: %q", tt.name, do)
		assert.Equal(t, 1, strings.Count(do, "set-environment"), "%s: one record: %q", tt.name, do)
		assert.Contains(t, strings.Join(got, " "), "#{@wcomm-x-tok}", tt.name)
	}
	assert.Equal(t, "m-1", markOf("m-1.wcomm-9-1-0a0b0c0d-e1"))
	assert.Equal(t, "m-1", markOf("m-1"))
}
