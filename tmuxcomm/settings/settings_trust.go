package settings

// Trust of a project's settings file: the user's own config folder, the trust list in it, and
// TrustConfig, which trusts a file's exact content.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
)

// userConfigDir is the user's own wcomm config folder: $XDG_CONFIG_HOME/wcomm, else
// ~/.config/wcomm; "" without either.
func userConfigDir(getenv func(string) string) string {
	base := getenv("XDG_CONFIG_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "wcomm")
}

// isUserConfig reports whether path is the user's own config file, trusted as it is.
func isUserConfig(path string, getenv func(string) string) bool {
	dir := userConfigDir(getenv)
	if dir == "" {
		return false
	}
	a, err1 := filepath.Abs(path)
	b, err2 := filepath.Abs(filepath.Join(dir, "config.yaml"))
	return err1 == nil && err2 == nil && a == b
}

// TrustListPath is where the user's trust list lives: trusted.json in the user's config folder.
func TrustListPath(getenv func(string) string) string {
	dir := userConfigDir(getenv)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "trusted.json")
}

// readTrustList reads the user's trust list; none is an empty one.
func readTrustList(getenv func(string) string) (messages.TrustList, error) {
	path := TrustListPath(getenv)
	if path == "" {
		return messages.TrustList{}, nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return messages.TrustList{}, nil
	}
	data, err := readOwned("trust list", path)
	if err != nil {
		return messages.TrustList{}, err
	}
	l, err := messages.ParseTrustList(data)
	if err != nil {
		return messages.TrustList{}, fmt.Errorf("%s: %w; fix or remove it and trust your project files again", path, err)
	}
	return l, nil
}

// TrustConfig trusts the settings file at path as its content is now: its on_question and
// actions apply until the content changes. A file that does not load is not trusted. It returns
// the file's absolute path and the sha256 trusted.
func TrustConfig(path string, getenv func(string) string, now time.Time) (string, string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", err
	}
	data, err := readConfig(abs)
	if err != nil {
		return "", "", err
	}
	scratch := Defaults()
	if err := scratch.applyData(abs, data, true, isUserConfig(abs, getenv)); err != nil {
		return "", "", fmt.Errorf("not trusted: %w", err)
	}
	listPath := TrustListPath(getenv)
	if listPath == "" {
		return "", "", fmt.Errorf("no config folder to keep the trust list in: set HOME or XDG_CONFIG_HOME")
	}
	list, err := readTrustList(getenv)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(filepath.Dir(listPath), store.DirMode); err != nil {
		return "", "", fmt.Errorf("create %s: %w", filepath.Dir(listPath), err)
	}
	sum := messages.ContentSHA256(data)
	if err := store.WriteAtomic(listPath, messages.FormatTrustList(list.With(abs, sum, now))); err != nil {
		return "", "", err
	}
	return abs, sum, nil
}
