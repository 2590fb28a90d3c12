package bridge

// A fake of the Telegram Bot API on loopback, written from its public documentation
// (core.telegram.org/bots/api), not from this package's client: requests are POSTs to
// /bot<token>/<method> with JSON or form parameters; every answer is {"ok":true,"result":...}
// or {"ok":false,"error_code":N,"description":...[,"parameters":{"retry_after":S}]}; a wrong
// token gets 401 Unauthorized; getUpdates long-polls up to its timeout and confirms every update
// below the offset it is called with; text with parse_mode HTML must be valid (only the
// documented tags, entities &lt; &gt; &amp; &quot; and numeric ones), else 400 "can't parse
// entities"; callback_data is 1-64 bytes; editing to the same text is 400 "message is not
// modified".

import (
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
)

type fakeTG struct {
	t      testing.TB
	srv    *httptest.Server
	token  string
	chat   int64
	botID  int64
	botTag string

	mu       sync.Mutex
	cond     *sync.Cond
	updates  []tgUpdate // not yet confirmed
	nextUpd  int64
	nextMsg  int64
	msgs     map[int64]*fakeTGMsg
	sent     []*fakeTGMsg // in order
	acks     []string     // answerCallbackQuery texts
	calls    map[string]int
	failures map[string][]int // method -> status codes to answer next (429, 500)
	served   map[int64]time.Time
	closed   bool
}

type fakeTGMsg struct {
	ID       int64
	Text     string // as the reader sees it: entities decoded, tags gone
	Raw      string
	Keyboard [][]tgButton
	ReplyTo  int64
	Edits    int
}

func newFakeTG(t testing.TB) *fakeTG {
	f := &fakeTG{t: t, token: "123456:ABC-secret-token", chat: -1001234567890, botID: 42, botTag: "wcomm_test_bot",
		nextUpd: 1000, nextMsg: 1, msgs: map[int64]*fakeTGMsg{}, calls: map[string]int{}, failures: map[string][]int{},
		served: map[int64]time.Time{}}
	f.cond = sync.NewCond(&f.mu)
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		f.mu.Lock()
		f.closed = true
		f.cond.Broadcast()
		f.mu.Unlock()
		f.srv.Close()
	})
	return f
}

func (f *fakeTG) reply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeTG) fail(w http.ResponseWriter, code int, desc string) {
	body := map[string]any{"ok": false, "error_code": code, "description": desc}
	if code == http.StatusTooManyRequests {
		body["parameters"] = map[string]int{"retry_after": 1}
		body["description"] = "Too Many Requests: retry after 1"
	}
	f.reply(w, code, body)
}

func (f *fakeTG) ok(w http.ResponseWriter, result any) {
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

// parseHTML checks text as Telegram's HTML parse mode does and returns what the reader sees.
func parseHTML(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			m := tgTagRe.FindString(s[i:])
			if m == "" {
				return "", fmt.Errorf("Bad Request: can't parse entities: unsupported start tag at byte offset %d", i)
			}
			i += len(m)
		case '&':
			m := tgEntityRe.FindString(s[i:])
			if m == "" {
				return "", fmt.Errorf("Bad Request: can't parse entities: character entity expected at byte offset %d", i)
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

func (f *fakeTG) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		f.fail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/bot")
	tok, method, ok := strings.Cut(path, "/")
	if !ok || tok != f.token {
		f.fail(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	p, err := params(r)
	if err != nil {
		f.fail(w, http.StatusBadRequest, "Bad Request: invalid parameters")
		return
	}
	f.mu.Lock()
	f.calls[method]++
	if fs := f.failures[method]; len(fs) > 0 {
		code := fs[0]
		f.failures[method] = fs[1:]
		f.mu.Unlock()
		f.fail(w, code, http.StatusText(code))
		return
	}
	f.mu.Unlock()
	switch method {
	case "getMe":
		f.ok(w, map[string]any{"id": f.botID, "is_bot": true, "first_name": "wcomm", "username": f.botTag})
	case "getChat":
		if num(p["chat_id"]) != f.chat {
			f.fail(w, http.StatusBadRequest, "Bad Request: chat not found")
			return
		}
		f.ok(w, map[string]any{"id": f.chat, "type": "supergroup", "title": "builds"})
	case "sendMessage":
		f.sendMessage(w, p)
	case "editMessageText":
		f.editMessage(w, p)
	case "answerCallbackQuery":
		f.mu.Lock()
		f.acks = append(f.acks, fmt.Sprint(p["text"]))
		f.mu.Unlock()
		f.ok(w, true)
	case "getUpdates":
		f.getUpdates(w, p)
	default:
		f.fail(w, http.StatusNotFound, "Not Found: method not found")
	}
}

func (f *fakeTG) text(p map[string]any) (string, error) {
	raw, _ := p["text"].(string)
	if strings.TrimSpace(raw) == "" {
		return "", fmt.Errorf("Bad Request: message text is empty")
	}
	if p["parse_mode"] == "HTML" {
		return parseHTML(raw)
	}
	return raw, nil
}

func (f *fakeTG) sendMessage(w http.ResponseWriter, p map[string]any) {
	if num(p["chat_id"]) != f.chat {
		f.fail(w, http.StatusBadRequest, "Bad Request: chat not found")
		return
	}
	text, err := f.text(p)
	if err != nil {
		f.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	m := &fakeTGMsg{Text: text, Raw: fmt.Sprint(p["text"])}
	if rm, ok := p["reply_markup"].(map[string]any); ok {
		rows, _ := rm["inline_keyboard"].([]any)
		for _, row := range rows {
			var btns []tgButton
			for _, b := range row.([]any) {
				bm := b.(map[string]any)
				data, _ := bm["callback_data"].(string)
				if len(data) < 1 || len(data) > 64 {
					f.fail(w, http.StatusBadRequest, "Bad Request: BUTTON_DATA_INVALID")
					return
				}
				btns = append(btns, tgButton{Text: fmt.Sprint(bm["text"]), CallbackData: data})
			}
			m.Keyboard = append(m.Keyboard, btns)
		}
	}
	if rp, ok := p["reply_parameters"].(map[string]any); ok {
		m.ReplyTo = num(rp["message_id"])
	}
	f.mu.Lock()
	m.ID = f.nextMsg
	f.nextMsg++
	f.msgs[m.ID] = m
	f.sent = append(f.sent, m)
	f.cond.Broadcast()
	f.mu.Unlock()
	f.ok(w, map[string]any{"message_id": m.ID, "date": time.Now().Unix(), "chat": map[string]any{"id": f.chat, "type": "supergroup"},
		"from": map[string]any{"id": f.botID, "is_bot": true, "username": f.botTag}, "text": text})
}

func (f *fakeTG) editMessage(w http.ResponseWriter, p map[string]any) {
	text, err := f.text(p)
	if err != nil {
		f.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.msgs[num(p["message_id"])]
	if m == nil || num(p["chat_id"]) != f.chat {
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

func (f *fakeTG) getUpdates(w http.ResponseWriter, p map[string]any) {
	offset := num(p["offset"])
	wait := time.Duration(num(p["timeout"])) * time.Second
	deadline := time.Now().Add(wait)
	f.mu.Lock()
	// Every update below offset is confirmed and forgotten.
	keep := f.updates[:0]
	for _, u := range f.updates {
		if u.UpdateID >= offset {
			keep = append(keep, u)
		}
	}
	f.updates = keep
	timer := time.AfterFunc(wait, func() { f.mu.Lock(); f.cond.Broadcast(); f.mu.Unlock() })
	defer timer.Stop()
	for len(f.updates) == 0 && !f.closed && time.Now().Before(deadline) {
		f.cond.Wait()
	}
	out := append([]tgUpdate(nil), f.updates...)
	now := time.Now()
	for _, u := range out {
		if _, ok := f.served[u.UpdateID]; !ok {
			f.served[u.UpdateID] = now
		}
	}
	f.mu.Unlock()
	f.ok(w, out)
}

// push queues an update and returns its id.
func (f *fakeTG) push(u tgUpdate) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	u.UpdateID = f.nextUpd
	f.nextUpd++
	f.updates = append(f.updates, u)
	f.cond.Broadcast()
	return u.UpdateID
}

// say queues a text message from user in chat; a leading /command gets its bot_command entity.
func (f *fakeTG) say(user, chat int64, text string, replyTo int64) int64 {
	f.mu.Lock()
	id := f.nextMsg
	f.nextMsg++
	f.mu.Unlock()
	m := &tgMessage{MessageID: id, From: &tgUser{ID: user}, Chat: tgChat{ID: chat, Type: "supergroup"}, Date: time.Now().Unix(), Text: text}
	if strings.HasPrefix(text, "/") {
		n := strings.IndexAny(text, " \n")
		if n < 0 {
			n = len(text)
		}
		m.Entities = []tgEntity{{Type: "bot_command", Offset: 0, Length: n}}
	}
	if replyTo != 0 {
		m.ReplyTo = &tgMessage{MessageID: replyTo, Chat: m.Chat, From: &tgUser{ID: f.botID, IsBot: true}}
	}
	return f.push(tgUpdate{Message: m})
}

// press queues a button press on message msg.
func (f *fakeTG) press(user, chat, msg int64, data string) int64 {
	return f.push(tgUpdate{Callback: &tgCallback{ID: "cb" + strconv.FormatInt(time.Now().UnixNano(), 36), From: tgUser{ID: user},
		Message: &tgMessage{MessageID: msg, Chat: tgChat{ID: chat}}, Data: data}})
}

// failNext makes the next calls of method answer with these HTTP codes.
func (f *fakeTG) failNext(method string, codes ...int) {
	f.mu.Lock()
	f.failures[method] = append(f.failures[method], codes...)
	f.mu.Unlock()
}

// waitFor polls the fake's state to a deadline until cond holds.
func (f *fakeTG) waitFor(what string, cond func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		ok := cond()
		f.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			f.mu.Lock()
			var texts []string
			for _, m := range f.sent {
				texts = append(texts, fmt.Sprintf("#%d %q", m.ID, m.Text))
			}
			f.mu.Unlock()
			f.t.Fatalf("timed out waiting for %s; messages sent: %s", what, strings.Join(texts, "; "))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sentCount is the number of messages sent (caller holds no lock).
func (f *fakeTG) sentMsgs() []fakeTGMsg {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]fakeTGMsg, len(f.sent))
	for i, m := range f.sent {
		out[i] = *m
	}
	return out
}
