// Package testhome keeps tests away from the user's own settings, channels and tmux server:
// Isolate points HOME, the XDG folders and tmux's socket folder of the whole test process (and so
// of every wcomm, tmux server, shell and bridge it starts) at a scratch folder, so that a webhook,
// a Telegram token or groups in the developer's ~/.config/wcomm/config.yaml are never read, no
// tmux server of the user's is reached, and nothing a test writes lands in the real home. Every
// package whose tests load settings or start wcomm calls it from its TestMain (Main does both);
// TestIsolatedPackages checks that none is missing.
//
// Go's own folders are resolved from the real HOME first and passed on explicitly, so that a test
// that runs go build or go list keeps the build and module caches and the user's go env file.
package testhome

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// EnvAgentsDir names the folder the real agent TUIs are installed into (see the CLI's agents
// tests); Isolate sets it to the real user cache's folder when it is unset, so that the scratch
// HOME does not make every run install them again.
const EnvAgentsDir = "WCOMM_AGENTS_DIR"

// goVars are the variables of go env whose defaults come from HOME or the user's folders.
var goVars = []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV"}

// xdgVars are the XDG base folders; each gets its own folder under the scratch HOME.
var xdgVars = map[string]string{
	"XDG_CONFIG_HOME": ".config",
	"XDG_CACHE_HOME":  ".cache",
	"XDG_STATE_HOME":  ".local/state",
	"XDG_DATA_HOME":   ".local/share",
	// The bridges of one bot meet in the runtime folder: a test's bridges never meet the user's
	// (nor a bridge another test left running at the same address).
	"XDG_RUNTIME_DIR": "run",
}

// Main isolates the test process, runs its tests and exits with their code, removing the scratch
// folder first. A TestMain that needs nothing else is: func TestMain(m *testing.M) { testhome.Main(m) }.
func Main(m *testing.M) {
	cleanup, err := Isolate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testhome:", err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// Isolate sets HOME and XDG_CONFIG_HOME, XDG_CACHE_HOME, XDG_STATE_HOME, XDG_DATA_HOME and
// TMUX_TMPDIR of this process to folders under a new scratch folder, and unsets TMUX and
// TMUX_PANE, after fixing Go's folders and the agents' install folder to their real values. The
// returned function removes the scratch folder (best effort: a helper a test left running may
// still write in it).
func Isolate() (cleanup func(), err error) {
	// What depends on the real HOME is resolved before it changes.
	if err := pinGoEnv(); err != nil {
		return nil, err
	}
	if os.Getenv(EnvAgentsDir) == "" {
		if cache, err := os.UserCacheDir(); err == nil {
			os.Setenv(EnvAgentsDir, filepath.Join(cache, "wcomm-agents"))
		}
	}
	home, err := os.MkdirTemp("", "wcomm-test-home")
	if err != nil {
		return nil, fmt.Errorf("scratch home: %w", err)
	}
	if err := os.Setenv("HOME", home); err != nil {
		return nil, err
	}
	for k, sub := range xdgVars {
		dir := filepath.Join(home, sub)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("scratch home: %w", err)
		}
		if err := os.Setenv(k, dir); err != nil {
			return nil, err
		}
	}
	// tmux's folder of sockets is the scratch one too, and $TMUX goes: a test run from a pane of
	// the user's would otherwise reach the user's own tmux server through $TMUX, a default or a
	// -L name (a resident started outside tmux once made a server on the default socket).
	tmuxDir := filepath.Join(home, "tmux")
	if err := os.MkdirAll(tmuxDir, 0o700); err != nil {
		return nil, fmt.Errorf("scratch home: %w", err)
	}
	if err := os.Setenv("TMUX_TMPDIR", tmuxDir); err != nil {
		return nil, err
	}
	os.Unsetenv("TMUX")
	os.Unsetenv("TMUX_PANE")
	return func() { os.RemoveAll(home) }, nil
}

// pinGoEnv sets Go's folders to what go env says under the real HOME, where they are not set
// already.
func pinGoEnv() error {
	vals, err := goEnv()
	if err != nil {
		return err
	}
	for _, k := range goVars {
		if v := vals[k]; v != "" && os.Getenv(k) == "" {
			os.Setenv(k, v)
		}
	}
	return nil
}

// GoEnv is Go's folders as go env gives them in this process's environment, as KEY=value
// entries for a child given another HOME (none without a go command).
func GoEnv() []string {
	vals, _ := goEnv()
	var env []string
	for _, k := range goVars {
		if v := vals[k]; v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// goEnv runs go env for goVars; without a go command (a test binary run on its own) there is
// nothing to pin.
func goEnv() (map[string]string, error) {
	if _, err := exec.LookPath("go"); err != nil {
		return nil, nil
	}
	out, err := exec.Command("go", append([]string{"env", "-json"}, goVars...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	var vals map[string]string
	if err := json.Unmarshal(out, &vals); err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	return vals, nil
}
