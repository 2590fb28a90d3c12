package cli

import (
	"flag"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/resident"
)

// TestScanHandingKnowsTheFlags: the scan of a handed command's words knows each boolean flag of
// the command's flag set, so that it never reads the word after one as its value.
func TestScanHandingKnowsTheFlags(t *testing.T) {
	for name := range resident.Handed {
		fs, _, _ := (&cli{}).flagSet(commands[name])
		var got []string
		fs.VisitAll(func(f *flag.Flag) {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() && f.Name != "help" && f.Name != "h" {
				got = append(got, f.Name)
			}
		})
		var want []string
		for f := range handBools[name] {
			want = append(want, f)
		}
		sort.Strings(got)
		sort.Strings(want)
		assert.Equal(t, got, want, "the boolean flags of %s", name)
	}
}

// TestScanHandingReadsAsTheFlagSet: for words the flag set takes, the scan reads what hand needs
// (the message's file or stdin, the targets, a resend) and the server and root flags as the flag
// set does; words it leaves to the flag set (help, a flag without its value, a bad boolean) are
// left, whatever the flag set makes of them.
func TestScanHandingReadsAsTheFlagSet(t *testing.T) {
	cases := []struct {
		name string
		args string
		left bool // the scan leaves these words to the flag set
	}{
		{"send", "--to %1 --file msg.md --wait --timeout 60s", false},
		{"send", "--to=%1 -", false},
		{"send", "-L work --root /tmp/r --to %1 --from %0 --enter-delay 0 --wait --file -", false},
		{"send", "--json --to box:%1 hello", false},
		{"send", "--to a --to b:%2 hi", false},
		{"send", "--wait=false --first --to x -- -", false},
		{"send", "hello --to %1 -S /tmp/sock there", false},
		{"send", "--resend 20260101-120000-abcd", false},
		{"send", "--file=- --no-queue --all", false},
		{"send", "--to %1 --file", true},
		{"send", "--help --to %1", true},
		{"send", "-h", true},
		{"send", "--wait=maybe --to %1", true},
		{"send", "---to %1", true},
		{"notify", "--response /tmp/r/s/001-response.md --enter-delay 0 --json --file -", false},
		{"notify", "--id 20260101-120000-abcd - --raw", false},
		{"notify", "--root=/tmp/r2 -L x done", false},
		{"await", "20260101-120000-abcd --timeout 5m --json", false},
		{"await", "-", false},
		{"await", "--timeout", true},
	}
	for _, tc := range cases {
		args := strings.Fields(tc.args)
		h, name, path, root, ok := scanHanding(tc.name, args)
		if tc.left {
			assert.False(t, ok, "%s %s", tc.name, tc.args)
			continue
		}
		require.True(t, ok, "%s %s", tc.name, tc.args)
		c := &cli{}
		fs, _, _ := c.flagSet(commands[tc.name])
		pos, err := parseInterleaved(fs, args)
		require.NoError(t, err, "%s %s", tc.name, tc.args)
		want := handingOf(fs, pos)
		assert.Equal(t, want.file, h.file, "file: %s %s", tc.name, tc.args)
		assert.Equal(t, want.dash, h.dash, "stdin: %s %s", tc.name, tc.args)
		assert.Equal(t, want.resend, h.resend, "resend: %s %s", tc.name, tc.args)
		assert.Equal(t, want.reachesHost(), h.reachesHost(), "another host: %s %s", tc.name, tc.args)
		assert.Equal(t, strings.Join(want.to, ","), strings.Join(h.to, ","), "targets: %s %s", tc.name, tc.args)
		assert.Equal(t, []string{c.socketName, c.socketPath, c.root}, []string{name, path, root}, "server and root: %s %s", tc.name, tc.args)
	}
}
