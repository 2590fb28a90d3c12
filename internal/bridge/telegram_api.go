package bridge

// A small typed client of the Telegram Bot API (core.telegram.org/bots/api): the seven methods
// the bridge uses, JSON in and out. Requests go to {api}/bot{TOKEN}/{method}; the token is in
// the URL path, so no error this client returns quotes a URL (Go's url.Error does): errors name
// the method, never the address.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// tgClient calls the Bot API.
type tgClient struct {
	api   string // without a final slash
	token string
	http  *http.Client
}

// tgError is a refusal by the Bot API: {"ok":false,"error_code":N,"description":...}.
type tgError struct {
	Method string
	Code   int
	Desc   string
}

func (e *tgError) Error() string {
	return fmt.Sprintf("telegram %s: %d %s", e.Method, e.Code, e.Desc)
}

// errUnauthorized: the token is not valid (401).
var errUnauthorized = errors.New("the bot token was refused (401 Unauthorized): check the token")

type tgResponse struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  *struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// call posts params as JSON to method and decodes the result into out.
func (c *tgClient) call(ctx context.Context, method string, params, out any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.api+"/bot"+c.token+"/"+method, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("telegram %s: cannot build the request; check api_url", method)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return c.transportError(method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return c.transportError(method, err)
	}
	var r tgResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("telegram %s: HTTP %d with a body that is not the Bot API's JSON", method, resp.StatusCode)
	}
	if !r.OK {
		e := &tgError{Method: method, Code: r.ErrorCode, Desc: c.redact(r.Description)}
		if e.Code == 0 {
			e.Code = resp.StatusCode
		}
		switch {
		case e.Code == http.StatusUnauthorized:
			return fmt.Errorf("telegram %s: %w", method, errUnauthorized)
		case r.Parameters != nil && r.Parameters.RetryAfter > 0:
			return &RetryError{After: time.Duration(r.Parameters.RetryAfter) * time.Second, Err: e}
		case refusesPost(e.Code) && !tgChannelWide(e.Desc):
			return &RefusedError{Err: e}
		}
		return e
	}
	if out != nil {
		if err := json.Unmarshal(r.Result, out); err != nil {
			return fmt.Errorf("telegram %s: unexpected result: %w", method, err)
		}
	}
	return nil
}

// tgChannelWide reports whether a 400's description is about the chat or the bot's rights in it
// ("chat not found", "not enough rights to send text messages to the chat"): every post gets it
// until the settings or the chat are fixed, so it is retried, not held against one question.
func tgChannelWide(desc string) bool {
	d := strings.ToLower(desc)
	return strings.Contains(d, "chat") || strings.Contains(d, "rights") || strings.Contains(d, "peer")
}

// transportError says what failed without the URL that holds the token.
func (c *tgClient) transportError(method string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := c.redact(err.Error())
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("telegram %s: timed out (%s)", method, msg)
	}
	return fmt.Errorf("telegram %s: %s", method, msg)
}

// redact removes the token from text that came back from elsewhere.
func (c *tgClient) redact(s string) string {
	if c.token == "" {
		return s
	}
	return strings.ReplaceAll(s, c.token, "<token>")
}

// Bot API types: only the fields the bridge reads.
type (
	tgUser struct {
		ID       int64  `json:"id"`
		IsBot    bool   `json:"is_bot"`
		Username string `json:"username"`
	}
	tgChat struct {
		ID    int64  `json:"id"`
		Type  string `json:"type"`
		Title string `json:"title"`
	}
	tgEntity struct {
		Type   string `json:"type"`
		Offset int    `json:"offset"`
		Length int    `json:"length"`
	}
	tgMessage struct {
		MessageID int64      `json:"message_id"`
		From      *tgUser    `json:"from"`
		Chat      tgChat     `json:"chat"`
		Date      int64      `json:"date"`
		Text      string     `json:"text"`
		Entities  []tgEntity `json:"entities"`
		ReplyTo   *tgMessage `json:"reply_to_message"`
	}
	tgCallback struct {
		ID      string     `json:"id"`
		From    tgUser     `json:"from"`
		Message *tgMessage `json:"message"`
		Data    string     `json:"data"`
	}
	tgUpdate struct {
		UpdateID int64       `json:"update_id"`
		Message  *tgMessage  `json:"message"`
		Callback *tgCallback `json:"callback_query"`
	}
	tgButton struct {
		Text         string `json:"text"`
		CallbackData string `json:"callback_data"`
	}
	tgKeyboard struct {
		Rows [][]tgButton `json:"inline_keyboard"`
	}
	tgReplyParams struct {
		MessageID int64 `json:"message_id"`
	}
)

type tgSend struct {
	ChatID      int64          `json:"chat_id"`
	Text        string         `json:"text"`
	ParseMode   string         `json:"parse_mode,omitempty"`
	ReplyMarkup *tgKeyboard    `json:"reply_markup,omitempty"`
	Reply       *tgReplyParams `json:"reply_parameters,omitempty"`
	NoPreview   *struct {
		Disabled bool `json:"is_disabled"`
	} `json:"link_preview_options,omitempty"`
}

type tgEdit struct {
	ChatID    int64  `json:"chat_id"`
	MessageID int64  `json:"message_id"`
	Text      string `json:"text"`
	ParseMode string `json:"parse_mode,omitempty"`
}

func (c *tgClient) getMe(ctx context.Context) (tgUser, error) {
	var u tgUser
	err := c.call(ctx, "getMe", struct{}{}, &u)
	return u, err
}

func (c *tgClient) getChat(ctx context.Context, chat int64) (tgChat, error) {
	var ch tgChat
	err := c.call(ctx, "getChat", map[string]int64{"chat_id": chat}, &ch)
	return ch, err
}

func (c *tgClient) send(ctx context.Context, m tgSend) (tgMessage, error) {
	m.Text, m.ParseMode = tgFit(m.Text, m.ParseMode)
	var out tgMessage
	err := c.call(ctx, "sendMessage", m, &out)
	return out, err
}

// edit replaces a message's text; without reply_markup its inline keyboard goes too.
func (c *tgClient) edit(ctx context.Context, m tgEdit) error {
	m.Text, m.ParseMode = tgFit(m.Text, m.ParseMode)
	err := c.call(ctx, "editMessageText", m, nil)
	var te *tgError
	// Editing to the same text is refused with 400 "message is not modified": it is done.
	if errors.As(err, &te) && strings.Contains(te.Desc, "message is not modified") {
		return nil
	}
	return err
}

func (c *tgClient) answerCallback(ctx context.Context, id, text string) error {
	return c.call(ctx, "answerCallbackQuery", map[string]string{"callback_query_id": id, "text": text}, nil)
}

// getUpdates long-polls for up to wait; offset confirms every update below it. Each update comes
// with its JSON as served, which the poller hands on to the bridge it belongs to (share.go).
func (c *tgClient) getUpdates(ctx context.Context, offset int64, wait time.Duration) ([]tgUpdate, []json.RawMessage, error) {
	var raws []json.RawMessage
	params := map[string]any{"offset": offset, "timeout": int(wait / time.Second), "allowed_updates": []string{"message", "callback_query"}}
	if err := c.call(ctx, "getUpdates", params, &raws); err != nil {
		return nil, nil, err
	}
	ups := make([]tgUpdate, len(raws))
	for i, r := range raws {
		if err := json.Unmarshal(r, &ups[i]); err != nil {
			return nil, nil, fmt.Errorf("telegram getUpdates: unexpected update: %w", err)
		}
	}
	return ups, raws, nil
}
