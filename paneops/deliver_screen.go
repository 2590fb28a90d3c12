package paneops

// The screen half of a delivery's guarded Enter: a tmux format, evaluated by the server in the
// Enter's own call, that holds when the pane's screen must not take the Enter. A dialog that
// replaces an agent's input box between the paste and the Enter (a permission prompt) would
// otherwise get the Enter, and any Enter typed into such a dialog approves it (measured on Claude
// Code). Reading the screen and then pressing in a second call leaves a moment for the dialog to
// come between; tmux's #{C/r:REGEX} searches the pane's visible rows in the same call, so nothing
// can.
//
// The format carries no message text: the box is known to hold the paste by the profile's own
// prompt with something after it (the client-side reads before each Enter attribute what the box
// holds to the paste; this check only makes sure a box is still there at the moment of the key),
// and a dialog by its markers, both written by the profile, never by a sender.

import (
	"context"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/wcomm/wcomm/paneops/profile"
)

// screenRefusal is the format that holds when the screen must not take a delivery's Enter: one of
// the profile's dialogs shows (all its markers found), or the profile's input box is gone (no row
// with its prompt, and, once the paste was seen in it, text after the prompt). "" when the
// profile gives nothing to look for. A paste never seen keeps the Enter an agent whose event
// loop is held up needs (it reads paste and Enter together, DecideAfter), but only into its box.
func screenRefusal(p *profile.Profile, shown bool) string {
	if p == nil {
		return ""
	}
	var parts []string
	for _, d := range p.Dialogs {
		var all []string
		for _, m := range d.Markers {
			// A marker that cannot be written for tmux is left out: the rest still find the
			// dialog, and finding it where it is not only holds an Enter back.
			if ere, ok := toERE(m, true); ok {
				all = append(all, "#{C/r:"+formatEscape(ere)+"}")
			}
		}
		if len(all) > 0 {
			parts = append(parts, fold("&&", all))
		}
	}
	if p.HasBox() && !p.Input.CursorLine {
		if ere, ok := toERE(p.Input.Prompt, false); ok {
			// Something after the prompt that is not a blank (a no-break space is one to the
			// box, cleanRow). Not found is 0 (tmux 3.3a has no #{!:}).
			box := "(" + ere + ")"
			if shown {
				box += ".*[^[:space:]\u00a0]"
			}
			parts = append(parts, "#{==:#{C/r:"+formatEscape(box)+"},0}")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fold("||", parts)
}

// fold joins conditions with tmux's two-operand op: #{op:a,#{op:b,c}}.
func fold(op string, conds []string) string {
	out := conds[len(conds)-1]
	for i := len(conds) - 2; i >= 0; i-- {
		out = "#{" + op + ":" + conds[i] + "," + out + "}"
	}
	return out
}

// formatEscape writes s so that tmux's format parser gives it back as it is: '#', ',' and '}'
// are escaped with '#' (tmux 3.3a; an unescaped '}' ends the #{C/r:} early).
func formatEscape(s string) string {
	r := strings.NewReplacer("#", "##", ",", "#,", "}", "#}")
	return r.Replace(s)
}

// toERE writes an RE2 pattern of a profile as a POSIX extended regex for tmux's #{C/r:}, which
// runs regexec on each visible row with its trailing blanks cut. The ERE matches at least every
// row the pattern does (more is allowed: it only holds an Enter back), in a UTF-8 locale of the
// server or the C one: no brace counts and no bracket holding a rune above ASCII, whose meaning
// depends on the locale, are written. trimmed: the pattern is matched against a row with its
// blanks and a dialog's frame ("│") cut off (profile.Dialog), so its anchors allow them. ok is
// false for a pattern that does not parse.
func toERE(pattern string, trimmed bool) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	if !writeERE(&b, re.Simplify(), trimmed) {
		return "", false
	}
	return b.String(), true
}

// anyRun is what stands for a part the ERE cannot say exactly: any run of characters.
const anyRun = ".*"

func writeERE(b *strings.Builder, re *syntax.Regexp, trimmed bool) bool {
	switch re.Op {
	case syntax.OpNoMatch:
		return false
	case syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		// Dropping a condition matches more.
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			writeRune(b, r, re.Flags&syntax.FoldCase != 0)
		}
	case syntax.OpCharClass:
		writeClass(b, re.Rune)
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		// One rune may be several bytes to a server in the C locale.
		b.WriteString("(" + anyRun + ")")
	case syntax.OpBeginLine, syntax.OpBeginText:
		b.WriteString("^")
		if trimmed {
			b.WriteString("[^[:alnum:]]*")
		}
	case syntax.OpEndLine, syntax.OpEndText:
		if trimmed {
			b.WriteString("[^[:alnum:]]*")
		}
		b.WriteString("$")
	case syntax.OpCapture:
		b.WriteString("(")
		if !writeERE(b, re.Sub[0], trimmed) {
			return false
		}
		b.WriteString(")")
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		b.WriteString("(")
		if !writeERE(b, re.Sub[0], trimmed) {
			return false
		}
		b.WriteString(")" + map[syntax.Op]string{syntax.OpStar: "*", syntax.OpPlus: "+", syntax.OpQuest: "?"}[re.Op])
	case syntax.OpRepeat:
		// Simplify has written counts out; one left is taken as "any number".
		b.WriteString("(")
		if !writeERE(b, re.Sub[0], trimmed) {
			return false
		}
		b.WriteString(")*")
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if !writeERE(b, s, trimmed) {
				return false
			}
		}
	case syntax.OpAlternate:
		b.WriteString("(")
		for i, s := range re.Sub {
			if i > 0 {
				b.WriteString("|")
			}
			if !writeERE(b, s, trimmed) {
				return false
			}
		}
		b.WriteString(")")
	default:
		return false
	}
	return true
}

// writeRune writes one rune as itself, a special character escaped, a letter of a case-blind
// pattern as a bracket of both cases (ASCII only; another case-blind rune matches only itself).
func writeRune(b *strings.Builder, r rune, fold bool) {
	switch {
	case fold && r < utf8.RuneSelf && strings.ToUpper(string(r)) != strings.ToLower(string(r)):
		b.WriteString("[" + strings.ToUpper(string(r)) + strings.ToLower(string(r)) + "]")
	case strings.ContainsRune(`.[]()*+?{}|^$\`, r):
		b.WriteString(`\` + string(r))
	default:
		b.WriteRune(r)
	}
}

// writeClass writes a character class (pairs of ranges): its ASCII part as a bracket, a few
// runes above ASCII as alternatives, and more of them as any run.
func writeClass(b *strings.Builder, ranges []rune) {
	var ascii [utf8.RuneSelf]bool
	var wide []rune
	many := false
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		// A row holds no control characters (tmux draws none), and one in the pattern would
		// end it (a NUL) or reach tmux raw: the printable ones are enough.
		for r := max(lo, ' '); r <= min(hi, '~'); r++ {
			ascii[r] = true
		}
		lo = max(lo, utf8.RuneSelf)
		switch {
		case lo > hi:
		case hi-lo > 16 || len(wide) > 16:
			many = true
		default:
			for r := lo; r <= hi; r++ {
				wide = append(wide, r)
			}
		}
	}
	if many {
		b.WriteString("(" + anyRun + ")")
		return
	}
	var alts []string
	if br := bracket(ascii); br != "" {
		alts = append(alts, br)
	}
	for _, r := range wide {
		alts = append(alts, string(r))
	}
	if len(alts) == 0 {
		b.WriteString("(" + anyRun + ")") // an empty class matches nothing; any run is more
		return
	}
	b.WriteString("(" + strings.Join(alts, "|") + ")")
}

// bracket is a POSIX bracket of the ASCII characters set in in, each written out (a range's
// meaning may follow the locale's collation), where nothing is escaped: ']' comes first, '[' and
// '^' after the others, '-' last; "" for none.
func bracket(in [utf8.RuneSelf]bool) string {
	var mid strings.Builder
	for r := rune(0); r < utf8.RuneSelf; r++ {
		if in[r] && !strings.ContainsRune(`]-^[`, r) {
			mid.WriteRune(r)
		}
	}
	var out strings.Builder
	if in[']'] {
		out.WriteByte(']')
	}
	out.WriteString(mid.String())
	for _, r := range "[^-" {
		if in[r] {
			out.WriteRune(r)
		}
	}
	switch s := out.String(); s {
	case "":
		return ""
	case "^":
		return `\^`
	default:
		return "[" + s + "]"
	}
}

// screenHeld says why the screen held a delivery's Enter back, from one more look at it: the
// dialog it shows, or the state of its box. The look comes after tmux's refusal, so the screen may
// have moved on; it is evidence, not the reason.
func (c *Client) screenHeld(ctx context.Context, d Delivery) string {
	const held = "the Enter is held until the pane shows the input box holding the paste and no dialog"
	s, err := c.Screen(ctx, d.Pane)
	if err != nil {
		return "a dialog or no input box on screen at the Enter; " + held
	}
	if dl, ok := d.Profile.Dialog(s); ok {
		return dialogEvidence(dl) + "; " + held
	}
	return "no input box holding the paste at the Enter (" + d.Profile.Inspect(s).State() + "); " + held
}

// dialogEvidence names a dialog on screen.
func dialogEvidence(dl profile.Dialog) string {
	what := strings.TrimSpace(dl.Tool + " " + firstLine(dl.Subject))
	if what == "" {
		return "a dialog is on screen, not the input box"
	}
	return "a dialog is on screen (" + what + "), not the input box"
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
