package actions

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSummary(t *testing.T) {
	list := func(statuses ...string) []*ActionStatus {
		var l []*ActionStatus
		for _, s := range statuses {
			l = append(l, &ActionStatus{Status: s})
		}
		return l
	}
	assert.Equal(t, "", Summary(nil))
	assert.Equal(t, "", Summary(list(ActionExecuted, ActionDenied, ActionPending)))
	assert.Equal(t, "approved actions: 2 approved and not yet run ('wcomm actions run'), 2 stale or blocked, 1 interrupted; see 'wcomm actions'",
		Summary(list(ActionApproved, ActionStale, ActionApproved, ActionBlocked, ActionInterrupted, ActionExecuted)))
}
