package ui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/require"
)

// TestFramesFindTheTicker: the console stops Bubble Tea's frame ticker while idle, found by its
// name in the Program; an upgrade that renames it must be seen here, not as a console that
// quietly wakes 20 times a second again.
func TestFramesFindTheTicker(t *testing.T) {
	p := tea.NewProgram(nil)
	_ = programTicker(p) // nil before the renderer starts: the field is there, still unset
	require.NotPanics(t, func() { programTicker(p) })
	require.True(t, tickerField(), "tea.Program has no frame ticker named ticker of type *time.Ticker")
}
