package bridge

import (
	"fmt"
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

// tgQuestionText is the whole compact question: head, short context, options, the tokenized
// answers and how to see more.
func tgQuestionText(q Question) string {
	var b strings.Builder
	b.WriteString(tgMarkup.body(q, "", 200, 100))
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
	for i, o := range q.Options {
		label := clip(o, 40)
		if q.Type != messages.YesNo {
			label = messages.OptionLetter(i) + ") " + label
		}
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

// tgDetails is /details_TOKEN: that question's whole context and options, nothing else.
func tgDetails(q Question) string {
	var b strings.Builder
	b.WriteString(tgMarkup.head(q))
	fmt.Fprintf(&b, "\nid %s · asked %s", tgEscape(q.ID), q.AskedAt.Local().Format("2006-01-02 15:04"))
	if q.Request != "" {
		b.WriteString(" · request " + tgEscape(q.Request))
	}
	if q.Context != "" {
		b.WriteString("\n\n" + tgEscape(q.Context))
	}
	for i, o := range q.Options {
		fmt.Fprintf(&b, "\n%s) %s", messages.OptionLetter(i), tgEscape(o))
	}
	b.WriteString("\n\nAccepted: " + tgEscape(q.Accepted))
	return b.String()
}
