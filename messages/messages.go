// Package messages holds the pure text of the worker protocol: ids, pane ids, session folder and
// file names (ids.go, this file), the request and response headers and files (header.go,
// request.go, response.go), the path-only RESPONSE line (notification.go), the DELTA report
// (delta.go), questions, their ids, QUESTION and ANSWER blocks and answer matching (question*.go,
// answer.go), the openQuestions envelope (envelope.go), approved actions' intents and the trust
// list (intent.go), the mailbox's mail records (mail.go), the remote wire (wire.go) and the text
// sanitizer (sanitize.go). Every format has a Format (String) and a Parse that round-trip. No I/O.
package messages

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// StampLayout is the time layout of started_at stamps and of the first part of ids: YYYYMMDD-HHMMSS.
const StampLayout = "20060102-150405"

// ErrSyntax is wrapped by every parse error of this package, so callers can tell malformed text
// from other failures with errors.Is.
var ErrSyntax = errors.New("malformed")

// parseError is a parse error. Its text is only the message (no ": malformed" suffix) so that
// errors can read "line N: what is wrong"; errors.Is still finds ErrSyntax through Unwrap.
type parseError struct{ msg string }

func (e *parseError) Error() string { return e.msg }

func (e *parseError) Unwrap() error { return ErrSyntax }

func syntaxf(format string, args ...any) error {
	return &parseError{msg: fmt.Sprintf(format, args...)}
}

// atLine prefixes a parse error with its line number, keeping it an ErrSyntax error.
func atLine(n int, err error) error {
	return &parseError{msg: fmt.Sprintf("line %d: %s", n, err.Error())}
}

// maxQuoted bounds how much of a hostile input an error message repeats.
const maxQuoted = 64

// quote renders an input for an error message: Go-quoted, so control bytes from a pane or a
// worker-written file cannot reach a terminal through an error, and cut to maxQuoted bytes.
func quote(s string) string {
	if len(s) > maxQuoted {
		cut := maxQuoted
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "..."
	}
	return strconv.Quote(s)
}
