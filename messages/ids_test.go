package messages

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePaneID(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    PaneID
		wantNum int
		wantErr bool
	}{
		{name: "seed orchestrator", in: "%6", want: "%6", wantNum: 6},
		{name: "seed worker", in: "%7", want: "%7", wantNum: 7},
		{name: "zero", in: "%0", want: "%0", wantNum: 0},
		{name: "nine digits", in: "%123456789", want: "%123456789", wantNum: 123456789},
		{name: "ten digits", in: "%1234567890", wantErr: true},
		{name: "negative", in: "%-1", wantErr: true},
		{name: "plus sign", in: "%+1", wantErr: true},
		{name: "leading zero", in: "%07", wantErr: true},
		{name: "no percent", in: "7", wantErr: true},
		{name: "percent only", in: "%", wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "trailing text", in: "%7x", wantErr: true},
		{name: "space", in: "% 7", wantErr: true},
		{name: "trailing newline", in: "%7\n", wantErr: true},
		{name: "NUL", in: "%7\x00", wantErr: true},
		{name: "session:window.pane target", in: "work:1.2", wantErr: true},
		{name: "unicode digit", in: "%٣", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePaneID(tt.in)
			if tt.wantErr {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrSyntax)
				assert.Contains(t, err.Error(), "pane id")
				assert.Equal(t, -1, PaneID(tt.in).Num())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantNum, got.Num())
		})
	}
}

func TestValidStamp(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr bool
	}{
		{name: "seed started_at", in: "20260117-120000"},
		{name: "seed folder stamp", in: "20260117-155000"},
		{name: "leap day", in: "20240229-235959"},
		{name: "no leap day", in: "20250229-120000", wantErr: true},
		{name: "month 13", in: "20261317-120000", wantErr: true},
		{name: "day 32", in: "20260132-120000", wantErr: true},
		{name: "hour 24", in: "20260117-240000", wantErr: true},
		{name: "second 60", in: "20260117-120060", wantErr: true},
		{name: "template", in: "YYYYMMDD-HHMMSS", wantErr: true},
		{name: "short", in: "20260117-12000", wantErr: true},
		{name: "long", in: "20260117-1200000", wantErr: true},
		{name: "no dash", in: "20260117_120000", wantErr: true},
		{name: "sign inside", in: "2026+117-120000", wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "path", in: "../../../etc/pa", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidStamp(tt.in)
			if tt.wantErr {
				assert.ErrorIs(t, err, ErrSyntax)
				return
			}
			assert.NoError(t, err)
		})
	}
}

func TestValidID(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr bool
	}{
		{name: "seed id", in: "20260117-120000-a1b2"},
		{name: "16 hex", in: "20260117-120000-0123456789abcdef"},
		{name: "17 hex", in: "20260117-120000-0123456789abcdef0", wantErr: true},
		{name: "3 hex", in: "20260117-120000-a1b", wantErr: true},
		{name: "uppercase hex", in: "20260117-120000-A1B2", wantErr: true},
		{name: "template", in: "YYYYMMDD-HHMMSS-XXXX", wantErr: true},
		{name: "bad date", in: "20261317-120000-a1b2", wantErr: true},
		{name: "no dash", in: "20260117-120000a1b2", wantErr: true},
		{name: "slash", in: "20260117-120000-a1/2", wantErr: true},
		{name: "dots", in: "20260117-120000-..", wantErr: true},
		{name: "semicolon for tmux", in: "20260117-120000-a1b2;", wantErr: true},
		{name: "newline", in: "20260117-120000-a1b2\n", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidID(tt.in)
			if tt.wantErr {
				assert.ErrorIs(t, err, ErrSyntax)
				return
			}
			assert.NoError(t, err)
		})
	}
}

func TestNewID(t *testing.T) {
	now := time.Date(2026, 1, 17, 12, 0, 0, 0, time.FixedZone("X", 9*3600))
	id, err := NewID(now, bytes.NewReader([]byte{0xa1, 0xb2, 0xff}))
	require.NoError(t, err)
	assert.Equal(t, "20260117-120000-a1b2", id)
	assert.NoError(t, ValidID(id))

	_, err = NewID(now, bytes.NewReader([]byte{1}))
	assert.Error(t, err, "one random byte is not enough")

	boom := errors.New("boom")
	_, err = NewID(now, iotest.ErrReader(boom))
	assert.ErrorIs(t, err, boom)

	_, err = NewID(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), bytes.NewReader([]byte{1, 2}))
	assert.ErrorIs(t, err, ErrSyntax, "a five-digit year makes no valid id")
}

func TestParseCapability(t *testing.T) {
	tests := []struct {
		in      string
		want    Capability
		wantErr bool
	}{
		{in: "READONLY", want: ReadOnly},
		{in: "WRITABLE", want: Writable},
		{in: "readonly", want: ReadOnly},
		{in: "Writable", want: Writable},
		{in: "WRITEABLE", wantErr: true},
		{in: "READ ONLY", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseCapability(tt.in)
			if tt.wantErr {
				assert.ErrorIs(t, err, ErrSyntax)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSessionName(t *testing.T) {
	s := Session{StartedAt: "20260117-155000", Orchestrator: "%6", Worker: "%7"}
	assert.Equal(t, "20260117-155000-o6-w7", s.Name(), "seed 3.1 example")
	assert.Equal(t, "msg-o6-w7", s.BufferName(), "seed 3.2 buffer name")
	big := Session{StartedAt: "20260117-120000", Orchestrator: "%123", Worker: "%0"}
	assert.Equal(t, "20260117-120000-o123-w0", big.Name())
	assert.Equal(t, "msg-o123-w0", big.BufferName())
}

func TestParseSessionName(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Session
		wantErr bool
	}{
		{name: "seed example", in: "20260117-155000-o6-w7", want: Session{StartedAt: "20260117-155000", Orchestrator: "%6", Worker: "%7"}},
		{name: "seed section 7", in: "20260117-120000-o6-w7", want: Session{StartedAt: "20260117-120000", Orchestrator: "%6", Worker: "%7"}},
		{name: "big panes", in: "20260117-120000-o123456789-w0", want: Session{StartedAt: "20260117-120000", Orchestrator: "%123456789", Worker: "%0"}},
		{name: "dot dot", in: "..", wantErr: true},
		{name: "dot dot inside", in: "20260117-155000-o6-w7/..", wantErr: true},
		{name: "traversal", in: "../20260117-155000-o6-w7", wantErr: true},
		{name: "slash", in: "20260117-155000-o6-w7/x", wantErr: true},
		{name: "suffix", in: "20260117-155000-o6-w7-old", wantErr: true},
		{name: "suffix md", in: "20260117-155000-o6-w7.md", wantErr: true},
		{name: "negative pane", in: "20260117-155000-o-1-w7", wantErr: true},
		{name: "percent", in: "20260117-155000-o%6-w%7", wantErr: true},
		{name: "leading zero", in: "20260117-155000-o06-w7", wantErr: true},
		{name: "no worker", in: "20260117-155000-o6", wantErr: true},
		{name: "no orchestrator", in: "20260117-155000-w7", wantErr: true},
		{name: "bad stamp", in: "20261317-155000-o6-w7", wantErr: true},
		{name: "newline", in: "20260117-155000-o6-w7\n", wantErr: true},
		{name: "NUL", in: "20260117-155000-o6-w\x007", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSessionName(tt.in)
			if tt.wantErr {
				assert.ErrorIs(t, err, ErrSyntax)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.in, got.Name(), "round trip")
		})
	}
}

func TestSeqFileName(t *testing.T) {
	tests := []struct {
		n    int
		k    Kind
		want string
	}{
		{n: 1, k: KindRequest, want: "001-request.md"},
		{n: 2, k: KindResponse, want: "002-response.md"},
		{n: 42, k: KindRequest, want: "042-request.md"},
		{n: 999, k: KindResponse, want: "999-response.md"},
		{n: 1000, k: KindRequest, want: "1000-request.md"},
		{n: 123456, k: KindResponse, want: "123456-response.md"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := SeqFileName(tt.n, tt.k)
			assert.Equal(t, tt.want, got)
			n, k, ok := ParseSeqFileName(got)
			require.True(t, ok)
			assert.Equal(t, tt.n, n)
			assert.Equal(t, tt.k, k)
		})
	}
}

func TestParseSeqFileNameRefuses(t *testing.T) {
	for _, in := range []string{
		"", "000-request.md", "01-request.md", "1-request.md", "0001-request.md",
		"001-request.txt", "001-question.md", "001-request.md.tmp", ".001-request.md",
		"001-request", "abc-request.md", "-01-request.md", "+01-request.md", "001_request.md",
		"001-Request.md", "001-request.md/", "../001-request.md", "99999999999999999999-request.md",
		"001-response.md\n", "001-response.md\x00",
	} {
		t.Run(in, func(t *testing.T) {
			_, _, ok := ParseSeqFileName(in)
			assert.False(t, ok)
		})
	}
}

// ParseSeqFileName takes exactly SeqFileName's spelling of each number, padded or not, and
// nothing else.
func TestParseSeqFileNameIsSeqFileName(t *testing.T) {
	for n := 0; n <= 12000; n += 1 + n/50 {
		for _, k := range []Kind{KindRequest, KindResponse} {
			for _, num := range []string{strconv.Itoa(n), fmt.Sprintf("%03d", n), fmt.Sprintf("%04d", n), fmt.Sprintf("%05d", n), "0" + strconv.Itoa(n)} {
				name := num + "-" + string(k) + ".md"
				got, kind, ok := ParseSeqFileName(name)
				want := n >= 1 && SeqFileName(n, k) == name
				if ok != want || (ok && (got != n || kind != k)) {
					t.Fatalf("ParseSeqFileName(%q) = %d, %q, %v; want ok %v", name, got, kind, ok, want)
				}
			}
		}
	}
}
