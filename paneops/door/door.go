// Package door finds an agent's own door into a tmux pane's session and writes messages through
// it, so that a message reaches the agent's model without typing into the pane. Two doors are
// known: Claude Code's messaging socket (here) and Codex's app-server (codex.go). Every interactive Claude Code session keeps a session file
// ($CLAUDE_CONFIG_DIR or $HOME/.claude, then sessions/PID.json) naming its tmux pane, its state
// (idle or busy) and a Unix socket; a key file beside it holds the token the socket asks for. A
// message written there reaches the model exactly once, whether the session is idle, mid-turn
// (after the turn) or holding a person's half-typed draft (untouched). The vendor does not
// document it, so every field is checked at run time and anything unexpected means "no door":
// the caller types as before.
//
// The package owns the lookup (Finder.FindFor) and the write (Write). It never prints or logs the
// token: it is read from the agent's own key file at the moment of the write and kept nowhere.
package door

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/wcomm/wcomm/paneops/profile"
)

// Routes a delivery can take.
const (
	RouteSocket = "socket" // the agent's messaging socket
	RouteTyped  = "typed"  // pasted into the pane and submitted with Enter
)

// Kinds of door a profile can name (Profile.Door).
const (
	// ClaudeSocket is Claude Code's messaging socket (peer protocol 1).
	ClaudeSocket = profile.DoorClaudeSocket
	// CodexAppServer is the app-server daemon Codex's TUI is a client of (codex.go).
	CodexAppServer = profile.DoorCodexAppServer
)

// Session states a Claude Code session reports.
const (
	StatusIdle = "idle"
	StatusBusy = "busy"
)

// MinVersion is the oldest Claude Code version whose messaging socket was measured to deliver as
// described above; an older session is typed into.
const MinVersion = "2.1.331"

// PeerProtocol is the only protocol version whose two lines this package speaks.
const PeerProtocol = 1

// Session is what an interactive Claude Code session says of itself in its session file. Only the
// fields this package checks or reports are read.
type Session struct {
	PID                 int    `json:"pid"`
	SessionID           string `json:"sessionId"`
	Version             string `json:"version"`
	PeerProtocol        int    `json:"peerProtocol"`
	Kind                string `json:"kind"`
	Tmux                string `json:"tmux"`
	MessagingSocketPath string `json:"messagingSocketPath"`
	Status              string `json:"status"`
	StatusUpdatedAt     int64  `json:"statusUpdatedAt"`
	ProcStart           string `json:"procStart"`
}

// keyFile is the session's key file: the token and the process it belongs to.
type keyFile struct {
	PeerToken string `json:"peerToken"`
	ProcStart string `json:"procStart"`
}

// Finding is the route a pane gets and why. Status is the session's own state when a session of
// the pane's agent was matched (whatever the route), "" otherwise.
type Finding struct {
	Route string `json:"route"`
	Why   string `json:"why"`
	// Door is the kind of door matched (ClaudeSocket, CodexAppServer), "" when none was.
	Door    string `json:"door,omitempty"`
	Status  string `json:"status,omitempty"`
	Version string `json:"version,omitempty"`
	PID     int    `json:"pid,omitempty"`
	Socket  string `json:"socket,omitempty"`
	// Thread is the Codex thread the pane's TUI shows.
	Thread string `json:"thread,omitempty"`

	// procStart, dir and cwd are what Write checks again and reads the key from.
	procStart uint64
	dir       string
	cwd       string
}

// FindFor returns the route for pane through the door of kind (a profile's Door), given the
// processes of the pane's tree that may be the agent's (pids, shallowest first).
func (f Finder) FindFor(ctx context.Context, kind, pane string, pids []int) Finding {
	switch kind {
	case ClaudeSocket:
		return f.Find(pane, pids)
	case CodexAppServer:
		return f.findCodex(ctx, pids)
	}
	return typed("door %q is not known: typed into the pane", kind)
}

// Evidence says what a completed write through the door did, for the delivery's record.
func (f Finding) Evidence() string {
	if f.Door == CodexAppServer {
		return fmt.Sprintf("a turn started through Codex's app-server in thread %s of Codex TUI %d", f.Thread, f.PID)
	}
	return fmt.Sprintf("written to the messaging socket of Claude Code session %d", f.PID)
}

// UsesSocket reports whether the route is the agent's messaging socket.
func (f Finding) UsesSocket() bool { return f.Route == RouteSocket }

// typed is the typed route with its reason.
func typed(why string, args ...any) Finding {
	return Finding{Route: RouteTyped, Why: fmt.Sprintf(why, args...)}
}

// ErrNotWritten marks a write through the door that did not complete: the agent cannot have
// received the message (a partial line is not a message), so it may be delivered another way.
var ErrNotWritten = errors.New("nothing was delivered through the agent's door")

// paneOf is the pane id at the end of a session file's tmux field ("main:@1.%1" → "%1").
func paneOf(tmux string) string {
	i := strings.LastIndex(tmux, ".")
	if i < 0 {
		return ""
	}
	return tmux[i+1:]
}

// versionAtLeast compares dotted numeric versions; a malformed one is never at least anything.
func versionAtLeast(v, min string) bool {
	a, ok1 := versionParts(v)
	b, ok2 := versionParts(min)
	if !ok1 || !ok2 {
		return false
	}
	for i := range max(len(a), len(b)) {
		x, y := 0, 0
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return x > y
		}
	}
	return true
}

func versionParts(v string) ([]int, bool) {
	// A pre-release or build suffix ("2.1.331-beta") is not a measured release.
	if v == "" || strings.ContainsAny(v, "-+") {
		return nil, false
	}
	var out []int
	for _, p := range strings.Split(v, ".") {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}
