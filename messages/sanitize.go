package messages

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf8"
)

const esc = 0x1b

// Sanitize makes text safe to paste into a pane: invalid UTF-8 becomes U+FFFD; CRLF and lone CR
// become LF; whole escape sequences (CSI, OSC/DCS/SOS/PM/APC up to BEL or ST, any other ESC pair, a
// trailing ESC) are removed; every other C0 control except LF and TAB, DEL and C1 (U+0080-U+009F)
// are removed; TAB becomes 4 spaces; bidi overrides U+202A-U+202E and U+2066-U+2069 are removed;
// the line and paragraph separators U+2028 and U+2029 become LF. When keepNewlines is false, LF
// becomes a space as well. The request file keeps the original bytes;
// only what reaches a pane goes through here.
func Sanitize(s string, keepNewlines bool) string {
	return sanitize(s, keepNewlines, false)
}

// SanitizeTerminal makes text from another process safe to print on a terminal: what Sanitize
// removes for a pane is removed here too (an OSC sequence in a worker's answer would retitle the
// reader's window, a CSI would move its cursor or clear its screen), but newlines and TAB are kept,
// since no terminal acts on them beyond layout. The result holds no byte below 0x20 other than LF
// and TAB, no DEL, no C1 control and no bidi override, so no concatenation of results can form an
// escape sequence either.
func SanitizeTerminal(s string) string {
	return sanitize(s, true, true)
}

func sanitize(s string, keepNewlines, keepTabs bool) string {
	if plain(s, keepNewlines, keepTabs) {
		return s
	}
	// tmux passes every byte through to the app (measured on tmux 3.3a): "ESC[201~" ends a bracketed
	// paste early so the rest runs as typed keys, ^C and ^D kill cooked-mode programs, OSC 2
	// rewrites #{pane_title}. Hence everything below.
	s = strings.ToValidUTF8(s, "\uFFFD")
	nl := "\n"
	if !keepNewlines {
		nl = " "
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\r':
			b.WriteString(nl)
			i++
			if i < len(s) && s[i] == '\n' {
				i++
			}
		case c == '\n':
			b.WriteString(nl)
			i++
		case c == '\t':
			if keepTabs {
				b.WriteByte('\t')
			} else {
				b.WriteString("    ")
			}
			i++
		case c == esc:
			i = skipEscape(s, i)
		case c < 0x20 || c == 0x7f:
			i++
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == 0x2028 || r == 0x2029:
				// LINE and PARAGRAPH SEPARATOR break the line for many readers (JavaScript,
				// editors, some terminals and agents) and not for others: one meaning for all.
				b.WriteString(nl)
			case !removedRune(r):
				b.WriteString(s[i : i+size])
			}
			i += size
		}
	}
	return b.String()
}

// plain reports whether s is printable ASCII (and LF and TAB when kept), which sanitize returns
// unchanged.
func plain(s string, keepNewlines, keepTabs bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 || c >= 0x7f) && !(c == '\n' && keepNewlines) && !(c == '\t' && keepTabs) {
			return false
		}
	}
	return true
}

// removedRune reports the non-ASCII runes Sanitize drops: C1 controls (U+009B is an 8-bit CSI)
// and the bidi overrides and isolates that make a line display differently from what it says.
func removedRune(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// skipEscape returns the index after the escape sequence that starts with the ESC at s[i]. It
// follows the VT500 parser's states (ECMA-48): a C0 control or another ESC inside a sequence is
// acted on by the terminal, so it ends the sequence here and is left to the caller.
func skipEscape(s string, i int) int {
	j := i + 1
	if j >= len(s) {
		return j // a trailing lone ESC
	}
	c := s[j]
	switch {
	case c == '[': // CSI: parameter and intermediate bytes, then one final byte
		j++
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x3f {
			j++
		}
		if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
			j++
		}
		return j
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_': // OSC, DCS, SOS, PM, APC
		for j++; j < len(s); j++ {
			switch s[j] {
			case 0x07:
				return j + 1
			case esc:
				if j+1 < len(s) && s[j+1] == '\\' {
					return j + 2 // ST
				}
				return j
			}
		}
		return j // unterminated: the terminal would swallow the rest too
	case c < 0x20 || c == 0x7f:
		return j
	case c <= 0x2f: // intermediates (ESC ( B and the like), then a final byte
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7e {
			j++
		}
		return j
	case c < utf8.RuneSelf:
		return j + 1
	default: // ESC and a non-ASCII character: Alt plus that key
		_, size := utf8.DecodeRuneInString(s[j:])
		return j + size
	}
}

// SanitizeField is Sanitize without newlines, for single-line fields (paths, ids) put on a line
// that is pasted, so a worker-controlled field cannot inject keys.
func SanitizeField(s string) string {
	return Sanitize(s, false)
}

// EscapeJSON makes encoded JSON safe to print on a terminal without changing what it decodes to:
// encoding/json already escapes C0 controls, but passes DEL, the C1 controls (U+009B is an 8-bit
// CSI) and the bidi overrides through as raw characters. Those only occur inside JSON strings,
// where a \uXXXX escape stands for the same character, so the bytes are carried, escaped.
func EscapeJSON(data []byte) []byte {
	if plainASCII(data) {
		return data
	}
	out := make([]byte, 0, len(data)+16)
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == 0x7f || removedRune(r):
			out = append(out, fmt.Sprintf("\\u%04x", r)...)
		case r == utf8.RuneError && size == 1:
			out = append(out, "\\ufffd"...)
		default:
			out = append(out, data[i:i+size]...)
		}
		i += size
	}
	return out
}

// plainASCII reports whether data holds neither DEL nor a byte of a multi-byte character, eight
// bytes at a time: a history's JSON of 20 MB passes through EscapeJSON whole, and a loop of one
// byte at a time was a tenth of the time of a history read from its index.
func plainASCII(data []byte) bool {
	const ones, highs, dels = 0x0101010101010101, 0x8080808080808080, 0x7f7f7f7f7f7f7f7f
	for len(data) >= 8 {
		w := binary.LittleEndian.Uint64(data)
		if w&highs != 0 {
			return false
		}
		// A byte of w^dels is zero where w holds DEL (every byte is below 0x80 here).
		if v := w ^ dels; (v-ones)&^v&highs != 0 {
			return false
		}
		data = data[8:]
	}
	for _, c := range data {
		if c == 0x7f || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
