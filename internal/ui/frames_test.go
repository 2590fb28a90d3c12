package ui

import (
	"testing"

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
