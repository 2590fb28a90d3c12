package paneops

import (
	"context"
	"fmt"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/profile"
)

// PressKey presses one key of a dialog in pane: a letter or digit, or Escape (profile.DialogKey).
func (c *Client) PressKey(ctx context.Context, pane messages.PaneID, key string) error {
	if _, err := paneNum(pane); err != nil {
		return err
	}
	if !profile.DialogKey().MatchString(key) {
		return fmt.Errorf("key %q: a dialog's key is one letter or digit, or Escape", messages.SanitizeField(key))
	}
	_, err := c.Run(ctx, nil, "send-keys", "-t", string(pane), key)
	return err
}
