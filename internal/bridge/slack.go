package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/wcomm/wcomm/internal/bridge/tokens"
	"github.com/wcomm/wcomm/messages"
)

// slackChannel is the Slack channel: each question posted to one channel, answered by a reply in
// its thread or a press of one of its buttons from an allowed user, read through Socket Mode (an outgoing websocket: no inbound
// listener). Posting and editing use the Web API with the bot token.
type slackChannel struct {
	cfg      messages.SlackConfig
	hub      *Hub
	api      *slack.Client
	bot, app string
	callTO   time.Duration
}

func newSlack(cfg messages.SlackConfig, hub *Hub, getenv func(string) string) (*slackChannel, error) {
	apiURL, bot, app, err := tokens.Slack(cfg, getenv)
	if err != nil {
		return nil, err
	}
	cfg.APIURL = apiURL
	api := slack.New(bot, slack.OptionAPIURL(cfg.APIURL), slack.OptionAppLevelToken(app),
		slack.OptionHTTPClient(&http.Client{Timeout: 30 * time.Second}))
	return &slackChannel{cfg: cfg, hub: hub, api: api, bot: bot, app: app, callTO: 20 * time.Second}, nil
}

func (s *slackChannel) Name() string { return "slack" }

// err turns a slack-go error into one that says what to do and holds no token.
func (s *slackChannel) err(method string, err error) error {
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return &RetryError{After: rl.RetryAfter, Err: fmt.Errorf("slack %s: rate limited", method)}
	}
	msg := s.redact(err.Error())
	if msg == "invalid_auth" || msg == "not_authed" || msg == "token_revoked" {
		return fmt.Errorf("slack %s: the token was refused (%s): check it", method, msg)
	}
	var se slack.SlackErrorResponse
	var sc slack.StatusCodeError
	if errors.As(err, &se) && slackRefusals[se.Err] || errors.As(err, &sc) && refusesPost(sc.Code) {
		return &RefusedError{Err: fmt.Errorf("slack %s: %s", method, msg)}
	}
	return fmt.Errorf("slack %s: %s", method, msg)
}

// slackRefusals are the Web API's errors that refuse one message for what it holds
// (api.slack.com/methods/chat.postMessage#errors): sent again, it is refused again. The others
// (channel_not_found, not_in_channel, a token's, the server's) are the channel's, and retried.
var slackRefusals = map[string]bool{
	"invalid_blocks": true, "invalid_blocks_format": true, "msg_too_long": true, "msg_blocks_too_long": true,
	"no_text": true, "too_many_attachments": true, "invalid_attachments": true, "invalid_arguments": true,
	"invalid_metadata_format": true, "invalid_metadata_schema": true, "metadata_too_large": true,
}

// slackMaxSection is the most text a section block takes (Block Kit: 3000 characters); a
// message's text without blocks may hold 40,000, and a thread part is kept to a section's size.
const slackMaxSection = 3000

// redact removes the tokens from text that came back from elsewhere.
func (s *slackChannel) redact(msg string) string {
	for _, t := range []string{s.bot, s.app} {
		if t != "" {
			msg = strings.ReplaceAll(msg, t, "<token>")
		}
	}
	return msg
}

// Check calls auth.test (the bot token) and conversations.info (the channel), posting nothing.
func (s *slackChannel) Check(ctx context.Context) []Check {
	ctx, cancel := context.WithTimeout(ctx, s.callTO)
	defer cancel()
	out := []Check{}
	a, err := s.api.AuthTestContext(ctx)
	if err != nil {
		return append(out, Check{Channel: "slack", What: "bot token (auth.test)", Detail: s.err("auth.test", err).Error()})
	}
	out = append(out, Check{Channel: "slack", What: "bot token (auth.test)", OK: true, Detail: "bot " + messages.SanitizeField(a.User) + " of " + messages.SanitizeField(a.Team)})
	ch, err := s.api.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: s.cfg.Channel})
	if err != nil {
		return append(out, Check{Channel: "slack", What: "channel (conversations.info)", Detail: s.err("conversations.info", err).Error()})
	}
	return append(out, Check{Channel: "slack", What: "channel (conversations.info)", OK: true, Detail: "#" + messages.SanitizeField(ch.Name)})
}

// slackQuestionText is the question as posted: head, context, options, how to answer, clipped
// to fit a section block; clipped reports whether it was (the post's thread then has it whole).
func slackQuestionText(q Question) (text string, clipped bool) {
	for _, bu := range postBudgets {
		if text = slackQuestionTextWith(q, bu); utf8.RuneCountInString(text) <= slackMaxSection {
			break
		}
	}
	if utf8.RuneCountInString(text) > slackMaxSection {
		text = split(text, slackMaxSection-20, utf8.RuneCountInString)[0] + "…"
	}
	whole := budget{messages.MaxQuestionLen, messages.MaxContextLen, messages.MaxOptionLen}
	return text, text != slackQuestionTextWith(q, whole)
}

func slackQuestionTextWith(q Question, bu budget) string {
	var b strings.Builder
	b.WriteString(slackMarkup.body(q, ">", bu))
	if q.Action != "" {
		b.WriteString(intentOnly)
	}
	how := "Reply in this thread"
	if len(q.Options) > 0 {
		how = "Press an option or reply in this thread"
	}
	b.WriteString("\n" + how + " to answer (" + slackEscape(q.Accepted) + ").")
	return b.String()
}

// slackBlocks is the question as Block Kit: its text, and a button per option (yes and no for
// yes-no) whose value names the question's token and the option. Slack shows at most 25 buttons
// in an actions block and 75 characters on a button.
func slackBlocks(q Question, text string) []slack.Block {
	blocks := []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, nil)}
	var buttons []slack.BlockElement
	for i := range q.Options {
		if i == 25 {
			break
		}
		label := buttonLabel(q, i, 60)
		buttons = append(buttons, slack.NewButtonBlockElement(fmt.Sprintf("answer-%d", i+1), answerData(q.Token, i+1),
			slack.NewTextBlockObject(slack.PlainTextType, label, false, false)))
	}
	if len(buttons) > 0 {
		blocks = append(blocks, slack.NewActionBlock("answers", buttons...))
	}
	return blocks
}

// Post posts the question to the channel; its ts names the thread answers come in.
func (s *slackChannel) Post(ctx context.Context, q Question) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.callTO)
	defer cancel()
	text, clipped := slackQuestionText(q)
	_, ts, err := s.api.PostMessageContext(ctx, s.cfg.Channel, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(slackBlocks(q, text)...))
	if err != nil {
		return "", s.err("chat.postMessage", err)
	}
	if clipped {
		// The whole question in the post's thread; the post stands without it, so a failure
		// here is only told.
		for _, part := range split(details(q), slackMaxSection, utf8.RuneCountInString) {
			if _, _, err := s.api.PostMessageContext(ctx, s.cfg.Channel, slack.MsgOptionText(slackEscape(part), false), slack.MsgOptionTS(ts)); err != nil {
				s.hub.logf("slack: the whole of %s in its thread: %v", q.ID, s.err("chat.postMessage", err))
				break
			}
		}
	}
	return ts, nil
}

// Notify tells the channel of a dead letter, in a message of its own.
func (s *slackChannel) Notify(ctx context.Context, n Notice) error {
	ctx, cancel := context.WithTimeout(ctx, s.callTO)
	defer cancel()
	if _, _, err := s.api.PostMessageContext(ctx, s.cfg.Channel, slack.MsgOptionText(slackMarkup.notice(n), false)); err != nil {
		return s.err("chat.postMessage", err)
	}
	return nil
}

// Close edits the question's message to say how it ended.
func (s *slackChannel) Close(ctx context.Context, q Question, ref string, how Outcome) error {
	ctx, cancel := context.WithTimeout(ctx, s.callTO)
	defer cancel()
	text := slackMarkup.closed(q, how)
	// An empty block list removes the buttons; without it chat.update keeps the old blocks.
	_, _, _, err := s.api.UpdateMessageContext(ctx, s.cfg.Channel, ref, slack.MsgOptionText(text, false), slack.MsgOptionBlocks())
	if err != nil {
		return s.err("chat.update", err)
	}
	return nil
}

// Receive runs a Socket Mode connection until ctx ends, acknowledging every envelope and taking
// thread replies as answers.
func (s *slackChannel) Receive(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// slack-go logs to stderr by default; its diagnostics come to us as events instead.
	sm := socketmode.New(s.api, socketmode.OptionLog(log.New(io.Discard, "", 0)))
	done := make(chan error, 1)
	go func() { done <- sm.RunContext(ctx) }()
	for {
		select {
		case <-ctx.Done():
			<-done
			return nil
		case err := <-done:
			if ctx.Err() != nil {
				return nil
			}
			if err == nil {
				err = errors.New("the connection ended")
			}
			return s.err("socket mode", err)
		case evt := <-sm.Events:
			switch evt.Type {
			case socketmode.EventTypeInvalidAuth:
				cancel()
				<-done
				return fmt.Errorf("slack socket mode: the app token was refused: check it (it starts xapp-)")
			case socketmode.EventTypeConnectionError:
				s.hub.logf("slack: socket mode connection failed (%v); slack-go tries again", s.redact(fmt.Sprint(evt.Data)))
			case socketmode.EventTypeEventsAPI:
				if evt.Request != nil {
					// Acknowledged first: Slack sends an envelope again when its ack is late.
					if err := sm.AckCtx(ctx, evt.Request.EnvelopeID, nil); err != nil {
						s.hub.logf("slack: ack: %v", err)
					}
				}
				if api, ok := evt.Data.(slackevents.EventsAPIEvent); ok {
					if m, ok := api.InnerEvent.Data.(*slackevents.MessageEvent); ok {
						s.message(ctx, m)
					}
				}
			case socketmode.EventTypeInteractive:
				if evt.Request != nil {
					if err := sm.AckCtx(ctx, evt.Request.EnvelopeID, nil); err != nil {
						s.hub.logf("slack: ack: %v", err)
					}
				}
				if cb, ok := evt.Data.(slack.InteractionCallback); ok {
					s.press(ctx, cb)
				}
			case socketmode.EventTypeSlashCommand:
				if evt.Request != nil {
					_ = sm.AckCtx(ctx, evt.Request.EnvelopeID, nil)
				}
			}
		}
	}
}

// message takes a thread reply to a posted question from an allowed user as its answer.
func (s *slackChannel) message(ctx context.Context, m *slackevents.MessageEvent) {
	if m.SubType != "" || m.BotID != "" || m.ThreadTimeStamp == "" || m.ThreadTimeStamp == m.TimeStamp {
		return // edits, joins, bots (our own posts among them), top-level messages
	}
	if m.Channel != s.cfg.Channel || !slices.Contains(s.cfg.AllowedUsers, m.User) {
		s.hub.logf("slack: ignored a reply from user %s in channel %s (not an allowed user of channel %s)",
			messages.SanitizeField(m.User), messages.SanitizeField(m.Channel), s.cfg.Channel)
		return
	}
	if s.seen(m.TimeStamp) {
		return // a redelivered envelope: applied once already
	}
	q, ok := s.hub.ByRef("slack", m.ThreadTimeStamp)
	if !ok {
		return // a thread that is no question of ours
	}
	s.answer(ctx, m.TimeStamp, m.ThreadTimeStamp, q, slackUnescape(strings.TrimSpace(m.Text)))
}

// press takes a button press on a posted question from an allowed user as its answer: the
// button's value names the question's token and the option.
func (s *slackChannel) press(ctx context.Context, cb slack.InteractionCallback) {
	if cb.Type != slack.InteractionTypeBlockActions {
		return
	}
	channel, ts := cb.Channel.ID, cb.Container.MessageTs
	if channel == "" {
		channel = cb.Container.ChannelID
	}
	if ts == "" {
		ts = cb.Message.Timestamp
	}
	if channel != s.cfg.Channel || !slices.Contains(s.cfg.AllowedUsers, cb.User.ID) {
		s.hub.logf("slack: ignored a button press from user %s in channel %s (not an allowed user of channel %s)",
			messages.SanitizeField(cb.User.ID), messages.SanitizeField(channel), s.cfg.Channel)
		return
	}
	for _, a := range cb.ActionCallback.BlockActions {
		key := "press:" + a.ActionTs
		if a.ActionTs == "" || s.seen(key) {
			continue // a redelivered envelope: applied once already
		}
		q, n, ok := s.hub.pressed(a.Value)
		if !ok || s.hub.PostRef("slack", q.ID) != ts {
			continue // a button of no question of ours, or of another post
		}
		s.answer(ctx, key, ts, q, q.Options[n-1])
	}
}

// seen reports whether the message or press key was handled already.
func (s *slackChannel) seen(key string) bool {
	seen := false
	s.hub.st.view(func(st *State) { seen = slices.Contains(st.SlackSeen, key) })
	return seen
}

// answer gives raw as the answer to q, records key as handled, and says in the question's
// thread what became of it.
func (s *slackChannel) answer(ctx context.Context, key, thread string, q Question, raw string) {
	r := s.hub.Answer(ctx, "slack", q.ID, raw)
	if err := s.hub.st.update(func(st *State) {
		st.SlackSeen = append(st.SlackSeen, key)
		if len(st.SlackSeen) > 200 {
			st.SlackSeen = st.SlackSeen[len(st.SlackSeen)-200:]
		}
	}); err != nil {
		s.hub.logf("slack: save state: %v", err)
	}
	text := slackMarkup.reply(q, r, fmt.Sprintf("%s is not an answer to `%s`; accepted: %s. The question stays open.", slackEscape(shorten(raw, 300)), slackEscape(q.Token), slackEscape(q.Accepted)))
	cctx, cancel := context.WithTimeout(ctx, s.callTO)
	defer cancel()
	if _, _, err := s.api.PostMessageContext(cctx, s.cfg.Channel, slack.MsgOptionText(text, false), slack.MsgOptionTS(thread)); err != nil {
		s.hub.logf("slack: confirm in thread: %v", s.err("chat.postMessage", err))
	}
}
