package paneops

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
)

// line joins fields with the format's separator.
func line(fields ...string) string { return strings.Join(fields, "\t") }

func TestParsePane(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    Pane
		wantErr string
	}{
		{
			name: "live pane",
			line: line("%7", "work", "1", "0", "4242", "claude", "✳ Claude Code", "/dev/pts/3",
				"0", "0", "0", "1", "120", "40", `"bash -c \"claude; sleep 1\""`),
			want: Pane{ID: "%7", Session: "work", Window: 1, Index: 0, PID: 4242, Command: "claude",
				Title: "✳ Claude Code", TTY: "/dev/pts/3", Active: true, Width: 120, Height: 40,
				StartedWith: `"bash -c \"claude; sleep 1\""`},
		},
		{
			name: "dead pane in copy mode with input off and empty fields",
			line: line("%0", "a b", "0", "2", "1", "", "", "/dev/pts/0", "1", "1", "1", "0", "80", "24", ""),
			want: Pane{ID: "%0", Session: "a b", Index: 2, PID: 1, TTY: "/dev/pts/0",
				Dead: true, InMode: true, InputOff: true, Width: 80, Height: 24},
		},
		{
			name:    "too few fields",
			line:    line("%7", "work", "1"),
			wantErr: "3 tab-separated fields, want 15",
		},
		{
			name:    "a tab in a field shifts everything",
			line:    line("%7", "work", "1", "0", "4242", "cl\taude", "t", "/dev/pts/3", "0", "0", "0", "1", "120", "40", ""),
			wantErr: "16 tab-separated fields, want 15",
		},
		{
			name:    "bad numbers and flags",
			line:    line("%7", "work", "x", "0", "4242", "c", "t", "/dev/pts/3", "2", "0", "0", "1", "120", "40", ""),
			wantErr: `window index "x" is not a number`,
		},
		{
			name:    "bad pane id",
			line:    line("7", "work", "1", "0", "4242", "c", "t", "/dev/pts/3", "0", "0", "0", "1", "120", "40", ""),
			wantErr: `invalid pane id "7"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePane(tt.line)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParsePanes(t *testing.T) {
	l1 := line("%1", "s", "0", "0", "10", "bash", "h", "/dev/pts/1", "0", "0", "0", "1", "80", "24", "")
	l2 := line("%2", "s", "1", "0", "11", "cat", "h", "/dev/pts/2", "0", "0", "0", "1", "80", "24", "cat")
	got, err := parsePanes(l1 + "\n" + l2 + "\n")
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, messages.PaneID("%2"), got[1].ID)
	assert.Equal(t, "s:1.0", got[1].Target())

	got, err = parsePanes("")
	require.NoError(t, err)
	assert.Empty(t, got)

	_, err = parsePanes(l1 + "\ngarbage\n")
	assert.Error(t, err)
}

func TestPaneFormatHasOneFieldPerParsedField(t *testing.T) {
	// The clean patterns hold tabs of their own; fields are separated by "}<TAB>#{".
	assert.Equal(t, len(paneFields)-1, strings.Count(paneFormat, "}\t#{"))
	assert.Equal(t, "#{s/[\t\n]/ /:pane_title}", clean("pane_title"))
}

func TestParseServerInfo(t *testing.T) {
	got, err := parseServerInfo("4959\t1795306024\t3.3a\t/tmp/wc1/s\n")
	require.NoError(t, err)
	assert.Equal(t, ServerInfo{PID: 4959, StartTime: 1795306024, Version: "3.3a", Socket: "/tmp/wc1/s"}, got)
	assert.Equal(t, "4959-1795306024", got.Key())

	for _, bad := range []string{"", "4959\t1795306024\t3.3a", "x\t1\t3.3a\t/s", "0\t1\t3.3a\t/s"} {
		_, err := parseServerInfo(bad)
		assert.Error(t, err, "%q", bad)
	}
}

func TestPanesArgs(t *testing.T) {
	f := paneFormat
	tests := []struct {
		name    string
		scope   Scope
		want    []string
		wantErr bool
	}{
		{"all", Scope{All: true, Session: "ignored", Self: "%3"}, []string{"list-panes", "-a", "-F", f}, false},
		{"named session", Scope{Session: "work", Self: "%3"}, []string{"list-panes", "-s", "-t", "work", "-F", f}, false},
		{"own session", Scope{Self: "%3"}, []string{"list-panes", "-s", "-t", "%3", "-F", f}, false},
		{"tmux default", Scope{}, []string{"list-panes", "-s", "-F", f}, false},
		{"bad self", Scope{Self: "3"}, nil, true},
		{"session ending in a separator", Scope{Session: "work;"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := panesArgs(tt.scope)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestPaneNum(t *testing.T) {
	tests := []struct {
		id   string
		want int
		ok   bool
	}{
		{"%0", 0, true},
		{"%7", 7, true},
		{"%123456789", 123456789, true},
		{"%1234567890", 0, false},
		{"7", 0, false},
		{"%", 0, false},
		{"%-1", 0, false},
		{"%+1", 0, false},
		{"%1a", 0, false},
		{"%1;", 0, false},
		{"", 0, false},
		{"%٣", 0, false}, // a non-ASCII digit
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			n, err := paneNum(messages.PaneID(tt.id))
			if !tt.ok {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, n)
		})
	}
}

func TestCheckTarget(t *testing.T) {
	for _, ok := range []string{"%7", "work", "work:1.0", "=work:1", "-weird"} {
		assert.NoError(t, checkTarget(ok), ok)
	}
	for _, bad := range []string{"", "work;", "a\nb", "x\x1b"} {
		assert.Error(t, checkTarget(bad), "%q", bad)
	}
}

func TestTrimBlankLines(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"\n\n\n", ""},
		{"a\n\n  \n\n", "a\n"},
		{"a\n\nb  \n   \n", "a\n\nb  \n"},
		{"  x\ny", "  x\ny\n"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, trimBlankLines(tt.in), "%q", tt.in)
	}
}

func FuzzParsePane(f *testing.F) {
	f.Add(line("%7", "work", "1", "0", "4242", "claude", "t", "/dev/pts/3", "0", "0", "0", "1", "120", "40", ""))
	f.Add("garbage")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parsePane(s)
		if err != nil {
			return
		}
		// Whatever parses has a valid id and round-trips through the format's shape.
		_, idErr := paneNum(p.ID)
		assert.NoError(t, idErr)
		assert.Len(t, strings.Split(s, "\t"), len(paneFields))
	})
}
