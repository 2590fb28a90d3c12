// Package messages holds the pure text of the worker protocol: ids, pane ids, session folder and
// file names, the request and response headers, the path-only RESPONSE line, the DELTA report and
// the text sanitizer. Every format has a Format (String) and a Parse that round-trip. No I/O.
package messages

import (
	"errors"
	"io"
	"time"
)

// StampLayout is the time layout of started_at stamps and of the first part of ids: YYYYMMDD-HHMMSS.
const StampLayout = "20060102-150405"

// ErrSyntax is wrapped by every parse error of this package, so callers can tell malformed text
// from other failures with errors.Is.
var ErrSyntax = errors.New("malformed")

// PaneID is a tmux pane id such as "%7". Pane ids are only unique for one server's lifetime.
type PaneID string

// ParsePaneID accepts "%N" (N a decimal number without sign, at most 9 digits) and returns it;
// anything else is an ErrSyntax error naming the input.
func ParsePaneID(s string) (PaneID, error) { panic("unimplemented") }

// Num returns N of "%N" (-1 for an invalid id). Folder names use N without the percent sign.
func (p PaneID) Num() int { panic("unimplemented") }

// ValidStamp reports whether s is a YYYYMMDD-HHMMSS stamp (digits only, a real calendar time).
func ValidStamp(s string) error { panic("unimplemented") }

// ValidID reports whether s is a request id: YYYYMMDD-HHMMSS-xxxx, x lowercase hex, 4 to 16 of them.
// Ids reach file names and tmux buffer names, so nothing else passes.
func ValidID(s string) error { panic("unimplemented") }

// NewID returns "YYYYMMDD-HHMMSS-xxxx" for now (in now's location) with 2 random bytes from r as hex.
func NewID(now time.Time, r io.Reader) (string, error) { panic("unimplemented") }

// Capability is what a worker may do for a request.
type Capability string

// The two capabilities of seed 004.
const (
	ReadOnly Capability = "READONLY"
	Writable Capability = "WRITABLE"
)

// ParseCapability accepts READONLY or WRITABLE (case-insensitive) and returns the canonical form.
func ParseCapability(s string) (Capability, error) { panic("unimplemented") }

// Session names one orchestrator/worker pair's folder: "{StartedAt}-o{N}-w{M}".
type Session struct {
	StartedAt    string
	Orchestrator PaneID
	Worker       PaneID
}

// Name returns the folder name, e.g. "20260117-155000-o6-w7".
func (s Session) Name() string { panic("unimplemented") }

// ParseSessionName parses a folder name made by Name. It refuses anything else (including
// "..", slashes, and extra suffixes), so a parsed name is always safe to join to the root.
func ParseSessionName(name string) (Session, error) { panic("unimplemented") }

// BufferName returns the seed's shared buffer name for a pair, "msg-o{N}-w{M}". wcomm itself uses a
// unique buffer per delivery; this name appears only in the plain-tmux fallback instructions.
func (s Session) BufferName() string { panic("unimplemented") }

// Kind is the kind of a sequenced file in a session folder.
type Kind string

// The sequenced file kinds.
const (
	KindRequest  Kind = "request"
	KindResponse Kind = "response"
)

// SeqFileName returns "NNN-request.md" / "NNN-response.md", N zero-padded to at least 3 digits.
func SeqFileName(n int, k Kind) string { panic("unimplemented") }

// ParseSeqFileName parses a name made by SeqFileName (3 or more digits, n >= 1). ok is false for
// any other name.
func ParseSeqFileName(name string) (n int, k Kind, ok bool) { panic("unimplemented") }

// RequestHeader is the first line of a request file:
//
//	[WORKER capability=READONLY id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7]
//
// wcomm appends two integrity fields after the seed's five: "bytes=N sha256=HEX12" (the body's length
// in bytes and the first 12 hex digits of its SHA-256). A header without them (the seed's own) parses
// with Bytes = -1 and Sum = "".
type RequestHeader struct {
	Capability   Capability
	ID           string
	StartedAt    string
	Orchestrator PaneID
	Worker       PaneID
	Bytes        int    // -1 when absent
	Sum          string // "" when absent
}

// String formats the header line (no newline). Integrity fields are written only when Bytes >= 0.
func (h RequestHeader) String() string { panic("unimplemented") }

// ParseRequestHeader parses a header line. Fields are key=value separated by single spaces, in any
// order; the five seed fields are required and validated (ValidID, ValidStamp, ParsePaneID,
// ParseCapability); bytes and sha256 are optional; unknown keys are ignored (forward compatible).
func ParseRequestHeader(line string) (RequestHeader, error) { panic("unimplemented") }

// BodySum returns the integrity fields for a body: its length and the 12-hex-digit SHA-256 prefix.
func BodySum(body []byte) (n int, sum string) { panic("unimplemented") }

// Instructions are what a request tells its worker about answering.
type Instructions struct {
	ResponsePath string // absolute path of the response file
	// Notify is the one-line wcomm command a worker with wcomm runs, e.g.
	// "wcomm notify --response PATH --file ANSWER.md".
	Notify string
	// Fallback is the seed's plain tmux notify command line for workers without wcomm.
	Fallback string
}

// Request is a whole request file.
type Request struct {
	Header       RequestHeader
	Body         string
	Instructions Instructions
}

// FormatRequest renders a request file:
//
//	HEADER
//	BODY
//
//	[RESPONSE INSTRUCTIONS]
//	Response file: PATH
//	Notify via:
//	NOTIFY            (only when Instructions.Notify is set)
//	Without wcomm, write the response file with the header line
//	[WORKER RESPONSE id=... started_at=... orchestrator=%N worker=%M]
//	and notify via:
//	FALLBACK
//
// When Notify is empty, "Notify via:" is followed directly by FALLBACK (the seed's exact form).
// The body is written as given (a trailing newline is not doubled).
func FormatRequest(r Request) string { panic("unimplemented") }

// ParseRequest parses a request file written by FormatRequest or by the seed's plain procedure:
// the header is the first line; the body runs up to the last "\n[RESPONSE INSTRUCTIONS]\n" line
// (one blank line before it is not part of the body); "Response file: PATH" is read from the block.
// A file without the block parses with an empty Instructions and the whole rest as body.
func ParseRequest(data []byte) (Request, error) { panic("unimplemented") }

// FallbackCommand returns the seed's notify command for a response path:
//
//	tmux load-buffer -b "msg-o6-w7" - <<< "[RESPONSE started_at=... orchestrator=%6 worker=%7] PATH" && tmux paste-buffer -b "msg-o6-w7" -t %6 && sleep 0.2 && tmux send-keys -t %6 Enter
func FallbackCommand(s Session, responsePath string) string { panic("unimplemented") }

// ResponseHeader is the first line of a response file:
//
//	[WORKER RESPONSE id=20260117-120000-a1b2 started_at=20260117-120000 orchestrator=%6 worker=%7]
//
// wcomm may append "bytes=N sha256=HEX12" of the request body the worker saw (its integrity echo).
type ResponseHeader struct {
	ID           string
	StartedAt    string
	Orchestrator PaneID
	Worker       PaneID
	RequestBytes int    // -1 when absent
	RequestSum   string // "" when absent
}

// String formats the header line (no newline).
func (h ResponseHeader) String() string { panic("unimplemented") }

// ParseResponseHeader parses a response header line (same field rules as ParseRequestHeader).
func ParseResponseHeader(line string) (ResponseHeader, error) { panic("unimplemented") }

// Response is a whole response file.
type Response struct {
	Header ResponseHeader
	Body   string
	Delta  *Delta // parsed from the body when it holds a DELTA: block, else nil
}

// FormatResponse renders HEADER "\n" BODY, ending with exactly one newline.
func FormatResponse(r Response) string { panic("unimplemented") }

// ParseResponse parses a response file: header line, then the body. Delta is filled when the body
// holds a DELTA block; a malformed DELTA block is not an error for the response (Delta stays nil).
func ParseResponse(data []byte) (Response, error) { panic("unimplemented") }

// Notification is the path-only line a worker pastes into the orchestrator's pane:
//
//	[RESPONSE started_at=20260117-120000 orchestrator=%6 worker=%7] /tmp/worker-comm/.../002-response.md
type Notification struct {
	StartedAt    string
	Orchestrator PaneID
	Worker       PaneID
	Path         string
}

// String formats the line (no newline).
func (n Notification) String() string { panic("unimplemented") }

// FindNotification finds the last "[RESPONSE ...] PATH" in text, which may hold other text around
// it (an agent's prompt, a wrapped screen line, ANSI colour codes, a trailing "\r"). The path runs
// to the first white space; it must be absolute and end in "-response.md". Fields are validated.
func FindNotification(text string) (Notification, error) { panic("unimplemented") }

// Delta is the change report of seed 004 section 8:
//
//	DELTA:
//	  changes: [a, b]
//	  risks: [...]
//	  alternatives: [...]
//	  needs_consult: yes|no
type Delta struct {
	Changes      []string `json:"changes"`
	Risks        []string `json:"risks"`
	Alternatives []string `json:"alternatives"`
	NeedsConsult bool     `json:"needs_consult"`
}

// ParseDelta finds the first "DELTA:" line in body and parses the indented lines under it. Lists are
// "[a, b]" (items trimmed, empty list "[]"; an item may be quoted with "..." to hold a comma) or, as
// an extension, YAML-style "- item" lines under the key. found is false when there is no DELTA: line.
// Errors read "line N: what is wrong" with N counted in body.
func ParseDelta(body string) (d Delta, found bool, err error) { panic("unimplemented") }

// Sanitize makes text safe to paste into a pane: invalid UTF-8 becomes U+FFFD; CRLF and lone CR
// become LF; whole escape sequences (CSI, OSC/DCS/SOS/PM/APC up to BEL or ST, any other ESC pair, a
// trailing ESC) are removed; every other C0 control except LF and TAB, DEL and C1 (U+0080-U+009F)
// are removed; TAB becomes 4 spaces; bidi overrides U+202A-U+202E and U+2066-U+2069 are removed.
// When keepNewlines is false, LF becomes a space as well. The request file keeps the original bytes;
// only what reaches a pane goes through here.
func Sanitize(s string, keepNewlines bool) string { panic("unimplemented") }

// SanitizeField is Sanitize without newlines, for single-line fields (paths, ids) put on a line
// that is pasted, so a worker-controlled field cannot inject keys.
func SanitizeField(s string) string { panic("unimplemented") }
