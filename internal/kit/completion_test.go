package kit

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestKitUsageChoices(t *testing.T) {
	tests := []struct{ usage, want string }{
		{"deliver with this profile (claude, codex, shell) instead", "=claude codex shell"},
		{"READONLY (look, change nothing) or WRITABLE", ""},
		{"how long to wait (0: no limit)", ""},
		{"one word (only)", ""},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, usageChoices(tc.usage), tc.usage)
	}
}
