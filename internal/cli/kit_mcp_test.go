package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The command: every agent's file in one run, again unchanged, --dry-run writes nothing, and a
// broken file is left as it was with exit 1.
func TestKitInstallMCPCommand(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"claude": filepath.Join(dir, ".mcp.json"),
		"codex":  filepath.Join(dir, ".codex", "config.toml"),
		"gemini": filepath.Join(dir, ".gemini", "settings.json"),
	}
	out, errOut, code := kitRun(t, "install-mcp", "--dir", dir, "--dry-run", "--bin", "/opt/bin/wcomm")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "would become")
	for _, p := range files {
		assert.NoFileExists(t, p, "dry run")
	}

	out, errOut, code = kitRun(t, "install-mcp", "--dir", dir, "--bin", "/opt/bin/wcomm")
	require.Equal(t, exitOK, code, errOut)
	for agent, p := range files {
		assert.Contains(t, out, "created   "+p+" ("+agent+")")
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Contains(t, string(data), "/opt/bin/wcomm")
		st, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o644), st.Mode().Perm(), "a project's files are shared")
	}
	out, errOut, code = kitRun(t, "install-mcp", "--bin", "/opt/bin/wcomm", "--dir", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, 3, strings.Count(out, "unchanged "), out)

	broken := "{\"mcpServers\": {\n"
	require.NoError(t, os.WriteFile(files["gemini"], []byte(broken), 0o600))
	_, errOut, code = kitRun(t, "install-mcp", "--dir", dir, "--for", "gemini", "--bin", "/opt/bin/other")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, files["gemini"]+": not valid JSON")
	assert.Contains(t, errOut, "nothing was changed")
	data, err := os.ReadFile(files["gemini"])
	require.NoError(t, err)
	assert.Equal(t, broken, string(data))

	_, errOut, code = kitRun(t, "install-mcp", "--for", "cursor", "--dir", dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `unknown agent "cursor"`)
	_, _, code = kitRun(t, "install-mcp", "--user", "--dir", dir)
	assert.Equal(t, exitUsage, code)
}

// Without --bin the entries run wcomm from the agent's PATH, never this machine's path of it, and
// a wcomm not on this PATH is warned of.
func TestKitInstallMCPNamesWcommPortably(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", t.TempDir())
	_, errOut, code := kitRun(t, "install-mcp", "--dir", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, errOut, `warning: "wcomm" is not on this PATH`)
	self, err := os.Executable()
	require.NoError(t, err)
	for _, p := range []string{".mcp.json", ".codex/config.toml", ".gemini/settings.json"} {
		data, err := os.ReadFile(filepath.Join(dir, p))
		require.NoError(t, err)
		assert.Regexp(t, `"command": "wcomm"|command = "wcomm"`, string(data), p)
		assert.NotContains(t, string(data), filepath.Dir(self), p)
	}
}
