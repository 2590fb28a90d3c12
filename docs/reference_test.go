package docs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReference(t *testing.T) {
	r := &Reference{Generated: []func() Topic{func() Topic { return Topic{Name: "commands", Title: "Commands"} }}}
	all, err := r.All()
	require.NoError(t, err)
	assert.Greater(t, len(all), 10, "the files and the generated topic")
	assert.IsIncreasing(t, r.Names(), "by name")
	assert.Contains(t, r.Names(), "commands")
	tp, ok := r.Find("EXIT")
	assert.True(t, ok, "an alias, in any case")
	assert.Equal(t, "exit-codes", tp.Name)
	_, ok = r.Find("no-such-topic")
	assert.False(t, ok)
}
