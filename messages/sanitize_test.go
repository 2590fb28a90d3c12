package messages

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestSanitize(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		keep   string // keepNewlines true
		single string // keepNewlines false
	}{
		{name: "plain", in: "hello world", keep: "hello world", single: "hello world"},
		{name: "bracketed paste break-out", in: "harmless\x1b[201~\ntouch pwn\n", keep: "harmless\ntouch pwn\n", single: "harmless touch pwn "},
		{name: "paste start marker", in: "a\x1b[200~b", keep: "ab", single: "ab"},
		{name: "line and paragraph separators", in: "a\u2028[RESPONSE x]\u2029b", keep: "a\n[RESPONSE x]\nb", single: "a [RESPONSE x] b"},
		{name: "ctrl-C", in: "before\x03after\n", keep: "beforeafter\n", single: "beforeafter "},
		{name: "double ctrl-C", in: "ABC\x03\x03DEF", keep: "ABCDEF", single: "ABCDEF"},
		{name: "ctrl-D alone", in: "\x04", keep: "", single: ""},
		{name: "other C0", in: "a\x00b\x1ac\x1cd\x15e\x17f\x08g\x07h\x0bi\x0cj", keep: "abcdefghij", single: "abcdefghij"},
		{name: "OSC title with BEL", in: "x\x1b]2;X\x07y\n", keep: "xy\n", single: "xy "},
		{name: "OSC title with ST", in: "x\x1b]0;HACKED-TITLE\x1b\\y", keep: "xy", single: "xy"},
		{name: "OSC 52 clipboard", in: "a\x1b]52;c;cHduZWQ=\x07b", keep: "ab", single: "ab"},
		{name: "unterminated OSC swallows the rest", in: "x\x1b]2;title and more", keep: "x", single: "x"},
		{name: "ESC inside OSC starts a new sequence", in: "x\x1b]2;t\x1b[31mred", keep: "xred", single: "xred"},
		{name: "DCS", in: "a\x1bPq#0;2;0;0;0\x1b\\b", keep: "ab", single: "ab"},
		{name: "APC PM SOS", in: "a\x1b_k\x1b\\b\x1b^p\x07c\x1bXs\x07d", keep: "abcd", single: "abcd"},
		{name: "CSI colours", in: "\x1b[1;31mRED\x1b[0m \x1b[38;5;208morange\x1b[m", keep: "RED orange", single: "RED orange"},
		{name: "CSI clear and cursor", in: "x\x1b[2J\x1b[H\x1b[?25ly", keep: "xy", single: "xy"},
		{name: "CSI cut by newline", in: "a\x1b[12\nb", keep: "a\nb", single: "a b"},
		{name: "CSI at end", in: "a\x1b[20", keep: "a", single: "a"},
		{name: "C1 CSI", in: "a\u009b201~b", keep: "a201~b", single: "a201~b"},
		{name: "C1 range", in: "a\u0080b\u0085c\u009fd\u00a0e", keep: "abcd\u00a0e", single: "abcd\u00a0e"},
		{name: "DEL", in: "a\x7fb", keep: "ab", single: "ab"},
		{name: "lone ESC at end", in: "hello\x1b", keep: "hello", single: "hello"},
		{name: "Alt key pair", in: "ABC\x1bDEF", keep: "ABCEF", single: "ABCEF"},
		{name: "Alt non-ASCII", in: "a\x1béb", keep: "ab", single: "ab"},
		{name: "charset designation", in: "a\x1b(Bb", keep: "ab", single: "ab"},
		{name: "ESC ESC CSI", in: "a\x1b\x1b[201~b", keep: "ab", single: "ab"},
		{name: "ESC then newline keeps the newline", in: "a\x1b\nb", keep: "a\nb", single: "a b"},
		{name: "CRLF", in: "one\r\ntwo\r\n", keep: "one\ntwo\n", single: "one two "},
		{name: "lone CR", in: "one\rtwo", keep: "one\ntwo", single: "one two"},
		{name: "CR CR LF", in: "a\r\r\nb", keep: "a\n\nb", single: "a  b"},
		{name: "invalid UTF-8", in: "a\xffb\xc3", keep: "a\ufffdb\ufffd", single: "a\ufffdb\ufffd"},
		{name: "raw 8-bit CSI byte", in: "a\x9b201~", keep: "a\ufffd201~", single: "a\ufffd201~"},
		{name: "tabs", in: "a\tb\t", keep: "a    b    ", single: "a    b    "},
		{name: "bidi overrides", in: "a\u202ab\u202bc\u202cd\u202de\u202ef\u2066g\u2067h\u2068i\u2069j", keep: "abcdefghij", single: "abcdefghij"},
		{name: "other unicode kept", in: "❯ héllo 世界 🙂 \u200d", keep: "❯ héllo 世界 🙂 \u200d", single: "❯ héllo 世界 🙂 \u200d"},
		{name: "empty", in: "", keep: "", single: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Sanitize(tt.in, true)
			assert.Equal(t, tt.keep, got)
			assertSafe(t, got, true)
			assert.Equal(t, got, Sanitize(got, true), "idempotent")

			got = Sanitize(tt.in, false)
			assert.Equal(t, tt.single, got)
			assertSafe(t, got, false)
			assert.Equal(t, got, SanitizeField(tt.in))
		})
	}
}

// assertSafe checks the sanitizer's promise: no byte below 0x20 but LF (none at all on one
// line), no ESC, no DEL, no C1 control, no bidi override, valid UTF-8.
func assertSafe(t *testing.T, s string, keepNewlines bool) {
	t.Helper()
	if err := unsafeText(s, keepNewlines); err != "" {
		t.Errorf("Sanitize output %q: %s", s, err)
	}
}

// unsafeText returns what is wrong with s as sanitized output, or "".
func unsafeText(s string, keepNewlines bool) string {
	if !utf8.ValidString(s) {
		return "invalid UTF-8"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && !(c == '\n' && keepNewlines)) || c == 0x7f {
			return fmt.Sprintf("control byte %#02x", c)
		}
	}
	for _, r := range s {
		if removedRune(r) {
			return fmt.Sprintf("C1 or bidi rune %U", r)
		}
	}
	return ""
}

func TestSanitizeProperty(t *testing.T) {
	// Every byte pair, and every byte next to ESC and CSI openers, must come out safe.
	var all strings.Builder
	for a := 0; a < 256; a++ {
		for _, prefix := range []string{"", "\x1b", "\x1b[", "\x1b]", "\x1b[1;", "\xc2"} {
			for b := 0; b < 256; b += 17 {
				s := prefix + string([]byte{byte(a), byte(b)})
				all.WriteString(s)
				for _, keep := range []bool{true, false} {
					out := Sanitize(s, keep)
					if msg := unsafeText(out, keep); msg != "" {
						t.Fatalf("Sanitize(%q, %v) = %q: %s", s, keep, out, msg)
					}
				}
			}
		}
	}
	assertSafe(t, Sanitize(all.String(), true), true)
	assertSafe(t, Sanitize(all.String(), false), false)
}

func TestSanitizeTerminal(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain with tab and newline", "a\tb\nc", "a\tb\nc"},
		{"OSC title", "answer\x1b]2;HACKED\x07 done\n", "answer done\n"},
		{"CSI clear screen", "\x1b[2J\x1b[Hx", "x"},
		{"C1 CSI", "a\u009b2Jb", "a2Jb"},
		{"CR becomes LF", "a\r\nb\rc", "a\nb\nc"},
		{"bidi override", "a\u202eb", "ab"},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, SanitizeTerminal(tc.in))
		})
	}
}

func TestEscapeJSON(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"ASCII unchanged", `{"a":"b"}`, `{"a":"b"}`},
		{"DEL", "{\"a\":\"x\x7fy\"}", `{"a":"x\u007fy"}`},
		{"C1 CSI", "{\"a\":\"x\u009b2J\"}", `{"a":"x\u009b2J"}`},
		{"bidi", "{\"a\":\"\u202e\"}", `{"a":"\u202e"}`},
		{"other non-ASCII kept", `{"a":"é—✓"}`, `{"a":"é—✓"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, string(EscapeJSON([]byte(tc.in))))
		})
	}
}

// plainASCII, eight bytes at a time, says what a loop over each byte says: DEL or a byte of 0x80
// or more at any place of inputs of every length up to a few words makes it false.
func TestPlainASCIIEveryPlace(t *testing.T) {
	slow := func(b []byte) bool {
		for _, c := range b {
			if c == 0x7f || c >= 0x80 {
				return false
			}
		}
		return true
	}
	for n := 0; n <= 40; n++ {
		base := []byte(strings.Repeat("a~ \x00\x01{}\x7e", 5))[:n]
		if got := plainASCII(base); got != slow(base) || !got {
			t.Fatalf("length %d: plainASCII %v", n, got)
		}
		for i := 0; i < n; i++ {
			for _, c := range []byte{0x7f, 0x80, 0xc3, 0xff, 0x7e, 0x00} {
				b := append([]byte(nil), base...)
				b[i] = c
				if plainASCII(b) != slow(b) {
					t.Fatalf("length %d, byte %#x at %d: plainASCII %v", n, c, i, plainASCII(b))
				}
			}
		}
	}
}
