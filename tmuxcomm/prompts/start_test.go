package prompts

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStartWaitsForItsSignalAndStops: the sentry begins only once after is closed, says why it
// could not run, and stop returns once it has ended, also when it never began.
func TestStartWaitsForItsSignalAndStops(t *testing.T) {
	var mu sync.Mutex
	var said []string
	s := &Sentry{Logf: func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		said = append(said, fmt.Sprintf(format, a...))
	}}
	stop := s.Start(context.Background(), make(chan struct{}))
	stop()
	assert.Empty(t, said, "stopped before its signal: it never ran")

	s.Start(context.Background(), nil)()
	if assert.Len(t, said, 1, "without a signal it runs at once, and its error is said") {
		assert.Equal(t, "the agents' own prompts are not watched: prompts: a sentry needs the engine's finder and asker", said[0])
	}
}
