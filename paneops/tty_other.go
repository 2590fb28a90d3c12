//go:build !linux

package paneops

import "errors"

// TTYCanonical is only implemented on Linux; elsewhere a pane is never taken for a line reader by
// its terminal mode.
func TTYCanonical(tty string) (bool, error) {
	return false, errors.New("terminal modes are only read on Linux")
}
