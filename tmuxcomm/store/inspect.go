package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// RootReport is what doctor says of a root, read without changing it.
type RootReport struct {
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	Mode   string `json:"mode,omitempty"`
	Owner  int    `json:"owner_uid,omitempty"`
	OK     bool   `json:"ok"`
	Note   string `json:"note,omitempty"`
}

// Inspect reads the root's state without changing it (send creates or tightens it), in the words
// of the one root check (EnsureRoot) that every command applies.
func Inspect(path string) RootReport {
	r := RootReport{Path: path}
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.OK, r.Note = true, "does not exist yet; the first send creates it (0700)"
		return r
	case err != nil:
		r.Note = fmt.Sprintf("root %s: %v", path, err)
		return r
	}
	r.Exists = true
	r.Mode = st.Mode().String()
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		r.Owner = int(sys.Uid)
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		r.Note = fmt.Sprintf("root %s is a symlink: wcomm refuses it; remove it or pass --root", path)
	case !st.IsDir():
		r.Note = fmt.Sprintf("root %s is not a folder: remove it or pass --root", path)
	case r.Owner != os.Getuid():
		r.Note = fmt.Sprintf("root %s belongs to uid %d, not to you (uid %d): wcomm refuses it; pass --root", path, r.Owner, os.Getuid())
	case st.Mode().Perm() != 0o700:
		r.OK, r.Note = true, fmt.Sprintf("mode %s; the next send tightens it to 0700", st.Mode().Perm())
	default:
		r.OK, r.Note = true, "yours, 0700"
	}
	return r
}
