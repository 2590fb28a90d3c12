package kit

// wcomm install-mcp: registers `wcomm mcp` with Claude Code (.mcp.json, ~/.claude.json), Codex
// (config.toml) and Gemini CLI (settings.json), each in its own format. A file is edited in place:
// only wcomm's entry changes, every other entry and the file's own layout stay, and the result is
// parsed again and compared with what was meant before it replaces the file.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm"
)

// mcpServerName is the name wcomm's server has in every agent's configuration.
const mcpServerName = "wcomm"

// mcpToolTimeout is the tool call limit wcomm asks of agents that have one: above await's and
// ask's longest wait (tmuxcomm.MaxCallWait), so a bounded wait ends before the agent gives up.
var mcpToolTimeout = tmuxcomm.MaxCallWait + time.Minute

// mcpForwardEnv are the variables Codex must pass to the server, which it otherwise withholds
// (Codex starts MCP servers with a short allow-list of the environment): without $TMUX and
// $TMUX_PANE the server does not know its pane.
var mcpForwardEnv = []string{"TMUX", "TMUX_PANE", "WCOMM_ROOT"}

// MCPForwardEnv returns the variables install-mcp has Codex forward to the server, for the help
// that names them.
func MCPForwardEnv() []string { return append([]string(nil), mcpForwardEnv...) }

// mcpKey is one key wcomm sets in its entry, in the order it writes them.
type mcpKey struct {
	Name  string
	Value any
}

// MCPOptions are install-mcp's choices.
type MCPOptions struct {
	For    string // the agents, comma-separated: claude, codex, gemini, or all
	Dir    string // the project folder ("": the current one)
	User   bool   // the user's files instead of a project's
	Bin    string // what the agents run ("": DefaultBin, found on the agent's PATH)
	Getenv func(string) string
}

// MCPTarget is one agent's configuration file and wcomm's entry in it.
type MCPTarget struct {
	Agent string
	Path  string
	TOML  bool // Codex; the others are JSON with a top-level "mcpServers" object
	Entry []mcpKey
}

// MCPTargets are the files install-mcp edits, with the entry each gets.
func MCPTargets(o MCPOptions) ([]MCPTarget, error) {
	dir, user, command, getenv := o.Dir, o.User, Bin(o.Bin), o.Getenv
	want, err := agentsFor("all", o.For, func(a *profile.Agent) bool { return a.MCP != nil })
	if err != nil {
		return nil, err
	}
	var home string
	if user {
		home = getenv("HOME")
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return nil, fmt.Errorf("no home folder for --user (%v); pass --dir", err)
			}
			home = h
		}
	} else if dir, err = projectDir(dir); err != nil {
		return nil, err
	}
	var out []MCPTarget
	for _, a := range want {
		t := MCPTarget{Agent: a.Name, Path: filepath.Join(dir, filepath.FromSlash(a.MCP.Project))}
		if user {
			t.Path = filepath.Join(home, filepath.FromSlash(a.MCP.User))
			if v := a.MCP.UserDirEnv; v != "" && getenv(v) != "" {
				d := getenv(v)
				_, rest, _ := strings.Cut(a.MCP.User, "/")
				t.Path = filepath.Join(d, filepath.FromSlash(rest))
			}
		}
		entry, ok := mcpFormats[a.MCP.Format]
		if !ok {
			return nil, fmt.Errorf("agent %s: MCP entry format %q is not known to this wcomm", a.Name, a.MCP.Format)
		}
		t.TOML, t.Entry = entry.toml, entry.keys(command)
		out = append(out, t)
	}
	return out, nil
}

// mcpFormats are the entry formats an agent's record names (profile.MCP.Format): wcomm's keys in
// that agent's file, and whether the file is TOML (else JSON with a top-level "mcpServers").
var mcpFormats = map[string]struct {
	toml bool
	keys func(command string) []mcpKey
}{
	profile.MCPClaudeJSON: {keys: func(command string) []mcpKey {
		return []mcpKey{{"type", "stdio"}, {"command", command}, {"args", []any{"mcp"}}}
	}},
	profile.MCPGeminiJSON: {keys: func(command string) []mcpKey {
		return []mcpKey{{"command", command}, {"args", []any{"mcp"}}, {"timeout", mcpToolTimeout.Milliseconds()}}
	}},
	profile.MCPCodexTOML: {toml: true, keys: func(command string) []mcpKey {
		env := make([]any, len(mcpForwardEnv))
		for i, v := range mcpForwardEnv {
			env[i] = v
		}
		return []mcpKey{{"command", command}, {"args", []any{"mcp"}}, {"env_vars", env}, {"tool_timeout_sec", int64(mcpToolTimeout.Seconds())}}
	}},
}

// InstallMCP sets wcomm's entry in each target's file, or with dryRun only says what it would
// write (each Result's Preview). On an error it returns the results so far.
func InstallMCP(targets []MCPTarget, dryRun bool) ([]Result, error) {
	var results []Result
	for _, t := range targets {
		real, old, mode, err := readTarget(t.Path)
		if err != nil {
			return results, err
		}
		var data []byte
		var changed bool
		if t.TOML {
			data, changed, err = setTOMLEntry(old, mcpServerName, t.Entry)
		} else {
			data, changed, err = setJSONEntry(old, mcpServerName, t.Entry)
		}
		if err != nil {
			return results, fmt.Errorf("%s: %w; nothing was changed", t.Path, err)
		}
		r := Result{Path: t.Path, Agent: t.Agent, Status: Unchanged}
		switch {
		case !changed:
		case old == nil:
			r.Status = Created
		default:
			r.Status = Updated
		}
		if changed && dryRun {
			r.Note, r.Preview = "dry run: not written", data
		}
		if changed && !dryRun {
			if err := writeTarget(real, data, mode); err != nil {
				return results, err
			}
		}
		results = append(results, r)
	}
	return results, nil
}

// mergeEntry sets wcomm's keys on the entry an agent's file holds, keeping keys the user added.
func mergeEntry(cur map[string]any, entry []mcpKey) map[string]any {
	out := map[string]any{}
	for k, v := range cur {
		out[k] = v
	}
	for _, kv := range entry {
		out[kv.Name] = kv.Value
	}
	return out
}

// sameJSON compares two values as JSON sees them (an int64 and a float64 of equal value match).
func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var va, vb any
	_ = json.Unmarshal(ja, &va)
	_ = json.Unmarshal(jb, &vb)
	return reflect.DeepEqual(va, vb)
}
