package settings

import (
	"path/filepath"
	"testing"

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
