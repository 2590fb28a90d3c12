package bridge

// The words a chat shows are the same on every service; only the markup differs (Telegram's HTML
// parse mode, Slack's mrkdwn). markup holds the differences; the texts are written once here.

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/wcomm/wcomm/messages"
)

// markup is how one chat service's text format writes the few styles the bridge uses.
type markup struct {
	channel    string              // the answer source the channel records
	esc        func(string) string // plain text made safe for the format
	bold, code [2]string           // what opens and closes each style
	pre        [2]string           // a preformatted block
	// The marks before a question, an approval and the replies to an answer.
	question, approval, accepted, stale, invalid, failed, dead string
}

var (
	// tgHTML escapes what Telegram's HTML parse mode gives a meaning to; it refuses a message
	// with a stray '<' or '&', and "Store<User> & co" must arrive as written.
	tgHTML = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	// slackText escapes the three characters Slack's message text gives a meaning to.
	slackText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

	tgMarkup = markup{channel: "telegram", esc: tgEscape, bold: [2]string{"<b>", "</b>"}, code: [2]string{"<code>", "</code>"}, pre: [2]string{"<pre>", "</pre>"},
		question: "❓", approval: "🔐", accepted: "✅", stale: "⏱", invalid: "❌", failed: "⚠️", dead: "📭"}
	slackMarkup = markup{channel: "slack", esc: slackEscape, bold: [2]string{"*", "*"}, code: [2]string{"`", "`"}, pre: [2]string{"```\n", "\n```"},
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

// block is text as a preformatted block (a command, whole lines kept).
func (m markup) block(text string) string {
	return m.pre[0] + m.esc(strings.ReplaceAll(text, m.pre[1], "")) + m.pre[1]
}

// orWord is s, or else when s is empty.
func orWord(s, orElse string) string {
	if strings.TrimSpace(s) == "" {
		return orElse
	}
	return s
}
func (m markup) c(escaped string) string { return m.code[0] + escaped + m.code[1] }

// buttonLabel is option i's button: its letter and text (at most n runes), yes and no alone,
// and a permission's Allow, Always, Deny.
func buttonLabel(q Question, i, n int) string {
	o := q.Options[i]
	switch q.Type {
	case messages.YesNo:
		return clip(o, n)
	case messages.Permission:
		return strings.ToUpper(o[:1]) + o[1:]
	}
	return messages.OptionLetter(i) + ") " + clip(o, n)
}

// head is the question (at most textMax runes) and its token, the part kept when the post is
// edited.
func (m markup) head(q Question, textMax int) string {
	kind := m.question
	if q.Action != "" {
		kind = m.approval + " approval of " + m.esc(shorten(q.Action, 100)) + ":"
	}
	if p := q.Permission; p != nil {
		// The command goes in a block of its own (permBlock): the head says who asks for what.
		return fmt.Sprintf("%s %s\n%s · pane %s", m.approval, m.b(m.esc(shorten(orWord(p.Agent, "an agent")+" asks to run "+p.Tool, 200))),
			m.c(m.esc(q.Token)), m.esc(shorten(p.Pane, 32)))
	}
	return fmt.Sprintf("%s %s\n%s · task %s · worker %s", kind, m.b(m.esc(shorten(q.Text, textMax))), m.c(m.esc(q.Token)),
		m.esc(shorten(q.Task, 64)), m.esc(shorten(q.Worker, 32)))
}

// budget bounds, in runes, the parts of a posted question: a service refuses a post over its
// limit (Telegram 4096 characters, a Slack section 3000), and a question within ask's own
// limits (2,000 characters, 26 options of 300) is over both. The whole question is one command
// or one thread away.
type budget struct{ text, context, option int }

// postBudgets are tried in turn until the post fits: the first suits a phone's screen, the last
// fits any valid question.
var postBudgets = []budget{{1000, 200, 100}, {500, 150, 50}, {200, 80, 20}}

// body is the head, the context and the options, each clipped to the budget, and an approval's
// warning.
func (m markup) body(q Question, contextPrefix string, bu budget) string {
	var b strings.Builder
	b.WriteString(m.head(q, bu.text))
	if p := q.Permission; p != nil {
		b.WriteString("\n" + m.block(shorten(p.Subject, bu.text)))
		if q.Context != "" {
			b.WriteString("\n" + contextPrefix + m.esc(clip(q.Context, bu.context)))
		}
		if p.Always != "" {
			b.WriteString("\nAlways: " + m.esc(shorten(p.Always, bu.context)))
		}
		return b.String()
	}
	if q.Context != "" {
		b.WriteString("\n" + contextPrefix + m.esc(clip(q.Context, bu.context)))
	}
	if q.Type != messages.YesNo {
		for i, o := range q.Options {
			fmt.Fprintf(&b, "\n%s) %s", messages.OptionLetter(i), m.esc(clip(o, bu.option)))
		}
	}
	return b.String()
}

// details is the whole question as plain text (control characters dropped): what a post clips,
// for /details on Telegram and the post's thread on Slack.
func details(q Question) string {
	var b strings.Builder
	kind := "Question"
	if q.Action != "" {
		kind = "Approval of " + shorten(q.Action, 100)
	}
	fmt.Fprintf(&b, "%s %s (task %s, worker %s)\n%s", kind, q.Token, shorten(q.Task, 64), shorten(q.Worker, 32), q.Text)
	fmt.Fprintf(&b, "\nid %s · asked %s", q.ID, q.AskedAt.Local().Format("2006-01-02 15:04"))
	if q.Request != "" {
		b.WriteString(" · request " + shorten(q.Request, 128))
	}
	if p := q.Permission; p != nil {
		b.WriteString("\n\n" + p.Subject)
		if p.Always != "" {
			b.WriteString("\nAlways: " + p.Always)
		}
	}
	if q.Context != "" {
		b.WriteString("\n\n" + q.Context)
	}
	for i, o := range q.Options {
		fmt.Fprintf(&b, "\n%s) %s", messages.OptionLetter(i), o)
	}
	b.WriteString("\n\nAccepted: " + q.Accepted)
	return messages.SanitizeTerminal(b.String())
}

// shorten is s when it has at most n runes, else s clipped on one line.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return clip(s, n)
}

// split cuts text into parts of at most max by size, at line ends where it can, inside a line
// that is longer alone.
func split(text string, max int, size func(string) int) []string {
	var parts []string
	var cur strings.Builder
	flush := func() {
		if strings.TrimSpace(cur.String()) != "" {
			parts = append(parts, strings.TrimRight(cur.String(), "\n"))
		}
		cur.Reset()
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		if size(cur.String())+size(line) <= max {
			cur.WriteString(line)
			continue
		}
		flush()
		for size(line) > max {
			n := 0
			for i, r := range line {
				if n+size(string(r)) > max {
					parts = append(parts, line[:i])
					line = line[i:]
					break
				}
				n += size(string(r))
			}
		}
		cur.WriteString(line)
	}
	flush()
	return parts
}

// intentOnly is an approval's warning that a yes runs nothing by itself.
const intentOnly = "\nA yes records intent only: 'wcomm actions run' executes it while its fingerprint holds."

// closed is the post edited once the question is decided, so nobody answers it twice by mistake.
func (m markup) closed(q Question, how Outcome) string {
	return m.head(q, postBudgets[0].text) + "\n" + m.b(m.esc(shorten(how.Words(), 500)))
}

// reply tells the person what became of an answer: one compact confirmation, the reason it is
// stale, or (invalid, already in the format) the accepted forms of an invalid one.
func (m markup) reply(q Question, r Reply, invalid string) string {
	switch {
	case r.Accepted:
		text := fmt.Sprintf("%s %s · %s · source %s · next: %s", m.accepted, m.b(m.esc(shorten(r.Answer, 500))), m.c(m.esc(q.Token)), m.channel, m.esc(r.Next))
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
