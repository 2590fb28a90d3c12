package paneops

// A pane's screen: one capture-pane call and its parse into rows, with which runes were drawn
// faint (a placeholder, a suggestion) so that a profile reads only what someone typed.

import (
	"context"
	"fmt"
	"strings"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/profile"
)

// screenArgs is the one tmux call of a capture: the cursor first, then the rows with their
// attributes (capture-pane -e), so both describe the same moment as nearly as tmux allows.
func screenArgs(pane messages.PaneID) []string {
	p := string(pane)
	return []string{"display-message", "-p", "-t", p, "#{cursor_x} #{cursor_y}", ";", "capture-pane", "-p", "-e", "-t", p}
}

// Screen captures the visible rows of a pane and its cursor position in one tmux call.
func (c *Client) Screen(ctx context.Context, pane messages.PaneID) (profile.Screen, error) {
	if _, err := paneNum(pane); err != nil {
		return profile.Screen{}, err
	}
	out, err := c.Run(ctx, nil, screenArgs(pane)...)
	if err != nil {
		return profile.Screen{}, err
	}
	s, err := parseScreenOutput(out)
	if err != nil {
		return profile.Screen{}, fmt.Errorf("capture pane %s: %w", pane, err)
	}
	return s, nil
}

// parseScreenOutput parses what screenArgs prints: "X Y", then the captured rows.
func parseScreenOutput(out string) (profile.Screen, error) {
	first, rest, _ := strings.Cut(out, "\n")
	var x, y int
	if _, err := fmt.Sscanf(first, "%d %d", &x, &y); err != nil {
		return profile.Screen{}, fmt.Errorf("unexpected cursor line %q from tmux", first)
	}
	return profile.ParseScreen(rest, x, y), nil
}
