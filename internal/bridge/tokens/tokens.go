// Package tokens reads the answer channels' secrets (a token file of mode 0600, or an environment
// variable) and checks the channels' settings, without contacting any service. The bridge builds
// its channels from what it returns; wcomm, which links none of the chat clients, checks with it
// before it starts a bridge, so an ask says at once why its channels cannot be reached.
package tokens

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/wcomm/wcomm/messages"
)

// The environment variables that hold a token instead of a token file.
const (
	EnvTelegramToken = "WCOMM_TELEGRAM_TOKEN"
	EnvSlackBotToken = "WCOMM_SLACK_BOT_TOKEN"
	EnvSlackAppToken = "WCOMM_SLACK_APP_TOKEN"
)

// Read returns the secret from the environment variable env when set, else from file. A
// file readable or writable by anyone but its owner is refused with the reason: a token there
// is no longer a secret. The token itself never appears in an error.
func Read(what, env, file string, getenv func(string) string) (string, error) {
	if v := strings.TrimSpace(getenv(env)); v != "" {
		return v, nil
	}
	if file == "" {
		return "", fmt.Errorf("%s: no token: set %s or give a token file (mode 0600)", what, env)
	}
	path, err := expandHome(file, getenv)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: token file %s does not exist: write the token there (mode 0600) or set %s", what, path, env)
	}
	if err != nil {
		return "", fmt.Errorf("%s: token file: %w", what, err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s: token file %s is not a regular file", what, path)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("%s: token file %s is refused: its mode %04o lets others read or change it; run chmod 600 %s", what, path, perm, path)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return "", fmt.Errorf("%s: token file %s is refused: it is owned by uid %d, not by you", what, path, sys.Uid)
	}
	if st.Size() > 4096 {
		return "", fmt.Errorf("%s: token file %s is %d bytes; a token is one short line", what, path, st.Size())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: token file: %w", what, err)
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" || strings.ContainsAny(tok, " \t\r\n/?#") {
		return "", fmt.Errorf("%s: token file %s does not hold one token on one line", what, path)
	}
	return tok, nil
}

// expandHome expands a leading ~/ to the user's home folder.
func expandHome(p string, getenv func(string) string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home := getenv("HOME")
		if home == "" {
			return "", fmt.Errorf("%s names ~ but HOME is not set", p)
		}
		return filepath.Join(home, strings.TrimPrefix(p, "~")), nil
	}
	return p, nil
}

// CheckURL accepts an http or https address.
func CheckURL(what, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s %q is not an http(s) address", what, messages.SanitizeField(raw))
	}
	return u, nil
}

// Default service addresses.
const (
	DefaultTelegramAPI = "https://api.telegram.org"
	DefaultSlackAPI    = "https://slack.com/api/"
)

// Telegram checks channels.telegram and returns its API address (the default when unset) and
// the bot's token.
func Telegram(cfg messages.TelegramConfig, getenv func(string) string) (api, token string, err error) {
	api = cfg.APIURL
	if api == "" {
		api = DefaultTelegramAPI
	}
	if _, err := CheckURL("channels.telegram.api_url", api); err != nil {
		return "", "", err
	}
	if cfg.ChatID == 0 {
		return "", "", fmt.Errorf("channels.telegram.chat_id is missing: give the chat's id (negative for groups)")
	}
	if len(cfg.AllowedUsers) == 0 {
		return "", "", fmt.Errorf("channels.telegram.allowed_users is empty: name the Telegram user ids that may answer")
	}
	token, err = Read("channels.telegram", EnvTelegramToken, cfg.TokenFile, getenv)
	return api, token, err
}

// Slack checks channels.slack and returns its API address (ending in /) and the bot's and the
// app's tokens.
func Slack(cfg messages.SlackConfig, getenv func(string) string) (api, bot, app string, err error) {
	api = cfg.APIURL
	if api == "" {
		api = DefaultSlackAPI
	}
	if _, err := CheckURL("channels.slack.api_url", api); err != nil {
		return "", "", "", err
	}
	if !strings.HasSuffix(api, "/") {
		api += "/"
	}
	if cfg.Channel == "" {
		return "", "", "", fmt.Errorf("channels.slack.channel is missing: give the channel's id (C0123456)")
	}
	if len(cfg.AllowedUsers) == 0 {
		return "", "", "", fmt.Errorf("channels.slack.allowed_users is empty: name the Slack user ids that may answer")
	}
	if bot, err = Read("channels.slack bot token", EnvSlackBotToken, cfg.BotTokenFile, getenv); err != nil {
		return "", "", "", err
	}
	if app, err = Read("channels.slack app token", EnvSlackAppToken, cfg.AppTokenFile, getenv); err != nil {
		return "", "", "", err
	}
	return api, bot, app, nil
}

// Webhook checks channels.webhook.
func Webhook(cfg messages.WebhookConfig) error {
	_, err := CheckURL("channels.webhook.url", cfg.URL)
	return err
}

// Check checks every configured channel's settings and reads its tokens: nil when the bridge
// can build them all.
func Check(cfg *messages.ChannelsConfig, getenv func(string) string) error {
	if !cfg.Any() {
		return fmt.Errorf("no channels configured: add a channels block (telegram, slack or webhook) to your settings file")
	}
	if cfg.Telegram != nil {
		if _, _, err := Telegram(*cfg.Telegram, getenv); err != nil {
			return err
		}
	}
	if cfg.Slack != nil {
		if _, _, _, err := Slack(*cfg.Slack, getenv); err != nil {
			return err
		}
	}
	if cfg.Webhook != nil {
		return Webhook(*cfg.Webhook)
	}
	return nil
}
