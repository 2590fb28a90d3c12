//go:build !linux

package store

// renameNoReplace is Linux only; elsewhere publishing uses link(2).
func renameNoReplace(tmp, path string) (bool, error) { return false, nil }

// renameExchange is Linux only; elsewhere WriteSwapNoSync renames over the old file.
func renameExchange(a, b string) (bool, error) { return false, nil }
