package bridge

import (
	"fmt"
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

// Default service addresses.
const (
	DefaultTelegramAPI = "https://api.telegram.org"
	DefaultSlackAPI    = "https://slack.com/api/"
)

// readToken returns the secret from the environment variable env when set, else from file. A
// file readable or writable by anyone but its owner is refused with the reason: a token there
// is no longer a secret. The token itself never appears in an error.
func readToken(what, env, file string, getenv func(string) string) (string, error) {
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

// checkURL accepts an http or https address.
func checkURL(what, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s %q is not an http(s) address", what, messages.SanitizeField(raw))
	}
	return u, nil
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
