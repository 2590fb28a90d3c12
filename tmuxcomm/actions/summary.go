package actions

import (
	"fmt"
	"strings"
)

// Summary is one line on intents that need a person or a dispatcher: approved and not run,
// blocked, or interrupted; "" when none does.
func Summary(list []*ActionStatus) string {
	n := map[string]int{}
	for _, a := range list {
		n[a.Status]++
	}
	var parts []string
	if k := n[ActionApproved]; k > 0 {
		parts = append(parts, fmt.Sprintf("%d approved and not yet run ('wcomm actions run')", k))
	}
	if k := n[ActionStale] + n[ActionBlocked]; k > 0 {
		parts = append(parts, fmt.Sprintf("%d stale or blocked", k))
	}
	if k := n[ActionInterrupted]; k > 0 {
		parts = append(parts, fmt.Sprintf("%d interrupted", k))
	}
	if len(parts) == 0 {
		return ""
	}
	return "approved actions: " + strings.Join(parts, ", ") + "; see 'wcomm actions'"
}
