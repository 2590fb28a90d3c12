package paneops

import (
	"fmt"
	"strings"
	"syscall"
	"unsafe"
)

// TTYCanonical reads the line discipline of a terminal device (a pane's #{pane_tty}) and reports
// whether it is in canonical (cooked) mode. It opens the device without making it the caller's
// controlling terminal and without blocking, and reads nothing from it. A readline shell or a TUI
// puts its terminal in raw mode while it waits for input; cat and `read` leave it canonical.
func TTYCanonical(tty string) (bool, error) {
	if !strings.HasPrefix(tty, "/dev/") {
		return false, fmt.Errorf("terminal %q is not a device path", tty)
	}
	fd, err := syscall.Open(tty, syscall.O_RDONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false, fmt.Errorf("open terminal %s: %w", tty, err)
	}
	defer syscall.Close(fd)
	var tio syscall.Termios
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), uintptr(syscall.TCGETS), uintptr(unsafe.Pointer(&tio))); errno != 0 {
		return false, fmt.Errorf("read the mode of terminal %s: %w", tty, errno)
	}
	return tio.Lflag&syscall.ICANON != 0, nil
}
