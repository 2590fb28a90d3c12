package store

import (
	"syscall"
	"unsafe"
)

// renameNoReplace renames tmp to path unless path exists (renameat2 with RENAME_NOREPLACE). It is
// preferred to link(2) for publishing: a waiter's inotify sees a rename (IN_MOVED_TO), which tells
// it the file is whole, while a link looks like any creation and costs the waiter a scan of every
// process's open files. ok is false where the kernel or file system lacks it.
func renameNoReplace(tmp, path string) (ok bool, err error) { return renameat2(tmp, path, 1) }

// renameExchange swaps the names of a and b atomically (renameat2 with RENAME_EXCHANGE). ok is
// false where the kernel or file system lacks it.
func renameExchange(a, b string) (ok bool, err error) { return renameat2(a, b, 2) }

// renameat2 renames from to to with flag (RENAME_NOREPLACE 1, RENAME_EXCHANGE 2). ok is false
// where the kernel or file system lacks the call or the flag; err is the kernel's otherwise
// (EEXIST and ENOENT among them, which errors.Is matches to fs.ErrExist and fs.ErrNotExist).
func renameat2(from, to string, flag uintptr) (ok bool, err error) {
	if SysRenameat2 < 0 {
		return false, nil
	}
	f, err := syscall.BytePtrFromString(from)
	if err != nil {
		return true, err
	}
	t, err := syscall.BytePtrFromString(to)
	if err != nil {
		return true, err
	}
	const atFDCWD = -100
	fdcwd := atFDCWD
	_, _, errno := syscall.Syscall6(uintptr(SysRenameat2), uintptr(fdcwd), uintptr(unsafe.Pointer(f)),
		uintptr(fdcwd), uintptr(unsafe.Pointer(t)), flag, 0)
	switch {
	case errno == 0:
		return true, nil
	case errno == syscall.ENOSYS || errno == syscall.EINVAL:
		return false, nil
	default:
		return true, errno
	}
}
