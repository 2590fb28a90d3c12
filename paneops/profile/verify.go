package profile

// Reading a profile's input box off a screen: where the box is, what it holds, whether the
// program is busy, and which of its rows are what wcomm pasted.

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Inspection is what a profile reads off a screen: whether and where its input box is, what text
// it holds (hints removed), and whether the program is busy with a turn.
type Inspection struct {
	Found bool `json:"found"`
	// Lines are the box's rows of text, trimmed, hints and blank rows removed: empty means the
	// box is empty.
	Lines []string `json:"lines,omitempty"`
	// Pasted: a row is the program's stand-in for a collapsed paste ("[Pasted text #1 +39 lines]").
	Pasted bool `json:"pasted,omitempty"`
	Busy   bool `json:"busy,omitempty"`
	// Starting: nothing but the profile's start-up rows above the box (InputSpec.Starting).
	Starting bool `json:"starting,omitempty"`
	// Prompt is the text before the cursor of a cursor-line box (a shell's prompt), when empty.
	Prompt string `json:"-"`
}

// Empty reports whether the box is on screen and holds nothing.
func (in Inspection) Empty() bool { return in.Found && len(in.Lines) == 0 }

// State names the inspection for logs: "empty", "holds text", "not on screen", with ", busy".
func (in Inspection) State() string {
	s := "not on screen"
	switch {
	case in.Empty():
		s = "empty"
	case in.Found && in.Pasted:
		s = "holds a collapsed paste"
	case in.Found:
		s = "holds text"
	}
	if in.Busy {
		s += ", busy"
	}
	if in.Starting {
		s += ", still starting"
	}
	return s
}

// busyLookAround bounds where busy markers count: the rows just above the box (spinners sit there)
// and all rows below it. Farther up is history, which may quote a marker.
const busyLookAround = 12

// Inspect reads the profile's input box off a screen. A profile without a box reads nothing.
func (p *Profile) Inspect(s Screen) Inspection {
	var in Inspection
	if !p.HasBox() {
		return in
	}
	if p.Input.CursorLine {
		return p.inspectCursorLine(s)
	}
	start := -1
	var cut int
	for i := len(s.Lines) - 1; i >= 0; i-- {
		loc := p.rx().prompt.FindStringIndex(s.Lines[i].Text)
		if loc == nil {
			continue
		}
		if p.rx().above != nil && (i == 0 || !p.rx().above.MatchString(s.Lines[i-1].Text)) {
			continue
		}
		start, cut = i, utf8.RuneCountInString(s.Lines[i].Text[:loc[1]])
		break
	}
	if start < 0 {
		in.Busy = p.busyIn(s.Lines, max(0, len(s.Lines)-2*busyLookAround), len(s.Lines))
		return in
	}
	in.Found = true
	end := start + 1
	for ; end < len(s.Lines); end++ {
		t := s.Lines[end].Text
		if (p.Input.BlankEnds && strings.TrimSpace(t) == "") || matchAny(p.rx().end, t) {
			break
		}
	}
	for i := start; i < end; i++ {
		from := 0
		if i == start {
			from = cut
		} else if m := p.rx().margin; m != nil {
			if loc := m.FindStringIndex(s.Lines[i].Text); loc != nil && loc[0] == 0 {
				from = utf8.RuneCountInString(s.Lines[i].Text[:loc[1]])
			}
		}
		text := cleanRow(p.cutAside(string([]rune(s.Lines[i].Text)[from:])))
		if matchAny(p.rx().empty, text) {
			continue // a hint, whatever its colours
		}
		if p.Input.FaintIsPlaceholder {
			text = cleanRow(p.cutAside(s.Lines[i].Solid(from)))
		}
		if text == "" || matchAny(p.rx().empty, text) {
			continue
		}
		if matchAny(p.rx().pasted, text) {
			in.Pasted = true
		}
		in.Lines = append(in.Lines, text)
	}
	in.Busy = p.busyIn(s.Lines, max(0, start-busyLookAround), start) || p.busyIn(s.Lines, end, len(s.Lines))
	in.Starting = p.starting(s.Lines[:start])
	return in
}

// starting reports whether every non-blank row above the box is one the program draws while it
// starts (and so no history, no header, nothing else yet).
func (p *Profile) starting(above []ScreenLine) bool {
	if len(p.rx().starting) == 0 {
		return false
	}
	for _, l := range above {
		if strings.TrimSpace(l.Text) != "" && !matchAny(p.rx().starting, l.Text) {
			return false
		}
	}
	return true
}

// inspectCursorLine reads a shell's input: the row under the cursor. It is empty when the text
// before the cursor ends like a prompt and nothing follows the cursor.
func (p *Profile) inspectCursorLine(s Screen) Inspection {
	var in Inspection
	if s.CursorY < 0 || s.CursorY >= len(s.Lines) {
		// The cursor sits on a row below the last one with text: an empty row, so nothing typed
		// but also no prompt seen.
		if s.CursorY >= len(s.Lines) && s.CursorX == 0 {
			in.Found = true
		}
		return in
	}
	in.Found = true
	row := []rune(s.Lines[s.CursorY].Text)
	x := min(max(s.CursorX, 0), len(row))
	before, after := string(row[:x]), strings.TrimSpace(string(row[x:]))
	if after == "" && (strings.TrimSpace(before) == "" || p.rx().promptEnd.MatchString(before)) {
		in.Prompt = before
		return in
	}
	if t := strings.TrimSpace(string(row)); t != "" {
		in.Lines = []string{t}
	}
	return in
}

// cleanRow trims a box row, reading a no-break space as a space (Claude Code pads its prompt with one).
// cutAside removes what the profile's Aside matches from a box row, only after some text: a row's
// own indentation is input (a person's indented line must never read as an empty box).
func (p *Profile) cutAside(row string) string {
	if a := p.rx().aside; a != nil {
		for _, loc := range a.FindAllStringIndex(row, -1) {
			if strings.TrimSpace(row[:loc[0]]) != "" {
				return row[:loc[0]]
			}
		}
	}
	return row
}

// cleanRow is a row of the box without the blanks around it. A zero-width space at either end
// is a drawn cursor (Qwen Code 0.24 draws its cursor as one after the text), not input.
func cleanRow(s string) string {
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(strings.ReplaceAll(s, "\u00a0", " ")), "\u200b"))
}

func (p *Profile) busyIn(lines []ScreenLine, from, to int) bool {
	for i := from; i < to && i < len(lines); i++ {
		if matchAny(p.rx().busy, lines[i].Text) {
			return true
		}
	}
	return false
}

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// Attribution counts the box rows that are, and are not, part of what wcomm pasted.
type Attribution struct {
	Ours, Foreign int
}

// Attribute decides for each row of the box whether it can be part of content: a row is wcomm's
// when, with white space collapsed and the program's decorations cut off (a scroll mark after a
// wide gap, an ellipsis), it is a substring of content, or when it is a collapsed-paste stand-in.
// Programs wrap, scroll and truncate what they show, so rows are compared as fragments. For a
// cursor-line box, a shell prompt before the text is skipped.
func (p *Profile) Attribute(in Inspection, content string) Attribution {
	var a Attribution
	norm := collapse(content)
	for _, line := range in.Lines {
		if matchAny(p.rx().pasted, line) {
			a.Ours++
			continue
		}
		if fragmentOf(line, norm) || (p.Input != nil && p.Input.CursorLine && p.afterPrompt(line, norm)) {
			a.Ours++
		} else {
			a.Foreign++
		}
	}
	return a
}

// afterPrompt reports whether some tail of a shell row, after a prompt-like prefix, is a
// fragment of norm.
func (p *Profile) afterPrompt(line, norm string) bool {
	runes := []rune(line)
	for k := 1; k < len(runes); k++ {
		if p.rx().promptEnd.MatchString(string(runes[:k])) && fragmentOf(string(runes[k:]), norm) {
			return true
		}
	}
	return false
}

// decoGap is a run of spaces that separates a row's text from a right-aligned decoration
// (Codex's scroll mark "↑").
var decoGap = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(` {3,}\S*$`) })

// fragmentOf reports whether a screen row could be part of the normalized content.
func fragmentOf(line, norm string) bool {
	line = decoGap().ReplaceAllString(line, "")
	line = strings.TrimSpace(line)
	for _, ell := range []string{"…", "..."} {
		line = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(line, ell), ell))
	}
	line = collapse(line)
	if line == "" {
		return true
	}
	return strings.Contains(norm, line)
}

// collapse turns every run of white space into one space and trims the ends.
func collapse(s string) string {
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}
