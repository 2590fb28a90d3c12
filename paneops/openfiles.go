package paneops

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// OpenForWriting reports whether any process this user can inspect holds path open for writing.
// A response written by a plain `cat > file` heredoc is not atomic: it exists, empty or half
// written, while the writer runs, so a reader takes it only when no writer holds it. Processes of
// other users cannot be inspected and count as not writing. Where /proc is missing it reports false.
func OpenForWriting(path string) bool {
	target, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		fdDir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if err != nil || link != target {
				continue
			}
			if writeMode(filepath.Join("/proc", p.Name(), "fdinfo", fd.Name())) {
				return true
			}
		}
	}
	return false
}

// writeMode reads the octal "flags:" line of an fdinfo file and reports O_WRONLY or O_RDWR.
func writeMode(fdinfo string) bool {
	data, err := os.ReadFile(fdinfo)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&3 != 0
		}
	}
	return false
}
