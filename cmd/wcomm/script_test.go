package main

import (
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScript runs the CLI's text and exit codes as testscript scripts (testdata/script/*.txtar):
// help, usage errors, exit codes, parse and show on fixture files, install-skill twice and the
// completion scripts. Nothing here needs tmux: the scripts point -S at a socket that does not
// exist, so a script that reached a tmux server by mistake fails instead of touching a real one.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("..", "..", "testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("WCOMM_ROOT", filepath.Join(env.WorkDir, "root"))
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, "home", ".config"))
			env.Setenv("TMUX", "")
			env.Setenv("TMUX_PANE", "")
			return nil
		},
		RequireExplicitExec: false,
	})
}
