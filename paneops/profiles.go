package paneops

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
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

// DoorClaudeSocket is the Door of a profile whose sessions keep Claude Code's messaging socket.
const DoorClaudeSocket = "claude-socket"

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
	// has one (package paneops/door): "claude-socket", Claude Code's messaging socket. "": typed.
	Door string `json:"door,omitempty"`

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
}

// compiled holds a profile's regexes.
type compiled struct {
	prompt, above, promptEnd, margin   *regexp.Regexp
	aside                              *regexp.Regexp
	end, empty, pasted, busy, starting []*regexp.Regexp
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

// compile checks a profile and compiles its regexes.
func (p *Profile) compile() error { return p.check(true) }

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
		p.Verify.VisibleMS < 0 || p.Verify.SettleMS < 0 {
		return fmt.Errorf("profile %q: delays and limits must not be negative", p.Name)
	}
	for _, w := range p.Verify.WindowsMS {
		if w <= 0 {
			return fmt.Errorf("profile %q: verify windows_ms must be positive", p.Name)
		}
	}
	if p.Door != "" && p.Door != DoorClaudeSocket {
		return fmt.Errorf("profile %q: door %q is not known; the one known is %q", p.Name, p.Door, DoorClaudeSocket)
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
	return errors.Join(errs...)
}

// ProfileSet is the profiles in the order detection tries them.
type ProfileSet struct {
	Profiles []*Profile `json:"profiles"`
}

//go:embed profiles.json
var builtinProfiles []byte

var (
	defaultOnce sync.Once
	defaultSet  *ProfileSet
	defaultErr  error
)

// DefaultProfiles returns the embedded profiles (profiles.json). The set is shared: do not modify it.
func DefaultProfiles() *ProfileSet {
	defaultOnce.Do(func() { defaultSet, defaultErr = LoadProfiles(nil) })
	if defaultErr != nil {
		panic("paneops: embedded profiles.json: " + defaultErr.Error()) // a build defect, caught by the tests
	}
	return defaultSet
}

// LoadProfiles returns the embedded profiles with overrides applied. overrides is JSON (or nil):
// {"profiles": [{"name": "codex", "enter_delay": {"floor_ms": 500}}, {"name": "mytui", ...}]}.
// An override of a known name changes only the fields it sets (nested objects merge the same way;
// lists replace); a new name adds a profile, tried before the built-in shell, reader and generic
// ones. The settings file's agent_profiles list, turned into JSON, is meant to be passed here.
func LoadProfiles(overrides []byte) (*ProfileSet, error) {
	var set ProfileSet
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
func (s *ProfileSet) Lookup(name string) *Profile {
	for _, p := range s.Profiles {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Names lists the profile names.
func (s *ProfileSet) Names() []string {
	out := make([]string, len(s.Profiles))
	for i, p := range s.Profiles {
		out[i] = p.Name
	}
	return out
}

// Detection is the profile chosen for a pane, and why.
type Detection struct {
	Profile *Profile `json:"-"`
	Name    string   `json:"profile"`
	Reason  string   `json:"reason"`
	// Foreground is the leader of the pane's foreground process group, when known.
	Foreground *Process `json:"foreground,omitempty"`
	// Matched is the process the profile was chosen by, when it was a process.
	Matched *Process `json:"matched,omitempty"`
	// TTYMode is the pane terminal's mode when it was read: "cooked", "raw" or "".
	TTYMode string `json:"tty_mode,omitempty"`
	// Job, when set, says that the pane's own interactive shell runs a foreground job that is not
	// reading the terminal ("bash (pid 12) runs sleep (pid 40)"): a line typed now would wait in the
	// terminal and be RUN by the shell when the job ends, so nothing is typed until it does.
	Job    string `json:"job,omitempty"`
	Forced bool   `json:"forced,omitempty"`
}

// TTYModeFunc reads whether a terminal is in canonical mode (nil error) or says why it cannot.
type TTYModeFunc func(tty string) (canonical bool, err error)

// Force returns the detection for a profile named by the user (--agent NAME).
func (s *ProfileSet) Force(name string) (Detection, error) {
	p := s.Lookup(name)
	if p == nil {
		return Detection{}, fmt.Errorf("unknown agent profile %q: choose one of %s", name, strings.Join(s.Names(), ", "))
	}
	return Detection{Profile: p, Name: p.Name, Reason: "chosen with --agent", Forced: true}, nil
}

// Detect chooses the profile of a pane from its foreground process group (the pane's pid's tpgid in
// /proc): an interactive shell or REPL there wins, because Enter makes it RUN the line; else the
// shallowest process of that group (or below it) that an agent profile names; else "reader" when
// the terminal is in canonical mode; else "generic". Without a process table it falls back on
// #{pane_current_command}, which is the foreground leader's name. ttyMode may be nil.
func (s *ProfileSet) Detect(p Pane, t *ProcTable, ttyMode TTYModeFunc, ex Exclude) Detection {
	var fg *Process
	var candidates []Process
	if t != nil && p.PID > 0 {
		if leader, group, ok := t.Foreground(p.PID); ok {
			fg = &leader
			candidates = group
		} else if root, ok := t.proc(p.PID); ok {
			// No foreground group known (go-ps has no tpgid): the whole tree, shallowest first.
			candidates = append([]Process{root}, t.Descendants(p.PID)...)
		}
	}
	det := Detection{Foreground: fg}
	skip := make(map[int]bool, len(ex.PIDs))
	for _, pid := range ex.PIDs {
		skip[pid] = true
	}
	// The foreground leader decides first: a shell at its prompt means the agent, if any, is not
	// the one reading the keyboard now.
	if fg != nil {
		if sh := s.firstOfKind(KindShell); sh != nil && sh.matches(*fg) {
			return s.found(det, sh, fmt.Sprintf("%s (pid %d) is an interactive %s in the foreground: Enter would run the line",
				progName(*fg), fg.PID, sh.Name))
		}
	} else if t == nil && p.Command != "" {
		// #{pane_current_command} names the foreground leader; its arguments are unknown, so a
		// shell name counts as an interactive shell: the safe guess.
		if sh := s.firstOfKind(KindShell); sh != nil && slices.Contains(sh.Detect.Names, strings.TrimPrefix(p.Command, "-")) {
			return s.found(det, sh, fmt.Sprintf("pane_current_command %q is a shell (no process table to tell more)", p.Command))
		}
		candidates = []Process{{PID: p.PID, Comm: p.Command}}
	}
	for _, c := range candidates {
		if skip[c.PID] || progName(c) == "wcomm" {
			continue
		}
		for _, prof := range s.Profiles {
			if prof.Kind == KindAgent && prof.matches(c) {
				c := c
				det.Matched = &c
				return s.found(det, prof, fmt.Sprintf("process %s (pid %d) in the pane's foreground is %s", progName(c), c.PID, prof.Title))
			}
		}
	}
	if fg != nil && fg.PID != p.PID {
		det.Job = s.shellJob(t, p.PID, candidates)
	}
	if ttyMode != nil && p.TTY != "" {
		canon, err := ttyMode(p.TTY)
		switch {
		case err != nil:
			det.TTYMode = ""
		case canon:
			det.TTYMode = "cooked"
			if r := s.firstOfKind(KindReader); r != nil && r.Detect.CanonicalTTY {
				return s.found(det, r, fmt.Sprintf("terminal %s is in canonical (cooked) mode: a line reader", p.TTY))
			}
		default:
			det.TTYMode = "raw"
		}
	}
	name := p.Command
	if fg != nil {
		name = progName(*fg)
	}
	return s.found(det, s.Lookup("generic"), fmt.Sprintf("no profile knows %q", name))
}

// shellJob describes the foreground job of the pane's own interactive shell when none of the job's
// processes reads the terminal, and returns "" otherwise (no shell, or a line reader at the
// keyboard, which is a real recipient).
func (s *ProfileSet) shellJob(t *ProcTable, panePID int, group []Process) string {
	root, ok := t.proc(panePID)
	sh := s.firstOfKind(KindShell)
	if !ok || sh == nil || !sh.matches(root) {
		return ""
	}
	const most = 16 // a pipeline's first processes are the ones at the keyboard
	for i, q := range group {
		if i == most {
			break
		}
		if readsTerminal(q.PID) {
			return ""
		}
	}
	return fmt.Sprintf("%s (pid %d) runs %s (pid %d) in the foreground", progName(root), root.PID, progName(group[0]), group[0].PID)
}

func (s *ProfileSet) found(det Detection, p *Profile, reason string) Detection {
	det.Profile, det.Name, det.Reason = p, p.Name, reason
	return det
}

func (s *ProfileSet) firstOfKind(kind string) *Profile {
	for _, p := range s.Profiles {
		if p.Kind == kind {
			return p
		}
	}
	return nil
}

// matches reports whether a process is this profile's program.
func (p *Profile) matches(proc Process) bool {
	d := p.Detect
	if len(d.Names) == 0 && len(d.Cmdline) == 0 {
		return false
	}
	name := progName(proc)
	base := strings.TrimPrefix(filepath.Base(proc.Comm), "-")
	if d.Interactive {
		// The program itself, not a script it runs: progName would name the script.
		argv0 := base
		if len(proc.Args) > 0 {
			argv0 = strings.TrimPrefix(filepath.Base(proc.Args[0]), "-")
		}
		return (namedIn(d.Names, argv0) || namedIn(d.Names, base)) && interactiveArgs(proc.Args)
	}
	if len(proc.Args) > 0 && shells[strings.TrimPrefix(filepath.Base(proc.Args[0]), "-")] {
		// A shell script named like an agent ("codex" with a #!/bin/bash line runs as "bash
		// ./codex", comm "codex") is not that agent: it has no input box to wait for.
		name, base = "", ""
	}
	if name != "" && (slices.Contains(d.Names, name) || slices.Contains(d.Names, base)) {
		return true
	}
	if len(proc.Args) > 1 {
		for _, a := range proc.Args[1:] {
			for _, sub := range d.Cmdline {
				if sub != "" && strings.Contains(a, sub) {
					return true
				}
			}
		}
	}
	return false
}

// namedIn reports whether name, or name without a version suffix ("python3.11", "bash5"), is
// one of names.
func namedIn(names []string, name string) bool {
	return slices.Contains(names, name) || slices.Contains(names, strings.TrimRight(name, "0123456789."))
}

// interactiveArgs reports whether a shell's or interpreter's arguments leave it reading commands
// from the terminal: no inline code (-c for shells, also -e and -m for interpreters) and no script
// operand. -i and -s (commands from stdin, operands are then positional parameters) are
// interactive. Options that take a value are skipped with it. When unsure it says interactive:
// that is the safe mistake, since a shell taken for something else would run what is pasted.
func interactiveArgs(args []string) bool {
	if len(args) <= 1 {
		return true
	}
	prog := strings.TrimPrefix(filepath.Base(args[0]), "-")
	code := "c" // sh, bash, dash, zsh, ksh, fish, csh: -c CMD
	if interpreters[prog] || strings.HasPrefix(prog, "python") || prog == "irb" {
		code = "cem" // python -c/-m, node -e, irb -e
	}
	withValue := map[string]bool{"-o": true, "+o": true, "-O": true, "+O": true, "--rcfile": true,
		"--init-file": true, "-W": true, "-X": true, "-r": true, "--require": true, "-I": true}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return i+1 >= len(args)
		case a == "-":
			return true // commands from stdin
		case withValue[a]:
			i++
		case strings.HasPrefix(a, "--"):
			if a == "--command" || strings.HasPrefix(a, "--command=") || a == "--eval" || strings.HasPrefix(a, "--eval=") {
				return false
			}
			// --norc, --noprofile, --login, --posix, --interactive ...: no value.
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			if strings.ContainsAny(a[1:], code) {
				return false
			}
			if strings.Contains(a[1:], "s") && !interpreters[prog] {
				return true // sh -s ARGS: commands from stdin, ARGS are positional parameters
			}
		default:
			return false // a script or file operand
		}
	}
	return true
}

// DefaultTTYMode is the terminal-mode reader Detect uses in production (TTYCanonical).
func DefaultTTYMode() TTYModeFunc { return TTYCanonical }
