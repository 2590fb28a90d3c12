// Package prompts watches the panes for the agents' own prompts that no hook of theirs brings to
// the person, and makes each one a permission question (the questions room): Codex's approvals,
// which its app-server hands to any client that follows the TUI's thread (codex.go), and dialogs
// recognised on screen by a profile's dialog markers, for agents without such a hook (screen.go).
// The first answer is applied in the agent (a reply through its door, or one key pressed while the
// same dialog still shows), never typed as text; an answer the person gives in the pane itself
// ends the question as answered at the terminal. A Sentry runs inside the bridge and the console,
// so the prompts reach the person while either runs; it keeps no state of its own on disk: the
// questions are the record.
package prompts
