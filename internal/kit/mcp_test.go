package kit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The entries as install-mcp builds them, with a fixed command.
func mcpEntries(t *testing.T) map[string][]mcpKey {
	t.Helper()
	targets, err := MCPTargets(MCPOptions{For: "all", Dir: t.TempDir(), Bin: "/opt/bin/wcomm", Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	out := map[string][]mcpKey{}
	for _, tg := range targets {
		out[tg.Agent] = tg.Entry
	}
	return out
}

func TestKitInstallMCPJSON(t *testing.T) {
	entries := mcpEntries(t)
	tests := []struct {
		name  string
		agent string
		old   string
		want  string
	}{
		{
			name:  "new file",
			agent: "claude",
			old:   "",
			want: `{
  "mcpServers": {
    "wcomm": {
      "type": "stdio",
      "command": "/opt/bin/wcomm",
      "args": [
        "mcp"
      ]
    }
  }
}
`,
		},
		{
			name:  "other servers and settings kept, four-space indent and key order kept",
			agent: "gemini",
			old: `{
    "theme": "GitHub",
    "mcpServers": {
        "github": {"command": "npx", "args": ["-y", "gh-mcp"]}
    },
    "context": {"fileName": ["AGENTS.md", "GEMINI.md"]}
}
`,
			want: `{
    "theme": "GitHub",
    "mcpServers": {
        "github": {"command": "npx", "args": ["-y", "gh-mcp"]},
        "wcomm": {
            "command": "/opt/bin/wcomm",
            "args": [
                "mcp"
            ],
            "timeout": 660000
        }
    },
    "context": {"fileName": ["AGENTS.md", "GEMINI.md"]}
}
`,
		},
		{
			name:  "no mcpServers yet",
			agent: "claude",
			old:   "{\n  \"numStartups\": 12,\n  \"projects\": {}\n}\n",
			want: `{
  "numStartups": 12,
  "projects": {},
  "mcpServers": {
    "wcomm": {
      "type": "stdio",
      "command": "/opt/bin/wcomm",
      "args": [
        "mcp"
      ]
    }
  }
}
`,
		},
		{
			name:  "an old entry is updated, the user's own keys in it kept",
			agent: "claude",
			old:   "{\n  \"mcpServers\": {\n    \"wcomm\": {\"command\": \"wcomm-old\", \"env\": {\"WCOMM_ROOT\": \"/srv/wc\"}},\n    \"x\": {\"command\": \"x\"}\n  }\n}\n",
			want: `{
  "mcpServers": {
    "wcomm": {
      "type": "stdio",
      "command": "/opt/bin/wcomm",
      "args": [
        "mcp"
      ],
      "env": {
        "WCOMM_ROOT": "/srv/wc"
      }
    },
    "x": {"command": "x"}
  }
}
`,
		},
		{
			name:  "a one-line file stays on one line",
			agent: "claude",
			old:   `{"mcpServers":{}}`,
			want:  `{"mcpServers":{"wcomm":{"type":"stdio","command":"/opt/bin/wcomm","args":["mcp"]}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed, err := setJSONEntry([]byte(tt.old), "wcomm", entries[tt.agent])
			require.NoError(t, err)
			assert.True(t, changed)
			assert.Equal(t, tt.want, string(got))
			// A second run changes nothing, byte for byte.
			again, changed, err := setJSONEntry(got, "wcomm", entries[tt.agent])
			require.NoError(t, err)
			assert.False(t, changed, "second run")
			assert.Equal(t, string(got), string(again))
		})
	}
}

func TestKitInstallMCPJSONRefused(t *testing.T) {
	entries := mcpEntries(t)
	for _, old := range []string{`{"mcpServers": {`, `[1, 2]`, `{"mcpServers": ["wcomm"]}`, `{"mcpServers": {"wcomm": "wcomm mcp"}}`} {
		_, changed, err := setJSONEntry([]byte(old), "wcomm", entries["claude"])
		require.Error(t, err, "%s", old)
		assert.False(t, changed)
		assert.Contains(t, err.Error(), "fix the file and run again")
	}
}

func TestKitInstallMCPTOML(t *testing.T) {
	entry := mcpEntries(t)["codex"]
	tests := []struct {
		name string
		old  string
		want string
	}{
		{
			name: "new file",
			old:  "",
			want: `[mcp_servers.wcomm]
command = "/opt/bin/wcomm"
args = ["mcp"]
env_vars = ["TMUX", "TMUX_PANE", "WCOMM_ROOT"]
tool_timeout_sec = 660
`,
		},
		{
			name: "comments, settings and other servers kept",
			old: `# my codex settings
model = "gpt-5-codex"   # the default

[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]`,
			want: `# my codex settings
model = "gpt-5-codex"   # the default

[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]

[mcp_servers.wcomm]
command = "/opt/bin/wcomm"
args = ["mcp"]
env_vars = ["TMUX", "TMUX_PANE", "WCOMM_ROOT"]
tool_timeout_sec = 660
`,
		},
		{
			name: "an old table is updated line by line, the user's keys and sub-table kept",
			old: `[mcp_servers.wcomm]
command = "wcomm"   # from PATH
startup_timeout_sec = 20
# keep this note

[mcp_servers.wcomm.env]
WCOMM_ROOT = "/srv/wc"

[profiles.fast]
model = "o4-mini"
`,
			want: `[mcp_servers.wcomm]
command = "/opt/bin/wcomm"
startup_timeout_sec = 20
args = ["mcp"]
env_vars = ["TMUX", "TMUX_PANE", "WCOMM_ROOT"]
tool_timeout_sec = 660
# keep this note

[mcp_servers.wcomm.env]
WCOMM_ROOT = "/srv/wc"

[profiles.fast]
model = "o4-mini"
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed, err := setTOMLEntry([]byte(tt.old), "wcomm", entry)
			require.NoError(t, err)
			assert.True(t, changed)
			assert.Equal(t, tt.want, string(got))
			again, changed, err := setTOMLEntry(got, "wcomm", entry)
			require.NoError(t, err)
			assert.False(t, changed, "second run")
			assert.Equal(t, string(got), string(again))
		})
	}
}

func TestKitInstallMCPTOMLRefused(t *testing.T) {
	entry := mcpEntries(t)["codex"]
	tests := []struct{ old, want string }{
		{"model = \"x\"\n[mcp_servers\n", "not valid TOML"},
		{"mcp_servers = 3\n", "mcp_servers is not a table"},
		{"mcp_servers.wcomm.command = \"wcomm\"\n", "make it a [mcp_servers.wcomm] table by hand"},
		{"[mcp_servers]\nwcomm = { command = \"wcomm\" }\n", "make it a [mcp_servers.wcomm] table by hand"},
	}
	for _, tt := range tests {
		_, changed, err := setTOMLEntry([]byte(tt.old), "wcomm", entry)
		require.Error(t, err, "%q", tt.old)
		assert.False(t, changed)
		assert.Contains(t, err.Error(), tt.want)
	}
}
