package tmuxcomm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The front door hands its Helpers.Bridge to the engine only when channels are configured, so both
// faces start a bridge for an ask and neither does without channels.
func TestDoorStartBridgeOnlyWithChannels(t *testing.T) {
	xdg := t.TempDir()
	env := cfgEnv(map[string]string{"XDG_CONFIG_HOME": xdg})
	d := &Door{Root: t.TempDir(), Getenv: env, Dir: t.TempDir(), Helpers: Helpers{Bridge: func() error { return nil }}}
	e, _, err := d.Engine()
	require.NoError(t, err)
	assert.Nil(t, e.cfg.Helpers.Bridge, "no channels: no bridge to start")

	writeCfg(t, filepath.Join(xdg, "wcomm", "config.yaml"), "channels:\n  webhook:\n    url: http://127.0.0.1:1/q\n")
	e, _, err = d.Engine()
	require.NoError(t, err)
	assert.NotNil(t, e.cfg.Helpers.Bridge, "channels configured: the door's bridge starter")
}

func cfgEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func writeCfg(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
}
