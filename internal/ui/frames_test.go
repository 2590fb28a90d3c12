package ui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFramesFindTheTicker: the console stops Bubble Tea's frame ticker while idle, found by its
// name in the Program; an upgrade that renames it must be seen here, not as a console that
// quietly wakes 20 times a second again.
func TestFramesFindTheTicker(t *testing.T) {
	require.True(t, tickerField(), "tea.Program has no frame ticker named ticker of type *time.Ticker")
	assert.Nil(t, programTicker(tea.NewProgram(nil)), "read before the renderer starts: still unset")
	var f *frames
	assert.NotPanics(t, f.busy, "a console run without frames (a test's model) has none to stop")
}

// TestFramesStopWhenIdleAndStartAgain: the frame ticker stops once no message came for
// idleAfter, and the next message starts it again.
func TestFramesStopWhenIdleAndStartAgain(t *testing.T) {
	tk := time.NewTicker(10 * time.Millisecond)
	defer tk.Stop()
	f := &frames{p: tea.NewProgram(nil), every: 10 * time.Millisecond, looked: true, t: tk}
	stopped := func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.stopped
	}
	f.busy()
	deadline := time.Now().Add(10 * time.Second)
	for !stopped() {
		require.True(t, time.Now().Before(deadline), "the frames never stopped")
		time.Sleep(5 * time.Millisecond) // polling the idle check's outcome
	}
	select {
	case <-tk.C: // a tick sent before the stop
	default:
	}
	f.busy()
	assert.False(t, stopped())
	select {
	case <-tk.C:
	case <-time.After(10 * time.Second):
		t.Fatal("no frame after a message")
	}
}
