//go:build !linux

package lease

import "time"

// leaseBusy has no kernel answer here: OpenForWriting reads /proc where there is one.
func leaseBusy(path string) (busy, ok bool) { return false, false }

// readUnwritten has no kernel answer here either.
func readUnwritten(path string, limit int64) (data []byte, mtime time.Time, busy, ok bool) {
	return nil, time.Time{}, false, false
}
