package paneops

import (
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/paneops/profile"
)

// AgentAmong names the first agent profile of s whose program is one of pids in t (a caller's
// process and its ancestors, nearest first), "" when none is: a command run by an agent's tool
// call has the agent among its ancestors, one typed by a person in a shell has not.
func AgentAmong(s *profile.Set, t *proc.Table, pids []int) string {
	if s == nil || t == nil {
		return ""
	}
	for _, pid := range pids {
		c, ok := t.Proc(pid)
		if !ok {
			continue
		}
		if p := agentOf(s, c); p != nil {
			return p.Name
		}
	}
	return ""
}
