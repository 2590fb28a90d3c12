package messages

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Example lines quoted verbatim from the protocol's documentation: peers that speak it with plain
// tmux write exactly these, so wcomm must read and write them byte for byte.
const (
	seedRequestHeader  = "[WORKER capability=WRITABLE id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7]"
	seedResponseHeader = "[WORKER RESPONSE id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7]"
	seedNotification   = "[RESPONSE started_at=20260117-120000 orchestrator=%6 worker=%7] /tmp/worker-comm/20260117-120000-o6-w7/002-response.md"
	seedResponsePath   = "/tmp/worker-comm/20260117-120000-o6-w7/002-response.md"
)

var seedHeader = RequestHeader{
	Capability:   Writable,
	ID:           "20260117-120000-a1b2",
	StartedAt:    "20260117-120000",
	Orchestrator: "%6",
	Worker:       "%7",
	Bytes:        -1,
}

func TestParseRequestHeader(t *testing.T) {
	withSum := seedHeader
	withSum.Bytes, withSum.Sum = 84, "0123456789ab"
	readOnly := seedHeader
	readOnly.Capability = ReadOnly
	chained := withSum
	chained.Chain, chained.Depth = "20260117-115900-c0de", 3
	tests := []struct {
		name    string
		in      string
		want    RequestHeader
		wantErr string // part of the error text
	}{
		{name: "seed section 7", in: seedRequestHeader, want: seedHeader},
		{name: "seed READONLY", in: "[WORKER capability=READONLY id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7]", want: readOnly},
		{name: "wcomm integrity fields", in: seedRequestHeader[:len(seedRequestHeader)-1] + " bytes=84 sha256=0123456789ab]", want: withSum},
		{name: "chain fields", in: seedRequestHeader[:len(seedRequestHeader)-1] + " bytes=84 sha256=0123456789ab chain=20260117-115900-c0de depth=3]", want: chained},
		{name: "chain without depth", in: seedRequestHeader[:len(seedRequestHeader)-1] + " chain=20260117-115900-c0de]", wantErr: "together"},
		{name: "chain not an id", in: seedRequestHeader[:len(seedRequestHeader)-1] + " chain=../x depth=2]", wantErr: "chain="},
		{name: "depth 1 written", in: seedRequestHeader[:len(seedRequestHeader)-1] + " chain=20260117-115900-c0de depth=1]", wantErr: "depth 2 or more"},
		{name: "depth not a number", in: seedRequestHeader[:len(seedRequestHeader)-1] + " chain=20260117-115900-c0de depth=02]", wantErr: "depth="},
		{name: "any order", in: "[WORKER worker=%7 orchestrator=%6 started_at=20260117-120000 id=20260117-120000-a1b2 capability=WRITABLE]", want: seedHeader},
		{name: "lowercase capability", in: "[WORKER capability=writable id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7]", want: seedHeader},
		{name: "unknown key ignored", in: "[WORKER capability=WRITABLE id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7 future=x empty=]", want: seedHeader},
		{name: "seed template", in: "[WORKER capability=READONLY id=YYYYMMDD-HHMMSS-XXXX started_at=YYYYMMDD-HHMMSS orchestrator=%N worker=%M]", wantErr: "id"},
		{name: "missing worker", in: "[WORKER capability=WRITABLE id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6]", wantErr: "missing worker="},
		{name: "missing capability", in: "[WORKER id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7]", wantErr: "missing capability="},
		{name: "duplicate worker", in: "[WORKER capability=WRITABLE id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7 worker=%8]", wantErr: "twice"},
		{name: "duplicate unknown", in: "[WORKER capability=WRITABLE id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7 x=1 x=2]", wantErr: "twice"},
		{name: "bad id", in: "[WORKER capability=WRITABLE id=../../etc started_at=20260117-120000 orchestrator=%6 worker=%7]", wantErr: "id"},
		{name: "negative pane", in: "[WORKER capability=WRITABLE id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%-1 worker=%7]", wantErr: "pane id"},
		{name: "bad capability", in: "[WORKER capability=ROOT id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7]", wantErr: "capability"},
		{name: "bad stamp", in: "[WORKER capability=WRITABLE id=20260117-120000-a1b2 started_at=20260117-250000 orchestrator=%6 worker=%7]", wantErr: "stamp"},
		{name: "double space", in: "[WORKER capability=WRITABLE  id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7]", wantErr: "single spaces"},
		{name: "trailing space", in: "[WORKER capability=WRITABLE id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7 ]", wantErr: "single spaces"},
		{name: "no equals", in: "[WORKER capability=WRITABLE id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7 junk]", wantErr: "key=value"},
		{name: "empty key", in: "[WORKER capability=WRITABLE id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7 =x]", wantErr: "key=value"},
		{name: "no closing bracket", in: seedRequestHeader[:len(seedRequestHeader)-1], wantErr: "does not read"},
		{name: "text after bracket", in: seedRequestHeader + " x", wantErr: "does not read"},
		{name: "leading space", in: " " + seedRequestHeader, wantErr: "does not read"},
		{name: "response header", in: seedResponseHeader, wantErr: "key=value"},
		{name: "NUL", in: "[WORKER capability=WRITABLE id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7\x00]", wantErr: "control byte"},
		{name: "newline in field", in: "[WORKER capability=WRITABLE id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6\nworker=%7]", wantErr: "control byte"},
		{name: "ESC in field", in: "[WORKER capability=WRITABLE id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7 x=\x1b[2J]", wantErr: "control byte"},
		{name: "CR at end", in: seedRequestHeader + "\r", wantErr: "control byte"},
		{name: "bytes without sha256", in: seedRequestHeader[:len(seedRequestHeader)-1] + " bytes=84]", wantErr: "together"},
		{name: "sha256 without bytes", in: seedRequestHeader[:len(seedRequestHeader)-1] + " sha256=0123456789ab]", wantErr: "together"},
		{name: "negative bytes", in: seedRequestHeader[:len(seedRequestHeader)-1] + " bytes=-1 sha256=0123456789ab]", wantErr: "byte count"},
		{name: "bytes leading zero", in: seedRequestHeader[:len(seedRequestHeader)-1] + " bytes=084 sha256=0123456789ab]", wantErr: "byte count"},
		{name: "bytes huge", in: seedRequestHeader[:len(seedRequestHeader)-1] + " bytes=99999999999999999999 sha256=0123456789ab]", wantErr: "byte count"},
		{name: "short sum", in: seedRequestHeader[:len(seedRequestHeader)-1] + " bytes=84 sha256=0123]", wantErr: "sha256"},
		{name: "uppercase sum", in: seedRequestHeader[:len(seedRequestHeader)-1] + " bytes=84 sha256=0123456789AB]", wantErr: "sha256"},
		{name: "empty", in: "", wantErr: "does not read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRequestHeader(tt.in)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrSyntax)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.NotContains(t, err.Error(), "\x1b", "errors quote their input")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			again, err := ParseRequestHeader(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, again, "round trip")
		})
	}
}

func TestRequestHeaderString(t *testing.T) {
	assert.Equal(t, seedRequestHeader, seedHeader.String(), "the seed's header byte for byte")
	h := seedHeader
	h.Bytes, h.Sum = 0, "e3b0c44298fc"
	assert.Equal(t, seedRequestHeader[:len(seedRequestHeader)-1]+" bytes=0 sha256=e3b0c44298fc]", h.String())
	h.Chain, h.Depth = "20260117-115900-c0de", 2
	assert.Equal(t, seedRequestHeader[:len(seedRequestHeader)-1]+" bytes=0 sha256=e3b0c44298fc chain=20260117-115900-c0de depth=2]", h.String())
	assert.Equal(t, "20260117-115900-c0de", h.ChainID())
	assert.Equal(t, 2, h.ChainDepth())
	assert.Equal(t, seedHeader.ID, seedHeader.ChainID(), "a request without a chain begins its own")
	assert.Equal(t, 1, seedHeader.ChainDepth())
}

func TestBodySum(t *testing.T) {
	n, sum := BodySum(nil)
	assert.Equal(t, 0, n)
	assert.Equal(t, "e3b0c44298fc", sum, "SHA-256 of nothing")
	n, sum = BodySum([]byte("abc"))
	assert.Equal(t, 3, n)
	assert.Equal(t, "ba7816bf8f01", sum, "SHA-256 of abc")
}

var seedResp = ResponseHeader{
	ID:           "20260117-120000-a1b2",
	StartedAt:    "20260117-120000",
	Orchestrator: "%6",
	Worker:       "%7",
	RequestBytes: -1,
}

func TestParseResponseHeader(t *testing.T) {
	withSum := seedResp
	withSum.RequestBytes, withSum.RequestSum = 10, "abcdefabcdef"
	tests := []struct {
		name    string
		in      string
		want    ResponseHeader
		wantErr string
	}{
		{name: "seed form", in: seedResponseHeader, want: seedResp},
		{name: "wcomm integrity echo", in: "[WORKER RESPONSE id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7 bytes=10 sha256=abcdefabcdef]", want: withSum},
		{name: "any order and capability ignored", in: "[WORKER RESPONSE worker=%7 capability=READONLY id=20260117-120000-a1b2 orchestrator=%6 started_at=20260117-120000]", want: seedResp},
		{name: "seed template", in: "[WORKER RESPONSE id=... started_at=... orchestrator=%N worker=%M]", wantErr: "id"},
		{name: "missing id", in: "[WORKER RESPONSE started_at=20260117-120000 orchestrator=%6 worker=%7]", wantErr: "missing id="},
		{name: "missing started_at", in: "[WORKER RESPONSE id=20260117-120000-a1b2 orchestrator=%6 worker=%7]", wantErr: "missing started_at="},
		{name: "duplicate id", in: "[WORKER RESPONSE id=20260117-120000-a1b2 id=20260117-120000-ffff started_at=20260117-120000 orchestrator=%6 worker=%7]", wantErr: "twice"},
		{name: "request header", in: seedRequestHeader, wantErr: "does not read"},
		{name: "bad pane", in: "[WORKER RESPONSE id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=7]", wantErr: "pane id"},
		{name: "newline", in: "[WORKER RESPONSE id=20260117-120000-a1b2 started_at=20260117-120000\norchestrator=%6 worker=%7]", wantErr: "control byte"},
		{name: "lowercase prefix", in: "[worker response id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7]", wantErr: "does not read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseResponseHeader(tt.in)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrSyntax)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			again, err := ParseResponseHeader(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, again, "round trip")
		})
	}
	assert.Equal(t, seedResponseHeader, seedResp.String(), "the seed's header byte for byte")
}
