package mcpserver

// The lifecycle tools: spawn and stop, the lifecycle room's rules through the door, as the
// commands of the same names.

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/lifecycle"
)

type spawnIn struct {
	Profile    string   `json:"profile,omitempty" jsonschema:"the agent's profile: claude, codex, gemini, copilot, opencode, qwen, aider, or one of the settings; or give command"`
	Command    []string `json:"command,omitempty" jsonschema:"instead of profile: the command's words, run without a shell"`
	Agent      string   `json:"agent,omitempty" jsonschema:"with command: the profile of its agent when its command line does not show it"`
	Name       string   `json:"name,omitempty" jsonschema:"the pane's name, unique on the tmux server, usable as send's to"`
	Prompt     string   `json:"prompt,omitempty" jsonschema:"the agent's first message, sent once it is ready, as send sends"`
	Capability string   `json:"capability,omitempty" jsonschema:"the first message's capability: READONLY (default) or WRITABLE"`
	Dir        string   `json:"dir,omitempty" jsonschema:"the folder to start in (default: this server's)"`
	Worktree   bool     `json:"worktree,omitempty" jsonschema:"start in a new git worktree named after the agent"`
	Branch     string   `json:"branch,omitempty" jsonschema:"with worktree: its branch (default: the name)"`
	Split      bool     `json:"split,omitempty" jsonschema:"split this pane's window instead of opening a window"`
	Session    string   `json:"session,omitempty" jsonschema:"open the window in this tmux session"`
	Env        []string `json:"env,omitempty" jsonschema:"the program's environment: pairs of the form KEY=VALUE"`
	// ReadyTimeout is in seconds.
	ReadyTimeout float64 `json:"ready_timeout_seconds,omitempty" jsonschema:"how long to wait for the agent to be ready (default 60)"`
}

func (s *server) spawnTool() tool {
	return typed(s, mcp.Tool{
		Name:  "spawn",
		Title: "Start an agent in a new pane",
		Description: `Starts an agent in a new tmux pane from a profile name (claude, codex, ...) or a command, and
returns once it is ready for input (its door open, or its input box idle; a plain program running
and quiet): pane, name, agent, folder, worktree, and the exchange of its first prompt (await it).
A name held by a pane is refused with nothing started; an unknown profile is not_found naming the
known ones; a timeout (timed_out) or a program that exits removes its pane.`,
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in spawnIn) (*tmuxcomm.Spawned, string, error) {
		e, _, err := s.engine()
		if err != nil {
			return nil, "", err
		}
		o := tmuxcomm.SpawnOptions{SpawnOptions: lifecycle.SpawnOptions{Profile: in.Profile, Argv: in.Command, Agent: in.Agent,
			Name: in.Name, Dir: in.Dir, Worktree: in.Worktree || in.Branch != "", Branch: in.Branch,
			Split: in.Split, Session: in.Session, Env: in.Env, Prompt: []byte(in.Prompt),
			ReadyTimeout: time.Duration(in.ReadyTimeout * float64(time.Second))},
			Capability: messages.Capability(in.Capability)}
		res, err := e.Spawn(ctx, o)
		if err != nil {
			return res, "", err
		}
		return res, fmt.Sprintf("%s ready (%s)", res.Pane, res.Ready), nil
	})
}

type stopIn struct {
	Target         string `json:"target" jsonschema:"the pane: its name, pane id or any send target"`
	RemoveWorktree bool   `json:"remove_worktree,omitempty" jsonschema:"remove the worktree and branch its spawn made (refused while it has uncommitted changes)"`
	Force          bool   `json:"force,omitempty" jsonschema:"with remove_worktree: throw away its uncommitted changes (the answer lists them)"`
}

func (s *server) stopTool() tool {
	return typed(s, mcp.Tool{
		Name:  "stop",
		Title: "End an agent and its pane",
		Description: `Asks the agent in a pane to quit as its profile says (/exit for Claude Code), then removes the
pane, which frees its name. remove_worktree also removes its worktree and branch: refused, with
nothing stopped, while the worktree has uncommitted changes, unless force.`,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in stopIn) (*tmuxcomm.Stopped, string, error) {
		if in.Target == "" {
			return nil, "", usagef("stop takes a target")
		}
		if in.Force && !in.RemoveWorktree {
			return nil, "", usagef("force goes with remove_worktree")
		}
		e, _, err := s.engine()
		if err != nil {
			return nil, "", err
		}
		res, err := e.Stop(ctx, tmuxcomm.StopOptions{Target: in.Target, RemoveWorktree: in.RemoveWorktree, Force: in.Force})
		if err != nil {
			return res, "", err
		}
		return res, fmt.Sprintf("stopped %s (%s)", res.Pane, res.Quit), nil
	})
}

func ptr[T any](v T) *T { return &v }
