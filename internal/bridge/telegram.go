package bridge

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wcomm/wcomm/internal/bridge/tokens"
	"github.com/wcomm/wcomm/messages"
)

// telegram is the Telegram channel: questions posted to one chat with an inline keyboard,
// answers taken by long polling (getUpdates) from the allowed users of that chat only.
type telegram struct {
	cfg    messages.TelegramConfig
	hub    *Hub
	c      *tgClient
	wait   time.Duration // long-polling timeout
	callTO time.Duration // bound of every other call
	// meet is the folder where the bridges of this bot meet (share.go); takeOver how often one
	// that does not poll looks whether the poller ended.
	meet     string
	takeOver time.Duration
	// joined is closed once this bridge first listens in the meeting folder (or could not):
	// a post waits for it, or a press on it could reach the bot's poller before this bridge is
	// there to claim it, and be answered "unknown question" by another root's bridge.
	joined   chan struct{}
	joinOnce sync.Once

	mu  sync.Mutex
	bot string // the bot's username, for /cmd@BotName
}

func newTelegram(cfg messages.TelegramConfig, hub *Hub, getenv func(string) string) (*telegram, error) {
	api, tok, err := tokens.Telegram(cfg, getenv)
	if err != nil {
		return nil, err
	}
	api = strings.TrimRight(api, "/")
	return &telegram{cfg: cfg, hub: hub, wait: 25 * time.Second, callTO: 20 * time.Second,
		meet: meetDir(api, tok, getenv), takeOver: time.Second, joined: make(chan struct{}),
		c: &tgClient{api: api, token: tok, http: &http.Client{}}}, nil
}

func (t *telegram) Name() string { return "telegram" }

func (t *telegram) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, t.callTO)
}

// Check calls getMe (the token) and getChat (the chat), posting nothing.
func (t *telegram) Check(ctx context.Context) []Check {
	cctx, cancel := t.ctx(ctx)
	defer cancel()
	out := []Check{}
	me, err := t.c.getMe(cctx)
	if err != nil {
		return append(out, Check{Channel: "telegram", What: "token (getMe)", Detail: err.Error()})
	}
	out = append(out, Check{Channel: "telegram", What: "token (getMe)", OK: true, Detail: "bot @" + messages.SanitizeField(me.Username)})
	ch, err := t.c.getChat(cctx, t.cfg.ChatID)
	if err != nil {
		return append(out, Check{Channel: "telegram", What: "chat (getChat)", Detail: err.Error()})
	}
	return append(out, Check{Channel: "telegram", What: "chat (getChat)", OK: true,
		Detail: fmt.Sprintf("%s %d %s", ch.Type, ch.ID, messages.SanitizeField(ch.Title))})
}

// Post sends the question compact, with one button per option.
func (t *telegram) Post(ctx context.Context, q Question) (string, error) {
	cctx, cancel := t.ctx(ctx)
	defer cancel()
	select {
	case <-t.joined:
	case <-cctx.Done():
		return "", fmt.Errorf("telegram: not yet among the bridges of this bot: %w", cctx.Err())
	}
	m, err := t.c.send(cctx, tgSend{ChatID: t.cfg.ChatID, Text: tgQuestionText(q), ParseMode: "HTML", ReplyMarkup: tgButtons(q)})
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(m.MessageID, 10), nil
}

// Notify tells the chat of a dead letter, in one message of its own.
func (t *telegram) Notify(ctx context.Context, n Notice) error {
	cctx, cancel := t.ctx(ctx)
	defer cancel()
	_, err := t.c.send(cctx, tgSend{ChatID: t.cfg.ChatID, Text: tgMarkup.notice(n), ParseMode: "HTML"})
	return err
}

// Close edits the question's message to say how it ended; the edit drops its buttons.
func (t *telegram) Close(ctx context.Context, q Question, ref string, how Outcome) error {
	id, err := strconv.ParseInt(ref, 10, 64)
	if err != nil {
		return nil // not a message of ours
	}
	cctx, cancel := t.ctx(ctx)
	defer cancel()
	text := tgMarkup.closed(q, how)
	return t.c.edit(cctx, tgEdit{ChatID: t.cfg.ChatID, MessageID: id, Text: text, ParseMode: "HTML"})
}

func (t *telegram) learnName(ctx context.Context) error {
	t.mu.Lock()
	known := t.bot != ""
	t.mu.Unlock()
	if known {
		return nil
	}
	cctx, cancel := t.ctx(ctx)
	defer cancel()
	me, err := t.c.getMe(cctx)
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.bot = me.Username
	t.mu.Unlock()
	return nil
}

// allowed reports whether user may answer in chat.
func (t *telegram) allowed(chat int64, user *tgUser) bool {
	return chat == t.cfg.ChatID && user != nil && slices.Contains(t.cfg.AllowedUsers, user.ID)
}

// handle acts on one update. ambiguous says that the bridges of the bot that know a token the
// update names are more than one (a token is unique in a bridge only): it answers none of them.
func (t *telegram) handle(ctx context.Context, u tgUpdate, ambiguous bool) {
	ev := "update " + strconv.FormatInt(u.UpdateID, 10)
	switch {
	case u.Callback != nil:
		cb := u.Callback
		if cb.Message == nil || !t.allowed(cb.Message.Chat.ID, &cb.From) {
			t.hub.logf("telegram: ignored a button press from user %d (not an allowed user of chat %d)", cb.From.ID, t.cfg.ChatID)
			return
		}
		t.callback(ctx, ev, cb)
	case u.Message != nil:
		m := u.Message
		if !t.allowed(m.Chat.ID, m.From) {
			var from int64
			if m.From != nil {
				from = m.From.ID
			}
			t.hub.logf("telegram: ignored a message from user %d in chat %d (not an allowed user of chat %d)", from, m.Chat.ID, t.cfg.ChatID)
			return
		}
		t.message(ctx, ev, m, ambiguous)
	}
}

func (t *telegram) callback(ctx context.Context, ev string, cb *tgCallback) {
	var r Reply
	q, n, ok := t.hub.pressed(cb.Data)
	// A button answers only the question of the post it is on: data naming another question
	// (sent by a client of one's own, not by pressing) answers nothing.
	if ok && t.hub.PostRef("telegram", q.ID) != strconv.FormatInt(cb.Message.MessageID, 10) {
		t.hub.logf("telegram: ignored a button press from user %d whose data names question %s, not the question of message %d", cb.From.ID, q.ID, cb.Message.MessageID)
		ok = false
	}
	if ok {
		r = t.hub.AnswerEvent(ctx, "telegram", ev, q.ID, q.Options[n-1])
	}
	cctx, cancel := t.ctx(ctx)
	defer cancel()
	note := "unknown question"
	switch {
	case !ok:
	case r.Accepted:
		note = "recorded: " + r.Answer
	case r.Stale:
		note = "too late: the question was already decided"
	case r.Invalid:
		note = "not accepted; the question stays open"
	default:
		note = "not recorded: an error; see the bridge's log"
	}
	// Every button press is acknowledged, or the client shows a spinner for a while.
	if err := t.c.answerCallback(cctx, cb.ID, note); err != nil {
		t.hub.logf("telegram: answerCallbackQuery: %v", err)
	}
	if ok {
		t.reply(ctx, cb.Message.MessageID, q, r, q.Options[n-1])
	}
}

// tgCommandRe reads "/word_TOKEN" with an optional "@BotName".
var tgCommandRe = regexp.MustCompile(`^/([A-Za-z0-9]+)(?:_([a-z0-9]+))?(?:@([A-Za-z0-9_]+))?$`)

func (t *telegram) message(ctx context.Context, ev string, m *tgMessage, ambiguous bool) {
	text := strings.TrimSpace(m.Text)
	if cmd, ok := tgCommand(m); ok {
		t.command(ctx, ev, m, cmd, ambiguous)
		return
	}
	if m.ReplyTo != nil {
		q, ok := t.hub.ByRef("telegram", strconv.FormatInt(m.ReplyTo.MessageID, 10))
		if ok {
			r := t.hub.AnswerEvent(ctx, "telegram", ev, q.ID, text)
			t.reply(ctx, m.MessageID, q, r, text)
			return
		}
	}
	t.say(ctx, m.MessageID, "Reply to a question's message to answer it, or tap one of its buttons. /pending lists what waits.")
}

// tgCommand returns the bot command the message is, when its first entity is a bot_command
// spanning the whole text (Telegram marks commands so; the text alone would also match
// "/yes_x" typed inside a sentence).
func tgCommand(m *tgMessage) (string, bool) {
	for _, e := range m.Entities {
		if e.Type == "bot_command" && e.Offset == 0 {
			text := strings.TrimSpace(m.Text)
			cmd := tgSlice(text, e.Offset, e.Length)
			return cmd, cmd != ""
		}
	}
	return "", false
}

// tgSlice cuts text by UTF-16 offsets, as Telegram counts entities.
func tgSlice(text string, off, n int) string {
	u := 0
	start, end := -1, -1
	for i, r := range text {
		if u == off {
			start = i
		}
		if u == off+n {
			end = i
			break
		}
		if r >= 0x10000 {
			u += 2
		} else {
			u++
		}
	}
	if start < 0 {
		return ""
	}
	if end < 0 {
		if u == off+n {
			end = len(text)
		} else {
			return ""
		}
	}
	return text[start:end]
}

func (t *telegram) command(ctx context.Context, ev string, m *tgMessage, cmd string, ambiguous bool) {
	mm := tgCommandRe.FindStringSubmatch(cmd)
	if mm == nil {
		t.say(ctx, m.MessageID, tgHelp)
		return
	}
	word, tok, bot := strings.ToLower(mm[1]), mm[2], mm[3]
	t.mu.Lock()
	me := t.bot
	t.mu.Unlock()
	if bot != "" && !strings.EqualFold(bot, me) {
		return // a command for another bot in the group
	}
	if tok == "" {
		switch word {
		case "pending":
			t.say(ctx, m.MessageID, t.pendingText(ctx))
		case "status":
			t.say(ctx, m.MessageID, tgEscape(t.hub.Status(ctx)))
		case "summary", "timeline":
			recent := t.hub.Recent(10)
			if word == "summary" {
				recent = t.hub.Recent(3)
			}
			head := tgEscape(t.hub.Status(ctx))
			if len(recent) == 0 {
				t.say(ctx, m.MessageID, head+"\nnothing decided yet")
				return
			}
			t.say(ctx, m.MessageID, head+"\n"+tgEscape(strings.Join(recent, "\n")))
		default:
			t.say(ctx, m.MessageID, tgHelp)
		}
		return
	}
	if ambiguous {
		t.say(ctx, m.MessageID, "More than one question has the token "+tgEscape(tok)+" (asked in other folders served by this bot): reply to the question's own message or tap its buttons.")
		return
	}
	q, ok := t.hub.ByToken(tok)
	if !ok {
		t.say(ctx, m.MessageID, "No question has the token "+tgEscape(tok)+". /pending lists what waits.")
		return
	}
	if word == "details" {
		for _, part := range tgDetails(q) {
			t.send(ctx, m.MessageID, part, "")
		}
		return
	}
	// /yes_TOKEN, /no_TOKEN, /retry_TOKEN: the answer is the command's word.
	r := t.hub.AnswerEvent(ctx, "telegram", ev, q.ID, word)
	t.reply(ctx, m.MessageID, q, r, word)
}

// reply tells the person what became of an answer: one compact confirmation, the reason it is
// stale, or the accepted forms of an invalid one.
func (t *telegram) reply(ctx context.Context, to int64, q Question, r Reply, raw string) {
	text := tgMarkup.reply(q, r, fmt.Sprintf("%q is not an answer to %s. Accepted: %s%s", tgEscape(shorten(raw, 300)), tgEscape(q.Token), tgEscape(q.Accepted), tgEscape(tgForms(q))))
	t.say(ctx, to, text)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return messages.SanitizeField(err.Error())
}

func (t *telegram) say(ctx context.Context, to int64, html string) { t.send(ctx, to, html, "HTML") }

// send sends text in parse mode mode ("" for plain text), a reply to message to when not 0.
func (t *telegram) send(ctx context.Context, to int64, text, mode string) {
	cctx, cancel := t.ctx(ctx)
	defer cancel()
	m := tgSend{ChatID: t.cfg.ChatID, Text: text, ParseMode: mode}
	if to != 0 {
		m.Reply = &tgReplyParams{MessageID: to}
	}
	if _, err := t.c.send(cctx, m); err != nil {
		t.hub.logf("telegram: sendMessage: %v", err)
	}
}

func (t *telegram) pendingText(ctx context.Context) string {
	var b strings.Builder
	pending := t.hub.Pending()
	if len(pending) == 0 {
		b.WriteString("No question is pending.")
	}
	for i, q := range pending {
		if b.Len() > tgMaxText/2 {
			// The list stays one message; each question's /details_TOKEN shows it.
			fmt.Fprintf(&b, "… and %d more\n", len(pending)-i)
			break
		}
		kind := "question"
		if q.Action != "" {
			kind = "approval of " + q.Action
		}
		fmt.Fprintf(&b, "• %s <code>%s</code> (%s, worker %s): %s\n", kind, tgEscape(q.Token), tgEscape(q.Task), tgEscape(q.Worker), tgEscape(clip(q.Text, 120)))
	}
	if acts := t.hub.ApprovedActions(ctx); len(acts) > 0 {
		b.WriteString("\nApproved, not yet run:\n")
		for _, a := range acts {
			b.WriteString("• " + tgEscape(a) + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// tgHelp is /help: only the global commands; answers are offered by each question itself.
const tgHelp = "wcomm bridge\n/status – what waits\n/summary – the latest decisions\n/pending – open questions and approvals\n/timeline – decisions in order\n/help – this list"
