package profile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// DialogKey is the set of keys a dialog is answered with: one letter or digit (a dialog's
// choice), or Escape. Never Enter, never text: any Enter typed into an agent's permission dialog
// approves it, and text typed there is discarded (measured on Claude Code), so nothing else may
// reach one. Compiled when first used: a command that answers no dialog (every start of
// wcomm) does not pay for it.
var DialogKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9A-Za-z]|Escape)$`) })

// DialogSpec is a program's permission dialog as its screen shows it, for programs that bring it
// to no hook of wcomm's (or run without one): recognised by its marker lines, read for what it
// asks about, and answered by one key each. The prompts room's sentry turns it into a question.
type DialogSpec struct {
	// Markers each match some row on screen, all of them, for the dialog to be recognised.
	Markers []string `json:"markers"`
	// Question matches the row that asks (the last such row on screen); what the dialog asks
	// about is the rows above it, up to the row Title matches.
	Question string `json:"question"`
	// Title matches the dialog's first row; the first of its groups that matched, when it has any, is the tool. The
	// first non-blank row after it is the description when more rows follow, the rest the
	// subject (the command).
	Title string `json:"title"`
	// TitleRows bounds how far above Question the title is looked for (default 20).
	TitleRows int `json:"title_rows,omitempty"`
	// HookGraceMS is how long the dialog shows before the screen route takes it, for a program
	// whose own hook may bring it first (Claude Code's PermissionRequest hook records its question
	// within milliseconds of the dialog): a dialog a hook took is the hook's. 0: at once.
	HookGraceMS int `json:"hook_grace_ms,omitempty"`
	// Allow and Deny are the keys that allow once and deny: one letter or digit, or Escape.
	Allow string `json:"allow"`
	Deny  string `json:"deny"`
	// Denied match the rows the program shows once the person has denied (Claude Code:
	// "Interrupted · What should Claude do instead?"): a dialog that closed while one more such
	// row appeared was denied, else allowed. Without them, a program working on after the dialog
	// was allowed, one at rest denied.
	Denied []string `json:"denied,omitempty"`
	// Always is the key that allows for the rest of the agent's session only; "" when the program
	// offers nothing that narrow (a choice that writes a rule for the project is broader than the
	// person's "always", and is never pressed for it).
	Always string `json:"always,omitempty"`
}

// Dialog is a dialog recognised on a screen.
type Dialog struct {
	Spec *DialogSpec
	Tool string
	// Description is the first of the dialog's lines when more follow, Subject the rest (a row a
	// line wrapped onto is joined to it): Claude Code draws a tool's description above its command.
	// A command of several lines without a description reads the same way, so what a person is
	// shown is Body.
	Description string
	Subject     string
	// Body is every line between the title and the question, whole: never part of a command.
	Body string
	// Fingerprint is the dialog's identity: a hash of its rows from the title to the question.
	// A key is pressed only while a dialog with the same fingerprint still shows.
	Fingerprint string
	idx         int // which of the profile's dialogs
}

type compiledDialog struct {
	markers, denied []*regexp.Regexp
	question, title *regexp.Regexp
}

func (d *DialogSpec) check(profile string) error {
	if len(d.Markers) == 0 || d.Question == "" || d.Title == "" {
		return fmt.Errorf("profile %q: a dialog needs markers, question and title", profile)
	}
	if d.TitleRows < 0 || d.HookGraceMS < 0 {
		return fmt.Errorf("profile %q: a dialog's title_rows and hook_grace_ms must not be negative", profile)
	}
	for _, k := range []string{d.Allow, d.Deny} {
		if !DialogKey().MatchString(k) {
			return fmt.Errorf("profile %q: a dialog's allow and deny keys are each one letter or digit, or Escape (not %q)", profile, k)
		}
	}
	if d.Always != "" && !DialogKey().MatchString(d.Always) {
		return fmt.Errorf("profile %q: a dialog's always key is one letter or digit, or Escape (not %q)", profile, d.Always)
	}
	return nil
}

func (d *DialogSpec) compile(profile string) (compiledDialog, error) {
	var c compiledDialog
	var errs []error
	one := func(field, s string) *regexp.Regexp {
		re, err := regexp.Compile(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("profile %q: dialogs.%s: %w", profile, field, err))
		}
		return re
	}
	for _, m := range d.Markers {
		c.markers = append(c.markers, one("markers", m))
	}
	for _, m := range d.Denied {
		c.denied = append(c.denied, one("denied", m))
	}
	c.question, c.title = one("question", d.Question), one("title", d.Title)
	return c, errors.Join(errs...)
}

// dialogRow is a screen row as the dialog patterns read it: trimmed, without the box a program
// draws around its dialog.
func dialogRow(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "│")
	s = strings.TrimSuffix(s, "│")
	return strings.TrimSpace(s)
}

// Dialog returns the first of the profile's dialogs that s shows.
func (p *Profile) Dialog(s Screen) (Dialog, bool) {
	if p == nil || len(p.Dialogs) == 0 {
		return Dialog{}, false
	}
	rows, raw := make([]string, len(s.Lines)), make([]string, len(s.Lines))
	for i, l := range s.Lines {
		rows[i], raw[i] = dialogRow(l.Text), l.Text
	}
	for i := range p.Dialogs {
		if d, ok := p.dialogIn(i, rows, raw, s.Width); ok {
			return d, true
		}
	}
	return Dialog{}, false
}

func (p *Profile) dialogIn(i int, rows, raw []string, cols int) (Dialog, bool) {
	spec, c := &p.Dialogs[i], p.rx().dialogs[i]
	if c.question == nil || c.title == nil {
		return Dialog{}, false
	}
	for _, m := range c.markers {
		if m == nil || !anyRow(m, rows) {
			return Dialog{}, false
		}
	}
	q := -1
	for j := len(rows) - 1; j >= 0; j-- {
		if c.question.MatchString(rows[j]) {
			q = j
			break
		}
	}
	if q < 0 {
		return Dialog{}, false
	}
	reach := spec.TitleRows
	if reach == 0 {
		reach = 20
	}
	t := -1
	for j := q - 1; j >= 0 && j >= q-reach; j-- {
		if c.title.MatchString(rows[j]) {
			t = j
			break
		}
	}
	if t < 0 {
		return Dialog{}, false
	}
	d := Dialog{Spec: spec, idx: i}
	for _, g := range c.title.FindStringSubmatch(rows[t])[1:] {
		if g != "" {
			d.Tool = g // the first group that took part: a title pattern may have alternatives
			break
		}
	}
	w, known := width(raw, cols)
	body := unwrap(raw[t+1:q], rows[t+1:q], w, known)
	d.Body = strings.Join(body, "\n")
	if len(body) > 1 {
		d.Description, body = body[0], body[1:]
	}
	d.Subject = strings.Join(body, "\n")
	sum := sha256.Sum256([]byte(strings.Join(rows[t:q+1], "\n")))
	d.Fingerprint = hex.EncodeToString(sum[:8])
	return d, true
}

func anyRow(re *regexp.Regexp, rows []string) bool {
	for _, r := range rows {
		if re.MatchString(r) {
			return true
		}
	}
	return false
}

// Denials counts the rows of s that say a dialog of d's kind was denied, and reports whether the
// dialog has such rows at all.
func (p *Profile) Denials(d Dialog, s Screen) (n int, known bool) {
	if p == nil || d.Spec == nil || d.idx >= len(p.Dialogs) {
		return 0, false
	}
	c := p.rx().dialogs[d.idx]
	if len(c.denied) == 0 {
		return 0, false
	}
	for _, l := range s.Lines {
		r := dialogRow(l.Text)
		for _, re := range c.denied {
			if re != nil && re.MatchString(r) {
				n++
				break
			}
		}
	}
	return n, true
}
