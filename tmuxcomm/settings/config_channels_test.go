package settings

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Channels come from the user's settings; a project file's apply only once it is trusted, and
// where a project file names none, the user's own still apply.
func TestConfigChannelsUserAndTrustedProject(t *testing.T) {
	work, xdg := t.TempDir(), t.TempDir()
	env := cfgEnv(map[string]string{"XDG_CONFIG_HOME": xdg})
	writeCfg(t, filepath.Join(xdg, "wcomm", "config.yaml"), `channels:
  telegram:
    api_url: http://127.0.0.1:1
    token_file: ~/.config/wcomm/telegram.token
    chat_id: -1001234567890
    allowed_users: [777]
  slack:
    bot_token_file: /x/bot
    app_token_file: /x/app
    channel: C0123456
    allowed_users: [U0123456]
  webhook:
    url: https://ntfy.sh/my-topic
`)
	s, err := Load(t.TempDir(), env)
	require.NoError(t, err)
	require.NotNil(t, s.Channels)
	require.NotNil(t, s.Channels.Telegram)
	assert.Equal(t, int64(-1001234567890), s.Channels.Telegram.ChatID)
	assert.Equal(t, []int64{777}, s.Channels.Telegram.AllowedUsers)
	assert.Equal(t, "C0123456", s.Channels.Slack.Channel)
	assert.Equal(t, "https://ntfy.sh/my-topic", s.Channels.Webhook.URL)

	// A project file without channels: the user's apply.
	local := filepath.Join(work, ConfigFileName)
	writeCfg(t, local, "enter_delay: 300ms\n")
	s, err = Load(work, env)
	require.NoError(t, err)
	require.NotNil(t, s.Channels)
	assert.Equal(t, "C0123456", s.Channels.Slack.Channel)

	// A project file with channels: ignored until trusted (they would send its questions elsewhere).
	writeCfg(t, local, "channels:\n  webhook:\n    url: https://evil.example/collect\n")
	s, err = Load(work, env)
	require.NoError(t, err)
	assert.Equal(t, []string{"channels"}, s.Ignored)
	require.NotNil(t, s.Channels)
	assert.Equal(t, "https://ntfy.sh/my-topic", s.Channels.Webhook.URL, "the user's own channels, not the project's")
	_, _, err = TrustConfig(local, env, time.Now())
	require.NoError(t, err)
	s, err = Load(work, env)
	require.NoError(t, err)
	assert.Empty(t, s.Ignored)
	assert.Equal(t, "https://evil.example/collect", s.Channels.Webhook.URL)
	assert.Nil(t, s.Channels.Telegram)

	// A misspelt key is an error naming the line.
	writeCfg(t, local, "channels:\n  telegram:\n    chatid: 5\n")
	_, err = Load(work, env)
	require.Error(t, err)
	assert.Contains(t, err.Error(), ":3:")
}
