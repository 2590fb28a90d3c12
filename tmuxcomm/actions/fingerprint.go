package actions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

// IntentOptions are the inputs of PrepareIntent.
type IntentOptions struct {
	Action string
	// Settings are the asker's settings: the action must be registered (and trusted) there.
	Settings settings.Values
	// Targets are extra files or folders to fingerprint, besides the action's own; relative ones
	// are taken from Dir.
	Targets []string
	Dir     string // the asker's working folder
	RunID   string
}

// ErrUnregistered: the action named is not in the settings file (or its file is not trusted).
var ErrUnregistered = errors.New("action not registered")

// PrepareIntent fingerprints what approving the action would authorize: its definition, its
// targets' content, HEAD and `git status` of its folder. The question id is filled in by Ask.
func (r *Registry) PrepareIntent(ctx context.Context, o IntentOptions) (*messages.Intent, error) {
	def, ok := o.Settings.Actions[o.Action]
	if !ok {
		return nil, fmt.Errorf("no action %q is registered%s: %w", messages.SanitizeField(o.Action), registeredNote(o.Settings), ErrUnregistered)
	}
	in := &messages.Intent{Action: o.Action, Definition: def, DefinitionHash: def.Hash(), Config: o.Settings.ActionsFrom,
		RunID: o.RunID, CreatedAt: r.Now().UTC()}
	if abs, err := filepath.Abs(in.Config); err == nil {
		in.Config = abs
	}
	paths := append([]string(nil), def.Targets...)
	for _, t := range o.Targets {
		if !filepath.IsAbs(t) {
			t = filepath.Join(o.Dir, t)
		}
		paths = append(paths, filepath.Clean(t))
	}
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		kind, sum, err := hashTarget(def.Dir, p)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w; name files or folders that exist", p, err)
		}
		in.Targets = append(in.Targets, messages.Target{Path: p, Kind: kind, SHA256: sum})
	}
	g, err := gitState(ctx, def.Dir)
	if err != nil {
		return nil, fmt.Errorf("action %s runs in %s, whose git state an approval is bound to: %w", o.Action, def.Dir, err)
	}
	in.Git = g
	return in, nil
}

// registeredNote names the registered actions, and what an untrusted file declared.
func registeredNote(s settings.Values) string {
	var b strings.Builder
	if names := settings.SortedKeys(s.Actions); len(names) > 0 {
		fmt.Fprintf(&b, "; registered: %s", strings.Join(names, ", "))
	} else if s.Source != "" && len(s.Ignored) == 0 {
		fmt.Fprintf(&b, "; %s registers none", s.Source)
	} else {
		b.WriteString("; no settings file registers any (add an actions: block to .wcomm.yaml)")
	}
	if note := s.IgnoredNote(); note != "" {
		b.WriteString("; " + note)
	}
	return b.String()
}

func gitState(ctx context.Context, dir string) (messages.GitState, error) {
	abs, head, status, err := questions.GitRead(ctx, dir)
	if err != nil {
		return messages.GitState{}, err
	}
	return messages.GitState{Dir: abs, Head: head, StatusSHA256: messages.ContentSHA256([]byte(status)), Changed: questions.StatusPaths(status)}, nil
}

// hashTarget hashes a file's content, or a folder's entries (names, kinds, file contents and
// link targets, in name order, without .git folders); a relative path is taken from dir.
func hashTarget(dir, path string) (kind, sum string, err error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	st, err := os.Lstat(path)
	if err != nil {
		return "", "", err
	}
	if !st.IsDir() {
		h := sha256.New()
		if err := hashEntry(h, path, st); err != nil {
			return "", "", err
		}
		return messages.TargetFile, hex.EncodeToString(h.Sum(nil)), nil
	}
	h := sha256.New()
	var names []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		names = append(names, p)
		return nil
	})
	if err != nil {
		return "", "", err
	}
	sort.Strings(names)
	for _, p := range names {
		st, err := os.Lstat(p)
		if err != nil {
			return "", "", err
		}
		rel, _ := filepath.Rel(path, p)
		fmt.Fprintf(h, "%s\x00%s\x00", rel, st.Mode().Type())
		if err := hashEntry(h, p, st); err != nil {
			return "", "", err
		}
	}
	return messages.TargetDir, hex.EncodeToString(h.Sum(nil)), nil
}

// hashEntry writes a file's content, or a link's target, into h.
func hashEntry(h io.Writer, path string, st fs.FileInfo) error {
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "link:%s\x00", target)
	case st.Mode().IsRegular():
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintf(h, "%d\x00", st.Size())
		if _, err := io.Copy(h, f); err != nil {
			return err
		}
	}
	return nil
}

// loadedSettings is one settings file as the dispatcher reads it, read once per listing.
type loadedSettings struct {
	s   settings.Values
	err error
}

// changes lists how the world moved since the intent was made; none means it is fresh.
func (r *Registry) changes(ctx context.Context, in messages.Intent, cache map[string]*loadedSettings, getenv func(string) string) []string {
	var out []string
	if getenv == nil {
		getenv = os.Getenv
	}
	ls := cache[in.Config]
	if ls == nil {
		ls = &loadedSettings{}
		ls.s, ls.err = settings.LoadFile(in.Config, getenv)
		cache[in.Config] = ls
	}
	def, ok := ls.s.Actions[in.Action]
	switch {
	case ls.err != nil:
		out = append(out, fmt.Sprintf("the action's definition cannot be read, so the target cannot be reconstructed: %v", ls.err))
	case !ok && len(ls.s.Ignored) > 0:
		out = append(out, fmt.Sprintf("the action's definition is no longer trusted: %s", ls.s.IgnoredNote()))
	case !ok:
		out = append(out, fmt.Sprintf("action %s is no longer registered in %s", in.Action, in.Config))
	case def.Hash() != in.DefinitionHash:
		out = append(out, fmt.Sprintf("the action's definition changed in %s (run %q then, %q now)", in.Config, strings.Join(in.Definition.Run, " "), strings.Join(def.Run, " ")))
		if def.Dir != in.Definition.Dir || strings.Join(def.Targets, "\x00") != strings.Join(in.Definition.Targets, "\x00") {
			out[len(out)-1] += "; its folder or targets differ too"
		}
	}
	// What runs is the stored definition (dispatch.go): the approval binds it only while
	// it hashes to what was approved, recomputed here from the very argv, folder and targets.
	if in.Definition.Hash() != in.DefinitionHash {
		out = append(out, fmt.Sprintf("the intent's command (%q in %s) does not hash to the approved definition: its intent file was changed after the question was asked",
			strings.Join(in.Definition.Run, " "), in.Definition.Dir))
	}
	for _, t := range in.Targets {
		kind, sum, err := hashTarget(in.Definition.Dir, t.Path)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("target %s cannot be reconstructed: %v", t.Path, err))
		case kind != t.Kind:
			out = append(out, fmt.Sprintf("target %s was a %s and is now a %s", t.Path, t.Kind, kind))
		case sum != t.SHA256:
			out = append(out, fmt.Sprintf("target %s's content changed", t.Path))
		}
	}
	g, err := gitState(ctx, in.Git.Dir)
	switch {
	case err != nil:
		out = append(out, fmt.Sprintf("the git state of %s cannot be read: %v", in.Git.Dir, err))
	case g.Head != in.Git.Head:
		out = append(out, fmt.Sprintf("HEAD of %s moved from %s to %s", in.Git.Dir, shortCommit(in.Git.Head), shortCommit(g.Head)))
	case g.StatusSHA256 != in.Git.StatusSHA256:
		out = append(out, fmt.Sprintf("git status of %s changed (%d changed paths then, %d now)", in.Git.Dir, in.Git.Changed, g.Changed))
	}
	return out
}

func shortCommit(s string) string {
	if s == "" {
		return "(no commit)"
	}
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
