package cli

// The PermissionRequest hook: an agent's permission prompt relayed to the person as a question
// (tmuxcomm/questions/permission.go), its first answer handed back on stdout.

import (
	"fmt"

	"github.com/wcomm/wcomm/messages"
)

// runPermissionHook runs the agent's PermissionRequest hook through the engine and prints the
// agent's decision; nothing when the question ends otherwise, so the agent's own dialog decides.
func (c *cli) runPermissionHook(agent string, data []byte) error {
	s, err := c.settings()
	if err != nil {
		return err
	}
	reply, err := c.engine().PermissionHook(c.ctx, agent, data, s.PermissionWait, func(warn string) {
		fmt.Fprintf(c.stderr, "wcomm hook: %s\n", messages.SanitizeField(warn))
	})
	if err != nil || reply == nil {
		return err
	}
	if _, err := c.stdout.Write(append(reply, '\n')); err != nil {
		return fmt.Errorf("write the hook's output: %w", err)
	}
	return nil
}
