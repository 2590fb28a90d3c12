package paneops

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wcomm/wcomm/messages"
)

// Popup is a program shown in a tmux popup over a pane (display-popup).
type Popup struct {
	Pane   messages.PaneID // the pane it opens over (its client shows it)
	Dir    string          // the program's working folder ("" : the pane's)
	Env    []string        // NAME=VALUE pairs set for the program (-e)
	Width  string          // e.g. "90%"
	Height string
	Title  string
	// Argv is the program and its arguments. tmux runs a popup's command through a shell when it
	// is one string; two or more arguments it runs as they are, so Argv needs at least two.
	Argv []string
}

// popupArgs is the display-popup call: -E closes the popup when the program ends.
func popupArgs(p Popup) ([]string, error) {
	if len(p.Argv) < 2 {
		return nil, errors.New("a popup's program needs at least one argument, so that tmux runs it without a shell")
	}
	if _, err := paneNum(p.Pane); err != nil {
		return nil, err
	}
	for _, a := range append(append([]string{p.Dir}, p.Env...), p.Argv...) {
		// tmux reads an argument ending in ';' as the end of a command (see Wrapping tmux).
		if strings.HasSuffix(a, ";") {
			return nil, fmt.Errorf("popup argument %q ends with ';', which tmux would read as a command separator; rename the folder or path", messages.SanitizeField(a))
		}
	}
	args := []string{"display-popup", "-E", "-t", string(p.Pane)}
	if p.Dir != "" {
		args = append(args, "-d", p.Dir)
	}
	for _, e := range p.Env {
		args = append(args, "-e", e)
	}
	if p.Width != "" {
		args = append(args, "-w", p.Width)
	}
	if p.Height != "" {
		args = append(args, "-h", p.Height)
	}
	if p.Title != "" {
		args = append(args, "-T", p.Title)
	}
	return append(append(args, "--"), p.Argv...), nil
}

// ShowPopup opens the popup over its pane. tmux answers once the popup is up, not when it closes.
func (c *Client) ShowPopup(ctx context.Context, p Popup) error {
	args, err := popupArgs(p)
	if err != nil {
		return err
	}
	_, err = c.Run(ctx, nil, args...)
	return err
}
