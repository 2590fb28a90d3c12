package timerslack

import (
	"runtime"
	"syscall"
	"time"
)

// prctl(2) options.
const (
	prSetTimerSlack = 29
	prGetTimerSlack = 30
)

// Has reports whether the calling thread's slack is at least d already: a program started by
// Exec has it on every thread.
func Has(d time.Duration) bool {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	v, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerSlack, 0, 0)
	return errno == 0 && time.Duration(v) >= d
}

// Exec replaces this process with path, as syscall.Exec does, its threads with slack d. When the
// slack cannot be set (a thread of a real-time policy has none), it is not: the program is
// started all the same. It returns only on failure.
func Exec(path string, argv, env []string, d time.Duration) error {
	// The goroutine stays on this thread until the exec replaces the process: the slack set is
	// this thread's.
	runtime.LockOSThread()
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, uintptr(d.Nanoseconds()), 0)
	err := syscall.Exec(path, argv, env)
	runtime.UnlockOSThread()
	return err
}

// Start runs start, which starts a program (os/exec's Cmd.Start), on a thread whose slack is d
// for the while: the program's threads all have it, as with Exec, without a second exec of it.
// Go forks a child on the thread of the goroutine that starts it; the thread gets its slack back
// before any other goroutine can run on it. A thread the runtime happens to make from it
// meanwhile keeps the slack: in the starting process, a command that ends soon or a server.
func Start(d time.Duration, start func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerSlack, 0, 0)
	if errno != 0 {
		return start()
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, uintptr(d.Nanoseconds()), 0); errno != 0 {
		return start()
	}
	defer syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, old, 0)
	return start()
}
