package messages

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// ChannelsConfig is the channels block of the settings file: the chat services a question is
// carried to and answered from (see internal/bridge). Fields keep the names users write; an
// absent channel is nil.
type ChannelsConfig struct {
	Telegram *TelegramConfig `yaml:"telegram" json:"telegram,omitempty"`
	Slack    *SlackConfig    `yaml:"slack" json:"slack,omitempty"`
	Webhook  *WebhookConfig  `yaml:"webhook" json:"webhook,omitempty"`
}

// Any reports whether at least one channel is configured.
func (c *ChannelsConfig) Any() bool {
	return c != nil && (c.Telegram != nil || c.Slack != nil || c.Webhook != nil)
}

// TelegramConfig is channels.telegram. Requests go to {APIURL}/bot{TOKEN}/{method}.
type TelegramConfig struct {
	APIURL       string  `yaml:"api_url" json:"api_url,omitempty"`
	TokenFile    string  `yaml:"token_file" json:"token_file,omitempty"`
	ChatID       int64   `yaml:"chat_id" json:"chat_id"`
	AllowedUsers []int64 `yaml:"allowed_users" json:"allowed_users"`
}

// SlackConfig is channels.slack.
type SlackConfig struct {
	APIURL       string   `yaml:"api_url" json:"api_url,omitempty"`
	BotTokenFile string   `yaml:"bot_token_file" json:"bot_token_file,omitempty"`
	AppTokenFile string   `yaml:"app_token_file" json:"app_token_file,omitempty"`
	Channel      string   `yaml:"channel" json:"channel"`
	AllowedUsers []string `yaml:"allowed_users" json:"allowed_users"`
}

// WebhookConfig is channels.webhook: one POST of a JSON object per new question.
type WebhookConfig struct {
	URL string `yaml:"url" json:"url"`
}

// NoChannelsKey is the key of no channels at all (Key of a nil or empty block): a question asked
// where no channel applies records it, so that no bridge takes the question for its own.
const NoChannelsKey = "none"

// Key names the channel configuration c as it applies in folder dir: 16 hex digits of the sha256
// of its JSON, relative token files made absolute against dir (a token file is read from the
// folder the bridge runs in). A question records the key of the channels that applied where it
// was asked, and a bridge posts only the questions of its own key: a project's channels never
// carry another project's questions. A nil or empty block is NoChannelsKey.
func (c *ChannelsConfig) Key(dir string) string {
	if !c.Any() {
		return NoChannelsKey
	}
	abs := func(p string) string {
		if p == "" || strings.HasPrefix(p, "~") || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	k := *c
	if c.Telegram != nil {
		t := *c.Telegram
		t.TokenFile = abs(t.TokenFile)
		k.Telegram = &t
	}
	if c.Slack != nil {
		s := *c.Slack
		s.BotTokenFile, s.AppTokenFile = abs(s.BotTokenFile), abs(s.AppTokenFile)
		k.Slack = &s
	}
	data, _ := json.Marshal(k) // plain fields: never fails
	return ContentSHA256(data)[:16]
}

// ValidChannelsKey reports whether s is a key Key returns for some channels (not NoChannelsKey):
// a key names a folder, so one read from a file is checked before it is put into a path.
func ValidChannelsKey(s string) bool {
	if len(s) != 16 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}
