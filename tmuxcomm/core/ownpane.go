package core

import (
	"context"
	"errors"

	"github.com/wcomm/wcomm/paneops"
)

// NeedOwnPane is the error of a call made outside tmux that needs the caller's pane; todo says
// how to give it ("send from the orchestrator's pane, or name the pane you send for"). When no
// tmux server answers either, it says both at once: told one at a time, a caller who named the
// pane would learn only then that there is no server to find it on.
func (c *Config) NeedOwnPane(ctx context.Context, todo string) error {
	if _, err := c.Tmux.ServerInfo(ctx); errors.Is(err, paneops.ErrNoServer) {
		return Needf(NeedOwnPane, err, "not inside a tmux pane, and no tmux server answers (%v); then %s", err, todo)
	}
	return Needf(NeedOwnPane, nil, "not inside a tmux pane: %s", todo)
}
