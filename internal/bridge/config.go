package bridge

import (
	"fmt"

	"github.com/wcomm/wcomm/internal/bridge/tokens"
	"github.com/wcomm/wcomm/messages"
)

// The environment variables that hold a token instead of a token file.
const (
	EnvTelegramToken = tokens.EnvTelegramToken
	EnvSlackBotToken = tokens.EnvSlackBotToken
	EnvSlackAppToken = tokens.EnvSlackAppToken
)

// Default service addresses.
const (
	DefaultTelegramAPI = tokens.DefaultTelegramAPI
	DefaultSlackAPI    = tokens.DefaultSlackAPI
)

// readToken is tokens.Read.
func readToken(what, env, file string, getenv func(string) string) (string, error) {
	return tokens.Read(what, env, file, getenv)
}

// Open builds the configured channels; hub is the bridge they answer through. Each channel's
// settings are checked and its tokens read here, so a bad one is reported before anything runs.
func Open(cfg *messages.ChannelsConfig, hub *Hub, getenv func(string) string) ([]Channel, error) {
	if !cfg.Any() {
		return nil, fmt.Errorf("no channels configured: add a channels block (telegram, slack or webhook) to your settings file")
	}
	var out []Channel
	if cfg.Telegram != nil {
		t, err := newTelegram(*cfg.Telegram, hub, getenv)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if cfg.Slack != nil {
		s, err := newSlack(*cfg.Slack, hub, getenv)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if cfg.Webhook != nil {
		w, err := newWebhook(*cfg.Webhook)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}
