package messages

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var seedNote = Notification{StartedAt: "20260117-120000", Orchestrator: "%6", Worker: "%7", Path: seedResponsePath}

func TestNotificationString(t *testing.T) {
	assert.Equal(t, seedNotification, seedNote.String(), "seed section 4.2 byte for byte")
}

func TestFindNotification(t *testing.T) {
	other := Notification{StartedAt: "20260117-130000", Orchestrator: "%12", Worker: "%3", Path: "/tmp/worker-comm/20260117-130000-o12-w3/004-response.md"}
	tests := []struct {
		name    string
		in      string
		want    Notification
		wantErr string
	}{
		{name: "seed line", in: seedNotification, want: seedNote},
		{name: "with newline", in: seedNotification + "\n", want: seedNote},
		{name: "trailing CR", in: seedNotification + "\r", want: seedNote},
		{name: "CRLF screen", in: "line\r\n" + seedNotification + "\r\n> \r\n", want: seedNote},
		{name: "Claude Code prompt", in: "❯ " + seedNotification, want: seedNote},
		{name: "Claude Code screen", in: "● Sent the request to %7.\n\n❯ " + seedNotification + "\n────────────────\n❯ \n────────────────\n  ? for shortcuts\n", want: seedNote},
		{name: "Codex prompt", in: "› " + seedNotification + "\n", want: seedNote},
		{name: "Gemini prompt", in: " > " + seedNotification + "   \n", want: seedNote},
		{name: "ANSI colours around", in: "\x1b[2m❯ \x1b[0m\x1b[1;34m" + seedNotification + "\x1b[0m\x1b[K\n", want: seedNote},
		{name: "ANSI colours inside", in: "\x1b[1m[RESPONSE\x1b[0m started_at=20260117-120000 \x1b[33morchestrator=%6\x1b[39m worker=%7] \x1b[4m" + seedResponsePath + "\x1b[24m", want: seedNote},
		{name: "OSC title before", in: "\x1b]0;claude\x07" + seedNotification, want: seedNote},
		{name: "tab separated path", in: "[RESPONSE started_at=20260117-120000 orchestrator=%6 worker=%7]\t" + seedResponsePath, want: seedNote},
		{name: "respaced fields", in: "[RESPONSE  started_at=20260117-120000   orchestrator=%6 worker=%7]  " + seedResponsePath + "  ", want: seedNote},
		{name: "text after path", in: seedNotification + " (sent)", want: seedNote},
		{name: "two notifications, last wins", in: "❯ " + other.String() + "\n● ok\n❯ " + seedNotification + "\n", want: seedNote},
		{name: "two on one line, last wins", in: other.String() + " " + seedNotification, want: seedNote},
		{name: "instructions after the line", in: seedNotification + "\n[RESPONSE INSTRUCTIONS]\nResponse file: /tmp/x-response.md\n", want: seedNote},
		{name: "template after the line", in: seedNotification + "\n" + `"[RESPONSE started_at=<started_at> orchestrator=<orch_pane> worker=<worker_pane>] <response_file_path>"`, want: seedNote},
		{name: "unknown field ignored", in: "[RESPONSE started_at=20260117-120000 orchestrator=%6 worker=%7 id=20260117-120000-a1b2] " + seedResponsePath, want: seedNote},
		{name: "none", in: "❯ hello\n", wantErr: "no [RESPONSE ...] PATH line found"},
		{name: "empty", in: "", wantErr: "no [RESPONSE"},
		{name: "seed 4.2 template", in: "[RESPONSE started_at=YYYYMMDD-HHMMSS orchestrator=%N worker=%M] /tmp/worker-comm/...", wantErr: "stamp"},
		{name: "relative path", in: "[RESPONSE started_at=20260117-120000 orchestrator=%6 worker=%7] tmp/worker-comm/002-response.md", wantErr: "not absolute"},
		{name: "not a response file", in: "[RESPONSE started_at=20260117-120000 orchestrator=%6 worker=%7] /etc/shadow", wantErr: "-response.md"},
		{name: "dot dot", in: "[RESPONSE started_at=20260117-120000 orchestrator=%6 worker=%7] /tmp/worker-comm/../../root/002-response.md", wantErr: "not clean"},
		{name: "no path", in: "[RESPONSE started_at=20260117-120000 orchestrator=%6 worker=%7]", wantErr: "empty"},
		{name: "negative pane", in: "[RESPONSE started_at=20260117-120000 orchestrator=%-1 worker=%7] " + seedResponsePath, wantErr: "pane id"},
		{name: "missing worker", in: "[RESPONSE started_at=20260117-120000 orchestrator=%6] " + seedResponsePath, wantErr: "missing worker="},
		{name: "duplicate worker", in: "[RESPONSE started_at=20260117-120000 orchestrator=%6 worker=%7 worker=%8] " + seedResponsePath, wantErr: "twice"},
		{name: "no closing bracket", in: "[RESPONSE started_at=20260117-120000 orchestrator=%6 worker=%7 " + seedResponsePath, wantErr: "closing ]"},
		{name: "bracket on next line", in: "[RESPONSE started_at=20260117-120000 orchestrator=%6\nworker=%7] " + seedResponsePath, wantErr: "closing ]"},
		{name: "path cut by wrap", in: "[RESPONSE started_at=20260117-120000 orchestrator=%6 worker=%7] /tmp/worker-comm/20260117-120000-o6-w7/002-res\nponse.md", wantErr: "-response.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FindNotification(tt.in)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrSyntax)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			again, err := FindNotification(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, again, "round trip")
		})
	}
}

func TestFindNotificationNULInPath(t *testing.T) {
	// A NUL or other control byte in the path is stripped before matching (as a screen would
	// not show it); what remains must still be a valid path.
	got, err := FindNotification(strings.Replace(seedNotification, "002", "0\x0002", 1))
	require.NoError(t, err)
	assert.Equal(t, seedNote, got)
}

func TestValidResponsePath(t *testing.T) {
	for _, p := range []string{
		seedResponsePath,
		"/var/folders/xy/abc_1/T/wcomm-1000/20260117-120000-o6-w7/1000-response.md",
		"/home/ünïcode/worker-comm/x/002-response.md",
		"/tmp/a+b,c@d=e:f%g~h/002-response.md",
		"/tmp/TestSend_case(a)#01;&|*?[]{}'^<>/002-response.md", // literal inside double quotes
	} {
		assert.NoError(t, ValidResponsePath(p), p)
	}
	for _, p := range []string{
		"", "002-response.md", "./002-response.md", "/tmp/002-request.md", "/tmp//002-response.md",
		"/tmp/./002-response.md", "/tmp/../002-response.md", "/tmp/a b/002-response.md",
		"/tmp/a\"b/002-response.md", "/tmp/$HOME/002-response.md", "/tmp/`id`/002-response.md",
		"/tmp/a\\b/002-response.md", "/tmp/a!b/002-response.md", "/tmp/a\u00a0b/002-response.md",
		"/tmp/a\nb/002-response.md", "/tmp/a\x00b/002-response.md", "/tmp/\u202e/002-response.md",
		"/tmp/\ufffd/002-response.md", "/tmp/002-response.md/", "/tmp/a\tb/002-response.md",
	} {
		assert.ErrorIs(t, ValidResponsePath(p), ErrSyntax, "%q", p)
	}
}

func TestFindNotificationBounds(t *testing.T) {
	long := "/tmp/" + strings.Repeat("a", maxNotePath) + "/002-response.md"
	_, err := FindNotification("[RESPONSE started_at=20260117-120000 orchestrator=%6 worker=%7] " + long)
	assert.ErrorContains(t, err, "longer than")
	fit := "/" + strings.Repeat("a", maxNotePath-len("/-response.md")) + "-response.md"
	n, err := FindNotification("[RESPONSE started_at=20260117-120000 orchestrator=%6 worker=%7]" + fit)
	require.NoError(t, err)
	assert.Equal(t, fit, n.Path)
	again, err := FindNotification(n.String())
	require.NoError(t, err)
	assert.Equal(t, n, again)
	_, err = FindNotification("[RESPONSE started_at=20260117-120000 orchestrator=%6 worker=%7 x=" + strings.Repeat("y", maxNoteFields) + "] " + seedResponsePath)
	assert.ErrorContains(t, err, "no closing ]")
}
