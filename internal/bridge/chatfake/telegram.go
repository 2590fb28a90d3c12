package chatfake

// A fake of the Telegram Bot API on loopback, written from its public documentation
// (core.telegram.org/bots/api), not from this package's client: requests are POSTs to
// /bot<token>/<method> with JSON or form parameters; every answer is {"ok":true,"result":...}
// or {"ok":false,"error_code":N,"description":...[,"parameters":{"retry_after":S}]}; a wrong
// token gets 401 Unauthorized; getUpdates long-polls up to its timeout and confirms every update
// below the offset it is called with, and a second getUpdates while one waits ends the waiting one
// with 409 "Conflict: terminated by other getUpdates request" (one poller per bot); text with parse_mode HTML must be valid (only the
// documented tags, entities &lt; &gt; &amp; &quot; and numeric ones), else 400 "can't parse
// entities"; a text is 1-4096 characters after entities parsing (UTF-16 code units), else 400
// "message is too long"; callback_data is 1-64 bytes; editing to the same text is 400 "message
// is not modified".

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"
)

// Telegram is the fake Bot API server. Its exported fields are read under Mu.
type Telegram struct {
	T      testing.TB
	Srv    *httptest.Server
	Token  string
	Chat   int64
	BotID  int64
	BotTag string

	Mu       sync.Mutex
	cond     *sync.Cond
	Updates  []Update // not yet confirmed
	nextUpd  int64
	nextMsg  int64
	Msgs     map[int64]*Msg
	Sent     []*Msg   // in order
	Acks     []string // answerCallbackQuery texts
	Calls    map[string]int
	Failures map[string][]int // method -> status codes to answer next (429, 500)
	// Served is when each update was first handed out by getUpdates.
	Served map[int64]time.Time
	// Conflicts counts the getUpdates calls ended by another one with 409.
	Conflicts int
	polls     int64 // getUpdates calls so far: a waiting call ends when a later one comes
	hang      map[string]int
	closed    bool
}

// Msg is a message the bot sent, as the chat shows it.
type Msg struct {
	ID       int64
	Text     string // as the reader sees it: entities decoded, tags gone
	Raw      string
	Keyboard [][]Button
	ReplyTo  int64
	Edits    int
	At       time.Time // when sendMessage was served
}

// NewTelegram starts the fake on loopback; it stops when the test ends.
func NewTelegram(t testing.TB) *Telegram {
	// A token of its own: the bridges of one bot meet, and keep the bot's offset, in a folder
	// named by the API's address and the token. A fixed token met a folder left by an earlier
	// test whose fake had the same port, took its offset, and confirmed the new fake's first
	// updates unseen.
	var tok [8]byte
	_, _ = rand.Read(tok[:])
	f := &Telegram{T: t, Token: "123456:ABC-secret-" + hex.EncodeToString(tok[:]), Chat: -1001234567890, BotID: 42, BotTag: "wcomm_test_bot",
		nextUpd: 1000, nextMsg: 1, Msgs: map[int64]*Msg{}, Calls: map[string]int{}, Failures: map[string][]int{},
		Served: map[int64]time.Time{}, hang: map[string]int{}}
	f.cond = sync.NewCond(&f.Mu)
	f.Srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		f.Mu.Lock()
		f.closed = true
		f.cond.Broadcast()
		f.Mu.Unlock()
		f.Srv.Close()
	})
	return f
}

func (f *Telegram) reply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *Telegram) fail(w http.ResponseWriter, code int, desc string) {
	body := map[string]any{"ok": false, "error_code": code, "description": desc}
	if code == http.StatusTooManyRequests {
		body["parameters"] = map[string]int{"retry_after": 1}
		body["description"] = "Too Many Requests: retry after 1"
	}
	f.reply(w, code, body)
}

func (f *Telegram) ok(w http.ResponseWriter, result any) {
	f.reply(w, http.StatusOK, map[string]any{"ok": true, "result": result})
}

// params reads JSON or form parameters, as the Bot API accepts both.
func params(r *http.Request) (map[string]any, error) {
	out := map[string]any{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		err := json.NewDecoder(r.Body).Decode(&out)
		return out, err
	}
	if err := r.ParseForm(); err != nil {
		return nil, err
	}
	for k, v := range r.Form {
		out[k] = v[0]
	}
	return out, nil
}

func num(v any) int64 {
	switch x := v.(type) {
	case float64:
		return int64(x)
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

var tgTagRe = regexp.MustCompile(`^</?(b|strong|i|em|u|ins|s|strike|del|code|pre|a|tg-spoiler|blockquote)(\s[^<>]*)?>`)
var tgEntityRe = regexp.MustCompile(`^&(lt|gt|amp|quot|#[0-9]+|#x[0-9a-fA-F]+);`)

// descErr is an error whose text is the Bot API's description, worded as Telegram words it.
type descErr string

func (d descErr) Error() string { return string(d) }

// parseHTML checks text as Telegram's HTML parse mode does and returns what the reader sees.
func parseHTML(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			m := tgTagRe.FindString(s[i:])
			if m == "" {
				return "", descErr(fmt.Sprintf("Bad Request: can't parse entities: unsupported start tag at byte offset %d", i))
			}
			i += len(m)
		case '&':
			m := tgEntityRe.FindString(s[i:])
			if m == "" {
				return "", descErr(fmt.Sprintf("Bad Request: can't parse entities: character entity expected at byte offset %d", i))
			}
			b.WriteString(html.UnescapeString(m))
			i += len(m)
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), nil
}

func (f *Telegram) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		f.fail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/bot")
	tok, method, ok := strings.Cut(path, "/")
	if !ok || tok != f.Token {
		f.fail(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	p, err := params(r)
	if err != nil {
		f.fail(w, http.StatusBadRequest, "Bad Request: invalid parameters")
		return
	}
	f.Mu.Lock()
	f.Calls[method]++
	if f.hang[method] > 0 {
		// A service that does not answer: the request waits until the client gives up (or
		// the fake stops).
		f.hang[method]--
		f.Mu.Unlock()
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
		return
	}
	if fs := f.Failures[method]; len(fs) > 0 {
		code := fs[0]
		f.Failures[method] = fs[1:]
		f.Mu.Unlock()
		f.fail(w, code, http.StatusText(code))
		return
	}
	f.Mu.Unlock()
	switch method {
	case "getMe":
		f.ok(w, map[string]any{"id": f.BotID, "is_bot": true, "first_name": "wcomm", "username": f.BotTag})
	case "getChat":
		if num(p["chat_id"]) != f.Chat {
			f.fail(w, http.StatusBadRequest, "Bad Request: chat not found")
			return
		}
		f.ok(w, map[string]any{"id": f.Chat, "type": "supergroup", "title": "builds"})
	case "sendMessage":
		f.sendMessage(w, p)
	case "editMessageText":
		f.editMessage(w, p)
	case "answerCallbackQuery":
		f.Mu.Lock()
		f.Acks = append(f.Acks, fmt.Sprint(p["text"]))
		f.Mu.Unlock()
		f.ok(w, true)
	case "getUpdates":
		f.getUpdates(w, r, p)
	default:
		f.fail(w, http.StatusNotFound, "Not Found: method not found")
	}
}

func (f *Telegram) text(p map[string]any) (string, error) {
	raw, _ := p["text"].(string)
	if strings.TrimSpace(raw) == "" {
		return "", descErr("Bad Request: message text is empty")
	}
	text := raw
	if p["parse_mode"] == "HTML" {
		var err error
		if text, err = parseHTML(raw); err != nil {
			return "", err
		}
	}
	if len(utf16.Encode([]rune(text))) > TelegramMaxText {
		return "", descErr("Bad Request: message is too long")
	}
	return text, nil
}

// TelegramMaxText is the most a message's text may hold, after entities parsing, in UTF-16 code
// units.
const TelegramMaxText = 4096

func (f *Telegram) sendMessage(w http.ResponseWriter, p map[string]any) {
	if num(p["chat_id"]) != f.Chat {
		f.fail(w, http.StatusBadRequest, "Bad Request: chat not found")
		return
	}
	text, err := f.text(p)
	if err != nil {
		f.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	m := &Msg{Text: text, Raw: fmt.Sprint(p["text"]), At: time.Now()}
	if rm, ok := p["reply_markup"].(map[string]any); ok {
		rows, _ := rm["inline_keyboard"].([]any)
		for _, row := range rows {
			var btns []Button
			for _, b := range row.([]any) {
				bm := b.(map[string]any)
				data, _ := bm["callback_data"].(string)
				if len(data) < 1 || len(data) > 64 {
					f.fail(w, http.StatusBadRequest, "Bad Request: BUTTON_DATA_INVALID")
					return
				}
				btns = append(btns, Button{Text: fmt.Sprint(bm["text"]), CallbackData: data})
			}
			m.Keyboard = append(m.Keyboard, btns)
		}
	}
	if rp, ok := p["reply_parameters"].(map[string]any); ok {
		m.ReplyTo = num(rp["message_id"])
	}
	f.Mu.Lock()
	m.ID = f.nextMsg
	f.nextMsg++
	f.Msgs[m.ID] = m
	f.Sent = append(f.Sent, m)
	f.cond.Broadcast()
	f.Mu.Unlock()
	f.ok(w, map[string]any{"message_id": m.ID, "date": time.Now().Unix(), "chat": map[string]any{"id": f.Chat, "type": "supergroup"},
		"from": map[string]any{"id": f.BotID, "is_bot": true, "username": f.BotTag}, "text": text})
}

func (f *Telegram) editMessage(w http.ResponseWriter, p map[string]any) {
	text, err := f.text(p)
	if err != nil {
		f.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	f.Mu.Lock()
	defer f.Mu.Unlock()
	m := f.Msgs[num(p["message_id"])]
	if m == nil || num(p["chat_id"]) != f.Chat {
		f.fail(w, http.StatusBadRequest, "Bad Request: message to edit not found")
		return
	}
	_, hasKB := p["reply_markup"]
	if m.Text == text && (len(m.Keyboard) == 0) == !hasKB {
		f.fail(w, http.StatusBadRequest, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
		return
	}
	m.Text, m.Edits = text, m.Edits+1
	if !hasKB {
		m.Keyboard = nil // an edit without reply_markup removes the inline keyboard
	}
	f.cond.Broadcast()
	f.ok(w, map[string]any{"message_id": m.ID, "text": text})
}

func (f *Telegram) getUpdates(w http.ResponseWriter, r *http.Request, p map[string]any) {
	offset := num(p["offset"])
	wait := time.Duration(num(p["timeout"])) * time.Second
	deadline := time.Now().Add(wait)
	f.Mu.Lock()
	// Every update below offset is confirmed and forgotten.
	keep := f.Updates[:0]
	for _, u := range f.Updates {
		if u.UpdateID >= offset {
			keep = append(keep, u)
		}
	}
	f.Updates = keep
	// The Bot API serves one getUpdates per bot at a time: a new call ends the one waiting.
	f.polls++
	me := f.polls
	f.cond.Broadcast()
	timer := time.AfterFunc(wait, func() { f.Mu.Lock(); f.cond.Broadcast(); f.Mu.Unlock() })
	defer timer.Stop()
	// A client that hangs up ends its long poll.
	gone := context.AfterFunc(r.Context(), func() { f.Mu.Lock(); f.cond.Broadcast(); f.Mu.Unlock() })
	defer gone()
	for len(f.Updates) == 0 && !f.closed && time.Now().Before(deadline) && f.polls == me && r.Context().Err() == nil {
		f.cond.Wait()
	}
	if r.Context().Err() != nil {
		f.Mu.Unlock()
		return
	}
	if f.polls != me {
		f.Conflicts++
		f.Mu.Unlock()
		f.fail(w, http.StatusConflict, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running")
		return
	}
	out := append([]Update(nil), f.Updates...)
	now := time.Now()
	for _, u := range out {
		if _, ok := f.Served[u.UpdateID]; !ok {
			f.Served[u.UpdateID] = now
		}
	}
	f.Mu.Unlock()
	f.ok(w, out)
}

// Push queues an update and returns its id.
func (f *Telegram) Push(u Update) int64 {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	u.UpdateID = f.nextUpd
	f.nextUpd++
	f.Updates = append(f.Updates, u)
	f.cond.Broadcast()
	return u.UpdateID
}

// PushAs queues updates as they are, their ids included, at once (one getUpdates serves them
// together): an update the service sends again, or out of order.
func (f *Telegram) PushAs(us ...Update) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.Updates = append(f.Updates, us...)
	f.cond.Broadcast()
}

// Say queues a text message from user in chat; a leading /command gets its bot_command entity.
func (f *Telegram) Say(user, chat int64, text string, replyTo int64) int64 {
	f.Mu.Lock()
	id := f.nextMsg
	f.nextMsg++
	f.Mu.Unlock()
	m := &Message{MessageID: id, From: &User{ID: user}, Chat: Chat{ID: chat, Type: "supergroup"}, Date: time.Now().Unix(), Text: text}
	if strings.HasPrefix(text, "/") {
		n := strings.IndexAny(text, " \n")
		if n < 0 {
			n = len(text)
		}
		m.Entities = []Entity{{Type: "bot_command", Offset: 0, Length: n}}
	}
	if replyTo != 0 {
		m.ReplyTo = &Message{MessageID: replyTo, Chat: m.Chat, From: &User{ID: f.BotID, IsBot: true}}
	}
	return f.Push(Update{Message: m})
}

// Press queues a button press on message msg.
func (f *Telegram) Press(user, chat, msg int64, data string) int64 {
	return f.Push(Update{Callback: &CallbackQuery{ID: "cb" + strconv.FormatInt(time.Now().UnixNano(), 36), From: User{ID: user},
		Message: &Message{MessageID: msg, Chat: Chat{ID: chat}}, Data: data}})
}

// FailNext makes the next calls of method answer with these HTTP codes.
func (f *Telegram) FailNext(method string, codes ...int) {
	f.Mu.Lock()
	f.Failures[method] = append(f.Failures[method], codes...)
	f.Mu.Unlock()
}

// HangNext makes the next n calls of method get no answer at all.
func (f *Telegram) HangNext(method string, n int) {
	f.Mu.Lock()
	f.hang[method] += n
	f.Mu.Unlock()
}

// WaitFor polls the fake's state to a deadline until cond holds.
func (f *Telegram) WaitFor(what string, cond func() bool) {
	f.T.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.Mu.Lock()
		ok := cond()
		f.Mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			f.Mu.Lock()
			var texts []string
			for _, m := range f.Sent {
				texts = append(texts, fmt.Sprintf("#%d %q", m.ID, m.Text))
			}
			// What the bridges did besides: the presses answered, the updates no one confirmed
			// (none fetched, or fetched and not handled), and how often the bot was polled.
			state := fmt.Sprintf("button presses answered: %q; updates not confirmed: %d (of which served: %d); getUpdates calls: %d",
				f.Acks, len(f.Updates), f.servedOf(f.Updates), f.Calls["getUpdates"])
			f.Mu.Unlock()
			f.T.Fatalf("timed out waiting for %s; messages sent: %s; %s", what, strings.Join(texts, "; "), state)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// servedOf counts the updates getUpdates has handed out (the caller holds f.Mu).
func (f *Telegram) servedOf(us []Update) int {
	n := 0
	for _, u := range us {
		if _, ok := f.Served[u.UpdateID]; ok {
			n++
		}
	}
	return n
}

// SentMsgs copies the messages sent (the caller holds no lock).
func (f *Telegram) SentMsgs() []Msg {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	out := make([]Msg, len(f.Sent))
	for i, m := range f.Sent {
		out[i] = *m
	}
	return out
}
