package paneops

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/lock"
)

// NotNowError is a delivery refused for now (ErrBusy, ErrHumanInput, ErrNotReady, ErrPaneChanged): the pane could
// not take a message at this moment and nothing was pasted. Reason says why without naming the
// pane, for a sender that reports it beside the pane ("queued: pane %3 is not ready (REASON)").
type NotNowError struct {
	Pane   messages.PaneID
	Reason string
	Err    error // the sentinel
}

func (e *NotNowError) Error() string { return "deliver to pane " + string(e.Pane) + ": " + e.Reason }

// Unwrap returns the sentinel.
func (e *NotNowError) Unwrap() error { return e.Err }

// notNow is a *NotNowError: the sentinel's words, then the detail.
func notNow(pane messages.PaneID, sentinel error, format string, a ...any) error {
	return &NotNowError{Pane: pane, Reason: sentinel.Error() + fmt.Sprintf(format, a...), Err: sentinel}
}

// Sentinel errors that tmux's stderr maps to (see classify); test with errors.Is.
var (
	ErrNoTmux         = errors.New("tmux is not installed")
	ErrNoServer       = errors.New("no tmux server running")
	ErrPaneNotFound   = errors.New("pane not found")
	ErrTargetNotFound = errors.New("tmux target not found") // session or window
	ErrNoBuffer       = errors.New("tmux buffer not found")
	ErrRefused        = errors.New("pane refused the paste") // dead pane or input off; nothing was pasted
	// ErrLockTimeout: the pane's send lock stayed held (lock.ErrTimeout, the same error).
	ErrLockTimeout = lock.ErrTimeout
	// ErrHumanInput: the pane's input box holds text wcomm did not put there; nothing was pasted.
	ErrHumanInput = errors.New("input box holds someone else's text")
	// ErrNotReady: the profile's input box is not on screen; nothing was pasted.
	ErrNotReady = errors.New("input box not on screen")
	// ErrNotSubmitted: the paste reached the pane but the screen shows it was not submitted.
	ErrNotSubmitted = errors.New("pasted but not submitted")
	// ErrBusy: a strict delivery found the pane not ready to take a message now (an agent mid-turn
	// or starting, a shell running a job, copy mode); nothing was pasted.
	ErrBusy = errors.New("pane is busy")
	// ErrEnterHeld: pasted, and the Enter refused by tmux because the pane went into copy mode
	// after the paste, or its screen showed a dialog or no input box at the Enter (an Enter into
	// a permission dialog approves it). It also matches ErrBusy. The paste stays in the pane's
	// input, and its mark recorded as pasted and not as entered, for Resume to press Enter once
	// the mode ends or the dialog is gone.
	ErrEnterHeld = errors.New("pasted, its Enter waits")
	// ErrPaneChanged is a strict paste refused because the pane's process or its server is not
	// the one the sender looked up (Delivery.Expect): a respawned pane, a restarted server. Nothing
	// was pasted; a new lookup finds what is there now.
	ErrPaneChanged = errors.New("pane changed since it was looked up")
)

// Error is a failed tmux call: the argv, exit code and tmux's stderr. Unwrap gives the sentinel that
// the stderr maps to (ErrNoServer, ErrPaneNotFound, ...) or the exec error.
type Error struct {
	Argv     []string
	ExitCode int
	Stderr   string
	Err      error
}

func (e *Error) Error() string {
	// What tmux said comes first, then what to do. The command line stays in Argv for a caller
	// that wants it: in a message it is noise (the guarded paste's runs to hundreds of characters,
	// with format strings a reader takes for the problem); the subcommand says which call failed.
	var b strings.Builder
	b.WriteString("tmux")
	if sub := subcommand(e.Argv); sub != "" {
		b.WriteString(" ")
		b.WriteString(sub)
	}
	b.WriteString(": ")
	if s := strings.TrimSpace(e.Stderr); s != "" {
		b.WriteString(strings.Join(strings.Fields(s), " "))
	} else if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("failed")
	}
	if h := hint(e.Err); h != "" {
		b.WriteString("; ")
		b.WriteString(h)
	} else if e.ExitCode > 0 {
		b.WriteString(" (exit status ")
		b.WriteString(strconv.Itoa(e.ExitCode))
		b.WriteString(")")
	}
	return b.String()
}

// subcommand is the tmux command of argv: the first word after tmux's own options (-u, -S PATH,
// -L NAME, -f FILE), or "" when there is none.
func subcommand(argv []string) string {
	for i := 1; i < len(argv); i++ {
		switch a := argv[i]; {
		case a == "-S" || a == "-L" || a == "-f" || a == "-c" || a == "-T":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
}

// Unwrap returns the classified sentinel or underlying error.
func (e *Error) Unwrap() error { return e.Err }

// stderrClasses maps a fragment of tmux's stderr to a sentinel. Order matters only where one
// message could contain two fragments; none of tmux 3.3a's do. The messages are tmux's own
// (cmd-find.c, client.c, cmd-*-buffer.c), measured on 3.3a.
var stderrClasses = []struct {
	fragment string
	err      error
}{
	{"no server running on", ErrNoServer},       // socket file exists, nobody listens (after kill-server)
	{"error connecting to", ErrNoServer},        // socket file missing
	{"server exited unexpectedly", ErrNoServer}, // server died (or crashed) during the call
	{"lost server", ErrNoServer},
	{"can't find pane", ErrPaneNotFound},
	{"can't find window", ErrTargetNotFound},
	{"can't find session", ErrTargetNotFound},
	{"no current session", ErrTargetNotFound},
	{"no current window", ErrTargetNotFound},
	{"no buffer", ErrNoBuffer},      // paste-buffer -b NAME
	{"unknown buffer", ErrNoBuffer}, // delete-buffer -b NAME
	{"executable file not found", ErrNoTmux},
}

// classify maps tmux's stderr to a sentinel error, or nil when the message is not one we know.
func classify(stderr string) error {
	for _, c := range stderrClasses {
		if strings.Contains(stderr, c.fragment) {
			return c.err
		}
	}
	return nil
}

// hint says what to do next for the sentinels a user can act on.
func hint(err error) string {
	switch {
	case errors.Is(err, ErrNoTmux):
		return "install tmux or put it on PATH"
	case errors.Is(err, ErrNoServer):
		return "start tmux first, or pass the socket of the running server (-L NAME or -S PATH)"
	case errors.Is(err, ErrPaneNotFound), errors.Is(err, ErrTargetNotFound):
		return "run 'tmux list-panes -a' to see which panes exist"
	}
	return ""
}

// NewError builds the *Error for a failed call, classifying stderr first.
func NewError(argv []string, code int, stderr string, cause error) *Error {
	err := classify(stderr)
	if err == nil {
		err = cause
	}
	return &Error{Argv: argv, ExitCode: code, Stderr: stderr, Err: err}
}
