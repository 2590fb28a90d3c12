package paneops

// What a delivery is and what became of it: the Delivery a caller fills in, the Identity a
// pane's lookup found, the DeliveryResult with its evidence.

import (
	"strconv"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/profile"
)

// Delivery is one paste into a pane.
type Delivery struct {
	Pane    messages.PaneID
	Content []byte // already sanitized; must not be empty
	// Submit presses Enter in a separate tmux call EnterDelay after the paste.
	Submit     bool
	EnterDelay time.Duration
	// LockDir holds the per-pane lock files; LockKey names the server (ServerInfo.Key()).
	LockDir     string
	LockKey     string
	LockTimeout time.Duration

	// Profile, when set, makes the delivery read the pane's screen (see profile.Inspect): before the
	// paste it waits up to BusyWait for an empty input box and refuses to paste into one holding
	// text wcomm did not put there; after the paste it waits for the paste to show; after Enter it
	// checks the box took the message and presses Enter again, with backoff, only while the box
	// still holds nothing but the pasted text. EnterDelay is raised to the profile's floor for the
	// content's size. nil: paste and Enter, nothing checked.
	Profile  *profile.Profile
	BusyWait time.Duration
	// LiteralEnter sends Enter as a literal carriage return (send-keys -l), for tmux versions whose
	// named Enter key does not submit (see KnownBugs).
	LiteralEnter bool
	// Strict makes a delivery that would have to wait give up instead: a busy or starting agent is
	// ErrBusy at BusyWait's end rather than pasted into (its own queue would hold the message), and
	// a pane in copy mode is ErrBusy rather than taken out of it (a person is reading there).
	// The mailbox delivers strictly: what is not ready now waits in the outbox.
	Strict bool
	// Mark, when set, is recorded by the tmux server itself, in the same tmux call as each step:
	// the pane's pasted record takes it with the paste, its entered record with the first Enter
	// (hidden variables of the server's global environment, see recordName). A
	// deliverer killed mid-way leaves the server's own record of how far it got (see Marks).
	// Only [a-z0-9-], since it is spliced into a tmux command string.
	Mark string
	// Expect, with Strict, is the pane's process and its server's as the sender last knew them: the
	// guarded paste then also refuses, in the same call, a pane whose process or server is not
	// those (ErrPaneChanged). It is what lets a sender trust a record of an earlier lookup instead
	// of asking tmux again: the server itself checks the record at the moment of the paste.
	Expect Identity
}

// Identity is what a pane's lookup found that only a new pane or a new server changes.
type Identity struct {
	PanePID   int // #{pane_pid}
	ServerPID int // #{pid}
}

// guardValue is the identity as the guard's format prints it, "" when not set.
func (id Identity) guardValue() string {
	if id.PanePID <= 0 || id.ServerPID <= 0 {
		return ""
	}
	return strconv.Itoa(id.PanePID) + "-" + strconv.Itoa(id.ServerPID)
}

// DeliveryResult says what happened, with the evidence.
type DeliveryResult struct {
	Buffer    string        `json:"buffer"`
	Pasted    bool          `json:"pasted"`
	Submitted bool          `json:"submitted"` // Enter was sent and, where the screen tells, taken
	LockWait  time.Duration `json:"lock_wait_ns"`
	PastedAt  time.Time     `json:"pasted_at"`
	EnterAt   time.Time     `json:"enter_at"`

	// The screen checks of a delivery with a Profile.
	Profile string `json:"profile,omitempty"`
	// Before is what the input box held when the paste went ahead ("input box empty", ...).
	Before string `json:"before,omitempty"`
	// Waited is how long the box was waited for before pasting (busy agent, human text, not ready).
	Waited time.Duration `json:"waited_ns,omitempty"`
	// ShownAfter is the time from the paste until it showed in the box; 0 when never seen.
	ShownAfter time.Duration `json:"shown_after_ns,omitempty"`
	EnterDelay time.Duration `json:"enter_delay_ns,omitempty"`
	Enters     int           `json:"enters,omitempty"`
	// Verified says the screen confirmed the submission; Evidence says what was seen.
	Verified bool   `json:"verified"`
	Evidence string `json:"evidence,omitempty"`

	// turnSeen: the agent read busy after the Enter (Verify.TurnStartMS), and the pane's record
	// of the Enter's time is cleared.
	turnSeen bool
}

// defaultLockTimeout applies when Delivery.LockTimeout is 0, so a hung holder cannot block a
// sender whose context has no deadline forever.
