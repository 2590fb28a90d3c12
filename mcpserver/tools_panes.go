package mcpserver

import (
	"context"
	"errors"
	"github.com/wcomm/wcomm/messages"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
)

type findIn struct {
	Agent   string `json:"agent" jsonschema:"a word of the agent's command line, e.g. codex, claude, gemini"`
	All     bool   `json:"all,omitempty" jsonschema:"search every session of the tmux server, not only this pane's"`
	First   bool   `json:"first,omitempty" jsonschema:"take the first of several matches instead of failing"`
	Session string `json:"session,omitempty" jsonschema:"search this tmux session instead of this pane's"`
}

func (s *server) findTool() tool {
	return typed(s, mcp.Tool{
		Name:  "find",
		Title: "Find an agent's pane",
		Description: `Returns the one tmux pane whose process tree (at any depth) runs a command line containing
"agent", e.g. "codex". Your own pane never matches. No match or several matches: a not_found error
that lists what runs where (pass first to take the first of several). Use the pane_id as send's "to".`,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in findIn) (paneops.Pane, string, error) {
		if in.Agent == "" {
			return paneops.Pane{}, "", usagef("find takes one AGENT")
		}
		e, _, err := s.engine()
		if err != nil {
			return paneops.Pane{}, "", err
		}
		f, err := e.Find(ctx, tmuxcomm.FindOptions{Agent: in.Agent, Scope: paneops.Scope{All: in.All, Session: in.Session}, First: in.First})
		if err != nil {
			return paneops.Pane{}, "", findDetail(err)
		}
		return f.Pane, string(f.Pane.ID), nil
	})
}

// findDetail adds what runs where to a find that matched no pane or several.
func findDetail(err error) error {
	var fe *fleet.FindError
	if !errors.As(err, &fe) || len(fe.Panes) == 0 {
		return err
	}
	return &detailedError{err: err, detail: func(te *ToolError) { te.Panes = fe.Panes }}
}

type panesIn struct {
	All     bool   `json:"all,omitempty" jsonschema:"every session of the tmux server, not only this pane's"`
	Session string `json:"session,omitempty" jsonschema:"this tmux session instead of this pane's"`
}

type panesOut struct {
	Panes []fleet.PaneInfo `json:"panes" jsonschema:"the panes: pane_id, session, window, pane, pid, the notable programs running in each; self marks this server's own pane"`
}

func (s *server) panesTool() tool {
	return typed(s, mcp.Tool{
		Name:  "panes",
		Title: "List panes and what runs in them",
		Description: `Lists the panes of this pane's tmux session (all: of every session) with pane id,
session:window.pane, pid and the notable programs anywhere in each pane's process tree (claude,
codex, gemini, python3, ...). Your own pane has self: true.`,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in panesIn) (panesOut, string, error) {
		e, _, err := s.engine()
		if err != nil {
			return panesOut{}, "", err
		}
		panes, err := e.Panes(ctx, tmuxcomm.PanesOptions{Scope: paneops.Scope{All: in.All, Session: in.Session}, Waits: true})
		if panes == nil {
			panes = []fleet.PaneInfo{}
		}
		if err != nil {
			return panesOut{}, "", err
		}
		return panesOut{Panes: panes}, messages.Plural(len(panes), "pane"), nil
	})
}
