//go:build !linux

package store

// renameNoReplace is Linux only; elsewhere publishing uses link(2).
func renameNoReplace(tmp, path string) (bool, error) { return false, nil }
