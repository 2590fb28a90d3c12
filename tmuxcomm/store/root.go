package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/wcomm/wcomm/messages"
)

// DefaultRoot is the seed's root folder for session folders.
const DefaultRoot = "/tmp/worker-comm"

// ErrUnsafeRoot is returned for a root that another user could tamper with.
var ErrUnsafeRoot = errors.New("unsafe root")

// ErrOutsideRoot is returned for a path that does not lie inside the root.
var ErrOutsideRoot = errors.New("path outside the root")

// EnsureRoot makes sure dir exists as a real folder owned by this user with mode 0700. A root that
// is a symlink or owned by someone else is refused: in /tmp anyone could plant one to redirect or
// read our writes. A root of ours with a looser mode (the seed's mkdir -p gives 0755) is tightened.

// ownUID is this process's uid, asked once: the ownership checks run on every file the store
// reads, and os.Getuid is a system call each time.
var ownUID = os.Getuid()

func EnsureRoot(dir string, create bool) (string, error) {
	if dir == "" {
		return "", Kindf(ErrUnsafeRoot, "empty root")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("root %q: %w", dir, err)
	}
	if err := checkRootChars(abs); err != nil {
		return "", err
	}
	st, err := os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		if !create {
			return abs, err
		}
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return "", fmt.Errorf("create parent of root %s: %w", abs, err)
		}
		if err := os.Mkdir(abs, DirMode); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("create root %s: %w", abs, err)
		}
		st, err = os.Lstat(abs)
	}
	if err != nil {
		return "", fmt.Errorf("root %s: %w", abs, err)
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return "", Kindf(ErrUnsafeRoot, "root %s is a symlink; remove it or pass --root", abs)
	}
	if !st.IsDir() {
		return "", Kindf(ErrUnsafeRoot, "root %s is not a folder", abs)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != ownUID {
		return "", fmt.Errorf("root %s is owned by uid %d, not by you (uid %d); pass --root: %w",
			abs, sys.Uid, os.Getuid(), ErrUnsafeRoot)
	}
	if st.Mode().Perm() != DirMode {
		if err := os.Chmod(abs, DirMode); err != nil {
			return "", fmt.Errorf("tighten root %s to 0700: %w", abs, err)
		}
	}
	return abs, nil
}

// ReadRoot is the one check of the root for every reader (a listing, a lookup, a wait): it
// returns the checked absolute root, and found false with no error when the root does not exist
// yet, since nothing was ever written there and an empty listing is the truth. Any other refusal
// of EnsureRoot (a symlink, a root another user owns, not a folder) is returned as it is: a reader
// that took such a root for an empty one would say "no questions" where another command refuses,
// and what it did find there was planted.
func ReadRoot(dir string) (root string, found bool, err error) {
	root, err = EnsureRoot(dir, false)
	if err == nil {
		return root, true, nil
	}
	if errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ErrUnsafeRoot) {
		return root, false, nil
	}
	return "", false, err
}

// CheckOwned refuses a file or folder another user owns: every party of an exchange runs as the
// same user, so one that is not ours was planted (in a root that was once loose, or in /tmp). A
// folder of ours with a looser mode than 0700 (the plain procedure's mkdir -p gives 0755) is
// tightened, as the root is.
func CheckOwned(path string, st fs.FileInfo) error {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != ownUID {
		return fmt.Errorf("%s is owned by uid %d, not by you (uid %d), so another user made it; wcomm does not use it: remove it: %w",
			path, sys.Uid, os.Getuid(), ErrUnsafeRoot)
	}
	if st.IsDir() && st.Mode().Perm() != DirMode {
		if err := os.Chmod(path, DirMode); err != nil {
			return fmt.Errorf("tighten %s to 0700: %w", path, err)
		}
	}
	return nil
}

// storeDir is the one check of a store folder at the top of the root (.ids, .where, .panes,
// .outbox; the pane locks' .locks is checked as strictly by paneops): a real folder of this user,
// created 0700 when missing and create is set. A symlink, even to a folder inside the root, and a
// folder another user made (a root that was once loose lets anyone plant one) are refused.
func Dir(root, name string, create bool) (string, error) {
	d := filepath.Join(root, name)
	return d, EnsureDir(d, create)
}

// InRoot is the one way into the root for a path from outside (an argument, a RESPONSE line): it
// checks that path lies inside root once cleaned, and walks it from the root down with Lstat,
// refusing every symlink on the way (inside the root as well as out of it: a link between two
// session folders would pair a request with another exchange's response) and every folder that
// is not ours. It returns the cleaned absolute path under root as root is spelt. The last
// component may be missing (a response not yet written), and a symlink there is left to the
// reader, which opens with O_NOFOLLOW and names it.
func InRoot(root, path string) (string, error) {
	if path == "" || strings.ContainsRune(path, 0) {
		return "", fmt.Errorf("invalid path %q", messages.SanitizeField(path))
	}
	if !filepath.IsAbs(path) {
		return "", Kindf(ErrOutsideRoot, "path %q is not absolute", messages.SanitizeField(path))
	}
	clean := filepath.Clean(path)
	rel, ok := under(root, clean)
	if !ok {
		// The root may be spelt through a symlinked parent (/tmp -> /private/tmp) in the path.
		if realRoot, err := filepath.EvalSymlinks(root); err == nil {
			rel, ok = under(realRoot, clean)
		}
	}
	if !ok {
		return "", Kindf(ErrOutsideRoot, "%s is not inside %s", clean, root)
	}
	parts := strings.Split(rel, string(filepath.Separator))
	cur := root
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		last := i == len(parts)-1
		st, err := os.Lstat(cur)
		if err != nil {
			if last && errors.Is(err, fs.ErrNotExist) {
				break
			}
			if errors.Is(err, fs.ErrNotExist) {
				return "", Kindf(ErrNotFound, "no folder %s under %s; run 'wcomm history' to list the sessions", cur, root)
			}
			return "", fmt.Errorf("%s: %w", cur, err)
		}
		if last {
			break
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return "", Kindf(ErrOutsideRoot, "%s is a symlink; wcomm follows no symlink inside the root, so %s is not inside %s", cur, clean, root)
		}
		if !st.IsDir() {
			return "", fmt.Errorf("%s is not a folder", cur)
		}
		if err := CheckOwned(cur, st); err != nil {
			return "", err
		}
	}
	return filepath.Join(root, rel), nil
}

// under returns path relative to dir when it lies strictly inside it.
func under(dir, path string) (string, bool) {
	rel, ok := strings.CutPrefix(path, dir+string(filepath.Separator))
	return rel, ok && rel != ""
}

// checkRootChars refuses a root whose paths the protocol's lines cannot carry: a response path
// ends at the first white space of a RESPONSE line, and the plain procedure's fallback command
// puts it in a double-quoted shell string, so a space, a quote, $ or a control character in the
// root would make every exchange under it unanswerable.
func checkRootChars(abs string) error {
	probe := filepath.Join(abs, "20260101-000000-o1-w2", messages.SeqFileName(2, messages.KindResponse))
	if err := messages.ValidResponsePath(probe); err != nil {
		return fmt.Errorf("root %q cannot be named in a RESPONSE line (%v); pass --root with a path of letters, digits and . _ - /: %w",
			messages.SanitizeField(abs), err, ErrUnsafeRoot)
	}
	return nil
}

// EnsureDir checks that d is a real folder (not a symlink) and creates it 0700 when missing and
// create is set.
func EnsureDir(d string, create bool) error {
	st, err := os.Lstat(d)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err := os.Mkdir(d, DirMode); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", d, err)
		}
		st, err = os.Lstat(d)
	}
	if err != nil {
		return err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return Kindf(ErrUnsafeRoot, "%s is a symlink; wcomm follows no symlink inside the root: remove it", d)
	}
	if !st.IsDir() {
		return Kindf(ErrUnsafeRoot, "%s is not a folder", d)
	}
	return CheckOwned(d, st)
}
