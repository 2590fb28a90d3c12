package profile

// A dialog's lines as the program meant them: a terminal UI wraps a line longer than its box onto
// the rows below (Ink breaks at a space, or inside a word longer than a row), and a command that
// took two rows read as two lines would pass its first row off as the description and ask about
// its second alone.

import (
	"strings"
	"unicode"

	"github.com/charmbracelet/x/ansi"
)

// width is the screen's width: the pane's (cols) when known, else as far as its rows tell, the
// widest row. Claude Code's rules span the pane; a screen without one gives a narrower width,
// which only joins more rows (a line is never split where the program did not wrap it).
func width(raw []string, cols int) (w int, known bool) {
	if cols > 0 {
		return cols, true
	}
	for _, r := range raw {
		w = max(w, ansi.StringWidth(strings.TrimRightFunc(r, unicode.IsSpace)))
	}
	return w, false
}

// unwrap joins each run of rows that one line wrapped over, and drops blank rows. rows are the
// dialog's rows as read (dialogRow), raw the same rows as drawn. A row was wrapped when the next
// row's first word would not have fitted after it within the box: its right margin taken as wide
// as its left one (Ink pads a box alike on both sides). A row filled to the margin (a word longer
// than a row, broken inside) is joined without a space, when the width is known (a width guessed
// from the rows would glue the widest row's last word to the next).
func unwrap(raw, rows []string, width int, known bool) []string {
	var out []string
	joinNext, tight := false, false
	for i, r := range rows {
		if r == "" {
			joinNext = false
			continue
		}
		switch {
		case joinNext && tight:
			out[len(out)-1] += r
		case joinNext:
			out[len(out)-1] += " " + r
		default:
			out = append(out, r)
		}
		joinNext, tight = false, false
		if i+1 >= len(rows) || rows[i+1] == "" {
			continue
		}
		indent := 0
		if at := strings.Index(raw[i], r); at > 0 {
			indent = ansi.StringWidth(raw[i][:at])
		}
		room := width - 2*indent // the box's inside: the row's margins alike on both sides
		used := ansi.StringWidth(r)
		next, _, _ := strings.Cut(rows[i+1], " ")
		if used+1+ansi.StringWidth(next) > room {
			joinNext, tight = true, known && used >= room
		}
	}
	return out
}
