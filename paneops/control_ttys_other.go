//go:build !linux

package paneops

import "errors"

// ttyWatch is only made on Linux; elsewhere the control client's subscription tells of the
// panes' changes.
type ttyWatch struct{ output, made chan struct{} }

func newTTYWatch() (*ttyWatch, error) {
	return nil, errors.New("the panes' terminals are only watched on Linux")
}

func (w *ttyWatch) set(int, []string) error { return nil }

func (w *ttyWatch) Close() error { return nil }
