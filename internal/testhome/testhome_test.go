package testhome

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// needsIsolation are the packages whose presence among a test binary's dependencies means its
// tests can read settings or start wcomm, tmux servers and the shells in their panes.
var needsIsolation = []string{
	"github.com/wcomm/wcomm/tmuxcomm/settings",
	"github.com/wcomm/wcomm/internal/tmuxtest",
}

// Every package whose tests depend on the settings or start tmux servers has a TestMain and calls
// testhome (Main or Isolate) from its tests: a new package of such tests cannot read the user's
// settings by forgetting it. The CLI's TestE2ETestsNeverReadTheUsersSettings shows what the
// isolation keeps out.
func TestIsolatedPackages(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("REQUIRE_TMUX") != "" {
			t.Fatal("no go command to list the packages")
		}
		t.Skip("no go command to list the packages")
	}
	out, err := exec.Command("go", "list", "-test", "-f", "{{.ImportPath}}\t{{.ForTest}}\t{{.Dir}}\t{{join .Deps \",\"}}",
		"github.com/wcomm/wcomm/...").Output()
	require.NoError(t, err)
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		require.Len(t, f, 4, line)
		path, forTest, dir, deps := f[0], f[1], f[2], strings.Split(f[3], ",")
		// The package compiled with its own tests ("p [p.test]"), whose Deps are the test binary's.
		if forTest == "" || path != forTest+" ["+forTest+".test]" {
			continue
		}
		if !slices.ContainsFunc(needsIsolation, func(p string) bool { return slices.Contains(deps, p) }) {
			continue
		}
		checked++
		hasMain, calls := scan(t, dir)
		assert.True(t, hasMain && calls, "%s: its tests read settings or start tmux; give it a TestMain that calls testhome.Main (or testhome.Isolate)", forTest)
	}
	assert.GreaterOrEqual(t, checked, 10, "the packages that need isolation were found")
}

// scan reports whether the package's test files in dir declare TestMain and call testhome.
func scan(t *testing.T, dir string) (hasMain, calls bool) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Name.Name == "TestMain" && n.Recv == nil {
					hasMain = true
				}
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "testhome" && (n.Sel.Name == "Main" || n.Sel.Name == "Isolate") {
					calls = true
				}
			}
			return true
		})
	}
	return hasMain, calls
}

// Isolate points HOME and the XDG folders at a scratch folder and keeps Go's folders and the
// agents' install folder where they were.
func TestIsolate(t *testing.T) {
	// Not t.TempDir: the go command Isolate runs may leave a child (its telemetry's) writing
	// under this HOME a moment after it exits, and one CI run's removal found the folder not
	// empty. It is removed once nothing more is written there, up to a deadline.
	realHome, err := os.MkdirTemp("", "testhome-real-")
	require.NoError(t, err)
	t.Cleanup(func() {
		deadline := time.Now().Add(30 * time.Second)
		for os.RemoveAll(realHome) != nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond) // polling the folder's removal, not a wait for a result
		}
	})
	t.Setenv("HOME", realHome)
	t.Setenv("TMUX", "/tmp/tmux-1000/default,1234,0")
	t.Setenv("TMUX_PANE", "%1")
	t.Setenv("TMUX_TMPDIR", "")
	for k := range xdgVars {
		t.Setenv(k, "")
	}
	for _, k := range append(goVars, EnvAgentsDir) {
		t.Setenv(k, "")
	}
	cleanup, err := Isolate()
	require.NoError(t, err)
	home := os.Getenv("HOME")
	assert.NotEqual(t, realHome, home)
	for k, sub := range xdgVars {
		assert.Equal(t, filepath.Join(home, sub), os.Getenv(k), k)
		assert.DirExists(t, os.Getenv(k))
	}
	assert.Equal(t, filepath.Join(home, "tmux"), os.Getenv("TMUX_TMPDIR"), "tmux's sockets")
	assert.DirExists(t, os.Getenv("TMUX_TMPDIR"))
	for _, k := range []string{"TMUX", "TMUX_PANE"} {
		_, set := os.LookupEnv(k)
		assert.False(t, set, "%s names the user's tmux server", k)
	}
	assert.Equal(t, filepath.Join(realHome, ".cache", "wcomm-agents"), os.Getenv(EnvAgentsDir), "the real cache's folder")
	if _, err := exec.LookPath("go"); err == nil {
		assert.Equal(t, filepath.Join(realHome, "go"), os.Getenv("GOPATH"), "go env under the real HOME")
		assert.Equal(t, filepath.Join(realHome, ".config", "go", "env"), os.Getenv("GOENV"))
	}
	cleanup()
	assert.NoDirExists(t, home)
}
