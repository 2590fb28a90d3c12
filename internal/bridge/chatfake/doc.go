// Package chatfake holds fakes of the chat services the bridge talks to, for tests: the
// Telegram Bot API and Slack's Web API with Socket Mode, each an httptest server on loopback
// that behaves as the service's public documentation says (core.telegram.org/bots/api,
// api.slack.com), written apart from the bridge's own clients so that a test checks the client
// against the service, not against itself. Every wait in them is bounded.
package chatfake

// The Bot API's objects, with the fields the fake serves (core.telegram.org/bots/api#available-types).
type (
	// User is a Telegram user or bot.
	User struct {
		ID       int64  `json:"id"`
		IsBot    bool   `json:"is_bot"`
		Username string `json:"username,omitempty"`
	}
	// Chat is a chat.
	Chat struct {
		ID   int64  `json:"id"`
		Type string `json:"type"`
	}
	// Entity is a MessageEntity (bot_command, ...), offsets in UTF-16 code units.
	Entity struct {
		Type   string `json:"type"`
		Offset int    `json:"offset"`
		Length int    `json:"length"`
	}
	// Message is a message.
	Message struct {
		MessageID int64    `json:"message_id"`
		From      *User    `json:"from,omitempty"`
		Chat      Chat     `json:"chat"`
		Date      int64    `json:"date"`
		Text      string   `json:"text,omitempty"`
		Entities  []Entity `json:"entities,omitempty"`
		ReplyTo   *Message `json:"reply_to_message,omitempty"`
	}
	// CallbackQuery is a press of an inline keyboard button.
	CallbackQuery struct {
		ID           string   `json:"id"`
		From         User     `json:"from"`
		Message      *Message `json:"message,omitempty"`
		ChatInstance string   `json:"chat_instance"`
		Data         string   `json:"data,omitempty"`
	}
	// Update is one incoming update.
	Update struct {
		UpdateID int64          `json:"update_id"`
		Message  *Message       `json:"message,omitempty"`
		Callback *CallbackQuery `json:"callback_query,omitempty"`
	}
	// Button is an InlineKeyboardButton with callback data.
	Button struct {
		Text         string `json:"text"`
		CallbackData string `json:"callback_data"`
	}
)
