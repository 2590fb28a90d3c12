package messages

import (
	"path"
	"strconv"
	"strings"
	"unicode"
)

// Notification is the path-only line a worker pastes into the orchestrator's pane:
//
//	[RESPONSE started_at=20260117-120000 orchestrator=%6 worker=%7] /tmp/worker-comm/.../002-response.md
type Notification struct {
	StartedAt    string
	Orchestrator PaneID
	Worker       PaneID
	Path         string
}

const notificationPrefix = "[RESPONSE "

// String formats the line (no newline).
func (n Notification) String() string {
	return notificationPrefix + "started_at=" + n.StartedAt + " orchestrator=" + string(n.Orchestrator) +
		" worker=" + string(n.Worker) + "] " + n.Path
}

// FindNotification finds the last "[RESPONSE ...] PATH" in text, which may hold other text around
// it (an agent's prompt, a wrapped screen line, ANSI colour codes, a trailing "\r"). The path runs
// to the first white space; it must be absolute and end in "-response.md". Fields are validated.
func FindNotification(text string) (Notification, error) {
	// Sanitize strips colour codes and other escape sequences (which a TUI may put anywhere in
	// the line) and turns "\r" into a line end, so what is left is the text a person sees.
	clean := Sanitize(text, true)
	var lastErr error
	// The last candidate that parses wins: a screen also shows older notifications above, and
	// "[RESPONSE INSTRUCTIONS]" or a quoted template may come after the real line.
	for end := len(clean); ; {
		i := strings.LastIndex(clean[:end], notificationPrefix)
		if i < 0 {
			break
		}
		// Only the last candidate's error is reported, so the others skip building one.
		n, err := parseNotificationAt(clean[i:], lastErr == nil)
		if err == nil {
			return n, nil
		}
		if lastErr == nil {
			lastErr = err
		}
		end = i
	}
	if lastErr != nil {
		return Notification{}, lastErr
	}
	return Notification{}, syntaxf("no %s...] PATH line found (want %s)", notificationPrefix, notificationForm)
}

const notificationForm = "[RESPONSE started_at=YYYYMMDD-HHMMSS orchestrator=%N worker=%M] /ABSOLUTE/NNN-response.md"

// Bounds on one notification, so that a screen full of "[RESPONSE " costs time linear in its
// size: the seed's fields take under 80 bytes, and PATH_MAX is 4096 on Linux.
const (
	maxNoteFields = 256
	maxNotePath   = 4096
)

// errNotNote is what parseNotificationAt returns when the caller does not want a message.
var errNotNote = &parseError{msg: "not a notification"}

// parseNotificationAt parses the notification that s starts with; s runs to the end of the text.
// describe false returns errNotNote for every failure, saving the cost of the message (a screen
// may hold many candidates, and only the last one's error is reported).
func parseNotificationAt(s string, describe bool) (Notification, error) {
	n, what, err := noteAt(s)
	switch {
	case what == "":
		return n, nil
	case !describe:
		return Notification{}, errNotNote
	}
	line := s
	if len(line) > maxQuoted {
		line = line[:maxQuoted]
	}
	line, _, _ = strings.Cut(line, "\n")
	if err != nil {
		return Notification{}, syntaxf("notification %s: %s: %v (want %s)", quote(line), what, err, notificationForm)
	}
	return Notification{}, syntaxf("notification %s: %s (want %s)", quote(line), what, notificationForm)
}

// noteAt does parseNotificationAt's work. On failure what says what is wrong, and err (possibly
// nil) gives the detail.
func noteAt(s string) (n Notification, what string, err error) {
	rest := s[len(notificationPrefix):]
	window := rest
	if len(window) > maxNoteFields {
		window = window[:maxNoteFields]
	}
	end := strings.IndexAny(window, "]\n")
	if end < 0 || window[end] != ']' {
		return n, "no closing ] on its line", nil
	}
	f, err := splitFields(rest[:end], false)
	if err == nil {
		n.StartedAt, n.Orchestrator, n.Worker, err = f.pair()
	}
	if err != nil {
		return n, "fields", err
	}
	p := strings.TrimLeft(rest[end+1:], " ")
	if len(p) > maxNotePath+1 {
		p = p[:maxNotePath+1]
	}
	if sp := strings.IndexFunc(p, unicode.IsSpace); sp >= 0 {
		p = p[:sp]
	}
	if len(p) > maxNotePath {
		return n, "path longer than " + strconv.Itoa(maxNotePath) + " bytes", nil
	}
	if err := ValidResponsePath(p); err != nil {
		return n, "path", err
	}
	n.Path = p
	return n, "", nil
}

const responseSuffix = "-" + string(KindResponse) + ".md"

// ValidResponsePath reports whether p may be a response file path: absolute, clean (no "..", "."
// or doubled slashes), ending in "-response.md", printable, without white space (a notification's
// path ends at the first one) and without the characters bash still expands inside double quotes
// (" $ ` \ !), because the fallback command puts the path in a double-quoted string that the
// worker's shell runs.
func ValidResponsePath(p string) error {
	switch {
	case p == "":
		return syntaxf("response path is empty (want an absolute path ending in %s)", responseSuffix)
	case !strings.HasPrefix(p, "/"):
		return syntaxf("response path %s is not absolute", quote(p))
	case !strings.HasSuffix(p, responseSuffix):
		return syntaxf("response path %s does not end in %s", quote(p), responseSuffix)
	case path.Clean(p) != p:
		return syntaxf("response path %s is not clean (it has .., . or //)", quote(p))
	}
	for _, r := range p {
		if r == ' ' || !unicode.IsPrint(r) || r == unicode.ReplacementChar || strings.ContainsRune("\"$`\\!", r) {
			return syntaxf("response path %s has %q; choose a root folder without white space, control characters or \" $ ` \\ !", quote(p), r)
		}
	}
	return nil
}
