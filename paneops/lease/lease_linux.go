package lease

import (
	"errors"

	"golang.org/x/sys/unix"
)

// leaseBusy asks the kernel whether path is open for writing: a read lease is refused with
// EAGAIN exactly then (fs/locks.c, check_conflicting_open). The lease is let go at once, so a
// writer that opens the file meanwhile waits for microseconds, not for the lease-break time, and
// the SIGIO of a lease break is ignored by the Go runtime unless asked for. ok is false when no
// lease can be taken here: the file is another user's, or the file system or the system's
// settings do not allow leases.
func leaseBusy(path string) (busy, ok bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, false
	}
	defer unix.Close(fd)
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK)
	switch {
	case err == nil:
		_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
		return false, true
	case errors.Is(err, unix.EAGAIN):
		return true, true
	default:
		return false, false
	}
}
