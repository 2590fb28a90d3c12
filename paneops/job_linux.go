package paneops

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// readsTerminal reports whether process pid is blocked reading its standard input (a line reader
// waiting at the keyboard: cat, a script's read, input()), from the system call it sleeps in
// (/proc/PID/syscall: the number, then the arguments; the first is the file descriptor). A process
// whose call cannot be read counts as reading: the caller then delivers as it did before it could
// tell. A process that is gone (or going: ESRCH once it has left its memory) reads nothing: its
// job has just ended, and the shell that ran it is the next to read, so a line typed now would run
// (taken for a reader, a queued line was typed uncommented into a shell between two jobs).
func readsTerminal(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/syscall")
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return false
	}
	if err != nil {
		return true
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		// "running" or "-1 ...": on a CPU, or in no call: not waiting for the keyboard.
		return false
	}
	nr, err := strconv.Atoi(f[0])
	if err != nil {
		return false
	}
	return (nr == syscall.SYS_READ || nr == syscall.SYS_READV) && f[1] == "0x0"
}

// dieWithParent makes a tmux client die with the wcomm that started it. A wcomm killed mid-way
// (kill -9 of a deliverer) must not leave its client to paste after it is gone: the next
// deliverer reads the pane's marks to learn what was typed, and a late paste would go unseen.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
