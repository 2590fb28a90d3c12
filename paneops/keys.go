package paneops

import (
	"context"
	"fmt"
	"regexp"

	"github.com/wcomm/wcomm/messages"
)

// dialogKey is the set of keys PressKey presses: one letter or digit (a dialog's choice), or
// Escape. Never Enter, never text: any Enter typed into an agent's permission dialog approves it,
// and text typed there is discarded (measured on Claude Code), so nothing else may reach one.
var dialogKey = regexp.MustCompile(`^([0-9A-Za-z]|Escape)$`)

// PressKey presses one key of a dialog in pane: a letter or digit, or Escape.
func (c *Client) PressKey(ctx context.Context, pane messages.PaneID, key string) error {
	if _, err := paneNum(pane); err != nil {
		return err
	}
	if !dialogKey.MatchString(key) {
		return fmt.Errorf("key %q: a dialog's key is one letter or digit, or Escape", messages.SanitizeField(key))
	}
	_, err := c.Run(ctx, nil, "send-keys", "-t", string(pane), key)
	return err
}
