package tmuxcomm

// The rules of a call's arguments that both faces apply, written once: the capability a send
// gives by default, the agent profiles a send may name, the bound of the busy wait.

import (
	"strings"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/core"
)

// DefaultCapability is what a worker may do when a send names no capability: look, change nothing.
const DefaultCapability = core.DefaultCapability

// ParseCapability reads a send's capability: "" is DefaultCapability; anything but READONLY or
// WRITABLE is a usage error.
func ParseCapability(s string) (messages.Capability, error) {
	if s == "" {
		return DefaultCapability, nil
	}
	c, err := messages.ParseCapability(s)
	if err != nil {
		return "", Usagef("%v", err)
	}
	return c, nil
}

// ProfileNames lists the built-in agent profiles a send may name as the target's (claude, codex,
// ...), for a face's help; a settings file may add more.
func ProfileNames() string {
	return strings.Join(profile.BuiltinNames(), ", ")
}

// MaxBusyWait bounds how long a delivery made now waits for the target's input box: the pane's
// lock is held meanwhile, and a tool call must end before its client gives up on it.
const MaxBusyWait = core.MaxCallWait
