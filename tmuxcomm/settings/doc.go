// Package settings is the room of settings and trust: the effective settings of one invocation,
// in layers (Load): the built-in defaults, the user's own file, a project's .wcomm.yaml key by key
// (strict YAML, file:line errors: settings_file.go), then the environment (settings_env.go). A
// project's file names commands, hosts, channels and the like only once the user trusts its
// content (settings_trust.go); declared remote hosts are hosts.go. The faces read settings through
// the front door, so a command and an MCP tool stop alike on a bad file. It imports store,
// paneops (for the agent profiles) and messages, and no other room.
package settings
