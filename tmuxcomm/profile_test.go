package tmuxcomm

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

func TestProfilePasteForm(t *testing.T) {
	e := New("", nil)
	set := profile.Defaults()
	header := "[WORKER capability=READONLY id=20260101-000000-abcd started_at=20260101-000000 orchestrator=%1 worker=%2 bytes=3 sha256=abc]\n"
	line := func(n int) string { return strings.Repeat("x", n) + "\n" }
	big := header + strings.Repeat("a line of a big request\n", 100<<10/24)
	tests := []struct {
		name    string
		profile string
		request string
		form    string
	}{
		{"agent, small", "claude", header + "hello\n", fleet.FormPaste},
		{"agent, 100 KB is pasted whole", "claude", big, fleet.FormPaste},
		{"agent, above its bound", "codex", header + strings.Repeat("y\n", 70<<10), fleet.FormPointer},
		{"generic, 100 KB goes as a pointer", "generic", big, fleet.FormPointer},
		{"reader, line of 4095 bytes", "reader", header + line(4095), fleet.FormPaste},
		{"reader, line of 4096 bytes", "reader", header + line(4096), fleet.FormPointer},
		{"shell, always a comment", "shell", header + "echo hi\n", fleet.FormComment},
		{"no profile", "", header + "hello\n", fleet.FormPaste},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p *profile.Profile
			if tt.profile != "" {
				p = set.Lookup(tt.profile)
			}
			content, form := e.finder.PasteForm(tt.request, "/tmp/worker-comm/s/001-request.md", p)
			assert.Equal(t, tt.form, form)
			switch form {
			case fleet.FormPaste:
				assert.Equal(t, strings.TrimRight(messages.Sanitize(tt.request, true), "\n"), content)
			case fleet.FormPointer, fleet.FormComment:
				assert.NotContains(t, content, "\n")
				assert.Contains(t, content, "read it whole from /tmp/worker-comm/s/001-request.md and follow its [RESPONSE INSTRUCTIONS].")
				assert.Less(t, len(content), 600)
			}
			if form == fleet.FormComment {
				assert.True(t, strings.HasPrefix(content, "# [WORKER capability=READONLY"), content)
			}
		})
	}
}

func TestProfileShellLine(t *testing.T) {
	hostile := "[RESPONSE x] $(touch pwn) `id` a;b & c | d > e < f 'q' \"dq\" \\ !1 {a,b} (sub) ~ é \x1b[31m\n"
	got := fleet.ShellLine(hostile)
	assert.True(t, strings.HasPrefix(got, "# [RESPONSE x] "), got)
	for _, c := range got[2:] {
		assert.True(t, c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(" []%=/.,:_+@-", c),
			"character %q can do something in some shell: %s", c, got)
	}
	assert.Equal(t, "# [RESPONSE started_at=20260101-000000 orchestrator=%1 worker=%2] /tmp/worker-comm/x/002-response.md",
		fleet.ShellLine("[RESPONSE started_at=20260101-000000 orchestrator=%1 worker=%2] /tmp/worker-comm/x/002-response.md"),
		"a RESPONSE line goes through unchanged")
}

// TestVerifyDeliveryStates checks what the delivery log and the exchange say for each outcome of
// a fail-fast delivery (NoQueue): the states, their evidence, and send's error.
func TestVerifyDeliveryStates(t *testing.T) {
	tests := []struct {
		name      string
		result    paneops.DeliveryResult
		err       error
		wantState string
		status    string
		verified  bool
		evidence  string
		events    []string
	}{
		{"verified", paneops.DeliveryResult{Pasted: true, Submitted: true, Verified: true, Enters: 2, Evidence: "input box empty after Enter"}, nil,
			exchange.StateSubmitted, exchange.StatusPending, true, "input box empty after Enter", []string{exchange.StateWritten, exchange.StatePasted, exchange.StateSubmitted}},
		{"unverified", paneops.DeliveryResult{Pasted: true, Submitted: true, Enters: 1, Evidence: "cooked reader: Enter sent"}, nil,
			exchange.StateSubmitted, exchange.StatusPending, false, "cooked reader: Enter sent", []string{exchange.StateWritten, exchange.StatePasted, exchange.StateSubmitted}},
		{"someone's text in the box", paneops.DeliveryResult{Before: "input box holds \"ls\""}, fmt.Errorf("deliver: %w", paneops.ErrHumanInput),
			exchange.StateRefused, exchange.StatusUndelivered, false, "someone else's text", []string{exchange.StateWritten, exchange.StateRefused}},
		{"no box", paneops.DeliveryResult{}, fmt.Errorf("deliver: %w", paneops.ErrNotReady),
			exchange.StateRefused, exchange.StatusUndelivered, false, "not on screen", []string{exchange.StateWritten, exchange.StateRefused}},
		{"pasted, never submitted", paneops.DeliveryResult{Pasted: true, Enters: 3, Evidence: "input box still holds the message after 3 Enter(s)"},
			fmt.Errorf("deliver: %w", paneops.ErrNotSubmitted),
			exchange.StateUndelivered, exchange.StatusUndelivered, false, "after 3 Enter(s)", []string{exchange.StateWritten, exchange.StatePasted, exchange.StateUndelivered}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake("%1", "%2")
			f.Result = func(d paneops.Delivery) (paneops.DeliveryResult, error) {
				r := tt.result
				r.PastedAt, r.EnterAt = time.Now(), time.Now()
				return r, tt.err
			}
			e := newEngine(t, f, "%1")
			e.cfg.BusyWait, e.cfg.NoQueue = 3*time.Second, true
			x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("hello")})
			require.NotNil(t, x)
			if tt.err != nil {
				require.ErrorIs(t, err, store.ErrUndelivered)
				require.ErrorIs(t, err, tt.err)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.wantState, x.State)
			assert.Equal(t, tt.status, x.Status)
			assert.Equal(t, tt.verified, x.Verified)
			assert.Contains(t, x.Evidence, tt.evidence)
			assert.Equal(t, "generic", x.Profile, "no process table: the fake pane's command names no profile")
			var states []string
			for _, ev := range x.Events {
				states = append(states, ev.State)
			}
			assert.Equal(t, tt.events, states)
			d := f.Delivered()[0]
			assert.Equal(t, "generic", d.Profile.Name)
			assert.Equal(t, 3*time.Second, d.BusyWait)
		})
	}
}

func TestProfileSendForcedAgent(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	_, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("hi"), Agent: "robot"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "claude, codex")
	assert.Empty(t, f.Delivered())
	_, statErr := os.Stat(e.cfg.Root)
	assert.True(t, os.IsNotExist(statErr) || func() bool { ents, _ := os.ReadDir(e.cfg.Root); return len(ents) == 0 }(),
		"nothing is written for an unknown --agent")

	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("echo $(touch pwn)"), Agent: "shell"})
	require.NoError(t, err)
	assert.Equal(t, fleet.FormComment, x.Form)
	assert.Equal(t, "shell", x.Profile)
	d := f.Delivered()[0]
	assert.True(t, strings.HasPrefix(string(d.Content), "# [WORKER "), string(d.Content))
	assert.NotContains(t, string(d.Content), "$(")

	// A fake pane whose command is a shell, without a process table: the safe guess is a shell.
	f.PaneMap["%3"] = paneops.Pane{ID: "%3", Session: "s", PID: 1003, Command: "zsh"}
	x, err = e.Send(context.Background(), SendOptions{To: "%3", Body: []byte("rm -rf /")})
	require.NoError(t, err)
	assert.Equal(t, fleet.FormComment, x.Form)
}

func TestVerifyIntegrityMismatch(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("count the files in ./pkg")})
	require.NoError(t, err)
	assert.Equal(t, "ok", x.Integrity)

	// Someone edits the request after it was sent.
	data, err := os.ReadFile(x.RequestPath)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(x.RequestPath, []byte(strings.Replace(string(data), "./pkg", "/etc", 1)), 0o600))

	res, err := e.as("%2").Notify(context.Background(), NotifyOptions{Ref: x.ResponsePath, Body: []byte("12 files")})
	require.NoError(t, err)
	require.NotEmpty(t, res.Warnings)
	assert.Contains(t, res.Warnings[0], "integrity mismatch")
	assert.Contains(t, strings.Join(res.Warnings, "\n"), "changed after sending")

	line := messages.Notification{StartedAt: x.StartedAt, Orchestrator: "%1", Worker: "%2", Path: x.ResponsePath}.String()
	px, err := e.book.Parse(context.Background(), line)
	require.NoError(t, err)
	assert.Equal(t, "mismatch", px.Integrity)
	assert.Contains(t, strings.Join(px.Problems, "\n"), "changed after sending")
}
