package kit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/paneops/profile"
)

// TestKitReadsEveryRecord: what the kit writes for each agent is what its record says.
func TestKitReadsEveryRecord(t *testing.T) {
	dir := t.TempDir()
	for _, a := range profile.Agents() {
		if a.MCP != nil {
			_, ok := mcpFormats[a.MCP.Format]
			assert.True(t, ok, "%s: the kit writes the MCP entry format %q", a.Name, a.MCP.Format)
			ts, err := MCPTargets(MCPOptions{For: a.Name, Dir: dir, Getenv: func(string) string { return "" }})
			require.NoError(t, err)
			require.Len(t, ts, 1)
			assert.Equal(t, filepath.Join(dir, filepath.FromSlash(a.MCP.Project)), ts[0].Path)
		}
		if a.Skill != nil {
			ts, err := skillTargets(dir, false, strings.ToUpper(a.Name), nil)
			require.NoError(t, err)
			require.Len(t, ts, 1)
			assert.Equal(t, filepath.Join(dir, filepath.FromSlash(a.Skill.Project)), ts[0].Path)
			assert.Equal(t, a.Skill.Block, ts[0].Block)
		}
		hs := hookTargets(dir, "", []string{a.Name})
		if a.Hooks == nil {
			assert.Empty(t, hs, "%s has no hooks", a.Name)
			continue
		}
		require.Len(t, hs, 1)
		assert.Equal(t, filepath.Join(dir, filepath.FromSlash(a.Hooks.File)), hs[0].Path)
	}
	_, err := MCPTargets(MCPOptions{For: "aider", Dir: dir, Getenv: func(string) string { return "" }})
	assert.ErrorContains(t, err, "use claude, codex, gemini (or all)", "the names offered are the records' with an MCP file")
}

// TestAgentTablesAreTheRecords: the kit, the command line and the front door (whose permission
// hook prints the decision) keep no table of their own of the agents' hook events, files and
// decision formats, and choose nothing by an agent's name: the records (paneops/profile,
// agent.go) are the only source.
func TestAgentTablesAreTheRecords(t *testing.T) {
	facts := map[string]bool{} // string literals that would be a copy of a record's
	var names []string
	for _, a := range profile.Agents() {
		names = append(names, a.Name)
		var files []string
		if h := a.Hooks; h != nil {
			for _, ev := range h.Events() {
				facts[ev] = true
			}
			files = append(files, h.File)
			if h.Decision != "" {
				facts[h.Decision] = true
			}
		}
		if s := a.Skill; s != nil {
			files = append(files, s.Project, s.User)
		}
		if m := a.MCP; m != nil {
			files = append(files, m.Project, m.User)
			facts[m.Format] = true
		}
		for _, f := range files {
			facts[f] = true
			for _, part := range strings.Split(f, "/") {
				// The agents' folders (".claude"); a bare file name may be anyone's.
				if strings.HasPrefix(part, ".") {
					facts[part] = true
				}
			}
		}
	}
	for _, dir := range []string{".", "../cli", "../../tmuxcomm"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files, dir)
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			src, err := os.ReadFile(name)
			require.NoError(t, err)
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, name, src, 0)
			require.NoError(t, err)
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.BasicLit:
					if s, ok := literal(n); ok && facts[s] {
						t.Errorf("%s: %q is a record's (paneops/profile/agent.go): read it from there", fset.Position(n.Pos()), s)
					}
				case *ast.CaseClause:
					for _, e := range n.List {
						if s, ok := literal(e); ok && slices.Contains(names, s) {
							t.Errorf("%s: a case for agent %q: read its record instead", fset.Position(e.Pos()), s)
						}
					}
				case *ast.BinaryExpr:
					for _, e := range []ast.Expr{n.X, n.Y} {
						if s, ok := literal(e); ok && (n.Op == token.EQL || n.Op == token.NEQ) && slices.Contains(names, s) {
							t.Errorf("%s: a choice by agent %q: read its record instead", fset.Position(e.Pos()), s)
						}
					}
				}
				return true
			})
		}
	}
}

// literal is the value of a string literal.
func literal(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
