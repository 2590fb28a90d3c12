package questions

// What a permission question keeps of the agent's request. A tool's input has no bound of its
// own (a Write carries the whole file, a Bash call may carry a script of megabytes), and the
// record is read whole by every reader of questions, which stop at maxQuestionFile: a record
// over it is posted nowhere and answered by no one. So the record keeps what a person needs to
// decide (the tool, the command or path, a bounded excerpt of each long part with its size and
// hash) and says plainly that it was cut; the agent's own dialog still shows it whole.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

const (
	// maxPermissionRecord bounds a permission question's file as written: a quarter of what the
	// readers take, whatever the escaping of what it holds.
	maxPermissionRecord = maxQuestionFile / 4
	// maxKeptSubject and maxKeptInput bound the subject and the tool's input kept; a part of the
	// input longer than maxKeptField is kept as its first excerptBytes.
	maxKeptSubject = 8 << 10
	maxKeptInput   = 16 << 10
	maxKeptField   = 2 << 10
	excerptBytes   = 1 << 10
	// maxKeptAlways bounds the "always" rules kept: a rule is the exact command, and one cut would
	// allow another command than the one asked about.
	maxKeptAlways = 4 << 10
)

// fitPermission is p as a permission question records it: within maxPermissionRecord, each cut
// said in the subject the person reads.
func fitPermission(p messages.PermissionRequest) messages.PermissionRequest {
	var notes []string
	whole := wholeSubject(p)
	if len(p.Subject) > maxKeptSubject {
		p.Subject = excerpt(whole, maxKeptSubject-512) + "\n" + cutNote("it", whole)
	}
	if len(p.Input) > maxKeptInput {
		in, cut := fitInput(p.Input, whole)
		p.Input = in
		notes = append(notes, cut...)
	}
	rules := 0
	for _, u := range p.Always {
		for _, r := range u.Rules {
			rules += len(r.RuleContent)
		}
	}
	if rules > maxKeptAlways {
		p.Always = nil
		p.Answers = slices.DeleteFunc(p.Options(), func(a string) bool { return a == messages.PermAlways })
		notes = append(notes, `"always" is not offered from here: its rule would be the whole command; answer it in the pane for that`)
	}
	if len(notes) > 0 {
		p.Subject += "\n\n" + strings.Join(notes, "\n\n")
	}
	return p
}

// fitInput keeps a tool's input of more than maxKeptInput bytes as the same object with each long
// value cut to an excerpt, or, when that is still too long (many parts, or not an object), as
// one note with an excerpt of the whole. The notes say each cut for the person.
func fitInput(in json.RawMessage, subject string) (json.RawMessage, []string) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(in, &fields) == nil {
		var notes []string
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			v := fields[k]
			if len(v) <= maxKeptField {
				continue
			}
			whole := string(v)
			var s string
			if json.Unmarshal(v, &s) == nil {
				whole = s
			}
			name := messages.SanitizeField(clipWords(k, 40))
			note := cutNote(name, whole)
			kept, _ := json.Marshal(excerpt(whole, excerptBytes) + "\n" + note)
			fields[k] = kept
			if whole == subject {
				continue // the subject says it already
			}
			notes = append(notes, fmt.Sprintf("%s, its first %d bytes:\n%s", note, excerptBytes, excerpt(whole, excerptBytes)))
		}
		if out, err := json.Marshal(fields); err == nil && len(out) <= maxKeptInput {
			return out, notes
		}
	}
	note := cutNote("the tool's input", string(in))
	out, _ := json.Marshal(map[string]string{"wcomm_cut": excerpt(string(in), excerptBytes) + "\n" + note})
	return out, []string{fmt.Sprintf("%s, its first %d bytes:\n%s", note, excerptBytes, excerpt(string(in), excerptBytes))}
}

// wholeSubject is p's subject whole: the request's subject is already cut at
// messages.MaxPermissionSubject, the input's field it came from is not.
func wholeSubject(p messages.PermissionRequest) string {
	var f struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
		Path     string `json:"path"`
		URL      string `json:"url"`
	}
	if json.Unmarshal(p.Input, &f) == nil {
		// The first field set is the one the subject came from (messages.ParsePermissionRequest).
		for _, v := range []string{f.Command, f.FilePath, f.Path, f.URL} {
			if v != "" {
				if strings.HasPrefix(v, p.Subject[:min(len(p.Subject), 256)]) {
					return v
				}
				break
			}
		}
	}
	return p.Subject
}

// cutNote says plainly that what was cut, of what size and hash, is not kept whole.
func cutNote(what, whole string) string {
	return fmt.Sprintf("(cut by wcomm: %s is %d bytes, sha256 %s; the agent's dialog in the pane shows it whole)",
		what, len(whole), messages.ContentSHA256([]byte(whole)))
}

// excerpt is the first at most n bytes of s, whole characters only.
func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// checkPermissionRecord refuses a record that would not be read back: the question would be
// posted nowhere, and its hook would wait for an answer no one can give.
func checkPermissionRecord(rec QuestionRecord, q messages.Question) (QuestionRecord, error) {
	size := func() int {
		r := rec
		r.Question = q
		data, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return maxQuestionFile + 1
		}
		return len(data)
	}
	if size() <= maxPermissionRecord {
		return rec, nil
	}
	// What is left over the bound is the input's shape (nesting deep enough for the indentation
	// to grow it): the person has the subject and the notes, the agent's dialog the rest.
	p := *rec.Permission
	p.Input, _ = json.Marshal(map[string]string{"wcomm_cut": cutNote("the tool's input", string(bytes.TrimSpace(rec.Permission.Input)))})
	rec.Permission = &p
	if n := size(); n > maxPermissionRecord {
		return rec, fmt.Errorf("the permission question would be %d bytes, more than the %s its readers take; answer it in the agent's pane: %w",
			n, store.SizeText(maxPermissionRecord), store.ErrTooLarge)
	}
	return rec, nil
}

// readBack loads a just-written permission question as its readers will: one they cannot read is
// resolved at once and its error returned, so the hook fails now and the agent's dialog decides,
// rather than waiting its whole time for an answer that cannot come.
func (d *Desk) readBack(st *QuestionStatus) error {
	_, err := LoadQuestion(st.Dir, st.Task, st.Seq)
	if err == nil {
		return nil
	}
	r := ResolvedRecord{ID: st.ID, Reason: "unreadable: " + err.Error(), At: d.Now().UTC()}
	if werr := writeJSONExclusive(st.File(messages.SuffixResolved), r); werr != nil && !errors.Is(werr, store.ErrExists) && !errors.Is(werr, os.ErrExist) {
		err = errors.Join(err, werr)
	}
	return fmt.Errorf("permission question %s cannot be read back, so no one could answer it; answer it in the agent's pane: %w", st.ID, err)
}
