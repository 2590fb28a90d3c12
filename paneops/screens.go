package paneops

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/profile"
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
		args = append(args, "display-message", "-p", "-t", id, screenMark+id+" "+screenHead, ";", "capture-pane", "-p", "-e", "-t", id)
	}
	return args
}

// Screens captures many panes in one tmux call, as Screen does one: a console refreshing every
// pane each second pays one process start instead of one per pane. A pane that no longer exists
// fails the whole call (tmux stops a command list at its first error); the caller then falls
// back on Screen for each.
func (c *Client) Screens(ctx context.Context, panes []messages.PaneID) (map[messages.PaneID]profile.Screen, error) {
	for _, p := range panes {
		if _, err := paneNum(p); err != nil {
			return nil, err
		}
	}
	if len(panes) == 0 {
		return map[messages.PaneID]profile.Screen{}, nil
	}
	out, err := c.Run(ctx, nil, screensArgs(panes)...)
	if err != nil {
		return nil, err
	}
	return parseScreens(out)
}

// parseScreens splits what screensArgs prints into one Screen per pane.
func parseScreens(out string) (map[messages.PaneID]profile.Screen, error) {
	m := map[messages.PaneID]profile.Screen{}
	parts := strings.Split(out, screenMark)
	if strings.TrimSpace(parts[0]) != "" {
		return nil, fmt.Errorf("unexpected output from tmux before the first screen: %q", messages.SanitizeField(parts[0]))
	}
	for _, part := range parts[1:] {
		head, rest, _ := strings.Cut(part, "\n")
		id, nums, _ := strings.Cut(head, " ")
		x, y, w, ok := parseScreenHead(nums)
		if !ok || id == "" {
			return nil, fmt.Errorf("unexpected screen header %q from tmux", messages.SanitizeField(head))
		}
		s := profile.ParseScreen(rest, x, y)
		s.Width = w
		m[messages.PaneID(id)] = s
	}
	return m, nil
}

// ScreenSig says whether a pane's screen may have changed since a capture: its cursor and size,
// and the last second its window took output (window_activity: tmux updates it for every byte a
// pane's terminal writes, whoever wrote it). A screen captured in second S is still what the
// pane shows while these are the same and the window's last output came before S.
type ScreenSig struct {
	CursorX, CursorY int
	Width, Height    int
	Activity         int64 // unix seconds
	// Name is the pane's wcomm name (NameOption; "": none or not a valid name), read in the same
	// call so that a console showing names needs no second call every second. It is no part of
	// what the screen looks like.
	Name string
}

// sigFields follow paneFormat on each line of PanesSigs.
const sigFields = "\t#{cursor_x}\t#{cursor_y}\t#{window_activity}\t#{s/[\t\n]/ /:" + NameOption + "}"

// PanesSigs is Panes with each pane's ScreenSig, from the same one call: a console that reads the
// panes every second captures only those whose screen may have changed.
func (c *Client) PanesSigs(ctx context.Context, scope Scope) ([]Pane, []ScreenSig, error) {
	args, err := panesArgs(scope)
	if err != nil {
		return nil, nil, err
	}
	args[len(args)-1] += sigFields
	out, err := c.Run(ctx, nil, args...)
	if err != nil {
		return nil, nil, err
	}
	return parsePanesSigs(out)
}

// parsePanesSigs parses what PanesSigs prints: a pane line, then the three signature fields and
// the pane's name.
func parsePanesSigs(out string) ([]Pane, []ScreenSig, error) {
	var panes []Pane
	var sigs []ScreenSig
	for _, line := range strings.Split(out, "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 5 {
			return nil, nil, fmt.Errorf("unexpected pane line %q from tmux: no screen signature", messages.SanitizeField(line))
		}
		n := len(f) - 4
		p, err := parsePane(strings.Join(f[:n], "\t"))
		if err != nil {
			return nil, nil, err
		}
		var s ScreenSig
		var errs []error
		for i, dst := range []*int{&s.CursorX, &s.CursorY} {
			v, err := strconv.Atoi(f[n+i])
			*dst = v
			errs = append(errs, err)
		}
		s.Activity, err = strconv.ParseInt(f[n+2], 10, 64)
		if err := errors.Join(append(errs, err)...); err != nil {
			return nil, nil, fmt.Errorf("unexpected screen signature in pane line %q from tmux: %w", messages.SanitizeField(line), err)
		}
		s.Width, s.Height = p.Width, p.Height
		if ValidName(f[n+3]) == nil {
			s.Name = f[n+3]
		}
		panes = append(panes, p)
		sigs = append(sigs, s)
	}
	return panes, sigs, nil
}
