package paneops

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		stderr string
		want   error
	}{
		{"stale socket", "no server running on /tmp/wc123/s\n", ErrNoServer},
		{"missing socket", "error connecting to /tmp/wc123/s (No such file or directory)\n", ErrNoServer},
		{"server crashed", "server exited unexpectedly\n", ErrNoServer},
		{"lost server", "lost server\n", ErrNoServer},
		{"unknown pane id", "can't find pane: %999\n", ErrPaneNotFound},
		{"unknown pane index", "can't find pane: 7\n", ErrPaneNotFound},
		{"unknown window", "can't find window: 9\n", ErrTargetNotFound},
		{"unknown session", "can't find session: work\n", ErrTargetNotFound},
		{"no current session", "no current session\n", ErrTargetNotFound},
		{"paste of a missing buffer", "no buffer wcomm-1-2-abcd\n", ErrNoBuffer},
		{"delete of a missing buffer", "unknown buffer: wcomm-1-2-abcd\n", ErrNoBuffer},
		{"tmux binary missing", `exec: "tmux": executable file not found in $PATH`, ErrNoTmux},
		{"unknown command", "unknown command: frobnicate\n", nil},
		{"command too long", "command too long\n", nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, classify(tt.stderr))
		})
	}
}

func TestErrorMessageAndUnwrap(t *testing.T) {
	cause := errors.New("exit status 1")
	e := NewError([]string{"tmux", "-S", "/tmp/x/s", "display-message", "-p", "-t", "%9", "#{pane_id}"}, 1,
		"can't find pane: %9\n", cause)
	require.ErrorIs(t, e, ErrPaneNotFound)
	assert.Equal(t, 1, e.ExitCode)
	assert.Equal(t,
		`tmux display-message: can't find pane: %9; run 'tmux list-panes -a' to see which panes exist`, e.Error())
	assert.NotContains(t, e.Error(), "#{pane_id}", "no raw command line in a message")

	unknown := NewError([]string{"tmux", "frob"}, 1, "unknown command: frob\n", cause)
	assert.ErrorIs(t, unknown, cause, "an unclassified failure unwraps to the exec error")
	assert.Equal(t, "tmux frob: unknown command: frob (exit status 1)", unknown.Error())

	long := NewError(append([]string{"tmux", "load-buffer"}, strings.Repeat("x", 300)), 1, "boom\n", cause)
	assert.Less(t, len(long.Error()), 160, "the argv is shortened: what tmux said matters, not a 600-character command")
}

func TestRunWithoutTmux(t *testing.T) {
	c := &Client{Bin: "/nonexistent/wcomm-test/tmux"}
	_, err := c.Run(context.Background(), nil, "list-panes")
	require.ErrorIs(t, err, ErrNoTmux)
	var te *Error
	require.ErrorAs(t, err, &te)
	assert.Equal(t, []string{"/nonexistent/wcomm-test/tmux", "-u", "list-panes"}, te.Argv)
	assert.Contains(t, err.Error(), "install tmux")

	c = &Client{Bin: "wcomm-test-no-such-tmux-binary"}
	_, err = c.Run(context.Background(), nil, "list-panes")
	require.ErrorIs(t, err, ErrNoTmux)
	assert.ErrorIs(t, err, exec.ErrNotFound)
}

func TestClientArgv(t *testing.T) {
	tests := []struct {
		name   string
		client Client
		want   []string
	}{
		{"default server", Client{}, []string{"tmux", "-u", "list-panes"}},
		{"socket path", Client{Server: Server{Socket: "/tmp/wc1/s"}}, []string{"tmux", "-u", "-S", "/tmp/wc1/s", "list-panes"}},
		{"socket name", Client{Server: Server{Name: "work"}}, []string{"tmux", "-u", "-L", "work", "list-panes"}},
		{"both and a binary", Client{Bin: "/opt/tmux", Server: Server{Socket: "/s", Name: "n"}},
			[]string{"/opt/tmux", "-u", "-L", "n", "-S", "/s", "list-panes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.client.argv([]string{"list-panes"}))
		})
	}
}
