package cli

import "github.com/wcomm/wcomm/tmuxcomm"

// needHints say how a command gives what the engine says a call lacks: the engine words what is
// missing for every face, the command line adds its flags.
var needHints = map[tmuxcomm.Need]string{
	tmuxcomm.NeedOwnPane:      "pass --from %N",
	tmuxcomm.NeedTarget:       "pass --to PANE or --to AGENT",
	tmuxcomm.NeedOrchestrator: "pass --to ORCHESTRATOR-PANE or --exchange ID",
	tmuxcomm.NeedOnePane:      "pass --first to take the first",
	tmuxcomm.NeedPane:         "pass --pane %N",
	tmuxcomm.NeedMessage:      "give it as arguments, --file F or on stdin with -",
	tmuxcomm.NeedReason:       "pass --reason TEXT",
	tmuxcomm.NeedTask:         "pass --task ID",
}
