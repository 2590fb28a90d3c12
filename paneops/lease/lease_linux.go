package lease

import (
	"errors"
	"time"

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

// readUnwritten is leaseBusy that, when no writer holds path, reads it whole (up to limit bytes)
// under the lease it took, in the same open: a writer that opens it meanwhile waits until the
// read is done, so what is read is what no writer was changing. data is nil when it was not
// read (busy, not known, or larger than limit).
func readUnwritten(path string, limit int64) (data []byte, mtime time.Time, busy, ok bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, time.Time{}, false, false
	}
	defer unix.Close(fd)
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK)
	switch {
	case errors.Is(err, unix.EAGAIN):
		return nil, time.Time{}, true, true
	case err != nil:
		return nil, time.Time{}, false, false
	}
	defer func() { _, _ = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK) }() // let go at once
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > limit {
		return nil, time.Time{}, false, true
	}
	data = make([]byte, st.Size)
	for n := 0; n < len(data); {
		k, err := unix.Read(fd, data[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || k == 0 {
			return nil, time.Time{}, false, true // shorter than its stat: read again by path
		}
		n += k
	}
	return data, time.Unix(st.Mtim.Unix()), false, true
}
