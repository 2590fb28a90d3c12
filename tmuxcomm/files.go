package tmuxcomm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/paneops"
)

// Files are the protocol's state, so every write is whole or absent: a temp file in the same folder,
// written, synced and closed, then renamed (replace) or linked (claim, fails if the name exists).

const (
	dirMode  = 0o700
	fileMode = 0o600
	// maxFile bounds what a reader loads: a response or request larger than this is damaged or hostile.
	maxFile = 256 << 20
)

// ErrExists is returned by writeExclusive when the name is already taken.
var ErrExists = errors.New("file exists")

// writeTemp writes data to a new hidden temp file in dir and returns its path.
func writeTemp(dir string, data []byte) (string, error) { return writeTempMode(dir, data, fileMode) }

func writeTempMode(dir string, data []byte, perm fs.FileMode) (string, error) {
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("create temp file in %s: %w", dir, err)
	}
	name := f.Name()
	fail := func(err error) (string, error) {
		f.Close()
		os.Remove(name)
		return "", err
	}
	if err := f.Chmod(perm); err != nil {
		return fail(fmt.Errorf("chmod %s: %w", name, err))
	}
	if _, err := f.Write(data); err != nil {
		return fail(fmt.Errorf("write %s: %w", name, err))
	}
	if err := f.Sync(); err != nil {
		return fail(fmt.Errorf("sync %s: %w", name, err))
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return "", fmt.Errorf("close %s: %w", name, err)
	}
	return name, nil
}

// writeAtomic replaces path with data atomically, as a file of the protocol's state (0600).
func writeAtomic(path string, data []byte) error { return WriteFile(path, data, fileMode) }

// WriteFile replaces path with data atomically, with permissions perm: a temp file in the same
// folder, written, synced and closed, then renamed over path. A reader sees the old file or the
// new one whole, never a part; a crash leaves at worst a hidden temp file.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTempMode(filepath.Dir(path), data, perm)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	return nil
}

// writeExclusive creates path with data atomically, failing with ErrExists when path is taken:
// one step both claims the name and publishes the whole content, by renameat2(RENAME_NOREPLACE)
// where the kernel has it, else by link(2) of the complete temp file.
func writeExclusive(path string, data []byte) error {
	tmp, err := writeTemp(filepath.Dir(path), data)
	if err != nil {
		return err
	}
	ok, err := renameNoReplace(tmp, path)
	if ok {
		if err != nil {
			os.Remove(tmp)
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%s: %w", path, ErrExists)
			}
			return fmt.Errorf("rename into %s: %w", path, err)
		}
		return nil
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w", path, ErrExists)
		}
		return fmt.Errorf("link into %s: %w", path, err)
	}
	return nil
}

// readFile reads a regular file without following a symlink at its last component, up to maxFile.
func readFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s is a symlink; refusing to follow it", path)
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if err := checkOwned(path, st); err != nil {
		return nil, err
	}
	if st.Size() > maxFile {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d this tool reads", path, st.Size(), maxFile)
	}
	return readAllBounded(f, maxFile, path)
}

// readFirstLine reads at most the first 4 KiB of a file and returns its first line.
func readFirstLine(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	if err := checkOwned(path, st); err != nil {
		return "", err
	}
	buf := make([]byte, 4096)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", err
	}
	line, _, _ := strings.Cut(string(buf[:n]), "\n")
	return line, nil
}

// appendLine appends one line to a log file (O_APPEND keeps concurrent small writes whole).
func appendLine(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, fileMode)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// flock takes an flock on path (created 0600 if missing) with how (LOCK_EX or LOCK_SH), waiting in
// the kernel up to timeout (0: try once; see paneops.Flock). The lock is released by the returned
// func or by process death, so a killed holder never leaves it stale. A lock still held at the
// deadline is an error wrapping EWOULDBLOCK.
func flock(path string, how int, timeout time.Duration) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, fileMode)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := paneops.Flock(ctx, f, how, nil); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("still held after %s: %w", timeout, syscall.EWOULDBLOCK)
		}
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// isLocked reports whether another process holds a lock on path, without waiting.
func isLocked(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
