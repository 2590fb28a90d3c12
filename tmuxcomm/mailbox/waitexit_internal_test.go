package mailbox

import (
	"context"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Without a pidfd the guard looks at /proc: a process that lives is not gone, nor a zombie is
// alive; ctx ends the wait.
func TestPollExit(t *testing.T) {
	cmd := exec.Command("cat")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	assert.False(t, processGone(pid))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, pollExit(ctx, pid), context.Canceled)

	stdin.Close()
	require.NoError(t, pollExit(context.Background(), pid), "a zombie not yet reaped has ended")
	assert.True(t, processGone(pid))
	require.NoError(t, cmd.Wait())
	assert.True(t, processGone(pid))
	assert.NoError(t, waitExit(context.Background(), pid), "reaped: already gone")
}
