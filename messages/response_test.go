package messages

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFormatResponse(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{name: "trailing newline", body: "done\n", want: seedResponseHeader + "\ndone\n"},
		{name: "no trailing newline", body: "done", want: seedResponseHeader + "\ndone\n"},
		{name: "several trailing newlines", body: "done\n\n\n", want: seedResponseHeader + "\ndone\n"},
		{name: "empty", body: "", want: seedResponseHeader + "\n"},
		{name: "only newlines", body: "\n\n", want: seedResponseHeader + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, FormatResponse(Response{Header: seedResp, Body: tt.body}))
		})
	}
}

func TestParseResponse(t *testing.T) {
	delta := &Delta{Changes: []string{"auth.go", "auth_test.go"}, Risks: []string{}, Alternatives: []string{"keep sessions"}, NeedsConsult: true}
	tests := []struct {
		name      string
		in        string
		want      Response
		wantErr   string
		roundTrip bool
	}{
		{name: "seed form", in: seedResponseHeader + "\nAll tests pass.\n",
			want: Response{Header: seedResp, Body: "All tests pass.\n"}, roundTrip: true},
		{name: "no final newline", in: seedResponseHeader + "\nAll tests pass.",
			want: Response{Header: seedResp, Body: "All tests pass.\n"}},
		{name: "header only", in: seedResponseHeader,
			want: Response{Header: seedResp}},
		{name: "CRLF header", in: seedResponseHeader + "\r\nok\n",
			want: Response{Header: seedResp, Body: "ok\n"}},
		{name: "with DELTA", in: seedResponseHeader + "\nImplemented.\n\nDELTA:\n  changes: [auth.go, auth_test.go]\n  risks: []\n  alternatives: [keep sessions]\n  needs_consult: yes\n",
			want: Response{Header: seedResp, Body: "Implemented.\n\nDELTA:\n  changes: [auth.go, auth_test.go]\n  risks: []\n  alternatives: [keep sessions]\n  needs_consult: yes\n", Delta: delta}, roundTrip: true},
		{name: "malformed DELTA is not an error", in: seedResponseHeader + "\nDELTA:\n  changes: [...]\n  needs_consult: yes|no\n",
			want: Response{Header: seedResp, Body: "DELTA:\n  changes: [...]\n  needs_consult: yes|no\n"}, roundTrip: true},
		{name: "request header", in: seedRequestHeader + "\nbody\n", wantErr: "line 1: response header"},
		{name: "missing worker", in: "[WORKER RESPONSE id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6]\nx\n", wantErr: "missing worker="},
		{name: "blank line first", in: "\n" + seedResponseHeader + "\nx\n", wantErr: "line 1:"},
		{name: "empty", in: "", wantErr: "line 1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseResponse([]byte(tt.in))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrSyntax)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			if tt.roundTrip {
				assert.Equal(t, tt.in, FormatResponse(got), "the file is in canonical form")
			}
			again, err := ParseResponse([]byte(FormatResponse(got)))
			require.NoError(t, err)
			assert.Equal(t, got, again, "Format then Parse gives the same response")
		})
	}
}

func TestResponseRoundTrip(t *testing.T) {
	echo := seedResp
	echo.RequestBytes, echo.RequestSum = 84, "0123456789ab"
	for name, r := range map[string]Response{
		"seed header":       {Header: seedResp, Body: "ok\n"},
		"integrity echo":    {Header: echo, Body: "line\n\nanother\n"},
		"empty":             {Header: seedResp},
		"with delta":        {Header: seedResp, Body: "x\nDELTA:\n  changes: []\n  risks: []\n  alternatives: []\n  needs_consult: no\n", Delta: &Delta{Changes: []string{}, Risks: []string{}, Alternatives: []string{}}},
		"header lookalike":  {Header: seedResp, Body: seedResponseHeader + "\n"},
		"control bytes":     {Header: seedResp, Body: "\x1b[31mred\x1b[0m\r\n"},
		"leading blank row": {Header: seedResp, Body: "\nindented\n"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseResponse([]byte(FormatResponse(r)))
			require.NoError(t, err)
			assert.Equal(t, r, got)
		})
	}
}
