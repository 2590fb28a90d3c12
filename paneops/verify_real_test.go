package paneops

// End-to-end tests of the screen checks around a delivery: a real private tmux server and
// testdata/fakeagent.py, an input box drawn the way Claude Code draws it, read with the claude
// profile. The real TUIs are tested in internal/cli/agents_e2e_test.go (build tag agents).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/profile"
)

// fakeAgent is one fakeagent.py pane and its log.
type fakeAgent struct {
	s    *testServer
	pane messages.PaneID
	log  string
}

// startFake opens fakeagent.py with the given options and waits until it has drawn.
func (s *testServer) startFake(opts ...string) fakeAgent {
	s.t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "fakeagent.py"))
	require.NoError(s.t, err)
	s.recs++
	log := filepath.Join(s.dir, fmt.Sprintf("fake-%d.jsonl", s.recs))
	pane := s.newWindow(append([]string{pythonBin(s.t), script, log}, opts...)...)
	waitFor(s.t, 10*time.Second, func() bool {
		out, err := s.c.Capture(context.Background(), pane, 0)
		return err == nil && (strings.Contains(out, "❯") || strings.Contains(out, "starting"))
	})
	return fakeAgent{s: s, pane: pane, log: log}
}

// records returns the fake agent's log entries.
func (f fakeAgent) records() []map[string]string {
	f.s.t.Helper()
	file, err := os.Open(f.log)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(f.s.t, err)
	defer file.Close()
	var out []map[string]string
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		var m map[string]string
		require.NoError(f.s.t, json.Unmarshal(sc.Bytes(), &m))
		out = append(out, m)
	}
	return out
}

// screen returns the fake agent's visible screen.
func (f fakeAgent) screen() string {
	f.s.t.Helper()
	out, err := f.s.c.Capture(context.Background(), f.pane, 0)
	require.NoError(f.s.t, err)
	return out
}

// agentDelivery is a delivery with the claude profile.
func (f fakeAgent) delivery(content string, busyWait time.Duration) Delivery {
	d := f.s.delivery(f.pane, content, true)
	d.Profile = profile.Defaults().Lookup("claude")
	d.BusyWait = busyWait
	return d
}

// noKeys asserts that neither Escape nor Ctrl-C ever reached the agent.
func noKeys(t *testing.T, recs []map[string]string) {
	t.Helper()
	for _, r := range recs {
		assert.Empty(t, r["key"], "wcomm sent %s to an agent", r["key"])
	}
}

func TestVerifyRealSubmits(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tests := []struct {
		name       string
		opts       []string
		content    string
		wantEnters int
	}{
		{"ready agent", nil, "one line for a ready agent", 1},
		{"fresh agent swallows the first Enter", []string{"--swallow", "1"}, "one line for a fresh agent", 2},
		{"swallows two", []string{"--swallow", "2"}, "swallowed twice", 3},
		{"collapsed multi-line paste", []string{"--swallow", "1"}, "first line\nsecond line\nthird line", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := s.startFake(tt.opts...)
			res, err := s.c.Deliver(context.Background(), f.delivery(tt.content, 5*time.Second))
			require.NoError(t, err)
			assert.True(t, res.Pasted)
			assert.True(t, res.Submitted)
			assert.True(t, res.Verified, "evidence: %s", res.Evidence)
			assert.Equal(t, tt.wantEnters, res.Enters)
			assert.Equal(t, "claude", res.Profile)
			assert.Equal(t, "input box empty", res.Before)
			assert.Contains(t, res.Evidence, "input box empty after Enter")
			assert.Positive(t, res.ShownAfter, "the paste was seen in the box before Enter")
			recs := f.records()
			assert.Equal(t, []map[string]string{{"pasted": tt.content}, {"submitted": tt.content}}, recs, "pasted once, submitted once")
			noKeys(t, recs)
		})
	}
}

func TestVerifyRealNeverSubmitted(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	f := s.startFake("--never")
	res, err := s.c.Deliver(context.Background(), f.delivery("a message the agent never takes", 5*time.Second))
	require.ErrorIs(t, err, ErrNotSubmitted)
	windows := len(profile.Defaults().Lookup("claude").Verify.WindowsMS)
	assert.Contains(t, err.Error(), fmt.Sprintf("after %d Enter(s)", windows))
	assert.Contains(t, err.Error(), "press Enter there or clear it")
	assert.True(t, res.Pasted)
	assert.False(t, res.Submitted)
	assert.Equal(t, windows, res.Enters, "bounded: one Enter per watch window")
	recs := f.records()
	assert.Equal(t, []map[string]string{{"pasted": "a message the agent never takes"}}, recs)
	noKeys(t, recs)
	assert.Contains(t, f.screen(), "❯\u00a0a message the agent never takes", "the text stays where it was")
}

func TestVerifyRealHumanText(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	f := s.startFake()
	s.tmux("send-keys", "-t", string(f.pane), "-l", "half typed by a human")
	waitFor(t, 10*time.Second, func() bool { return strings.Contains(f.screen(), "half typed by a human") })
	before := f.screen()

	res, err := s.c.Deliver(context.Background(), f.delivery("must not be pasted", 300*time.Millisecond))
	require.ErrorIs(t, err, ErrHumanInput)
	assert.Contains(t, err.Error(), `"half typed by a human"`)
	assert.Contains(t, err.Error(), "nothing was pasted")
	assert.False(t, res.Pasted)
	assert.Zero(t, res.Enters)
	assert.Empty(t, res.Buffer, "no buffer was even loaded")
	assert.Empty(t, f.records(), "nothing reached the agent")
	assert.Equal(t, before, f.screen(), "the screen is untouched")

	// The person finishes: once the box is empty again, the next delivery goes through.
	s.tmux("send-keys", "-t", string(f.pane), "Enter")
	res, err = s.c.Deliver(context.Background(), f.delivery("now it may be pasted", 5*time.Second))
	require.NoError(t, err)
	assert.True(t, res.Verified)
	assert.Equal(t, []map[string]string{{"submitted": "half typed by a human"}, {"pasted": "now it may be pasted"},
		{"submitted": "now it may be pasted"}}, f.records())
}

func TestVerifyRealBusyAndNotReady(t *testing.T) {
	t.Parallel()
	s := startServer(t)

	t.Run("busy agent is waited for", func(t *testing.T) {
		f := s.startFake("--busy", "1.5")
		res, err := s.c.Deliver(context.Background(), f.delivery("after the turn", 20*time.Second))
		require.NoError(t, err)
		assert.Equal(t, "input box empty", res.Before, "pasted once the agent was idle")
		assert.Positive(t, res.Waited)
		assert.Equal(t, []map[string]string{{"pasted": "after the turn"}, {"submitted": "after the turn"}}, f.records())
	})
	t.Run("busy past the bound: pasted, it queues", func(t *testing.T) {
		f := s.startFake("--busy", "60")
		res, err := s.c.Deliver(context.Background(), f.delivery("queued", 200*time.Millisecond))
		require.NoError(t, err)
		assert.Contains(t, res.Before, "queues")
		assert.Contains(t, res.Evidence, "agent busy")
	})
	t.Run("no input box yet", func(t *testing.T) {
		f := s.startFake("--nobox", "60")
		res, err := s.c.Deliver(context.Background(), f.delivery("too early", 300*time.Millisecond))
		require.ErrorIs(t, err, ErrNotReady)
		assert.Contains(t, err.Error(), "name the agent whose profile delivers to it")
		var nn *NotNowError
		require.ErrorAs(t, err, &nn)
		assert.False(t, res.Pasted)
		assert.Empty(t, f.records())
	})
	t.Run("box appears within the bound", func(t *testing.T) {
		f := s.startFake("--nobox", "1")
		res, err := s.c.Deliver(context.Background(), f.delivery("once ready", 20*time.Second))
		require.NoError(t, err)
		assert.True(t, res.Verified)
		assert.Equal(t, []map[string]string{{"pasted": "once ready"}, {"submitted": "once ready"}}, f.records())
	})
}

func TestVerifyRealScreen(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	f := s.startFake()
	sc, err := s.c.Screen(context.Background(), f.pane)
	require.NoError(t, err)
	in := profile.Defaults().Lookup("claude").Inspect(sc)
	assert.True(t, in.Empty(), "%+v", in)
	w, err := s.c.Run(context.Background(), nil, "display-message", "-p", "-t", string(f.pane), "#{pane_width}")
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(w), strconv.Itoa(sc.Width), "the capture says the pane's width")
	_, err = s.c.Screen(context.Background(), "%999")
	assert.ErrorIs(t, err, ErrPaneNotFound)
}

// An agent whose event loop was held up reads the paste and the Enter in one go and takes the
// Enter as part of the paste: the paste shows in its box only after the Enter, not submitted.
// The delivery watches the box past that Enter instead of taking the empty box for a
// submission, and presses Enter again once the paste shows.
func TestVerifyRealLatePaste(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	f := s.startFake("--late-paste")
	const msg = "a message read late"
	res, err := s.c.Deliver(context.Background(), f.delivery(msg, 5*time.Second))
	require.NoError(t, err)
	assert.True(t, res.Submitted)
	assert.True(t, res.Verified, "evidence: %s", res.Evidence)
	assert.Equal(t, 2, res.Enters, "the Enter taken into the paste, then the one that submitted it")
	recs := f.records()
	assert.Equal(t, []map[string]string{{"pasted": msg}, {"submitted": msg}}, recs, "pasted once, submitted once")
	noKeys(t, recs)
}

// With RedrawBeforeRetry (Gemini CLI's profile), Enter is pressed again only once the screen
// changed after the last one: an agent that took an Enter as a newline redrew, and gets its
// second Enter; one that never redraws gets no second Enter, and the delivery says it was not
// submitted.
func TestVerifyRealRedrawBeforeRetry(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	set, err := profile.Load([]byte(`{"profiles": [{"name": "claude", "verify": {"windows_ms": [300, 600, 900], "redraw_before_retry": true}}]}`))
	require.NoError(t, err)
	redraw := func(f fakeAgent, msg string) Delivery {
		d := f.delivery(msg, 5*time.Second)
		d.Profile = set.Lookup("claude")
		return d
	}

	f := s.startFake("--newline-first")
	res, err := s.c.Deliver(context.Background(), redraw(f, "a line taken as a newline first"))
	require.NoError(t, err)
	assert.True(t, res.Verified, "evidence: %s", res.Evidence)
	assert.Equal(t, 2, res.Enters)
	recs := f.records()
	require.Len(t, recs, 2, "%v", recs)
	assert.Equal(t, "a line taken as a newline first\n", recs[1]["submitted"], "submitted once")

	f = s.startFake("--never")
	res, err = s.c.Deliver(context.Background(), redraw(f, "never taken, never redrawn"))
	require.ErrorIs(t, err, ErrNotSubmitted)
	assert.Contains(t, err.Error(), "has not redrawn since the Enter")
	assert.Equal(t, 1, res.Enters, "no Enter again on a screen that did not change")
	assert.Equal(t, []map[string]string{{"pasted": "never taken, never redrawn"}}, f.records())
}
