package core

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/wcomm/wcomm/messages"
)

// UsageError is a mistake in a call's words (class usage). Its text names what is wrong in words
// both faces can use; a face adds its own flag or argument name.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef returns a *UsageError.
func Usagef(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

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
	NeedTask         Need = "task"         // the task a question is about
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

func Needf(n Need, sentinel error, format string, a ...any) error {
	return &NeedError{Need: n, Msg: fmt.Sprintf(format, a...), Err: sentinel}
}

// NeedUsagef is a NeedError of class usage: what the call lacks is one of its own arguments (a
// target, a message, a task), so the call's words are wrong.
func NeedUsagef(n Need, format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	return &NeedError{Need: n, Msg: msg, Err: &UsageError{Msg: msg}}
}

// CheckRef refuses, as a usage error, a reference that can name no exchange: neither an exchange
// id, nor its end (the exchange room finds the one id it ends), nor an absolute path to a request
// or response file.
func CheckRef(ref string) error {
	if filepath.IsAbs(ref) || messages.ValidID(ref) == nil || messages.IsIDSuffix(ref) {
		return nil
	}
	if messages.IsBroadcastID(ref) {
		if err := messages.ValidBroadcastID(ref); err != nil {
			return Usagef("%v", err)
		}
		return nil
	}
	return Usagef("%q is neither an exchange id (YYYYMMDD-HHMMSS-xxxx) or its unique end (a1b2), a broadcast id (bc-YYYYMMDD-HHMMSS-xxxxxxxx) nor an absolute path to a request or response file", messages.SanitizeField(ref))
}

// BestJudgment ends every message of an ask that ends without an answer: a question is an
// optimization, never a blocker: a worker that waits for ever on a person helps nobody.
const BestJudgment = `continue on your best judgment and mark the choice "assumed — needs review"`

var (
	// ErrStale: the answer came too late (already answered, resolved, or the question no longer
	// applies); it was recorded as stale and changed nothing.
	ErrStale = errors.New("stale")
	// ErrNoAnswer: the ask ended without an answer (the question was resolved or became stale).
	ErrNoAnswer = errors.New("no answer")
	// ErrUnrelayed: the question is stored but reached nobody (no pane took the paste, no hook ran).
	ErrUnrelayed = errors.New("question not relayed")
	// ErrChannelsUnusable: the answer channels' settings or tokens do not let a bridge run (a
	// token file that does not exist); Helpers.Bridge wraps it, and the ask says so.
	ErrChannelsUnusable = errors.New("answer channels unusable")
	// ErrNotPerson: what only the person decides (an agent's permission prompt) was answered by
	// someone else, an agent or its tool; nothing was recorded.
	ErrNotPerson = errors.New("not the person")
)

// JudgedError is an ask's failure whose message already ends with BestJudgment; Unwrap gives the
// sentinel (ErrTimeout, ErrNoAnswer, ErrUnrelayed, a context error) for the exit code.
type JudgedError struct {
	Msg string
	Err error
}

func (e *JudgedError) Error() string { return e.Msg }

// Unwrap returns the sentinel.
func (e *JudgedError) Unwrap() error { return e.Err }

func Judgedf(sentinel error, format string, a ...any) error {
	return &JudgedError{Msg: fmt.Sprintf(format, a...) + "; " + BestJudgment, Err: sentinel}
}
