package paneops

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/wcomm/wcomm/messages"
)

// Screen is one capture of a pane's visible rows, with what the text looked like (faint or not)
// and where the cursor was.
type Screen struct {
	Lines   []ScreenLine
	CursorX int
	CursorY int
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

// screenArgs is the one tmux call of a capture: the cursor first, then the rows with their
// attributes (capture-pane -e), so both describe the same moment as nearly as tmux allows.
func screenArgs(pane messages.PaneID) []string {
	p := string(pane)
	return []string{"display-message", "-p", "-t", p, "#{cursor_x} #{cursor_y}", ";", "capture-pane", "-p", "-e", "-t", p}
}

// Screen captures the visible rows of a pane and its cursor position in one tmux call.
func (c *Client) Screen(ctx context.Context, pane messages.PaneID) (Screen, error) {
	if _, err := paneNum(pane); err != nil {
		return Screen{}, err
	}
	out, err := c.Run(ctx, nil, screenArgs(pane)...)
	if err != nil {
		return Screen{}, err
	}
	s, err := parseScreenOutput(out)
	if err != nil {
		return Screen{}, fmt.Errorf("capture pane %s: %w", pane, err)
	}
	return s, nil
}

// parseScreenOutput parses what screenArgs prints: "X Y", then the captured rows.
func parseScreenOutput(out string) (Screen, error) {
	first, rest, _ := strings.Cut(out, "\n")
	var x, y int
	if _, err := fmt.Sscanf(first, "%d %d", &x, &y); err != nil {
		return Screen{}, fmt.Errorf("unexpected cursor line %q from tmux", first)
	}
	return ParseScreen(rest, x, y), nil
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

func cleanRow(s string) string { return strings.TrimSpace(strings.ReplaceAll(s, "\u00a0", " ")) }

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

// Action is what a delivery does next, decided from one inspection.
type Action int

// The actions of a delivery.
const (
	ActPaste          Action = iota // before: go ahead and paste
	ActWait                         // look again soon
	ActRefuseHuman                  // before, at the deadline: the box holds text wcomm did not put there
	ActRefuseNotReady               // before, at the deadline: no input box on screen
	ActEnter                        // between paste and Enter: the paste shows; press Enter
	ActSubmitted                    // after Enter: the message was taken (Verified says how sure)
	ActRetry                        // after Enter: the box still holds what wcomm pasted; press Enter again
	ActGiveUp                       // stop: pasted but not submitted (Evidence says why)
)

var actionNames = [...]string{"paste", "wait", "refuse-human-text", "refuse-not-ready", "enter", "submitted", "retry", "give-up"}

func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "action(" + strconv.Itoa(int(a)) + ")"
}

// Decision is an action with its evidence.
type Decision struct {
	Action   Action
	Verified bool
	Evidence string
	// Busy: a paste decided at the deadline although the agent is busy or still starting.
	Busy bool
}

// DecideBefore decides, from the box before any paste, whether to paste now. deadline says the
// wait for a usable box is over. A box holding text wcomm did not put there is never pasted into:
// the paste would mix with a person's half-written prompt, and the Enter would send both. A busy
// agent is waited for, then pasted into anyway at the deadline: agents queue a message submitted
// while they work.
func DecideBefore(p *Profile, in Inspection, deadline bool) Decision {
	switch {
	case !p.HasBox():
		return Decision{Action: ActPaste, Evidence: "no input box to check (" + p.Kind + ")"}
	case !in.Found:
		if deadline {
			return Decision{Action: ActRefuseNotReady, Evidence: "input box not on screen"}
		}
		return Decision{Action: ActWait, Evidence: "input box not on screen yet"}
	case len(in.Lines) > 0:
		if deadline {
			return Decision{Action: ActRefuseHuman, Evidence: "input box holds " + quoteRows(in.Lines)}
		}
		return Decision{Action: ActWait, Evidence: "input box holds text"}
	case in.Busy:
		if deadline {
			return Decision{Action: ActPaste, Busy: true, Evidence: "input box empty, agent still busy: the message queues"}
		}
		return Decision{Action: ActWait, Evidence: "agent busy"}
	case in.Starting:
		if deadline {
			return Decision{Action: ActPaste, Busy: true, Evidence: "input box empty, agent seems to be still starting: the message may queue"}
		}
		return Decision{Action: ActWait, Evidence: "agent still starting"}
	}
	return Decision{Action: ActPaste, Evidence: "input box empty"}
}

// DecideShown decides, between paste and Enter, whether the paste shows in the box. final says
// the wait for it is over: Enter is pressed anyway when the box shows nothing foreign (an Enter
// on an empty box does nothing), and never when text wcomm did not paste appeared.
func DecideShown(p *Profile, in Inspection, content string, final bool) Decision {
	if !p.HasBox() {
		return Decision{Action: ActEnter, Evidence: "no input box to check"}
	}
	a := p.Attribute(in, content)
	switch {
	case a.Foreign > 0:
		if final {
			return Decision{Action: ActGiveUp, Evidence: "text wcomm did not paste is in the input box with the message: not pressing Enter on it: " + quoteRows(in.Lines)}
		}
		return Decision{Action: ActWait, Evidence: "input box holds other text"}
	case a.Ours > 0:
		return Decision{Action: ActEnter, Verified: true, Evidence: "paste shown in the input box"}
	case final:
		return Decision{Action: ActEnter, Evidence: "paste not seen in the input box (" + in.State() + ")"}
	}
	return Decision{Action: ActWait, Evidence: "paste not shown yet"}
}

// DecideAfter decides, from the box after the enters-th Enter, whether the message was submitted.
// final says this Enter's watch window is over; last that no Enter is left. Enter is pressed again
// only while the box holds nothing but what wcomm pasted.
func DecideAfter(p *Profile, in Inspection, content string, shown bool, final, last bool, enters int) Decision {
	if !p.HasBox() {
		ev := "Enter sent; nothing on screen to check"
		if p.Kind == KindReader {
			ev = "cooked reader: Enter sent"
		}
		return Decision{Action: ActSubmitted, Evidence: ev}
	}
	if !in.Found {
		if final {
			return Decision{Action: ActSubmitted, Evidence: "input box not on screen after Enter"}
		}
		return Decision{Action: ActWait}
	}
	a := p.Attribute(in, content)
	switch {
	case len(in.Lines) == 0:
		ev := "input box empty after Enter"
		if p.Input.CursorLine {
			ev = "shell prompt empty after Enter"
		}
		if in.Busy {
			ev += ", agent busy"
		}
		if enters > 1 {
			ev += " (Enter pressed " + strconv.Itoa(enters) + " times)"
		}
		if !shown {
			return Decision{Action: ActSubmitted, Evidence: ev + "; the paste was never seen in it"}
		}
		return Decision{Action: ActSubmitted, Verified: true, Evidence: ev}
	case !final:
		return Decision{Action: ActWait}
	case a.Foreign == 0:
		if last {
			return Decision{Action: ActGiveUp, Evidence: "input box still holds the message after " + strconv.Itoa(enters) + " Enter(s)"}
		}
		return Decision{Action: ActRetry, Evidence: "input box still holds the message"}
	case a.Ours > 0:
		return Decision{Action: ActGiveUp, Evidence: "input box holds the message mixed with text wcomm did not paste: not pressing Enter on it: " + quoteRows(in.Lines)}
	}
	return Decision{Action: ActSubmitted, Evidence: "the message left the input box; it now holds other text: " + quoteRows(in.Lines)}
}

// quoteRows shows box rows in an error, short and without control characters.
func quoteRows(rows []string) string {
	s := strings.Join(rows, " / ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:77]) + "..."
	}
	return strconv.Quote(messages.SanitizeField(s))
}
