package tmuxcomm

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
)

// The front door gives the engine the key of the channels that apply in its folder: the user's,
// or none at all.
func TestDoorEngineKnowsItsChannelsKey(t *testing.T) {
	work, xdg := t.TempDir(), t.TempDir()
	env := cfgEnv(map[string]string{"XDG_CONFIG_HOME": xdg})
	d := &Door{Root: t.TempDir(), Getenv: env, Dir: work}
	e, _, err := d.Engine()
	require.NoError(t, err)
	assert.Equal(t, messages.NoChannelsKey, e.cfg.ChannelsKey)
	assert.Equal(t, work, e.cfg.AskedIn)

	writeCfg(t, filepath.Join(xdg, "wcomm", "config.yaml"), "channels:\n  webhook:\n    url: https://ntfy.sh/my-topic\n")
	e, s, err := d.Engine()
	require.NoError(t, err)
	assert.True(t, messages.ValidChannelsKey(e.cfg.ChannelsKey))
	assert.Equal(t, s.Channels.Key(work), e.cfg.ChannelsKey)
}
