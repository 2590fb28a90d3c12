package watch

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSay(t *testing.T) {
	tests := []struct {
		name string
		ev   WatchEvent
		want string
	}{
		{"request", WatchEvent{Event: EventRequest, Detail: map[string]string{"orchestrator": "%1", "worker": "%2", "capability": "READONLY", "summary": "look"}},
			"%1 -> %2 READONLY: look"},
		{"written, of a broadcast", WatchEvent{Event: EventRequest, Detail: map[string]string{"bytes": "12", "broadcast": "bc-20260117-120000-1a2b3c4d"}},
			"12 bytes (broadcast bc-20260117-120000-1a2b3c4d)"},
		{"broadcast", WatchEvent{Event: EventBroadcast, Detail: map[string]string{"broadcast": "bc-20260117-120000-1a2b3c4d"}},
			"one of broadcast bc-20260117-120000-1a2b3c4d"},
		{"sanitized", WatchEvent{Event: EventRequest, Detail: map[string]string{"bytes": "1\x1b[2J"}}, "1 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.ev.Say())
		})
	}
	assert.Equal(t, "abc...", truncate("abcdefghij", 6))
	assert.Equal(t, "é...", truncate("ééééé", 6), "cut at a rune boundary")
}
