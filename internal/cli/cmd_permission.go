package cli

// The PermissionRequest hook: an agent's permission prompt relayed to the person as a question
// (tmuxcomm/questions/permission.go), its first answer handed back on stdout.

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// runPermissionHook records the agent's permission request as a question, waits for its answer
// and prints the agent's decision; nothing when the question ends otherwise, so the agent's own
// dialog decides.
func (c *cli) runPermissionHook(agent string, data []byte) error {
	var in messages.HookInput
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("hook input is not JSON: %w", err)
	}
	req, err := messages.ParsePermissionRequest(agent, in)
	if err != nil {
		return err
	}
	s, err := c.settings()
	if err != nil {
		return err
	}
	e := c.engine()
	var term questions.Terminal
	if t, err := paneops.ScanProcs(); err == nil {
		if sf, err := (door.Finder{}).SessionFile(in.SessionID, t.Ancestors(os.Getpid())); err == nil {
			req.PID, term = sf.PID, sf
		} else {
			fmt.Fprintf(c.stderr, "wcomm hook: %v; an answer given in the pane is not seen\n", err)
		}
	}
	w, warnings, err := e.AskPermission(c.ctx, req)
	if err != nil {
		return err
	}
	defer w.Close()
	for _, warn := range warnings {
		fmt.Fprintf(c.stderr, "wcomm hook: %s\n", messages.SanitizeField(warn))
	}
	out, err := w.Await(c.ctx, questions.AwaitOptions{Wait: s.PermissionWait, Terminal: term})
	if err != nil {
		return err
	}
	if out.Decision == nil {
		return nil
	}
	reply, err := messages.FormatClaudeDecision(*out.Decision)
	if err != nil {
		return err
	}
	if _, err := c.stdout.Write(append(reply, '\n')); err != nil {
		return fmt.Errorf("write the hook's output: %w", err)
	}
	return nil
}
