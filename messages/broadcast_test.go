package messages

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBroadcastID(t *testing.T) {
	now := time.Date(2026, 1, 17, 12, 0, 0, 0, time.UTC)
	id, err := NewBroadcastID(now, bytes.NewReader([]byte{0x1a, 0x2b, 0x3c, 0x4d}))
	require.NoError(t, err)
	assert.Equal(t, "bc-20260117-120000-1a2b3c4d", id)
	assert.True(t, IsBroadcastID(id))
	assert.False(t, IsBroadcastID("20260117-120000-1a2b"))
	_, err = NewBroadcastID(now, bytes.NewReader([]byte{1, 2}))
	assert.Error(t, err, "two random bytes are not enough")

	tests := []struct {
		name    string
		in      string
		wantErr bool
	}{
		{name: "made", in: id},
		{name: "no prefix", in: "20260117-120000-1a2b3c4d", wantErr: true},
		{name: "4 hex", in: "bc-20260117-120000-1a2b", wantErr: true},
		{name: "9 hex", in: "bc-20260117-120000-1a2b3c4d5", wantErr: true},
		{name: "uppercase", in: "bc-20260117-120000-1A2B3C4D", wantErr: true},
		{name: "bad date", in: "bc-20261317-120000-1a2b3c4d", wantErr: true},
		{name: "slash", in: "bc-20260117-120000-1a2b/c4d", wantErr: true},
		{name: "dots", in: "bc-../../etc/passwd", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidBroadcastID(tt.in)
			if tt.wantErr {
				assert.ErrorIs(t, err, ErrSyntax)
				return
			}
			assert.NoError(t, err)
		})
	}
}

func TestSplitTargets(t *testing.T) {
	tests := []struct {
		name    string
		in      []string
		want    []string
		wantErr string
	}{
		{name: "one", in: []string{"codex"}, want: []string{"codex"}},
		{name: "repeated", in: []string{"%3", "codex"}, want: []string{"%3", "codex"}},
		{name: "commas", in: []string{"%3,codex,gpu1:%2"}, want: []string{"%3", "codex", "gpu1:%2"}},
		{name: "spaces around", in: []string{" %3 , @reviewers"}, want: []string{"%3", "@reviewers"}},
		{name: "mixed", in: []string{"%3,%4", "work:1.0"}, want: []string{"%3", "%4", "work:1.0"}},
		{name: "empty between", in: []string{"%3,,%4"}, wantErr: "empty target"},
		{name: "trailing comma", in: []string{"%3,"}, wantErr: "empty target"},
		{name: "empty", in: []string{""}, wantErr: "empty target"},
		{name: "inner space", in: []string{"my agent"}, wantErr: "space or a control"},
		{name: "control", in: []string{"a\x1b[2Jb"}, wantErr: "space or a control"},
		{name: "too many", in: []string{strings.Repeat("a,", maxTargets) + "a"}, wantErr: "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SplitTargets(tt.in)
			if tt.wantErr != "" {
				assert.ErrorIs(t, err, ErrSyntax)
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestValidGroupName(t *testing.T) {
	for _, ok := range []string{"reviewers", "gpu-team", "a", "0day", "team_2"} {
		assert.NoError(t, ValidGroupName(ok), ok)
	}
	for _, bad := range []string{"", "Reviewers", "-x", "_x", "a,b", "a:b", "@a", "a b", strings.Repeat("a", 65)} {
		assert.Error(t, ValidGroupName(bad), bad)
	}
	g, ok := GroupName("@reviewers")
	assert.True(t, ok)
	assert.Equal(t, "reviewers", g)
	_, ok = GroupName("codex")
	assert.False(t, ok)
}

func TestBroadcastMemberLabel(t *testing.T) {
	assert.Equal(t, "%3", BroadcastMember{Pane: "%3"}.Label())
	assert.Equal(t, "gpu1:%2", BroadcastMember{Pane: "%2", Host: "gpu1"}.Label())
}
