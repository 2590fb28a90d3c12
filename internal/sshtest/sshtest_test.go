package sshtest

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	Supervise()
	os.Exit(m.Run())
}

// Two hosts: each runs commands over real ssh, sees its own /tmp and HOME, and comes back after
// a stop and start.
func TestBedRealSSH(t *testing.T) {
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(bin+"/marker", []byte("bin"), 0o600))
	b := Start(t, bin, 2)
	h1, h2 := b.Hosts[0], b.Hosts[1]
	require.NoError(t, os.WriteFile(h1.Share+"/hello", []byte("from the test"), 0o600))
	assert.Equal(t, "from the test", b.Run(h1, "cat", ShareDir+"/hello"))
	assert.Equal(t, "bin", b.Run(h1, "cat", BinDir+"/marker"))
	// Private /tmp: a file made on h1 is not on h2, nor here.
	b.Run(h1, "touch", "/tmp/only-on-h1")
	_, err := b.RunErr(h2, "test", "-e", "/tmp/only-on-h1")
	assert.Error(t, err)
	assert.NoFileExists(t, "/tmp/only-on-h1")
	home := strings.TrimSpace(b.Run(h1, "sh", "-c", "'touch ~/.h1home && echo $HOME'"))
	assert.NotEmpty(t, home)
	assert.NoFileExists(t, home+"/.h1home")
	// Stopped: ssh fails with 255; started again: it works.
	h1.Stop(t)
	_, err = b.RunErr(h1, "true")
	require.Error(t, err)
	h1.Start(t)
	assert.Equal(t, "from the test", b.Run(h1, "cat", ShareDir+"/hello"))
}
