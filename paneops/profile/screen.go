package profile

// A pane's screen as wcomm reads it: rows parsed from a capture, with which runes were drawn
// faint (a placeholder, a suggestion) so that a profile reads only what someone typed.

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Screen is one capture of a pane's visible rows, with what the text looked like (faint or not)
// and where the cursor was.
type Screen struct {
	Lines   []ScreenLine
	CursorX int
	CursorY int
	// Width is the pane's width in cells; 0 when not known.
	Width int
}

// Same reports whether two captures show the same: the same rows and the cursor in the same place.
func (s Screen) Same(o Screen) bool {
	if len(s.Lines) != len(o.Lines) || s.CursorX != o.CursorX || s.CursorY != o.CursorY {
		return false
	}
	for i := range s.Lines {
		if s.Lines[i].Text != o.Lines[i].Text {
			return false
		}
	}
	return true
}

// ScreenLine is one row: its text without escape sequences, and for each rune whether it was drawn
// faint (SGR 2), which is how Codex and Claude Code draw hints in an empty input box. A cursor cell
// drawn in reverse video just before faint text counts as faint: Claude Code draws its cursor over
// the first letter of a hint ("Press up to edit queued messages").
type ScreenLine struct {
	Text  string
	faint []bool
}

// Solid returns the row from rune index from on, without the faint runes.
func (l ScreenLine) Solid(from int) string {
	var b strings.Builder
	i := 0
	for _, r := range l.Text {
		if i >= from && (i >= len(l.faint) || !l.faint[i]) {
			b.WriteRune(r)
		}
		i++
	}
	return b.String()
}

// ParseScreen parses capture-pane -p -e output (rows separated by newlines, SGR escape sequences
// inline) into rows of plain text with their faint runes marked.
func ParseScreen(capture string, cursorX, cursorY int) Screen {
	capture = strings.TrimSuffix(capture, "\n")
	s := Screen{CursorX: cursorX, CursorY: cursorY}
	if capture == "" {
		return s
	}
	for _, raw := range strings.Split(capture, "\n") {
		s.Lines = append(s.Lines, parseRow(raw))
	}
	return s
}

// parseRow removes escape sequences from one captured row, following SGR's faint attribute.
// capture-pane -e resets attributes at the start of each row, so each row starts plain.
func parseRow(raw string) ScreenLine {
	var b strings.Builder
	var faint, reverse []bool
	var st sgrState
	for i := 0; i < len(raw); {
		c := raw[i]
		if c == 0x1b && i+1 < len(raw) {
			switch raw[i+1] {
			case '[':
				j := i + 2
				for j < len(raw) && (raw[j] < 0x40 || raw[j] > 0x7e) {
					j++
				}
				if j < len(raw) && raw[j] == 'm' {
					st = st.apply(raw[i+2 : j])
				}
				i = j + 1
				continue
			case ']', 'P', '_', '^', 'X':
				// A string sequence (OSC 8 hyperlinks, ...) up to BEL or ST.
				j := i + 2
				for j < len(raw) && raw[j] != 0x07 && !(raw[j] == 0x1b && j+1 < len(raw) && raw[j+1] == '\\') {
					j++
				}
				if j < len(raw) && raw[j] == 0x1b {
					j++
				}
				i = j + 1
				continue
			default:
				i += 2
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(raw[i:])
		if r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			// C0 and C1 controls and DEL are no text a box holds.
			i += size
			continue
		}
		b.WriteRune(r)
		faint = append(faint, st.faint)
		reverse = append(reverse, st.reverse)
		i += size
	}
	for k := 0; k+1 < len(faint); k++ {
		if reverse[k] && !faint[k] && faint[k+1] {
			faint[k] = true
		}
	}
	return ScreenLine{Text: b.String(), faint: faint}
}

// sgrState is the part of the graphic rendition that tells hints from input.
type sgrState struct{ faint, reverse bool }

// apply returns the state after one SGR sequence's parameters.
func (st sgrState) apply(params string) sgrState {
	if params == "" {
		return sgrState{}
	}
	fields := strings.FieldsFunc(params, func(r rune) bool { return r == ';' || r == ':' })
	for i := 0; i < len(fields); i++ {
		n, err := strconv.Atoi(fields[i])
		if err != nil {
			continue
		}
		switch n {
		case 0:
			st = sgrState{}
		case 2:
			st.faint = true
		case 22:
			st.faint = false
		case 7:
			st.reverse = true
		case 27:
			st.reverse = false
		case 38, 48, 58:
			// Extended colour: 5;N or 2;R;G;B follow and are no attributes.
			if i+1 < len(fields) && fields[i+1] == "5" {
				i += 2
			} else if i+1 < len(fields) && fields[i+1] == "2" {
				i += 4
			}
		}
	}
	return st
}
