package tmuxcomm

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

// ensureRoot makes sure dir exists as a real folder owned by this user with mode 0700. A root that
// is a symlink or owned by someone else is refused: in /tmp anyone could plant one to redirect or
// read our writes. A root of ours with a looser mode (the seed's mkdir -p gives 0755) is tightened.
func ensureRoot(dir string, create bool) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("empty root: %w", ErrUnsafeRoot)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("root %q: %w", dir, err)
	}
	st, err := os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		if !create {
			return abs, err
		}
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return "", fmt.Errorf("create parent of root %s: %w", abs, err)
		}
		if err := os.Mkdir(abs, dirMode); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("create root %s: %w", abs, err)
		}
		st, err = os.Lstat(abs)
	}
	if err != nil {
		return "", fmt.Errorf("root %s: %w", abs, err)
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return "", fmt.Errorf("root %s is a symlink; remove it or pass --root: %w", abs, ErrUnsafeRoot)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("root %s is not a folder: %w", abs, ErrUnsafeRoot)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return "", fmt.Errorf("root %s is owned by uid %d, not by you (uid %d); pass --root: %w",
			abs, sys.Uid, os.Getuid(), ErrUnsafeRoot)
	}
	if st.Mode().Perm() != dirMode {
		if err := os.Chmod(abs, dirMode); err != nil {
			return "", fmt.Errorf("tighten root %s to 0700: %w", abs, err)
		}
	}
	return abs, nil
}

// inRoot checks that path lies inside root after cleaning and resolving symlinks of the folders on
// the way, and returns the cleaned absolute path. The last component is not resolved: files are
// opened with O_NOFOLLOW, so a symlink there is refused when read.
func inRoot(root, path string) (string, error) {
	if path == "" || strings.ContainsRune(path, 0) {
		return "", fmt.Errorf("invalid path %q", messages.SanitizeField(path))
	}
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("path %q is not absolute: %w", messages.SanitizeField(path), ErrOutsideRoot)
	}
	clean := filepath.Clean(path)
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("root %s: %w", root, err)
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(clean))
	if err != nil {
		// A folder that does not exist cannot hold a file we read; say where it points.
		if !strings.HasPrefix(clean, root+string(filepath.Separator)) {
			return "", fmt.Errorf("%s is not inside %s: %w", clean, root, ErrOutsideRoot)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("no folder %s under %s; run 'wcomm history' to list the sessions: %w", filepath.Dir(clean), root, ErrNotFound)
		}
		return "", fmt.Errorf("%s: %w", clean, err)
	}
	if !strings.HasPrefix(dir+string(filepath.Separator), realRoot+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not inside %s: %w", clean, root, ErrOutsideRoot)
	}
	return filepath.Join(root, strings.TrimPrefix(filepath.Join(dir, filepath.Base(clean)), realRoot)), nil
}
