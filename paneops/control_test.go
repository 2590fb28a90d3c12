package paneops

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/tmuxtest"
	"github.com/wcomm/wcomm/messages"
)

func TestControlLines(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"one command", []string{"list-panes", "-t", "%1"}, []string{`"list-panes" "-t" "%1"`}},
		{"a list", []string{"display-message", "-p", "x", ";", "capture-pane", "-p"},
			[]string{`"display-message" "-p" "x"`, `"capture-pane" "-p"`}},
		{"escapes", []string{"a\tb\nc", `q"\$x`, "\x1emark"}, []string{`"a\011b\012c" "q\"\\\$x" "\036mark"`}},
		{"a home folder stays a word", []string{"~/x", "a~b"}, []string{`"\176/x" "a\176b"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := controlLines(tt.args)
			require.True(t, ok)
			assert.Equal(t, tt.want, got)
		})
	}
	_, ok := controlLines([]string{";"})
	assert.False(t, ok, "an empty list")
}

// TestRealControl reads through a control client what a client per call reads, and sees the
// errors a client per call sees.
func TestRealControl(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := context.Background()
	// Rows that imitate control mode's own lines are rows like any other.
	p := s.newWindow("bash", "-c", `printf '%%begin 1 2 1\n%%end 1 2 1\n%%error 3 4 1\n\036wcomm-end 00\nlast ; row\n'; exec sleep 300`)
	waitFor(t, 10*time.Second, func() bool {
		out, err := s.c.Capture(ctx, p, 0)
		return err == nil && strings.Contains(out, "last ; row")
	})
	ctl := s.c.Control("main")
	defer ctl.Close()
	cl := ctl.Client()

	info, err := cl.ServerInfo(ctx)
	require.NoError(t, err)
	want, err := s.c.ServerInfo(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, info)

	// An argument reaches tmux as the argv form carries it: no home folder, variable or quote
	// is expanded, no ";" splits it.
	odd := "~/x $HOME \"q\" 'a' \\ ; \ttab"
	got, err := cl.Run(ctx, nil, "display-message", "-p", odd)
	require.NoError(t, err)
	wantOdd, err := s.c.Run(ctx, nil, "display-message", "-p", odd)
	require.NoError(t, err)
	assert.Equal(t, wantOdd, got)

	clients := s.tmux("list-clients", "-F", "#{client_flags}")
	assert.Contains(t, clients, "control-mode")
	assert.Contains(t, clients, "read-only")
	assert.Contains(t, clients, "ignore-size")
	assert.Contains(t, clients, "no-output")

	panes, err := cl.Panes(ctx, Scope{Session: "main"})
	require.NoError(t, err)
	wantPanes, err := s.c.Panes(ctx, Scope{Session: "main"})
	require.NoError(t, err)
	assert.Equal(t, wantPanes, panes)

	sp, sigs, err := cl.PanesSigs(ctx, Scope{Session: "main"})
	require.NoError(t, err)
	assert.Equal(t, wantPanes, sp, "the same panes, with their signatures")
	require.Len(t, sigs, len(sp))
	for i, sg := range sigs {
		assert.Equal(t, sp[i].Width, sg.Width)
		assert.Positive(t, sg.Activity, "window_activity is a time")
	}

	ids := []messages.PaneID{"%0", p}
	screens, err := cl.Screens(ctx, ids)
	require.NoError(t, err)
	wantScreens, err := s.c.Screens(ctx, ids)
	require.NoError(t, err)
	assert.Equal(t, wantScreens, screens)
	var rows []string
	for _, l := range screens[p].Lines {
		rows = append(rows, l.Text)
	}
	assert.Contains(t, strings.Join(rows, "\n"), "%begin 1 2 1\n%end 1 2 1\n%error 3 4 1\nwcomm-end 00\nlast ; row") // tmux keeps no C0 byte in a row

	_, err = cl.Pane(ctx, "%999")
	require.ErrorIs(t, err, ErrPaneNotFound)
	var te *Error
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 1, te.ExitCode)
	assert.Contains(t, te.Stderr, "%999")
	// The client is still in step after an error.
	again, err := cl.Panes(ctx, Scope{Session: "main"})
	require.NoError(t, err)
	assert.Equal(t, wantPanes, again)

	require.NoError(t, ctl.Close())
	waitFor(t, 10*time.Second, func() bool {
		return strings.TrimSpace(s.tmux("list-clients", "-F", "#{client_flags}")) == ""
	})
	// Closed, it falls back on a client per call.
	after, err := cl.Panes(ctx, Scope{Session: "main"})
	require.NoError(t, err)
	assert.Equal(t, wantPanes, after)
}

// TestRealControlSessionGone: the session the control client is attached to closes; the next
// reads fall back on a client per call and still answer.
func TestRealControlSessionGone(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := context.Background()
	s.tmux("new-session", "-d", "-s", "other", "sleep", "300")
	ctl := s.c.Control("other")
	defer ctl.Close()
	cl := ctl.Client()
	// First a call through the control client. Once, under the whole suite's load, the first
	// call left none attached: a start that fails is answered by a client of the call's own and
	// tried again after controlRetry, so the calls go on until the control client is attached.
	waitFor(t, 3*controlRetry, func() bool {
		_, err := cl.Panes(ctx, Scope{All: true})
		require.NoError(t, err)
		return strings.Contains(s.tmux("list-clients", "-F", "#{client_flags}"), "control-mode")
	})
	s.tmux("kill-session", "-t", "other")
	waitFor(t, 10*time.Second, func() bool {
		return strings.TrimSpace(s.tmux("list-clients", "-F", "#{client_flags}")) == ""
	})
	panes, err := cl.Panes(ctx, Scope{All: true})
	require.NoError(t, err)
	want, err := s.c.Panes(ctx, Scope{All: true})
	require.NoError(t, err)
	assert.Equal(t, want, panes)
}

// TestRealControlSetBufferBytes: a message's text set in a buffer on the control client's own line
// (as the resident hands tmux a paste's text) comes back byte for byte, every byte but NUL and
// 0xff (which tmux's parser cannot take: the resident sends those texts by a file), and no part
// of it runs as a command of its own, whatever quotes, separators or escapes it holds.
func TestRealControlSetBufferBytes(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := context.Background()
	ctl := s.c.Control("main")
	defer ctl.Close()
	cl := ctl.Client()
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")

	var every []byte
	for b := 1; b < 0xff; b++ {
		every = append(every, byte(b))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 64<<10)
	for i := range random {
		random[i] = byte(1 + rng.IntN(0xfe))
	}
	texts := []string{
		string(every),
		strings.Repeat(string(every), 3) + "\n",
		string(random),
		`"; run-shell "touch ` + mark + `" ; "`,
		`'; run-shell 'touch ` + mark + `' ; '`,
		"x\" ; run-shell \"touch " + mark + "\"\nrun-shell \"touch " + mark + "\"\n",
		"ends in a backslash \\",
		"\\\n; run-shell \"touch " + mark + "\" \\",
		"~/x ~ $HOME ${HOME} #{pane_id} #(touch " + mark + ") %begin 1 2 1\n%end 1 2 1\n",
		"\x1b[31mred\x1b[0m \r\n\t\x7f é✓ \x80\xfe",
	}
	for i, text := range texts {
		name := fmt.Sprintf("wcomm-bytes-%d", i)
		_, err := cl.Run(ctx, nil, "set-buffer", "-b", name, text)
		require.NoError(t, err, "text %d", i)
		out := filepath.Join(dir, name)
		_, err = cl.Run(ctx, nil, "save-buffer", "-b", name, out)
		require.NoError(t, err, "text %d", i)
		// tmux has its client write the file, which it may finish after the command's answer:
		// the file is read once it holds as many bytes as the text, or after a deadline.
		var got []byte
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			got, err = os.ReadFile(out)
			if err == nil && len(got) >= len(text) || time.Now().After(deadline) {
				break
			}
		}
		require.NoError(t, err)
		assert.Equal(t, []byte(text), got, "text %d comes back as given", i)
		_, err = cl.Run(ctx, nil, "delete-buffer", "-b", name)
		require.NoError(t, err)
	}
	_, err := os.Stat(mark)
	assert.True(t, os.IsNotExist(err), "a part of a text ran as a command")
	assert.Contains(t, s.tmux("list-clients", "-F", "#{client_flags}"), "control-mode", "the texts went by the control client")
}

// TestRealControlKilledWithItsProcess: the process that keeps a control client is killed (-9)
// just after it started it, again and again: the tmux server lives on. tmux 3.3a's server crashes
// when a control client is killed before it has been made one (control_stop on a state never
// made), which a client set to die with its parent did at once.
func TestRealControlKilledWithItsProcess(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for i := range 40 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "WCOMM_TEST_HOLD_CONTROL="+s.c.Server.Socket)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		line, err := bufio.NewReader(out).ReadString('\n')
		require.NoError(t, err, "the holder's word")
		require.Equal(t, "started\n", line)
		// A spread of moments within the client's first milliseconds, where the crash lies:
		// this wait places the kill, it does not wait for anything to happen.
		time.Sleep(time.Duration(i%8) * 250 * time.Microsecond)
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
		_, err = s.c.Run(context.Background(), nil, "has-session", "-t", "main")
		require.NoError(t, err, "the tmux server lives after kill %d", i+1)
	}
}

// TestRealControlStartsNoServer: a control client asked for a server that is not running starts
// none (attach-session would, and that server would read the user's tmux config first): the call
// fails as it does without a server, and nothing answers on the socket afterwards, a missing one
// or one left by a server that ended.
func TestRealControlStartsNoServer(t *testing.T) {
	t.Parallel()
	bin := tmuxtest.Require(t)
	dir := t.TempDir()
	stale := filepath.Join(dir, "stale")
	l, err := net.Listen("unix", stale)
	require.NoError(t, err)
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	require.NoError(t, l.Close())
	for _, sock := range []string{filepath.Join(dir, "none"), stale} {
		ctl := (&Client{Bin: bin, Server: Server{Socket: sock}}).ControlTyping("")
		_, err := ctl.Client().ServerInfo(context.Background())
		require.ErrorIs(t, err, ErrNoServer, sock)
		require.NoError(t, ctl.Close())
		_, err = net.Dial("unix", sock)
		require.Error(t, err, "no server was started on %s", sock)
	}
	_, err = os.Lstat(filepath.Join(dir, "none"))
	assert.ErrorIs(t, err, os.ErrNotExist, "no socket was made")
}
