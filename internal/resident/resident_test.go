package resident

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestOneP: the resident runs with one P, unless the environment names a GOMAXPROCS.
func TestOneP(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	runtime.GOMAXPROCS(2)
	oneP(func(k string) string { return map[string]string{"GOMAXPROCS": "2"}[k] })
	assert.Equal(t, 2, runtime.GOMAXPROCS(0), "an explicit GOMAXPROCS rules")
	oneP(func(string) string { return "" })
	assert.Equal(t, 1, runtime.GOMAXPROCS(0))
}
