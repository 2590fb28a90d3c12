package bridge

// The words a chat shows are the same on every service; only the markup differs (Telegram's HTML
// parse mode, Slack's mrkdwn). markup holds the differences; the texts are written once here.

import (
	"fmt"
	"strings"

	"github.com/wcomm/wcomm/messages"
)

// markup is how one chat service's text format writes the few styles the bridge uses.
type markup struct {
	channel    string              // the answer source the channel records
	esc        func(string) string // plain text made safe for the format
	bold, code [2]string           // what opens and closes each style
	// The marks before a question, an approval and the replies to an answer.
	question, approval, accepted, stale, invalid, failed, dead string
}

var (
	// tgHTML escapes what Telegram's HTML parse mode gives a meaning to; it refuses a message
	// with a stray '<' or '&', and "Store<User> & co" must arrive as written.
	tgHTML = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	// slackText escapes the three characters Slack's message text gives a meaning to.
	slackText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

	tgMarkup = markup{channel: "telegram", esc: tgEscape, bold: [2]string{"<b>", "</b>"}, code: [2]string{"<code>", "</code>"},
		question: "❓", approval: "🔐", accepted: "✅", stale: "⏱", invalid: "❌", failed: "⚠️", dead: "📭"}
	slackMarkup = markup{channel: "slack", esc: slackEscape, bold: [2]string{"*", "*"}, code: [2]string{"`", "`"},
		question: ":question:", approval: ":lock:", accepted: ":white_check_mark:", stale: ":hourglass:", invalid: ":x:", failed: ":warning:", dead: ":mailbox_with_no_mail:"}
)

// tgEscape escapes text for Telegram's HTML parse mode. Control characters are dropped (text
// from a worker is not trusted); new lines stay.
func tgEscape(s string) string { return tgHTML.Replace(messages.SanitizeTerminal(s)) }

// slackEscape escapes text for Slack's message text; control characters are dropped, new lines stay.
func slackEscape(s string) string { return slackText.Replace(messages.SanitizeTerminal(s)) }

// slackUnescape undoes Slack's escaping of what a person typed.
func slackUnescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

func (m markup) b(escaped string) string { return m.bold[0] + escaped + m.bold[1] }
func (m markup) c(escaped string) string { return m.code[0] + escaped + m.code[1] }

// head is the question and its token, the part kept when the post is edited.
func (m markup) head(q Question) string {
	kind := m.question
	if q.Action != "" {
		kind = m.approval + " approval of " + m.esc(q.Action) + ":"
	}
	return fmt.Sprintf("%s %s\n%s · task %s · worker %s", kind, m.b(m.esc(q.Text)), m.c(m.esc(q.Token)), m.esc(q.Task), m.esc(q.Worker))
}

// body is the head, the context and the options, each clipped for a phone's screen (contextMax,
// optionMax runes), and an approval's warning.
func (m markup) body(q Question, contextPrefix string, contextMax, optionMax int) string {
	var b strings.Builder
	b.WriteString(m.head(q))
	if q.Context != "" {
		b.WriteString("\n" + contextPrefix + m.esc(clip(q.Context, contextMax)))
	}
	if q.Type != messages.YesNo {
		for i, o := range q.Options {
			fmt.Fprintf(&b, "\n%s) %s", messages.OptionLetter(i), m.esc(clip(o, optionMax)))
		}
	}
	return b.String()
}

// intentOnly is an approval's warning that a yes runs nothing by itself.
const intentOnly = "\nA yes records intent only: 'wcomm actions run' executes it while its fingerprint holds."

// closed is the post edited once the question is decided, so nobody answers it twice by mistake.
func (m markup) closed(q Question, how Outcome) string {
	return m.head(q) + "\n" + m.b(m.esc(how.Words()))
}

// reply tells the person what became of an answer: one compact confirmation, the reason it is
// stale, or (invalid, already in the format) the accepted forms of an invalid one.
func (m markup) reply(q Question, r Reply, invalid string) string {
	switch {
	case r.Accepted:
		text := fmt.Sprintf("%s %s · %s · source %s · next: %s", m.accepted, m.b(m.esc(r.Answer)), m.c(m.esc(q.Token)), m.channel, m.esc(r.Next))
		if q.Request != "" {
			text += " · request " + m.esc(q.Request)
		}
		return text
	case r.Stale:
		return m.stale + " stale: " + m.esc(errText(r.Err))
	case r.Invalid:
		return m.invalid + " " + invalid
	}
	return m.failed + " not recorded: " + m.esc(errText(r.Err))
}

// notice is a dead letter told in one message.
func (m markup) notice(n Notice) string {
	return m.dead + " " + m.esc(n.Words())
}
