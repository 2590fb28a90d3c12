//go:build !linux

package paneops

import "syscall"

// readsTerminal cannot tell what a process waits for outside Linux: it counts as reading, so a
// pane is delivered to as before.
func readsTerminal(pid int) bool { return true }

// dieWithParent has no portable equivalent outside Linux.
func dieWithParent() *syscall.SysProcAttr { return nil }
