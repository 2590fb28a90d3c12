// Package storetest holds what the tests of the store's readers share: counting the opens a
// call makes of the files of a folder, as the kernel tells them, so that a test of "read once"
// counts real opens, not the calls the code says it makes.
package storetest

import (
	"bytes"
	"errors"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// OpensIn counts the opens of each file of dir that fn makes (inotify's IN_OPEN), by name.
func OpensIn(t testing.TB, dir string, fn func()) map[string]int {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	require.NoError(t, err)
	defer unix.Close(fd)
	_, err = unix.InotifyAddWatch(fd, dir, unix.IN_OPEN)
	require.NoError(t, err)
	fn()
	opens := map[string]int{}
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EAGAIN) {
			return opens
		}
		require.NoError(t, err)
		for b := buf[:n]; len(b) >= unix.SizeofInotifyEvent; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
			name := b[unix.SizeofInotifyEvent : unix.SizeofInotifyEvent+int(ev.Len)]
			opens[string(bytes.TrimRight(name, "\x00"))]++
			b = b[unix.SizeofInotifyEvent+int(ev.Len):]
		}
	}
}
