package chatfake

// A fake of Slack's Web API and Socket Mode on loopback, written from Slack's public
// documentation (api.slack.com: "Web API basics", chat.postMessage, chat.update, auth.test,
// conversations.info, apps.connections.open, "Using Socket Mode"), not from this package's
// client. Web API calls are POSTs (form or JSON) or GETs to /api/<method>; the token comes as the
// token parameter or an "Authorization: Bearer" header; an answer is HTTP 200 with {"ok":true,...}
// or {"ok":false,"error":"invalid_auth"}; a rate limit is HTTP 429 with a Retry-After header.
// apps.connections.open takes the app-level token (xapp-) and returns a websocket URL; on it
// the server first sends {"type":"hello"}, then envelopes {"envelope_id","type":"events_api",
// "payload":{"type":"event_callback","event":{...}},"accepts_response_payload"} (a message) or
// {"envelope_id","type":"interactive","payload":{"type":"block_actions","actions":[...],...}} (a
// button pressed), each of which the app acknowledges by sending {"envelope_id":...} back.
// Block Kit ("blocks", a JSON list, form-encoded as a string) is checked as Slack checks it.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Slack is the fake Web API and Socket Mode server. Its exported fields are read under Mu.
type Slack struct {
	T        testing.TB
	Srv      *httptest.Server
	Bot, App string
	Channel  string

	Mu       sync.Mutex
	Posts    []SlackPost
	Updates  map[string]string // ts -> new text
	acks     map[string]bool
	sentEnv  map[string]time.Time
	conns    []*websocket.Conn
	envSeq   int
	envs     map[string]map[string]any
	nextTS   int
	Failures map[string][]int
	Calls    map[string]int
	connWait chan struct{}
}

// SlackMaxText is the most a message's text may hold (chat.postMessage: msg_too_long beyond).
const SlackMaxText = 40000

// SlackPost is a message posted through chat.postMessage.
type SlackPost struct {
	TS, ThreadTS, Text string
	// Buttons are the message's Block Kit buttons, in order (chat.update may replace them).
	Buttons []SlackButton
}

// SlackButton is a button element of an actions block.
type SlackButton struct {
	ActionID, BlockID, Value, Text string
}

// slackBlocks reads a message's blocks as Block Kit defines them, and returns its buttons;
// set says whether the call carried blocks at all. Slack answers invalid_blocks to a list that
// is not JSON, of more than 50 blocks, a section whose text is over 3000 characters, a button
// whose text is not plain_text of 1-75 characters, a value over 2000 characters, an action_id
// over 255 or used twice, or an actions block of more than 25 elements.
func slackBlocks(raw string) (buttons []SlackButton, set bool, err error) {
	if raw == "" {
		return nil, false, nil
	}
	var blocks []struct {
		Type    string `json:"type"`
		BlockID string `json:"block_id"`
		Text    *struct {
			Text string `json:"text"`
		} `json:"text"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
			Text     struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"text"`
		} `json:"elements"`
	}
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return nil, true, err
	}
	if len(blocks) > 50 {
		return nil, true, fmt.Errorf("more than 50 blocks")
	}
	ids := map[string]bool{}
	for _, b := range blocks {
		if b.Type == "section" && b.Text != nil && len([]rune(b.Text.Text)) > 3000 {
			return nil, true, fmt.Errorf("a section's text is over 3000 characters")
		}
		if b.Type != "actions" {
			continue
		}
		if len(b.Elements) > 25 {
			return nil, true, fmt.Errorf("more than 25 elements")
		}
		for _, e := range b.Elements {
			if e.Type != "button" {
				continue
			}
			n := len([]rune(e.Text.Text))
			if e.Text.Type != "plain_text" || n == 0 || n > 75 || len(e.Value) > 2000 || e.ActionID == "" || len(e.ActionID) > 255 || ids[e.ActionID] {
				return nil, true, fmt.Errorf("invalid button %+v", e)
			}
			ids[e.ActionID] = true
			buttons = append(buttons, SlackButton{ActionID: e.ActionID, BlockID: b.BlockID, Value: e.Value, Text: e.Text.Text})
		}
	}
	return buttons, true, nil
}

// NewSlack starts the fake on loopback; it stops when the test ends.
func NewSlack(t testing.TB) *Slack {
	f := &Slack{T: t, Bot: "xoxb-bot-secret", App: "xapp-app-secret", Channel: "C0123456",
		Updates: map[string]string{}, acks: map[string]bool{}, sentEnv: map[string]time.Time{}, Failures: map[string][]int{},
		Calls: map[string]int{}, envs: map[string]map[string]any{}, connWait: make(chan struct{}, 16)}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", f.api)
	mux.HandleFunc("/link", f.socket)
	f.Srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		f.Mu.Lock()
		for _, c := range f.conns {
			c.Close()
		}
		f.Mu.Unlock()
		f.Srv.CloseClientConnections()
		f.Srv.Close()
	})
	return f
}

func (f *Slack) write(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (f *Slack) api(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	vals := map[string]string{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		for k, v := range m {
			vals[k] = fmt.Sprint(v)
		}
	} else {
		_ = r.ParseForm()
		for k, v := range r.Form {
			vals[k] = v[0]
		}
	}
	token := vals["token"]
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		token = strings.TrimPrefix(h, "Bearer ")
	}
	f.Mu.Lock()
	f.Calls[method]++
	if fs := f.Failures[method]; len(fs) > 0 {
		code := fs[0]
		f.Failures[method] = fs[1:]
		f.Mu.Unlock()
		if code == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		w.WriteHeader(code)
		return
	}
	f.Mu.Unlock()
	want := f.Bot
	if method == "apps.connections.open" {
		want = f.App
	}
	if token == "" {
		f.write(w, map[string]any{"ok": false, "error": "not_authed"})
		return
	}
	if token != want {
		f.write(w, map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	switch method {
	case "auth.test":
		f.write(w, map[string]any{"ok": true, "url": "https://example.slack.com/", "team": "Example", "user": "wcomm", "team_id": "T1", "user_id": "UBOT", "bot_id": "BBOT"})
	case "conversations.info":
		if vals["channel"] != f.Channel {
			f.write(w, map[string]any{"ok": false, "error": "channel_not_found"})
			return
		}
		f.write(w, map[string]any{"ok": true, "channel": map[string]any{"id": f.Channel, "name": "builds", "is_channel": true}})
	case "chat.postMessage":
		if vals["channel"] != f.Channel {
			f.write(w, map[string]any{"ok": false, "error": "channel_not_found"})
			return
		}
		if vals["text"] == "" {
			f.write(w, map[string]any{"ok": false, "error": "no_text"})
			return
		}
		if len([]rune(vals["text"])) > SlackMaxText {
			f.write(w, map[string]any{"ok": false, "error": "msg_too_long"})
			return
		}
		buttons, _, err := slackBlocks(vals["blocks"])
		if err != nil {
			f.write(w, map[string]any{"ok": false, "error": "invalid_blocks"})
			return
		}
		f.Mu.Lock()
		f.nextTS++
		ts := fmt.Sprintf("1700000000.%06d", f.nextTS)
		f.Posts = append(f.Posts, SlackPost{TS: ts, ThreadTS: vals["thread_ts"], Text: vals["text"], Buttons: buttons})
		f.Mu.Unlock()
		f.write(w, map[string]any{"ok": true, "channel": f.Channel, "ts": ts, "message": map[string]any{"text": vals["text"], "ts": ts, "bot_id": "BBOT"}})
	case "chat.update":
		if len([]rune(vals["text"])) > SlackMaxText {
			f.write(w, map[string]any{"ok": false, "error": "msg_too_long"})
			return
		}
		// Without blocks the message keeps its old ones; an empty list removes them.
		buttons, set, err := slackBlocks(vals["blocks"])
		if err != nil {
			f.write(w, map[string]any{"ok": false, "error": "invalid_blocks"})
			return
		}
		f.Mu.Lock()
		found := false
		for i, p := range f.Posts {
			if p.TS == vals["ts"] {
				found = true
				if set {
					f.Posts[i].Buttons = buttons
				}
			}
		}
		if found {
			f.Updates[vals["ts"]] = vals["text"]
		}
		f.Mu.Unlock()
		if !found {
			f.write(w, map[string]any{"ok": false, "error": "message_not_found"})
			return
		}
		f.write(w, map[string]any{"ok": true, "channel": f.Channel, "ts": vals["ts"], "text": vals["text"]})
	case "apps.connections.open":
		f.write(w, map[string]any{"ok": true, "url": "ws" + strings.TrimPrefix(f.Srv.URL, "http") + "/link?ticket=t1"})
	default:
		f.write(w, map[string]any{"ok": false, "error": "unknown_method"})
	}
}

func (f *Slack) socket(w http.ResponseWriter, r *http.Request) {
	// Slack's clients send "Origin: https://api.slack.com", which Slack's endpoint accepts.
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	c, err := up.Upgrade(w, r, nil)
	if err != nil {
		f.T.Logf("upgrade: %v %v", err, r.Header)
		return
	}
	f.Mu.Lock()
	f.conns = append(f.conns, c)
	f.Mu.Unlock()
	_ = c.WriteJSON(map[string]any{"type": "hello", "num_connections": 1, "connection_info": map[string]any{"app_id": "A1"},
		"debug_info": map[string]any{"host": "fake", "approximate_connection_time": 3600}})
	f.connWait <- struct{}{}
	for {
		var ack struct {
			EnvelopeID string `json:"envelope_id"`
		}
		if err := c.ReadJSON(&ack); err != nil {
			return
		}
		f.Mu.Lock()
		if ack.EnvelopeID != "" {
			f.acks[ack.EnvelopeID] = true
		}
		f.Mu.Unlock()
	}
}

// WaitConnected waits for a Socket Mode connection.
func (f *Slack) WaitConnected() {
	f.T.Helper()
	select {
	case <-f.connWait:
	case <-time.After(10 * time.Second):
		f.T.Fatal("no Socket Mode connection")
	}
}

// Reply sends a message event in thread threadTS from user in channel over the newest
// connection, as an events_api envelope; it returns the envelope id.
func (f *Slack) Reply(user, channel, threadTS, text string) string {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.envSeq++
	f.nextTS++
	id := "env-" + strconv.Itoa(f.envSeq)
	ts := fmt.Sprintf("1700000001.%06d", f.nextTS)
	ev := map[string]any{"type": "message", "channel": channel, "user": user, "text": text, "ts": ts, "thread_ts": threadTS,
		"event_ts": ts, "channel_type": "channel"}
	env := map[string]any{"envelope_id": id, "type": "events_api", "accepts_response_payload": false, "retry_attempt": 0, "retry_reason": "",
		"payload": map[string]any{"token": "verif", "team_id": "T1", "api_app_id": "A1", "type": "event_callback", "event_id": "Ev" + id,
			"event_time": time.Now().Unix(), "event": ev}}
	f.envs[id] = env
	c := f.conns[len(f.conns)-1]
	f.sentEnv[id] = time.Now()
	if err := c.WriteJSON(env); err != nil {
		f.T.Errorf("send envelope: %v", err)
	}
	return id
}

// Press sends the press of button n (0-based) of the message ts by user in channel over the
// newest connection, as an interactive envelope with a block_actions payload (Socket Mode's
// "button" example); it returns the envelope id.
func (f *Slack) Press(user, channel, ts string, n int) string {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	var b SlackButton
	for _, p := range f.Posts {
		if p.TS == ts && n < len(p.Buttons) {
			b = p.Buttons[n]
		}
	}
	f.envSeq++
	f.nextTS++
	id := "env-" + strconv.Itoa(f.envSeq)
	actionTS := fmt.Sprintf("1700000002.%06d", f.nextTS)
	payload := map[string]any{"type": "block_actions", "user": map[string]any{"id": user, "username": "someone", "team_id": "T1"},
		"api_app_id": "A1", "token": "verif", "trigger_id": "trig-" + id, "team": map[string]any{"id": "T1", "domain": "example"},
		"container":    map[string]any{"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": false},
		"channel":      map[string]any{"id": channel, "name": "builds"},
		"message":      map[string]any{"type": "message", "ts": ts, "bot_id": "BBOT", "text": "..."},
		"response_url": "https://hooks.slack.com/actions/T1/1/x",
		"actions": []any{map[string]any{"type": "button", "action_id": b.ActionID, "block_id": b.BlockID, "value": b.Value,
			"text": map[string]any{"type": "plain_text", "text": b.Text}, "action_ts": actionTS}}}
	env := map[string]any{"envelope_id": id, "type": "interactive", "accepts_response_payload": false, "payload": payload}
	f.envs[id] = env
	f.sentEnv[id] = time.Now()
	if err := f.conns[len(f.conns)-1].WriteJSON(env); err != nil {
		f.T.Errorf("send envelope: %v", err)
	}
	return id
}

// Redeliver sends envelope id's event again under a new envelope id, as Slack does when an
// ack came late (retry_attempt 1, retry_reason "timeout"); it returns the new id.
func (f *Slack) Redeliver(old string) string {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.envSeq++
	id := "env-" + strconv.Itoa(f.envSeq)
	env := map[string]any{}
	for k, v := range f.envs[old] {
		env[k] = v
	}
	env["envelope_id"], env["retry_attempt"], env["retry_reason"] = id, 1, "timeout"
	f.envs[id] = env
	if err := f.conns[len(f.conns)-1].WriteJSON(env); err != nil {
		f.T.Errorf("send envelope: %v", err)
	}
	return id
}

// Snapshot copies the posts, the updated texts by ts and the acknowledged envelope ids.
func (f *Slack) Snapshot() ([]SlackPost, map[string]string, map[string]bool) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	u := map[string]string{}
	for k, v := range f.Updates {
		u[k] = v
	}
	a := map[string]bool{}
	for k, v := range f.acks {
		a[k] = v
	}
	posts := append([]SlackPost(nil), f.Posts...)
	for i := range posts {
		posts[i].Buttons = append([]SlackButton(nil), posts[i].Buttons...)
	}
	return posts, u, a
}
