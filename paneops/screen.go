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

// screenArgs is the one tmux call of a capture: the cursor and the pane's width first, then the
// rows with their attributes (capture-pane -e), so both describe the same moment as nearly as tmux
// allows. The width tells a row a program wrapped (it reaches the edge) from a line that ends
// there: capture-pane drops a row's trailing blanks.
func screenArgs(pane messages.PaneID) []string {
	p := string(pane)
	return []string{"display-message", "-p", "-t", p, screenHead, ";", "capture-pane", "-p", "-e", "-t", p}
}

// screenHead is the line a capture starts with: the cursor, and the pane's width.
const screenHead = "#{cursor_x} #{cursor_y} #{pane_width}"

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

// parseScreenOutput parses what screenArgs prints: "X Y WIDTH", then the captured rows.
func parseScreenOutput(out string) (profile.Screen, error) {
	first, rest, _ := strings.Cut(out, "\n")
	x, y, w, ok := parseScreenHead(first)
	if !ok {
		return profile.Screen{}, fmt.Errorf("unexpected cursor line %q from tmux", first)
	}
	s := profile.ParseScreen(rest, x, y)
	s.Width = w
	return s, nil
}

// parseScreenHead reads "X Y WIDTH" (the width 0 when the line has none).
func parseScreenHead(line string) (x, y, width int, ok bool) {
	f := strings.Fields(line)
	if len(f) != 2 && len(f) != 3 {
		return 0, 0, 0, false
	}
	n := []int{0, 0, 0}
	for i, s := range f {
		if _, err := fmt.Sscanf(s, "%d", &n[i]); err != nil || n[i] < 0 {
			return 0, 0, 0, false
		}
	}
	return n[0], n[1], n[2], true
}
