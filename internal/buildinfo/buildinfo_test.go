package buildinfo

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersion(t *testing.T) {
	oldV, oldC := version, commit
	t.Cleanup(func() { version, commit = oldV, oldC })
	version, commit = "v1.2.3", "abc1234"
	v, c := Version()
	assert.Equal(t, "v1.2.3", v)
	assert.Equal(t, "abc1234", c)
	assert.Equal(t, "v1.2.3", Reported())

	// Unset: what the toolchain recorded, else devel and unknown; never empty.
	version, commit = "", ""
	v, c = Version()
	assert.NotEmpty(t, v)
	assert.NotEmpty(t, c)
	if v == "devel" && c != "unknown" {
		assert.Equal(t, "devel-"+c, Reported())
	}
}
