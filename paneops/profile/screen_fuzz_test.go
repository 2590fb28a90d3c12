package profile

import (
	"strings"
	"testing"
)

// FuzzInspectScreen: what a pane shows is written by any program, so reading it must never fail:
// ParseScreen and every profile's Inspect and Attribute take any capture without a panic, and the
// box rows they report carry no escape or other control character.
func FuzzInspectScreen(f *testing.F) {
	f.Add("────\n❯ \x1b[2mTry \"x\"\x1b[0m\n────\n", 2, 1, "x")
	f.Add("› Ask Codex to do anything\n\n  gpt · ~\n", 2, 0, "hello")
	f.Add(" >   Type your message or @path/to/file\n", 5, 0, "")
	f.Add("bash-5.2$ \x1b]0;title\x07echo hi\n", 10, 0, "echo hi")
	f.Add("\x1b[38;2;1;2;3mred\x1b[7m\x1b[2mx\x1bP...\x1b\\\n\x00\x01", -3, 99, "\x1b[201~")
	profiles := Defaults()
	f.Fuzz(func(t *testing.T, capture string, x, y int, content string) {
		s := ParseScreen(capture, x, y)
		for _, name := range profiles.Names() {
			p := profiles.Lookup(name)
			in := p.Inspect(s)
			for _, l := range in.Lines {
				if strings.ContainsFunc(l, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 }) {
					t.Fatalf("%s: box row %q holds a control character", name, l)
				}
			}
			a := p.Attribute(in, content)
			if a.Ours+a.Foreign != len(in.Lines) {
				t.Fatalf("%s: %d rows attributed, %d in the box", name, a.Ours+a.Foreign, len(in.Lines))
			}
			_ = in.State()
		}
	})
}
