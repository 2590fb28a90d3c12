package paneops

import (
	"context"
	"fmt"
	"strings"

	"github.com/wcomm/wcomm/messages"
)

// screenMark starts the line that precedes each pane's capture in a Screens call. A pane's grid
// never holds a C0 control character (tmux interprets them rather than storing them), so no
// captured row can start with one.
const screenMark = "\x1ewcomm-screen "

// screensArgs is one command list capturing every pane: for each, a display-message line with the
// pane id and its cursor, then its rows (capture-pane -e).
func screensArgs(panes []messages.PaneID) []string {
	var args []string
	for i, p := range panes {
		if i > 0 {
			args = append(args, ";")
		}
		id := string(p)
		args = append(args, "display-message", "-p", "-t", id, screenMark+id+" #{cursor_x} #{cursor_y}", ";", "capture-pane", "-p", "-e", "-t", id)
	}
	return args
}

// Screens captures many panes in one tmux call, as Screen does one: a console refreshing every
// pane each second pays one process start instead of one per pane. A pane that no longer exists
// fails the whole call (tmux stops a command list at its first error); the caller then falls
// back on Screen for each.
func (c *Client) Screens(ctx context.Context, panes []messages.PaneID) (map[messages.PaneID]Screen, error) {
	for _, p := range panes {
		if _, err := paneNum(p); err != nil {
			return nil, err
		}
	}
	if len(panes) == 0 {
		return map[messages.PaneID]Screen{}, nil
	}
	out, err := c.Run(ctx, nil, screensArgs(panes)...)
	if err != nil {
		return nil, err
	}
	return parseScreens(out)
}

// parseScreens splits what screensArgs prints into one Screen per pane.
func parseScreens(out string) (map[messages.PaneID]Screen, error) {
	m := map[messages.PaneID]Screen{}
	parts := strings.Split(out, screenMark)
	if strings.TrimSpace(parts[0]) != "" {
		return nil, fmt.Errorf("unexpected output from tmux before the first screen: %q", messages.SanitizeField(parts[0]))
	}
	for _, part := range parts[1:] {
		head, rest, _ := strings.Cut(part, "\n")
		var id string
		var x, y int
		if _, err := fmt.Sscanf(head, "%s %d %d", &id, &x, &y); err != nil {
			return nil, fmt.Errorf("unexpected screen header %q from tmux", messages.SanitizeField(head))
		}
		m[messages.PaneID(id)] = ParseScreen(rest, x, y)
	}
	return m, nil
}
