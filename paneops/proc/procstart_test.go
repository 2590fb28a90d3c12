package proc

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProcStart(t *testing.T) {
	self, err := ProcStart(os.Getpid())
	require.NoError(t, err)
	again, err := ProcStart(os.Getpid())
	require.NoError(t, err)
	assert.Equal(t, self, again)
	assert.NotZero(t, self)

	// A process that ended is gone; a pid is not a process.
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	_, err = ProcStart(cmd.Process.Pid)
	assert.Error(t, err)
	_, err = ProcStart(0)
	assert.Error(t, err)

	for _, tt := range []struct {
		line string
		want uint64
		ok   bool
	}{
		{"42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10", 987654, true},
		{"42 (x) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0", 0, false},
		{"42 x S 1", 0, false},
		{"42 (x) Z 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10", 0, false}, // a zombie
		{"42 (x) X 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10", 0, false},
		{"42 (x) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 -5 1", 0, false},
	} {
		got, err := parseStatStart([]byte(tt.line))
		if tt.ok {
			require.NoError(t, err, tt.line)
			assert.Equal(t, tt.want, got)
		} else {
			assert.Error(t, err, tt.line)
		}
	}
}
