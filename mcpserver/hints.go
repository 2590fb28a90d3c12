package mcpserver

import "github.com/wcomm/wcomm/tmuxcomm"

// needHints say how a tool call gives what the engine says it lacks: the engine words what is
// missing for every face, the server adds its argument names.
var needHints = map[tmuxcomm.Need]string{
	tmuxcomm.NeedOwnPane:      "start the MCP server inside the pane it speaks for: it takes its pane from $TMUX_PANE",
	tmuxcomm.NeedTarget:       "give to: a pane id, a tmux target or an agent name",
	tmuxcomm.NeedOrchestrator: "give to (the orchestrator's pane) or exchange (the request's id)",
	tmuxcomm.NeedOnePane:      "give first: true to take the first",
	tmuxcomm.NeedPane:         "start the MCP server inside the pane whose mail it is",
	tmuxcomm.NeedMessage:      "give message",
	tmuxcomm.NeedReason:       "give reason",
	tmuxcomm.NeedTask:         "give task",
}

// argNames name the arguments the door checks as the tools' own.
var argNames = map[tmuxcomm.Arg]string{tmuxcomm.ArgBusyWait: "busy_wait_seconds"}
