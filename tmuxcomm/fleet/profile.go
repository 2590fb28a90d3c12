package fleet

import (
	"context"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/core"
)

// Delivery forms, as the delivery log records them.
const (
	FormPaste   = "paste"   // the whole request, sanitized
	FormPointer = "pointer" // one line naming the request file
	FormComment = "comment" // the pointer line as a shell comment, for an interactive shell
)

// Detect chooses the profile of a pane: the one named agent when it is not "" (an unknown name is
// an error naming the known ones), else what paneops' detection finds in the pane's foreground.
// Without a process table it decides from the pane's current command alone.
func (f *Finder) Detect(ctx context.Context, p paneops.Pane, agent string) (profile.Detection, error) {
	if agent != "" {
		return f.Profiles.Force(agent)
	}
	var t *proc.Table
	var err error
	if f.PaneProcs != nil && p.PID > 0 {
		// Not the caller's ancestors up to init (a read each, every delivery): only those in
		// the pane's tree can be candidates, and the tree is read whole, so when one is there,
		// the caller is below it and the table holds the whole line between them.
		t, err = f.PaneProcs(p.PID)
	} else {
		t, err = f.Procs()
	}
	if err != nil {
		t = nil
	}
	ex := paneops.Exclude{PIDs: nil}
	if t != nil {
		ex.PIDs = t.Ancestors(f.SelfPID)
	}
	return paneops.Detect(f.Profiles, p, t, f.TTYMode, ex), nil
}

// CheckAgent refuses, as a usage error, an --agent name no profile has, before anything is
// written.
func (f *Finder) CheckAgent(agent string) error {
	if agent == "" {
		return nil
	}
	if _, err := f.Profiles.Force(agent); err != nil {
		return &core.UsageError{Msg: err.Error()}
	}
	return nil
}

// busyWait is the bound of Delivery.BusyWait: a negative setting means "do not wait".
func (f *Finder) busyWait() time.Duration {
	if f.BusyWait < 0 {
		return 0
	}
	return f.BusyWait
}

// Delivery is the Delivery of content into pane p under profile det, with the engine's settings.
// The pane locks live in the root's .locks folder.
func (f *Finder) Delivery(p paneops.Pane, content string, det profile.Detection, root string, srv paneops.ServerInfo) paneops.Delivery {
	d := paneops.Delivery{
		Pane: p.ID, Content: []byte(content), Submit: true, EnterDelay: f.EnterDelay,
		LockDir: store.LockDir(root), LockKey: srv.Key(), LockTimeout: f.LockTimeout,
		Profile: det.Profile, BusyWait: f.busyWait(), LiteralEnter: paneops.NeedsLiteralEnter(srv.Version),
		// A strict paste checks, in its own call, that the pane and the server are still the ones
		// looked up (or read from the pane's card).
		Expect: paneops.Identity{PanePID: p.PID, ServerPID: srv.PID},
	}
	return d
}

// PasteForm decides what reaches the pane: the whole request, sanitized, when it is small enough
// to paste safely for the pane's profile, else one pointer line to the file (the file keeps the
// original bytes either way). An interactive shell gets the pointer as an inert comment line:
// pasting the request with Enter would run its lines as commands.
func (f *Finder) PasteForm(request, path string, prof *profile.Profile) (content, form string) {
	if prof != nil && prof.Kind == profile.KindShell {
		return ShellLine(PointerLine(request, path, "it is not pasted into a shell, which would run it")), FormComment
	}
	// The profile's bounds, measured for its program, take the place of the engine's defaults.
	pasteLimit, lineLimit := f.PasteLimit, f.LineLimit
	if prof != nil && prof.PasteLimit > 0 {
		pasteLimit = prof.PasteLimit
	}
	if prof != nil && prof.LineLimit > 0 {
		lineLimit = prof.LineLimit
	}
	clean := messages.Sanitize(request, true)
	long := len(clean) > pasteLimit
	if !long {
		for _, line := range strings.Split(clean, "\n") {
			if len(line) > lineLimit {
				long = true
				break
			}
		}
	}
	if !long && utf8.ValidString(clean) && strings.TrimSpace(clean) != "" {
		return strings.TrimRight(clean, "\n"), FormPaste
	}
	return PointerLine(request, path, "too long to paste"), FormPointer
}

// PointerLine is the one line that stands for a request: its header, its size, why it is not
// pasted, and where to read it. Workers (and the test fixtures) look for "read it whole from PATH
// and follow".
func PointerLine(request, path, why string) string {
	header, _, _ := strings.Cut(request, "\n")
	return pointerLineOf(header, len(request), path, why)
}

// pointerLineOf is pointerLine from the request's header line and size alone.
func pointerLineOf(header string, size int, path, why string) string {
	return messages.SanitizeField(header) + " The request is " + strconv.Itoa(size) +
		" bytes, " + why + ": read it whole from " + messages.SanitizeField(path) +
		" and follow its [RESPONSE INSTRUCTIONS]."
}

// neverPasted is a request size beyond every profile's paste bound (128 KiB at most) by far:
// such a request is delivered as its pointer line without being read and sanitized whole.
// Sanitizing never shrinks text by that much unless most of it is control sequences, and the
// pointer line is the safe form for those too.
const neverPasted = 1 << 20

// NeverPasted is neverPasted, for a sender that decides whether to hand its request over whole.
const NeverPasted = neverPasted

// PasteFormOfFile is pasteForm of a request file, reading it whole only when it might be pasted.
func (f *Finder) PasteFormOfFile(path string, prof *profile.Profile) (content, form string, err error) {
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() && st.Size() > neverPasted {
		header, err := store.ReadFirstLine(path)
		if err != nil {
			return "", "", err
		}
		if prof != nil && prof.Kind == profile.KindShell {
			return ShellLine(pointerLineOf(header, int(st.Size()), path, "it is not pasted into a shell, which would run it")), FormComment, nil
		}
		return pointerLineOf(header, int(st.Size()), path, "too long to paste"), FormPointer, nil
	}
	data, _, err := store.ReadFileText(path)
	if err != nil {
		return "", "", err
	}
	content, form = f.PasteForm(data, path, prof)
	return content, form, nil
}

// ShellLine turns one line of text into a line an interactive shell runs as nothing: "# " and the
// text with every character outside [A-Za-z0-9 and  []%=/.,:_+@-] replaced by "_".
//
// bash (interactive_comments is on by default), sh, dash, ksh, mksh and fish take it as a comment.
// zsh (INTERACTIVE_COMMENTS is off by default) and csh/tcsh take "#" as a command name that does
// not exist: they print an error and run nothing, because the text holds no character that could
// separate commands (; & | newline), substitute ($ `), redirect (< >), quote (' " \), expand history
// (!), or open a subshell or group (( ) { }). The brackets can only make zsh report a bad glob
// pattern. A Python REPL takes it as a comment too; node reports a syntax error.
func ShellLine(text string) string {
	var b strings.Builder
	b.WriteString("# ")
	for _, r := range text {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune(" []%=/.,:_+@-", r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
