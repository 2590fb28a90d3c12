// Package launch starts wcomm's detached helpers: the deliverer and the guard of a pane's outbox,
// the remote puller and the answer channels' bridge. It owns how such a helper is started, the
// same for every one: in a session of its own with no terminal, so that it outlives the command
// that started it and no signal to that command's process group reaches it; stdin and stdout on
// /dev/null; stderr appended to a log file of mode 0600 that the caller names inside the root; the
// environment inherited. What a helper runs and where its log lives are the caller's. Find says
// where a companion program is: beside this binary, else on PATH. It imports nothing of wcomm.
package launch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// Helper is one detached program to start.
type Helper struct {
	// Path is the program; "" runs this program again (os.Executable).
	Path string
	Args []string
	// Log is the file its stderr is appended to, created 0600 and never through a symlink; when
	// it cannot be opened the helper still starts, its diagnostics discarded. "": no log.
	Log string
	// OpenLog opens the log instead, for a log that its owner opens (the outbox's deliverer log).
	OpenLog func() (*os.File, error)
}

// Start starts h detached and returns once it runs; the helper is reaped when it ends, should
// this process still run then (send --wait, a blocking ask).
func Start(h Helper) error {
	path := h.Path
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		path = exe
	}
	cmd := exec.Command(path, h.Args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	open := h.OpenLog
	if open == nil && h.Log != "" {
		open = func() (*os.File, error) {
			return os.OpenFile(h.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
		}
	}
	if open != nil {
		if log, err := open(); err == nil {
			defer log.Close()
			cmd.Stderr = log
		}
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

// Find returns the path of a companion program (wcomm-bridge, wcomm-mcp, wcomm-ui): beside this
// binary, else on PATH. what says what it is for, in the error.
func Find(name, what string) (string, error) {
	if p := Beside(name); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s is the companion program %s, found neither beside this wcomm nor on PATH; install both with 'go install github.com/wcomm/wcomm/cmd/...@latest' (or 'make install')", what, name)
}

// Beside returns the path of program name in this binary's folder, "" when there is none there.
func Beside(name string) string {
	if exe, err := os.Executable(); err == nil {
		if exe, err := filepath.EvalSymlinks(exe); err == nil {
			if p := filepath.Join(filepath.Dir(exe), name); isExecutable(p) {
				return p
			}
		}
	}
	return ""
}

// isExecutable reports whether path is a regular file someone may execute.
func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}
