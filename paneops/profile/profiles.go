package profile

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"
)

// Profile kinds: what a pane's program does with a paste and an Enter.
const (
	KindAgent   = "agent"   // a TUI with an input box (Claude Code, Codex CLI, Gemini CLI, aider)
	KindShell   = "shell"   // an interactive shell or REPL at its prompt: Enter RUNS the line
	KindReader  = "reader"  // a program reading lines in cooked mode (cat, read, a script on stdin)
	KindGeneric = "generic" // anything else: paste and Enter, nothing to verify against
)

// Doors a profile can name (Profile.Door): the agent's own way in, used instead of typing.
const (
	// DoorClaudeSocket is the Door of a profile whose sessions keep Claude Code's messaging socket.
	DoorClaudeSocket = "claude-socket"
	// DoorCodexAppServer is the Door of a profile whose TUI is a client of Codex's app-server
	// daemon, which starts turns in the TUI's thread for any client of its socket.
	DoorCodexAppServer = "codex-app-server"
)

// Profile is what wcomm knows about one kind of program in a pane: how to recognise it, how long
// to wait between a paste and its Enter, where its input box is on screen and what the box looks
// like when empty, busy or holding a collapsed paste. Profiles are data (profiles.json, embedded),
// so a new agent version is met by editing the config file, not the code.
type Profile struct {
	Name  string `json:"name"`
	Title string `json:"title,omitempty"`
	Kind  string `json:"kind"`
	// Detect says which processes in the pane's foreground make this profile apply.
	Detect DetectSpec `json:"detect"`
	// EnterDelay is the floor of the pause between paste and Enter, growing with the size.
	EnterDelay DelaySpec `json:"enter_delay"`
	// BracketedPaste: the program turns bracketed paste on, so a multi-line paste is one message.
	BracketedPaste bool `json:"bracketed_paste,omitempty"`
	// LineLimit bounds one line (bytes, newline excluded); a message with a longer line goes as a
	// pointer. A cooked-mode tty truncates longer lines to 4095 bytes plus the newline (measured on
	// Linux 6.x: the rest of the line is lost, silently). 0: the engine's default bound applies.
	LineLimit int `json:"line_limit,omitempty"`
	// PasteLimit bounds what is pasted whole (bytes); a bigger message goes as a pointer line to its
	// file. 0: the engine's default bound applies.
	PasteLimit int `json:"paste_limit,omitempty"`
	// Input says where the input box is and how to read it; nil: nothing to check on screen.
	Input *InputSpec `json:"input,omitempty"`
	// Verify bounds the checks around Enter.
	Verify VerifySpec `json:"verify"`
	// Door names the agent's own way in that is used instead of typing where the pane's session
	// has one (package paneops/door): "claude-socket", Claude Code's messaging socket;
	// "codex-app-server", the app-server daemon Codex's TUI is a client of. "": typed.
	Door string `json:"door,omitempty"`
	// Dialogs are the program's permission dialogs as its screen shows them (dialog.go), for the
	// prompts room's screen route.
	Dialogs []DialogSpec `json:"dialogs,omitempty"`
	// Launch is the command line that starts the program (wcomm spawn NAME), argv words run
	// without a shell; empty: the profile cannot be spawned by its name alone.
	Launch []string `json:"launch,omitempty"`
	// Quit is how the program is asked to end before its pane is removed (wcomm stop).
	Quit *QuitSpec `json:"quit,omitempty"`
	// Session says how the program's conversation is named at its start and taken up again at a
	// restart (wcomm restart); nil: a restart starts it anew.
	Session *SessionSpec `json:"session,omitempty"`

	// re holds the compiled patterns, made on first use (rx): a command that never reads a
	// screen, such as a send to a line reader, then compiles none of the built-in profiles'
	// dozens of patterns (about 0.5 ms of every process start, measured). Patterns from a
	// settings file are compiled, and so checked, when they are loaded.
	re     compiled
	reOnce sync.Once
}

// DetectSpec is how a profile recognises its program among the pane's foreground processes.
type DetectSpec struct {
	// Names are program names (argv0's base name, an interpreter's script name, or comm).
	Names []string `json:"names,omitempty"`
	// Cmdline are substrings of an interpreter's arguments (node .../@openai/codex/bin/codex.js).
	Cmdline []string `json:"cmdline,omitempty"`
	// Interactive: only a program of Names running without a script or -c/-e/-m matches (a shell
	// or REPL reading commands from the terminal).
	Interactive bool `json:"interactive,omitempty"`
	// CanonicalTTY: matches when the pane's terminal is in canonical (cooked) mode.
	CanonicalTTY bool `json:"canonical_tty,omitempty"`
}

// DelaySpec is an Enter delay: FloorMS plus PerMBMS per MiB of content, at most MaxMS.
type DelaySpec struct {
	FloorMS int `json:"floor_ms"`
	PerMBMS int `json:"per_mb_ms,omitempty"`
	MaxMS   int `json:"max_ms,omitempty"`
}

// For returns the delay for size bytes of content.
func (d DelaySpec) For(size int) time.Duration {
	ms := float64(d.FloorMS) + float64(d.PerMBMS)*float64(size)/float64(1<<20)
	if d.MaxMS > 0 && ms > float64(d.MaxMS) {
		ms = float64(d.MaxMS)
	}
	return time.Duration(ms * float64(time.Millisecond)).Round(time.Millisecond)
}

// InputSpec locates and reads a program's input box on a captured screen. Regexes are RE2 and
// match one screen line (without its newline).
type InputSpec struct {
	// Prompt matches the box's first line; the box is the LAST such line on screen (history lines
	// above may look alike), and the match is cut off the text.
	Prompt string `json:"prompt,omitempty"`
	// Above, when set, must match the line just above the prompt line (the box's top border), so a
	// history line is never taken for the box when the box itself is not drawn.
	Above string `json:"above,omitempty"`
	// Margin matches the border a program draws at the start of every row of its box below the
	// first (OpenCode's "┃"); it is cut off each row, as Prompt is off the first.
	Margin string `json:"margin,omitempty"`
	// Aside matches what a program draws beside its box on the same rows (OpenCode's sidebar,
	// right of a wide gap, on a wide pane); it is cut off each row.
	Aside string `json:"aside,omitempty"`
	// End matches the first line after the box; BlankEnds makes a blank line end it too.
	End       []string `json:"end,omitempty"`
	BlankEnds bool     `json:"blank_ends,omitempty"`
	// Empty matches box text that is a hint, not input ("Ask Codex to do anything").
	Empty []string `json:"empty,omitempty"`
	// Pasted matches the stand-in a program shows for a collapsed paste ("[Pasted text #1 +39 lines]").
	Pasted []string `json:"pasted,omitempty"`
	// Busy matches anywhere on screen while the program works on a turn.
	Busy []string `json:"busy,omitempty"`
	// Starting: while every non-blank row above the box matches one of these, the program is
	// still starting. Gemini CLI draws its box before it has loaded its configuration, queues what
	// is submitted until then, and drops blank lines from a queued message (0.61.0); its header
	// appears once it is ready.
	Starting []string `json:"starting,omitempty"`
	// FaintIsPlaceholder: text drawn faint (SGR 2) in the box is a hint, not input.
	FaintIsPlaceholder bool `json:"faint_is_placeholder,omitempty"`
	// CursorLine: the input is the line under the cursor (shells); PromptEnd matches the text
	// before the cursor when nothing has been typed ("bash-5.2$ ").
	CursorLine bool   `json:"cursor_line,omitempty"`
	PromptEnd  string `json:"prompt_end,omitempty"`
}

// VerifySpec bounds the screen checks of a delivery.
type VerifySpec struct {
	// VisibleMS bounds the wait for the paste to show in the input box before Enter.
	VisibleMS int `json:"visible_ms,omitempty"`
	// SettleMS is the least time between the paste showing in the box and Enter: Gemini CLI takes
	// an Enter that follows its paste handling too closely as a newline.
	SettleMS int `json:"settle_ms,omitempty"`
	// WindowsMS are the checks after each Enter: after Enter number i the box is watched for
	// WindowsMS[i] ms; while it still holds the pasted text, Enter is pressed again, at most
	// len(WindowsMS) Enters in all.
	WindowsMS []int `json:"windows_ms,omitempty"`
	// RedrawBeforeRetry presses Enter again only once the screen has changed since the last one
	// and the agent is not busy: Gemini CLI submits the text of its last drawing, and while a long
	// redraw is under way an Enter pressed again submits the same text again (measured on 0.61
	// under load: three Enters, one prompt holding the message three times; once more with two
	// Enters, the second while it was busy). An unchanged screen means it has not yet taken the
	// last Enter; a busy one queues whatever it is handed.
	RedrawBeforeRetry bool `json:"redraw_before_retry,omitempty"`
	// QuietMS: a paste waits until the box has read empty and idle for this long in a row. GitHub
	// Copilot CLI 1.0.102 draws its empty box before it takes prompts: a prompt submitted as the
	// box first showed cleared the box and never reached its model (2 of 2 runs under load);
	// OpenCode 1.18.33 shows its box again while its first turn is still closing, and a prompt
	// pasted then was cleared on Enter and lost.
	QuietMS int `json:"quiet_ms,omitempty"`
	// TurnStartMS: after wcomm's Enter into the pane, the next paste waits until the agent has
	// read busy, or this long has passed. OpenCode 1.18.33 clears its box on Enter up to a second
	// before it shows busy, and a prompt submitted in between never reached its model.
	TurnStartMS int `json:"turn_start_ms,omitempty"`
}

// compiled holds a profile's regexes.
type compiled struct {
	prompt, above, promptEnd, margin   *regexp.Regexp
	aside                              *regexp.Regexp
	end, empty, pasted, busy, starting []*regexp.Regexp
	dialogs                            []compiledDialog
}

// HasBox reports whether the profile can read the program's input from the screen.
func (p *Profile) HasBox() bool {
	return p != nil && p.Input != nil && (p.Input.Prompt != "" || p.Input.CursorLine)
}

// rx returns the profile's compiled patterns, compiling them on first use. A pattern that does
// not compile is nil there; that is caught when the profile is loaded (compile) or by the tests
// of the built-in ones.
func (p *Profile) rx() *compiled {
	p.reOnce.Do(func() { _ = p.compilePatterns() })
	return &p.re
}

// check checks a profile's settings, and compiles its patterns now when eager is set.
func (p *Profile) check(eager bool) error {
	if err := p.checkFields(); err != nil {
		return err
	}
	if !eager {
		return nil
	}
	var err error
	p.reOnce.Do(func() { err = p.compilePatterns() })
	return err
}

// checkFields checks what a profile says besides its patterns.
func (p *Profile) checkFields() error {
	if p.Name == "" {
		return errors.New("a profile has no name")
	}
	switch p.Kind {
	case KindAgent, KindShell, KindReader, KindGeneric:
	default:
		return fmt.Errorf("profile %q: kind %q is not one of agent, shell, reader, generic", p.Name, p.Kind)
	}
	if p.EnterDelay.FloorMS < 0 || p.EnterDelay.PerMBMS < 0 || p.EnterDelay.MaxMS < 0 || p.LineLimit < 0 || p.PasteLimit < 0 ||
		p.Verify.VisibleMS < 0 || p.Verify.SettleMS < 0 || p.Verify.QuietMS < 0 || p.Verify.TurnStartMS < 0 {
		return fmt.Errorf("profile %q: delays and limits must not be negative", p.Name)
	}
	for _, w := range p.Verify.WindowsMS {
		if w <= 0 {
			return fmt.Errorf("profile %q: verify windows_ms must be positive", p.Name)
		}
	}
	if p.Door != "" && p.Door != DoorClaudeSocket && p.Door != DoorCodexAppServer {
		return fmt.Errorf("profile %q: door %q is not known; the known are %q and %q", p.Name, p.Door, DoorClaudeSocket, DoorCodexAppServer)
	}
	for i := range p.Dialogs {
		if err := p.Dialogs[i].check(p.Name); err != nil {
			return err
		}
	}
	if in := p.Input; in != nil && in.CursorLine && in.PromptEnd == "" {
		return fmt.Errorf("profile %q: input.cursor_line needs input.prompt_end", p.Name)
	}
	return nil
}

// compilePatterns compiles the profile's regexes into p.re.
func (p *Profile) compilePatterns() error {
	var errs []error
	one := func(field, s string) *regexp.Regexp {
		if s == "" {
			return nil
		}
		re, err := regexp.Compile(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("profile %q: input.%s: %w", p.Name, field, err))
		}
		return re
	}
	many := func(field string, ss []string) []*regexp.Regexp {
		var out []*regexp.Regexp
		for _, s := range ss {
			if re := one(field, s); re != nil {
				out = append(out, re)
			}
		}
		return out
	}
	p.re = compiled{}
	if in := p.Input; in != nil {
		p.re.prompt = one("prompt", in.Prompt)
		p.re.above = one("above", in.Above)
		p.re.promptEnd = one("prompt_end", in.PromptEnd)
		p.re.margin = one("margin", in.Margin)
		p.re.aside = one("aside", in.Aside)
		p.re.end = many("end", in.End)
		p.re.empty = many("empty", in.Empty)
		p.re.pasted = many("pasted", in.Pasted)
		p.re.busy = many("busy", in.Busy)
		p.re.starting = many("starting", in.Starting)
	}
	for i := range p.Dialogs {
		c, err := p.Dialogs[i].compile(p.Name)
		if err != nil {
			errs = append(errs, err)
		}
		p.re.dialogs = append(p.re.dialogs, c)
	}
	return errors.Join(errs...)
}

// QuitSpec is how a program is asked to end: Text typed and submitted with Enter (an agent's
// own quit command, "/exit"), or Keys pressed (tmux key names, "C-d").
type QuitSpec struct {
	Text string   `json:"text,omitempty"`
	Keys []string `json:"keys,omitempty"`
}

// SessionSpec is how a program's conversation is kept across a restart. Start are the words
// added after the command's first at spawn, Resume the words added at a restart instead; "{id}"
// in them is the conversation's id: one wcomm makes at spawn when Start names it (Claude Code's
// --session-id), else the one the agent's door reports (Codex's thread).
type SessionSpec struct {
	Start  []string `json:"start,omitempty"`
	Resume []string `json:"resume,omitempty"`
}

// Set is the profiles in the order detection tries them.
type Set struct {
	Profiles []*Profile `json:"profiles"`
}

//go:embed profiles.json
var builtinProfiles []byte

var (
	defaultOnce sync.Once
	defaultSet  *Set
	defaultErr  error
)

// BuiltinNames are the names of the embedded profiles, in their order: what a flag's help and
// completion name without loading the profiles, which a command's start would otherwise do to
// print nothing of them (a tenth of a handed send's CPU). The tests hold it to Defaults().Names().
func BuiltinNames() []string {
	return []string{"claude", "codex", "gemini", "opencode", "copilot", "qwen", "aider", "shell", "reader", "generic"}
}

// Defaults returns the embedded profiles (profiles.json). The set is shared: do not modify it.
func Defaults() *Set {
	defaultOnce.Do(func() { defaultSet, defaultErr = Load(nil) })
	if defaultErr != nil {
		panic("profile: embedded profiles.json: " + defaultErr.Error()) // a build defect, caught by the tests
	}
	return defaultSet
}

// Load returns the embedded profiles with overrides applied. overrides is JSON (or nil):
// {"profiles": [{"name": "codex", "enter_delay": {"floor_ms": 500}}, {"name": "mytui", ...}]}.
// An override of a known name changes only the fields it sets (nested objects merge the same way;
// lists replace); a new name adds a profile, tried before the built-in shell, reader and generic
// ones. The settings file's agent_profiles list, turned into JSON, is meant to be passed here.
func Load(overrides []byte) (*Set, error) {
	var set Set
	overridden := map[*Profile]bool{}
	if err := decodeStrict(builtinProfiles, &set); err != nil {
		return nil, fmt.Errorf("embedded profiles: %w", err)
	}
	if len(bytes.TrimSpace(overrides)) > 0 {
		var raw struct {
			Profiles []json.RawMessage `json:"profiles"`
		}
		if err := decodeStrict(overrides, &raw); err != nil {
			return nil, fmt.Errorf("agent profiles: %w", err)
		}
		for i, r := range raw.Profiles {
			var named struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(r, &named); err != nil || named.Name == "" {
				return nil, fmt.Errorf("agent profiles: entry %d has no name: give each profile a \"name\"", i+1)
			}
			p := set.Lookup(named.Name)
			isNew := p == nil
			if isNew {
				p = &Profile{Kind: KindAgent}
			}
			if err := decodeStrict(r, p); err != nil {
				return nil, fmt.Errorf("agent profiles: profile %q: %w", named.Name, err)
			}
			overridden[p] = true
			if isNew {
				// New agents go before the catch-all kinds, so that they are tried first.
				at := slices.IndexFunc(set.Profiles, func(q *Profile) bool { return q.Kind != KindAgent })
				if at < 0 {
					at = len(set.Profiles)
				}
				set.Profiles = slices.Insert(set.Profiles, at, p)
			}
		}
	}
	var errs []error
	for _, p := range set.Profiles {
		// The built-in patterns are compiled on first use (the tests compile every one);
		// patterns from a settings file are compiled now, so a bad one is reported at once.
		errs = append(errs, p.check(overridden[p]))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if set.Lookup("generic") == nil {
		return nil, errors.New("agent profiles: the generic profile is missing")
	}
	return &set, nil
}

// decodeStrict decodes JSON into v and refuses unknown fields, so a misspelt setting is an error
// rather than silently ignored.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// Lookup returns the profile named name, or nil.
func (s *Set) Lookup(name string) *Profile {
	for _, p := range s.Profiles {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Names lists the profile names.
func (s *Set) Names() []string {
	out := make([]string, len(s.Profiles))
	for i, p := range s.Profiles {
		out[i] = p.Name
	}
	return out
}
