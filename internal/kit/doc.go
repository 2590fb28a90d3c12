// Package kit is the agent integration kit: what 'wcomm prompt', 'install-skill', 'install-mcp',
// 'completion' and '__complete' make and write. It holds the roles' instructions (prompt.go), the
// Claude Code skill and the AGENTS.md / GEMINI.md blocks (skill.go), the agents' turn-boundary
// hooks (hooks.go), the MCP server entries (mcp.go) with the editors of the agents' JSON and TOML
// files that change only wcomm's entry (mcp_json.go, mcp_toml.go), and the shell completion
// scripts and their live candidates (completion.go, complete.go). What it writes for each agent
// (files, hook events, MCP entry format, prompt notes) is that agent's record (paneops/profile,
// agent.go): the kit keeps no table of agents of its own.
//
// It reads the command line's commands through the Book the command line hands it, so that its
// texts never drift from the binary, and it prints nothing: the command line parses the flags,
// calls the kit and prints what it returns. It may import the engine's front door (tmuxcomm),
// paneops's types and messages; never internal/cli, nor another face (mcpserver, the bridge, the
// console, the remote client).
package kit
