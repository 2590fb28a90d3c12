package broadcast

import (
	"context"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
)

// Caster sends to several panes and awaits their answers, for one engine.
type Caster struct {
	*core.Config
	Book   *exchange.Book
	Finder *fleet.Finder
	Sender Sender
	// Groups returns the settings' groups (settings.Values.Groups), read at each call.
	Groups func() map[string][]string
}

// Sender is what the room needs of the door: one send, one await, and whether a target names a
// worker on a declared host (HOST:TARGET), which is resolved there, not here.
type Sender interface {
	Send(ctx context.Context, o core.SendOptions) (*exchange.Exchange, error)
	AwaitThen(ctx context.Context, ref string, timeout time.Duration, out func(*exchange.Exchange) error) (*exchange.Exchange, error)
	HostTarget(to string) (bool, error)
}

// Options are the inputs of a broadcast.
type Options struct {
	// Targets are the targets as given: each may hold several, comma-separated, and @NAME names
	// a group of the settings.
	Targets []string
	// All, without Targets, sends to every pane of the caller's session that runs an agent, the
	// caller's own excepted. With Targets it keeps its meaning for one send: an agent name is
	// looked for in every session.
	All bool
	// Send is every member's send: capability, body, agent profile, First.
	Send core.SendOptions
}

// Many reports whether a send to targets (as given) with all is a broadcast: several targets, a
// group, or every agent. A single plain target is one send, whose output stays as it was.
func Many(targets []string, all bool) bool {
	if len(targets) == 0 {
		return all
	}
	split, err := messages.SplitTargets(targets)
	if err != nil {
		return true // the broadcast refuses it with the list's own words
	}
	if len(split) > 1 {
		return true
	}
	_, group := messages.GroupName(split[0])
	return group
}

// ManyRefs reports whether an await of refs waits for several exchanges: several refs, or a
// broadcast's id.
func ManyRefs(refs []string) bool {
	return len(refs) > 1 || (len(refs) == 1 && messages.IsBroadcastID(refs[0]))
}

// member is one resolved target.
type member struct {
	target string // as given, a group expanded
	host   bool   // HOST:TARGET, resolved on that host
	pane   paneops.Pane
	srv    paneops.ServerInfo
}

// key tells two targets that reach the same pane apart from two that do not.
func (m member) key() string {
	if m.host {
		return "host\x00" + m.target
	}
	return m.srv.Key() + "\x00" + string(m.pane.ID)
}

// label names the member in output before it has an exchange.
func (m member) label() string {
	if m.host {
		return m.target
	}
	return string(m.pane.ID)
}
