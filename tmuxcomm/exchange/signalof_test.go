package exchange

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSignalOf: what a send's hold, let go with no await come, reads of its exchange: whether it
// was answered, read, and the first thing its notify logged of the RESPONSE line after the answer.
func TestSignalOf(t *testing.T) {
	at := time.Date(2026, 1, 17, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name           string
		states         []string
		answered, read bool
		signal         string
	}{
		{"not answered", []string{StateWritten, StateSubmitted}, false, false, ""},
		{"answered, the notify not yet said", []string{StateWritten, StateSubmitted, StateAnswered}, true, false, ""},
		{"held back", []string{StateWritten, StateSubmitted, StateAnswered, StateAwaitWoken}, true, false, StateAwaitWoken},
		{"held back, then posted", []string{StateWritten, StateSubmitted, StateAnswered, StateAwaitWoken, StateNotified}, true, false, StateAwaitWoken},
		{"typed by the notify", []string{StateWritten, StateSubmitted, StateAnswered, StateNotified}, true, false, StateNotified},
		{"queued by the notify", []string{StateWritten, StateSubmitted, StateAnswered, StateNotifyQueued}, true, false, StateNotifyQueued},
		{"read", []string{StateWritten, StateSubmitted, StateAnswered, StateAwaitWoken, StateRead}, true, true, StateAwaitWoken},
		// A line's state before the answer (a log written by hand) is not the answer's signal.
		{"a line before the answer", []string{StateWritten, StateNotified, StateAnswered}, true, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, s := range c.states {
				require.NoError(t, LogEvent(dir, 1, s, nil, at))
			}
			answered, read, signal := SignalOf(dir, 1)
			assert.Equal(t, c.answered, answered)
			assert.Equal(t, c.read, read)
			assert.Equal(t, c.signal, signal)
		})
	}
	answered, read, signal := SignalOf(t.TempDir(), 1)
	assert.False(t, answered || read, "no log: nothing happened")
	assert.Empty(t, signal)
}
