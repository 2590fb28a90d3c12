package docs

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/wcomm/wcomm"

// floors are the house's floors of develop.md's layout, lowest first: a package is on the floor of
// the longest prefix it has here. A package may import one on its own floor or a lower one, never
// one above it: a rule two floors need lives on the lower one.
var floors = []struct {
	floor    int
	prefixes []string
}{
	{0, []string{"messages", "docs"}},
	{1, []string{"paneops"}},
	{2, []string{"tmuxcomm/"}},
	{3, []string{"tmuxcomm"}},
	{4, []string{"internal", "mcpserver"}},
	{5, []string{"cmd", "scripts"}},
}

// floorOf is the floor of the module's package path (without the module), or -1 for none.
func floorOf(path string) int {
	best, floor := -1, -1
	for _, f := range floors {
		for _, p := range f.prefixes {
			if (path == p || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/")) && len(p) > best {
				best, floor = len(p), f.floor
			}
		}
	}
	return floor
}

// No package imports one of a higher floor (faces, the door, its rooms, paneops, messages): the
// imports of every package of the module, its tests aside, as go list reports them.
func TestImportsRunDownTheFloors(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("REQUIRE_TMUX") != "" {
			t.Fatal("no go command to list the packages")
		}
		t.Skip("no go command to list the packages")
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").Output()
	require.NoError(t, err)
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		path := strings.TrimPrefix(f[0], module+"/")
		from := floorOf(path)
		require.NotEqual(t, -1, from, "%s is on no floor; add its folder to floors", path)
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			imp = strings.TrimPrefix(imp, module+"/")
			checked++
			assert.LessOrEqual(t, floorOf(imp), from, "%s imports %s, a package of a higher floor; move what it needs down to a floor below both", path, imp)
		}
	}
	assert.Greater(t, checked, 100, "the module's imports were read")
}

func TestFloorOf(t *testing.T) {
	for path, want := range map[string]int{
		"messages": 0, "messages/suggest": 0, "docs": 0, "paneops": 1, "paneops/tmuxd": 1,
		"tmuxcomm/settings": 2, "tmuxcomm/core/coretest": 2, "tmuxcomm": 3, "internal/cli": 4,
		"internal/suggest": 4, "mcpserver": 4, "cmd/wcomm": 5, "messagesx": -1,
	} {
		assert.Equal(t, want, floorOf(path), path)
	}
}
