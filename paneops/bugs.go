package paneops

import (
	"strconv"
	"strings"
)

// Bug is a known tmux defect that matters to message delivery, and what wcomm does about it.
type Bug struct {
	ID         string `json:"id"`
	Summary    string `json:"summary"`
	Versions   string `json:"versions"`
	Mitigation string `json:"mitigation"`
	// Applies says whether the version asked about has it.
	Applies bool `json:"applies"`
}

// version is a parsed tmux version: "3.3a" is {3, 3, 'a'}; ok is false for names like "master".
type version struct {
	major, minor int
	letter       byte
	ok           bool
}

// parseVersion reads #{version} or `tmux -V` ("tmux 3.3a", "next-3.5", "3.4").
func parseVersion(s string) version {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "tmux "))
	s = strings.TrimPrefix(s, "next-")
	maj, rest, found := strings.Cut(s, ".")
	if !found {
		return version{}
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(rest[:i])
	if err1 != nil || err2 != nil {
		return version{}
	}
	v := version{major: a, minor: b, ok: true}
	if i < len(rest) && rest[i] >= 'a' && rest[i] <= 'z' {
		v.letter = rest[i]
	}
	return v
}

// before reports whether v is older than major.minor.
func (v version) before(major, minor int) bool {
	return v.ok && (v.major < major || v.major == major && v.minor < minor)
}

// is reports whether v is exactly major.minor with the letter (0: none).
func (v version) is(major, minor int, letter byte) bool {
	return v.ok && v.major == major && v.minor == minor && v.letter == letter
}

// KnownBugs lists the tmux defects wcomm knows of and works around, each marked with whether
// version (as tmux reports it: "3.3a") has it. Sources: measurements on 3.3a and
// reports from users of other tools.
func KnownBugs(ver string) []Bug {
	v := parseVersion(ver)
	return []Bug{
		{ID: "dead-pane-paste-crash", Versions: "before 3.4", Applies: v.before(3, 4),
			Summary:    "paste-buffer into a dead pane (remain-on-exit) crashes the whole server, and every pane on it (fixed upstream in 3.4)",
			Mitigation: "the paste's own tmux call checks #{pane_dead} and #{pane_input_off} first and refuses"},
		{ID: "trailing-semicolon", Versions: "all", Applies: true,
			Summary:    "an argument ending in ';' ends the command, even after send-keys -l --; a lone ';' sends nothing",
			Mitigation: "message text reaches tmux only on load-buffer's stdin, never as an argument"},
		{ID: "argv-16k", Versions: "all", Applies: true,
			Summary:    "an argument (send-keys -l, set-buffer) holds at most about 16 KB: 'command too long'",
			Mitigation: "message text reaches tmux only on load-buffer's stdin"},
		{ID: "input-off-silent-drop", Versions: "all", Applies: true,
			Summary:    "with input off (select-pane -d) paste-buffer and send-keys exit 0 and drop the data",
			Mitigation: "the paste's own tmux call refuses a pane whose input is off"},
		{ID: "copy-mode-drops-brackets", Versions: "all", Applies: true,
			Summary:    "a pane in copy mode pastes without bracketed-paste markers (newlines become Enter) and swallows keys",
			Mitigation: "the paste's own tmux call leaves copy mode first (copy-mode -q)"},
		{ID: "named-enter-3.7b", Versions: "3.7b", Applies: v.is(3, 7, 'b'),
			Summary:    "the named key Enter (and C-m, KPEnter) does not submit to Claude Code, as users of other tools report (not reproduced here)",
			Mitigation: "Enter is sent as a literal carriage return (send-keys -l) on this version"},
		{ID: "equals-pane-target-3.7b", Versions: "3.7b", Applies: v.is(3, 7, 'b'),
			Summary:    "'=name' is refused as a pane target (reported by users of other tools)",
			Mitigation: "wcomm targets panes by %N id"},
	}
}

// NeedsLiteralEnter reports whether Enter must be sent as a literal carriage return on this tmux
// version (named-enter-3.7b).
func NeedsLiteralEnter(ver string) bool { return parseVersion(ver).is(3, 7, 'b') }
