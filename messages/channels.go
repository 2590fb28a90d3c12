package messages

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
