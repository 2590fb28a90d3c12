package messages

import (
	"strconv"
	"strings"
	"time"
)

// DurationText writes d as a person writes it: 30m, 10s, 1h30m, 6h, 200ms, never Go's 30m0s or
// 6h0m0s.
func DurationText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Plural writes n and the noun, "1 pane" or "2 panes"; the noun's plural adds an s.
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
