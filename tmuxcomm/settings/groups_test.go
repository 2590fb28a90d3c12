package settings

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGroupsLayered(t *testing.T) {
	work, home := t.TempDir(), t.TempDir()
	env := map[string]string{"HOME": home}
	writeCfg(t, filepath.Join(home, ".config", "wcomm", "config.yaml"),
		"groups:\n  reviewers: [codex, \"%3\", \"gpu1:claude\"]\n  all-gpus: [\"gpu1:%2\", \"gpu2:%2\"]\n")
	s, err := Load(work, cfgEnv(env))
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{"reviewers": {"codex", "%3", "gpu1:claude"}, "all-gpus": {"gpu1:%2", "gpu2:%2"}}, s.Groups)

	// A project's group replaces the user's of the same name, whole, and needs no trust.
	writeCfg(t, filepath.Join(work, ConfigFileName), "groups:\n  reviewers: [gemini]\n")
	s, err = Load(work, cfgEnv(env))
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{"reviewers": {"gemini"}, "all-gpus": {"gpu1:%2", "gpu2:%2"}}, s.Groups)
	assert.Empty(t, s.Ignored, "groups apply untrusted")
}

func TestGroupsRefused(t *testing.T) {
	tests := []struct {
		name, file, want string
	}{
		{"bad name", "groups:\n  Reviewers: [codex]\n", "group name \"Reviewers\""},
		{"empty", "groups:\n  reviewers: []\n", "group reviewers is empty"},
		{"empty member", "groups:\n  reviewers: [codex, \"\"]\n", "member 2"},
		{"several in one", "groups:\n  reviewers: [\"codex,%3\"]\n", "holds several targets"},
		{"nested", "groups:\n  reviewers: [\"@others\"]\n", "names a group"},
		{"control", "groups:\n  reviewers: [\"a\\eb\"]\n", "control character"},
		{"not a list", "groups:\n  reviewers: codex\n", ".wcomm.yaml:2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ConfigFileName)
			writeCfg(t, path, tt.file)
			_, err := Load(dir, cfgEnv(map[string]string{"HOME": t.TempDir()}))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), path[:len(path)-len(ConfigFileName)], "the error names the file")
		})
	}
}

// An untrusted project's group may not reach a host the user declared, nor replace the user's
// group that does: both are ignored and said, the user's groups stand; trusted, they apply.
func TestGroupsUntrustedReachNoHost(t *testing.T) {
	work, xdg := t.TempDir(), t.TempDir()
	env := cfgEnv(map[string]string{"XDG_CONFIG_HOME": xdg})
	writeCfg(t, filepath.Join(xdg, "wcomm", "config.yaml"),
		"hosts:\n  gpu1:\n    via: [ssh, gpu1]\ngroups:\n  reviewers: [codex]\n  ops: [\"gpu1:%2\"]\n")
	local := filepath.Join(work, ConfigFileName)
	writeCfg(t, local, "groups:\n  reviewers: [\"gpu1:%0\"]\n  ops: [codex]\n  mine: [gemini, \"work:1\"]\n")

	s, err := Load(work, env)
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{"reviewers": {"codex"}, "ops": {"gpu1:%2"}, "mine": {"gemini", "work:1"}}, s.Groups)
	assert.Equal(t, []string{"group ops (it would replace your group ops, which reaches host gpu1)", "group reviewers (it reaches host gpu1)"}, s.Ignored)
	assert.Contains(t, s.IgnoredNote(), "run 'wcomm trust "+local+"'")

	_, _, err = TrustConfig(local, env, time.Now())
	require.NoError(t, err)
	s, err = Load(work, env)
	require.NoError(t, err)
	assert.Empty(t, s.Ignored)
	assert.Equal(t, map[string][]string{"reviewers": {"gpu1:%0"}, "ops": {"codex"}, "mine": {"gemini", "work:1"}}, s.Groups)
}
