package proc

import "os"

// selfPID is this process's id, asked of the kernel once: a Go process never forks without an
// exec, so it cannot change, and os.Getpid is a system call each time (several a delivery).
var selfPID = os.Getpid()

// SelfPID is this process's id (os.Getpid, asked once).
func SelfPID() int { return selfPID }
