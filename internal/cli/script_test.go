package cli

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScript runs the CLI's words and exit codes as testscript scripts (testdata/script/*.txtar),
// as shfmt and gh test theirs: help, usage errors, exit codes, parse and show on fixture files,
// install-skill twice, the completion scripts. "wcomm" in a script is this test binary running
// the program's run() (TestMain). Nothing here needs tmux: -S names a socket that does not exist,
// so a script that reached for a server by mistake fails instead of touching a real one.
//
// Files a script puts under root/ are a wcomm root: its folders become 0700 and its files 0600, as
// wcomm makes them. @ROOT@ in any file of the script becomes the root's absolute path.
//
// "mode PERM FILE..." checks permission bits. "exits N wcomm ARGS..." runs a command and checks its exact exit code (exec only tells zero
// from non-zero); stdout and stderr are then checked as after exec.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("..", "..", "testdata", "script"),
		Setup: func(env *testscript.Env) error {
			root := filepath.Join(env.WorkDir, "root")
			env.Setenv("WCOMM_ROOT", root)
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, "home", ".config"))
			env.Setenv("TMUX", "")
			env.Setenv("TMUX_PANE", "")
			env.Setenv("NO_SOCKET", filepath.Join(env.WorkDir, "no-such-tmux-socket"))
			return fixRoot(env.WorkDir, root)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": cmdExits,
			"mode":  cmdMode,
		},
	})
}

func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE COMMAND [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", args[1], err)
	}
	if code != want {
		ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), code, want)
	}
}

// cmdMode is "mode PERM FILE...": each file's permission bits are PERM (octal, e.g. 0644).
func cmdMode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: mode PERM FILE...")
	}
	want, err := strconv.ParseUint(args[0], 8, 32)
	ts.Check(err)
	for _, f := range args[1:] {
		st, err := os.Stat(ts.MkAbs(f))
		ts.Check(err)
		if got := st.Mode().Perm(); got != fs.FileMode(want) {
			ts.Fatalf("%s has mode %#o, want %#o", f, got, want)
		}
	}
}

// fixRoot puts the root's path into the files a script extracted into work, and makes those under
// root look as wcomm writes them.
func fixRoot(work, root string) error {
	return filepath.WalkDir(work, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		inRoot := path == root || strings.HasPrefix(path, root+string(filepath.Separator))
		if d.IsDir() {
			if inRoot {
				return os.Chmod(path, 0o700)
			}
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if fixed := strings.ReplaceAll(string(data), "@ROOT@", root); fixed != string(data) {
			if err := os.WriteFile(path, []byte(fixed), 0o600); err != nil {
				return err
			}
		}
		if inRoot {
			return os.Chmod(path, 0o600)
		}
		return nil
	})
}
