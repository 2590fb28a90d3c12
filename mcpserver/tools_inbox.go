package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
)

type inboxIn struct {
	Peek bool `json:"peek,omitempty" jsonschema:"only look: leave the messages waiting (they are still typed into this pane when it is idle)"`
	All  bool `json:"all,omitempty" jsonschema:"also list what ended in the last week: delivered (and how), superseded, expired, undeliverable"`
}

func (s *server) inboxTool() tool {
	return typed(s, mcp.Tool{
		Name:  "inbox",
		Title: "Take the messages waiting for this pane",
		Description: `Messages for this pane that arrived while it was busy (RESPONSE lines of workers' answers,
QUESTION blocks, ANSWER blocks, requests) wait in its outbox until it is idle. This takes them now,
oldest first: each item's text is the message (for a RESPONSE line, call show with the exchange id
to read the answer). Taken messages count as delivered and are never typed into the pane
afterwards. peek only looks.`,
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in inboxIn) (*mailbox.InboxResult, string, error) {
		e, _, err := s.engine()
		if err != nil {
			return nil, "", err
		}
		res, err := e.Inbox(ctx, mailbox.InboxOptions{Take: !in.Peek, Via: "inbox", All: in.All})
		if err != nil {
			return nil, "", err
		}
		return res, fmt.Sprintf("%d message(s) for pane %s, %d taken now", len(res.Items), res.Pane, res.Taken), nil
	})
}
