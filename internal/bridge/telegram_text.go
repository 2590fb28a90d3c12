package bridge

import (
	"html"
	"regexp"
	"strings"

	"github.com/wcomm/wcomm/messages"
)

// clip shortens s to n runes on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// tgCommandWord matches an answer that can stand as a command: /retry_TOKEN.
var tgCommandWord = regexp.MustCompile(`^[A-Za-z0-9]{1,24}$`)

// tgCommandAnswers are the answers of q offered as tokenized commands: yes and no for yes-no,
// the command-safe fixed answers.
func tgCommandAnswers(q Question) []string {
	switch q.Type {
	case messages.YesNo:
		return []string{"yes", "no"}
	case messages.Permission:
		return q.Options
	case messages.Fixed:
		var out []string
		for _, o := range q.Options {
			if tgCommandWord.MatchString(o) {
				out = append(out, strings.ToLower(o))
			}
		}
		return out
	}
	return nil
}

// tgMaxText is the most text a message may hold: Telegram takes 1-4096 characters after entities
// parsing, in UTF-16 code units, and refuses more ("message is too long").
const tgMaxText = 4096

// tgLen is the length of text as Telegram counts it: what the reader sees (in parse mode HTML,
// tags gone and entities decoded), in UTF-16 code units.
func tgLen(text, mode string) int {
	if mode == "HTML" {
		text = html.UnescapeString(tgTagRe.ReplaceAllString(text, ""))
	}
	return tgUnits(text)
}

// tgTagRe finds the tags of our own markup: text from elsewhere has its '<' escaped.
var tgTagRe = regexp.MustCompile(`<[^<>]*>`)

func tgUnits(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// tgFit is text as a message can hold it: as it is when within the limit, else what the reader
// would see, clipped, in plain text (a cut through markup would be refused). Every text the
// bridge sends or edits goes through it, so none is refused for its length.
func tgFit(text, mode string) (string, string) {
	if tgLen(text, mode) <= tgMaxText {
		return text, mode
	}
	if mode == "HTML" {
		text = html.UnescapeString(tgTagRe.ReplaceAllString(text, ""))
	}
	return split(text, tgMaxText-20, tgUnits)[0] + "\n… (clipped)", ""
}

// tgQuestionText is the whole compact question: head, short context, options, the tokenized
// answers and how to see more, clipped to fit one message (/details shows it whole).
func tgQuestionText(q Question) string {
	var text string
	for _, bu := range postBudgets {
		if text = tgQuestionTextWith(q, bu); tgLen(text, "HTML") <= tgMaxText {
			break
		}
	}
	return text
}

func tgQuestionTextWith(q Question, bu budget) string {
	var b strings.Builder
	b.WriteString(tgMarkup.body(q, "", bu))
	var cmds []string
	for _, a := range tgCommandAnswers(q) {
		cmds = append(cmds, "/"+a+"_"+q.Token)
	}
	if len(cmds) > 0 {
		b.WriteString("\n" + strings.Join(cmds, "  "))
	}
	if q.Action != "" {
		b.WriteString(intentOnly)
	}
	b.WriteString("\nReply to this message to answer · /details_" + q.Token)
	return b.String()
}

// tgButtons is one button per option (yes and no for yes-no).
func tgButtons(q Question) *tgKeyboard {
	if len(q.Options) == 0 {
		return nil
	}
	k := &tgKeyboard{}
	var row []tgButton
	for i := range q.Options {
		label := buttonLabel(q, i, 40)
		row = append(row, tgButton{Text: label, CallbackData: answerData(q.Token, i+1)})
		// Short labels share a row; long ones get their own, so they are readable on a phone.
		if len(row) == 3 || len([]rune(label)) > 12 {
			k.Rows = append(k.Rows, row)
			row = nil
		}
	}
	if len(row) > 0 {
		k.Rows = append(k.Rows, row)
	}
	return k
}

// tgForms lists the tokenized commands, if the question has any.
func tgForms(q Question) string {
	var cmds []string
	for _, a := range tgCommandAnswers(q) {
		cmds = append(cmds, "/"+a+"_"+q.Token)
	}
	if len(cmds) == 0 {
		return "; or tap a button"
	}
	return "; or " + strings.Join(cmds, ", ") + ", or tap a button"
}

// tgDetails is /details_TOKEN: that question whole, in plain text, in as many messages as
// Telegram's limit needs.
func tgDetails(q Question) []string {
	return split(details(q), tgMaxText-100, tgUnits)
}
