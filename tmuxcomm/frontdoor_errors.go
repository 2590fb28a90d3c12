package tmuxcomm

// The error classes and their words, one place for both faces: the command line turns a class
// into its exit code, the MCP server into a tool error's class and exit_code.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
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
	var ue *UsageError
	switch {
	case err == nil:
		return ClassOK
	case errors.As(err, &ue), errors.Is(err, messages.ErrInvalidAnswer), errors.Is(err, ErrUnregistered):
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

// UsageError is a mistake in a call's words (class usage). Its text names what is wrong in words
// both faces can use; a face adds its own flag or argument name.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef returns a *UsageError.
func Usagef(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// Judged ends an ask's error with BestJudgment, the instruction to go on without the answer, unless
// its words already end so; its class stays the error's own.
func Judged(err error) error {
	var je *JudgedError
	if err == nil || errors.As(err, &je) {
		return err
	}
	return &JudgedError{Msg: err.Error() + "; " + BestJudgment, Err: err}
}

// Need names what a call lacks that only its caller can give.
type Need string

// What a call can lack.
const (
	NeedOwnPane      Need = "own-pane"     // the caller's pane: the call runs outside tmux
	NeedTarget       Need = "target"       // the pane to send to
	NeedOrchestrator Need = "orchestrator" // the pane to ask, when no request names one
	NeedOnePane      Need = "one-pane"     // one of several panes that matched
	NeedPane         Need = "pane"         // the pane whose mail it is
	NeedMessage      Need = "message"      // the text of a request or a response
	NeedReason       Need = "reason"       // why a question is closed without an answer
)

// NeedError is a call that lacks something only its caller can give. Its words say what is
// missing in words both faces use; a face adds how it is given there (a flag, an argument), from
// Need. It wraps Err (nil, or a sentinel such as ErrNotFound for the class).
type NeedError struct {
	Need Need
	Msg  string
	Err  error
}

func (e *NeedError) Error() string { return e.Msg }

// Unwrap returns the sentinel, if any.
func (e *NeedError) Unwrap() error { return e.Err }

func needf(n Need, sentinel error, format string, a ...any) error {
	return &NeedError{Need: n, Msg: fmt.Sprintf(format, a...), Err: sentinel}
}

// NeedOf says what err lacks that only the caller can give, when it says so: a *NeedError, or a
// find that matched several panes (the caller names one, or takes the first).
func NeedOf(err error) (Need, bool) {
	var ne *NeedError
	if errors.As(err, &ne) {
		return ne.Need, true
	}
	var fe *FindError
	if errors.As(err, &fe) && len(fe.Matches) > 1 {
		return NeedOnePane, true
	}
	return "", false
}

// Hinted is err with how the caller gives what it lacks, in a face's own words (hints, by Need),
// added to its text; err itself when it lacks nothing the face has a hint for. Its class stays
// err's.
func Hinted(err error, hints map[Need]string) error {
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

func (e *hintedError) Error() string { return e.err.Error() + " (" + e.hint + ")" }
func (e *hintedError) Unwrap() error { return e.err }

// CheckRef refuses, as a usage error, a reference that can name no exchange: neither an exchange
// id nor an absolute path to a request or response file.
func CheckRef(ref string) error {
	if filepath.IsAbs(ref) || messages.ValidID(ref) == nil {
		return nil
	}
	return Usagef("%q is neither an exchange id (YYYYMMDD-HHMMSS-xxxx) nor an absolute path to a request or response file", messages.SanitizeField(ref))
}
