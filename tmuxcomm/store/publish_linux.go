package store

import (
	"syscall"
	"unsafe"
)

// renameNoReplace renames tmp to path unless path exists (renameat2 with RENAME_NOREPLACE). It is
// preferred to link(2) for publishing: a waiter's inotify sees a rename (IN_MOVED_TO), which tells
// it the file is whole, while a link looks like any creation and costs the waiter a scan of every
// process's open files. ok is false where the kernel or file system lacks it.
func renameNoReplace(tmp, path string) (ok bool, err error) {
	if SysRenameat2 < 0 {
		return false, nil
	}
	from, err := syscall.BytePtrFromString(tmp)
	if err != nil {
		return true, err
	}
	to, err := syscall.BytePtrFromString(path)
	if err != nil {
		return true, err
	}
	const atFDCWD, renameNoReplaceFlag = -100, 1
	fdcwd := atFDCWD
	_, _, errno := syscall.Syscall6(uintptr(SysRenameat2), uintptr(fdcwd), uintptr(unsafe.Pointer(from)),
		uintptr(fdcwd), uintptr(unsafe.Pointer(to)), renameNoReplaceFlag, 0)
	switch {
	case errno == 0:
		return true, nil
	case errno == syscall.ENOSYS || errno == syscall.EINVAL:
		return false, nil
	default: // EEXIST among them, which errors.Is matches to fs.ErrExist
		return true, errno
	}
}

// renameExchange swaps the names of a and b atomically (renameat2 with RENAME_EXCHANGE). ok is
// false where the kernel or file system lacks it.
func renameExchange(a, b string) (ok bool, err error) {
	if SysRenameat2 < 0 {
		return false, nil
	}
	from, err := syscall.BytePtrFromString(a)
	if err != nil {
		return true, err
	}
	to, err := syscall.BytePtrFromString(b)
	if err != nil {
		return true, err
	}
	const atFDCWD, renameExchangeFlag = -100, 2
	fdcwd := atFDCWD
	_, _, errno := syscall.Syscall6(uintptr(SysRenameat2), uintptr(fdcwd), uintptr(unsafe.Pointer(from)),
		uintptr(fdcwd), uintptr(unsafe.Pointer(to)), renameExchangeFlag, 0)
	switch {
	case errno == 0:
		return true, nil
	case errno == syscall.ENOSYS || errno == syscall.EINVAL:
		return false, nil
	default: // ENOENT among them, which errors.Is matches to fs.ErrNotExist
		return true, errno
	}
}
