package tmuxcomm

// The error classes and their words, one place for both faces: the command line turns a class
// into its exit code, the MCP server into a tool error's class and exit_code.

import (
	"context"
	"errors"
	"strings"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
)

// Class is what kind of failure an error is; its number is the command line's exit code.
type Class int

// The classes (0 is success).
const (
	ClassOK       Class = 0
	ClassFailure  Class = 1 // anything else: read the words
	ClassUsage    Class = 2 // the call's words are wrong: fix the arguments
	ClassTimeout  Class = 3 // a wait ended before what it waited for
	ClassNotFound Class = 4 // no such pane, exchange or question, or several panes matched
)

// ExitCode is the command line's exit code of the class.
func (c Class) ExitCode() int { return int(c) }

// String names the class as a tool error does: "usage", "failure", "timed_out", "not_found".
func (c Class) String() string {
	switch c {
	case ClassOK:
		return "ok"
	case ClassUsage:
		return "usage"
	case ClassTimeout:
		return "timed_out"
	case ClassNotFound:
		return "not_found"
	}
	return "failure"
}

// ClassOf sorts err into its class.
func ClassOf(err error) Class {
	var ue *core.UsageError
	switch {
	case err == nil:
		return ClassOK
	case errors.As(err, &ue), errors.Is(err, messages.ErrInvalidAnswer), errors.Is(err, actions.ErrUnregistered):
		return ClassUsage
	case errors.Is(err, store.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return ClassTimeout
	case errors.Is(err, store.ErrOrchestratorGone):
		// The response is saved; only the signal found no pane. Not a target the caller named.
		return ClassFailure
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrAmbiguous),
		errors.Is(err, paneops.ErrPaneNotFound), errors.Is(err, paneops.ErrTargetNotFound):
		return ClassNotFound
	}
	return ClassFailure
}

// Judged ends an ask's error with BestJudgment, the instruction to go on without the answer, unless
// its words already end so; its class stays the error's own.
func Judged(err error) error {
	var je *core.JudgedError
	if err == nil || errors.As(err, &je) {
		return err
	}
	return &core.JudgedError{Msg: err.Error() + "; " + core.BestJudgment, Err: err}
}

// NeedOf says what err lacks that only the caller can give, when it says so: a *NeedError, or a
// find that matched several panes (the caller names one, or takes the first).
func NeedOf(err error) (core.Need, bool) {
	var ne *core.NeedError
	if errors.As(err, &ne) {
		return ne.Need, true
	}
	var fe *fleet.FindError
	if errors.As(err, &fe) && len(fe.Matches) > 1 {
		return core.NeedOnePane, true
	}
	return "", false
}

// Hinted is err with how the caller gives what it lacks, in a face's own words (hints, by Need),
// added to its text; err itself when it lacks nothing the face has a hint for. Its class stays
// err's.
func Hinted(err error, hints map[core.Need]string) error {
	n, ok := NeedOf(err)
	if h := hints[n]; ok && h != "" {
		return &hintedError{err: err, hint: h}
	}
	return err
}

type hintedError struct {
	err  error
	hint string
}

// Error puts the hint after what is lacking: before the instruction an ask's error ends with, so
// that instruction stays its last words.
func (e *hintedError) Error() string {
	msg := e.err.Error()
	if head, ok := strings.CutSuffix(msg, "; "+core.BestJudgment); ok {
		return head + " (" + e.hint + "); " + core.BestJudgment
	}
	return msg + " (" + e.hint + ")"
}
func (e *hintedError) Unwrap() error { return e.err }

// The words of the error classes that the rooms below the door build (core), named here for the
// faces.
type (
	// UsageError is a mistake in a call's words (class usage).
	UsageError = core.UsageError
	// NeedError is a call that lacks something only its caller can give.
	NeedError = core.NeedError
	// JudgedError is an ask's failure whose message already ends with BestJudgment.
	JudgedError = core.JudgedError
	// Need names what a call lacks that only its caller can give.
	Need = core.Need
)

// What a call can lack.
const (
	NeedOwnPane      = core.NeedOwnPane
	NeedTarget       = core.NeedTarget
	NeedOrchestrator = core.NeedOrchestrator
	NeedOnePane      = core.NeedOnePane
	NeedPane         = core.NeedPane
	NeedMessage      = core.NeedMessage
	NeedReason       = core.NeedReason
	NeedTask         = core.NeedTask
)

// BestJudgment ends every message of an ask that ends without an answer.
const BestJudgment = core.BestJudgment

// The sentinels of the questions room.
var (
	ErrStale = core.ErrStale
	// ErrChannelsUnusable: the answer channels cannot run as configured (Helpers.Bridge says why).
	ErrChannelsUnusable = core.ErrChannelsUnusable
	ErrNoAnswer         = core.ErrNoAnswer
	ErrUnrelayed        = core.ErrUnrelayed
	ErrNotPerson        = core.ErrNotPerson
)

// Usagef returns a *UsageError.
func Usagef(format string, a ...any) error { return core.Usagef(format, a...) }

// CheckRef refuses, as a usage error, a reference that can name no exchange.
func CheckRef(ref string) error { return core.CheckRef(ref) }
