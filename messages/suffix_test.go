package messages

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIDSuffixShapes(t *testing.T) {
	tests := []struct {
		s        string
		request  bool
		question bool
	}{
		{"a1b2", true, true},
		{"1b2", true, true},
		{"0-beef", true, true}, // task.q10-beef ends so
		{"q1-9232", false, true},
		{".q1-9232", false, true},
		{"3.q1-9232", false, false}, // the whole id of task 3
		{"-9232", true, true},
		{"20260117-120000-a1b2", false, false}, // a whole request id: also no question's end
		{"task-3.q1-9232", false, false},       // a whole question id
		{"bc-20260117-120000-1a2b3c4d", false, false},
		{"not-a-question", false, false},
		{"x", false, false},
		{"A1B2", false, false},
		{"", false, false},
		{"a b", false, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.request, IsIDSuffix(tt.s), "request tail %q", tt.s)
		assert.Equal(t, tt.question, IsQuestionIDSuffix(tt.s), "question tail %q", tt.s)
	}
}
