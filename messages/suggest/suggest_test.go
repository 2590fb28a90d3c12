package suggest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNearest(t *testing.T) {
	names := []string{"send", "await", "notify", "history", "help", "inbox", "install", "install-mcp", "install-skill", "questions", "exit-codes"}
	tests := []struct {
		name string
		want []string
	}{
		{"sned", []string{"send"}},
		{"SEND", []string{"send"}},
		{"awiat", []string{"await"}},
		{"histroy", []string{"history"}},
		{"questons", []string{"questions"}},
		{"exit-code", []string{"exit-codes"}},
		{"inst", []string{"install", "install-mcp", "install-skill"}},
		{"frobnicate", nil},
		{"x", nil},
		{"", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Nearest(tc.name, names))
		})
	}
	assert.Equal(t, 1, EditDistance("sned", "send"), "a swap is one edit")
	assert.Equal(t, 3, EditDistance("kitten", "sitting"))
	assert.Equal(t, 0, EditDistance("", ""))
}

func TestPhrase(t *testing.T) {
	assert.Equal(t, "see the list", Phrase(nil, "see the list"))
	assert.Equal(t, `did you mean "send"? (see the list)`, Phrase([]string{"send"}, "see the list"))
	assert.Equal(t, `did you mean "install", "install-mcp" or "install-skill"? (see the list)`,
		Phrase([]string{"install", "install-mcp", "install-skill"}, "see the list"))
}
