//go:build !linux

package timerslack

import (
	"syscall"
	"time"
)

// Has reports true: only Linux has a timer slack to set.
func Has(d time.Duration) bool { return true }

// Exec is syscall.Exec: only Linux has a timer slack to set.
func Exec(path string, argv, env []string, d time.Duration) error {
	return syscall.Exec(path, argv, env)
}

// Start runs start: only Linux has a timer slack to set.
func Start(d time.Duration, start func() error) error { return start() }
