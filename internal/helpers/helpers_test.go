package helpers

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/testhome"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

func TestMain(m *testing.M) { testhome.Main(m) }

// A command's helpers start all four kinds; without the settings no bridge can be started.
func TestNewGivesEachHelper(t *testing.T) {
	h := New(Where{Root: t.TempDir(), Settings: func() (settings.Values, error) { return settings.Defaults(), nil }})
	assert.NotNil(t, h.Deliverer)
	assert.NotNil(t, h.Guard)
	assert.NotNil(t, h.Watcher)
	assert.NotNil(t, h.Bridge)
	assert.Nil(t, New(Where{Root: t.TempDir()}).Bridge)
}

// Channels no bridge can run (a token file that does not exist) are said by the ask at once, as
// unusable channels, and nothing is started or made in the root.
func TestBridgeRefusesUnusableChannels(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	home := t.TempDir()
	getenv := func(k string) string { return map[string]string{"HOME": home, "XDG_CONFIG_HOME": home}[k] }
	s := settings.Defaults()
	s.Channels = &messages.ChannelsConfig{Telegram: &messages.TelegramConfig{TokenFile: filepath.Join(home, "no-such-token"), ChatID: 1}}
	h := New(Where{Root: root, Getenv: getenv, Settings: func() (settings.Values, error) { return s, nil }})
	err := h.Bridge()
	require.Error(t, err)
	assert.True(t, errors.Is(err, core.ErrChannelsUnusable), "%v", err)
	var ce ChannelsError
	assert.True(t, errors.As(err, &ce))
	assert.Contains(t, err.Error(), "your answer channels cannot be reached")
	_, statErr := os.Stat(root)
	assert.True(t, os.IsNotExist(statErr), "no root made for a bridge that cannot run")

	// A settings file that does not load stops the start with its error.
	bad := errors.New("settings.yaml:3: bad")
	h = New(Where{Root: root, Getenv: getenv, Settings: func() (settings.Values, error) { return s, bad }})
	assert.ErrorIs(t, h.Bridge(), bad)
}

func TestServerArgs(t *testing.T) {
	assert.Equal(t, []string{"-S", "/tmp/s"}, ServerArgs(paneops.Server{Socket: "/tmp/s", Name: "n"}))
	assert.Equal(t, []string{"-L", "n"}, ServerArgs(paneops.Server{Name: "n"}))
	assert.Nil(t, ServerArgs(paneops.Server{}))
}
