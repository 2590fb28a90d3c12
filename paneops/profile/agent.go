package profile

// One record per agent: everything wcomm knows about an agent program beside what its screen looks
// like. Its process names, screen, launch and door are its profile's (profiles.json, data a
// settings file may override, reached by Agent.Profile); its turn-boundary and permission hooks,
// the files install-skill and install-mcp write, the notes its prompt adds and the format its
// permission hook answers in are here. The kit, the hook command and the permission hook read
// these records and keep no table of their own, so an agent is added by its profile, its record
// and their tests (TestAgentRecords says what a record lacks).

import (
	"strings"

	"github.com/wcomm/wcomm/messages"
)

// Agent is one agent program's record. Name is its profile's name and the name the person types
// (--agent, --for).
type Agent struct {
	Name string
	// Hooks are the agent's own hooks that run 'wcomm hook'; nil: it has none wcomm installs.
	Hooks *Hooks
	// Skill is the instructions file install-skill writes for it; nil: none.
	Skill *Skill
	// MCP is its MCP configuration file that install-mcp edits; nil: none.
	MCP *MCP
	// Prompt is what 'wcomm prompt --agent NAME' adds for it; nil: the agent is not offered there.
	Prompt *PromptNotes
}

// The kinds of hook event wcomm handles (Hooks.Kind).
const (
	HookPrompt     = "prompt"     // before a turn: the mail waiting is added as context
	HookStop       = "stop"       // at a turn's end: the mail waiting is a reason to go on
	HookPermission = "permission" // a permission prompt, relayed to the person
)

// Hooks are an agent's hook settings file and the events wcomm hooks there.
type Hooks struct {
	// File is the settings file, slash-separated, under the project folder or the home folder.
	File string
	// Prompt and Stop are the agent's names of the events before a turn and at its end.
	Prompt, Stop string
	// Permission is its permission prompt's event, "" when it has no such hook; Decision is the
	// format (messages.FormatDecision) its answer is printed in, and PermissionTimeout the seconds
	// the agent lets that hook wait.
	Permission        string
	Decision          string
	PermissionTimeout int
	// Note is what the person still has to do after the install, if anything.
	Note string
}

// Events are the events wcomm hooks, in the order they are written.
func (h *Hooks) Events() []string {
	out := []string{h.Prompt, h.Stop}
	if h.Permission != "" {
		out = append(out, h.Permission)
	}
	return out
}

// Kind says which of wcomm's kinds (HookPrompt, HookStop, HookPermission) the agent's event is,
// "" when it is none of them.
func (h *Hooks) Kind(event string) string {
	switch {
	case event == "":
		return ""
	case event == h.Prompt:
		return HookPrompt
	case event == h.Stop:
		return HookStop
	case event == h.Permission:
		return HookPermission
	}
	return ""
}

// Timeout is the seconds written beside an event's hook, 0 for none.
func (h *Hooks) Timeout(event string) int {
	if event != "" && event == h.Permission {
		return h.PermissionTimeout
	}
	return 0
}

// Skill is where install-skill writes an agent's instructions: a file wcomm owns whole, or (Block)
// a block between markers in a file that is otherwise the person's. Paths are slash-separated,
// under the project folder and under the home folder.
type Skill struct {
	Project, User string
	Block         bool
}

// The MCP entry formats the kit writes (MCP.Format).
const (
	MCPClaudeJSON = "claude-json" // "mcpServers": type stdio, command, args
	MCPGeminiJSON = "gemini-json" // "mcpServers": command, args, timeout in milliseconds
	MCPCodexTOML  = "codex-toml"  // [mcp_servers.NAME]: command, args, env_vars, tool_timeout_sec
)

// MCP is an agent's MCP configuration file: Project under the project folder, User under the home
// folder (slash-separated); where UserDirEnv is set in the environment, it names the folder that
// takes the place of User's first element (Codex's $CODEX_HOME for ~/.codex).
type MCP struct {
	Project, User string
	UserDirEnv    string
	Format        string
}

// PromptNotes are the lines 'wcomm prompt --agent NAME' adds: how the agent runs a shell command,
// advice for it as an orchestrator and as a worker, and the await timeout its examples use ("":
// the default) when its shell tool stops commands sooner.
type PromptNotes struct {
	Shell, Orchestrator, Worker string
	AwaitTimeout                string
}

// claudePermissionTimeout is the seconds Claude Code gives the PermissionRequest hook to wait for
// the person (its own default, said out loud): the hook's own wait (settings' permissions.wait,
// 590s by default) ends first, so it leaves the dialog to the terminal on its own terms.
const claudePermissionTimeout = 600

// agents are the records, in the order the kit offers them: first those with hooks.
var agents = []Agent{
	{Name: "claude",
		Hooks: &Hooks{File: ".claude/settings.json", Prompt: "UserPromptSubmit", Stop: "Stop",
			Permission: "PermissionRequest", Decision: messages.DecisionClaudeHook, PermissionTimeout: claudePermissionTimeout},
		Skill: &Skill{Project: ".claude/skills/wcomm/SKILL.md", User: ".claude/skills/wcomm/SKILL.md"},
		// Project scope is .mcp.json at the project's root; user scope is the top-level
		// "mcpServers" of ~/.claude.json.
		MCP: &MCP{Project: ".mcp.json", User: ".claude.json", Format: MCPClaudeJSON},
		Prompt: &PromptNotes{Shell: "Run each wcomm line below with your Bash tool.",
			Orchestrator: "Your Bash tool stops a command after 2 minutes unless you pass a longer timeout (at most\n10 minutes): give await a --timeout below that (e.g. --timeout 9m) and run it again on exit 3.",
			Worker:       "A long request may show as [Pasted text #1 +N lines]: that is the whole request.",
			AwaitTimeout: "9m"}}, // under the Bash tool's 10-minute ceiling
	{Name: "codex",
		Hooks: &Hooks{File: ".codex/hooks.json", Prompt: "UserPromptSubmit", Stop: "Stop",
			Note: "Codex asks you to review and trust new hooks when it starts: choose to trust them"},
		Skill: &Skill{Project: "AGENTS.md", User: ".codex/AGENTS.md", Block: true},
		// Codex reads .codex/config.toml of a trusted project, and $CODEX_HOME/config.toml
		// (~/.codex/config.toml) for the user.
		MCP: &MCP{Project: ".codex/config.toml", User: ".codex/config.toml", UserDirEnv: "CODEX_HOME", Format: MCPCodexTOML},
		Prompt: &PromptNotes{Shell: "Run each wcomm line below with your shell tool.",
			Orchestrator: "wcomm connects to the tmux server's socket and writes under /tmp/worker-comm: if your sandbox\nrefuses a wcomm command, ask for it to run outside the sandbox.",
			Worker:       "wcomm connects to the tmux server's socket and writes under /tmp/worker-comm: if your sandbox\nrefuses notify, ask for it to run outside the sandbox."}},
	{Name: "gemini",
		Hooks: &Hooks{File: ".gemini/settings.json", Prompt: "BeforeAgent", Stop: "AfterAgent"},
		// Gemini CLI reads GEMINI.md, not AGENTS.md, unless configured otherwise.
		Skill: &Skill{Project: "GEMINI.md", User: ".gemini/GEMINI.md", Block: true},
		MCP:   &MCP{Project: ".gemini/settings.json", User: ".gemini/settings.json", Format: MCPGeminiJSON},
		Prompt: &PromptNotes{Shell: "Run each wcomm line below with your run_shell_command tool.",
			Worker: "A long request may show as [Pasted Text: N lines]: that is the whole request."}},
	// The agents wcomm reaches through their screen only.
	{Name: "opencode"},
	{Name: "copilot"},
	{Name: "qwen"},
	{Name: "aider"},
}

// Agents returns the records. They are shared: do not modify them.
func Agents() []*Agent {
	out := make([]*Agent, len(agents))
	for i := range agents {
		out[i] = &agents[i]
	}
	return out
}

// AgentNamed returns the record of the agent called name, in any case, or nil.
func AgentNamed(name string) *Agent {
	for i := range agents {
		if strings.EqualFold(agents[i].Name, name) {
			return &agents[i]
		}
	}
	return nil
}

// AgentsWith returns the names of the agents whose record has what has asks for (a.Hooks != nil,
// ...), in the records' order: the names a flag accepts.
func AgentsWith(has func(*Agent) bool) []string {
	var out []string
	for _, a := range Agents() {
		if has(a) {
			out = append(out, a.Name)
		}
	}
	return out
}

// HookAgent returns the record of an agent whose hooks wcomm installs, or nil.
func HookAgent(name string) *Agent {
	if a := AgentNamed(name); a != nil && a.Hooks != nil {
		return a
	}
	return nil
}

// Profile is the agent's built-in profile: its process names, its screen, its launch and its door.
func (a *Agent) Profile() *Profile { return Defaults().Lookup(a.Name) }

// Door is the agent's own way in (a Door* kind), "" when it is reached by typing: its profile's.
func (a *Agent) Door() string {
	if p := a.Profile(); p != nil {
		return p.Door
	}
	return ""
}
