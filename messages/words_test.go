package messages

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestDurationText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Minute:                     "30m",
		10 * time.Second:                     "10s",
		90 * time.Minute:                     "1h30m",
		6 * time.Hour:                        "6h",
		200 * time.Millisecond:               "200ms",
		0:                                    "0s",
		time.Hour + 30*time.Second:           "1h0m30s",
		2*time.Minute + 500*time.Millisecond: "2m0.5s",
	} {
		assert.Equal(t, want, DurationText(d), "%v", d)
	}
	assert.Equal(t, "1 pane", Plural(1, "pane"))
	assert.Equal(t, "0 panes", Plural(0, "pane"))
	assert.Equal(t, "3 panes", Plural(3, "pane"))
}
