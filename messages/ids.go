package messages

import (
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// PaneID is a tmux pane id such as "%7". Pane ids are only unique for one server's lifetime.
type PaneID string

// maxPaneDigits keeps pane numbers far below int overflow; tmux counts panes from 0 per server.
const maxPaneDigits = 9

// ParsePaneID accepts "%N" (N a decimal number without sign, at most 9 digits) and returns it;
// anything else is an ErrSyntax error naming the input.
func ParsePaneID(s string) (PaneID, error) {
	if !strings.HasPrefix(s, "%") || !canonicalNumber(s[1:], maxPaneDigits) {
		return "", syntaxf("pane id %s is not %%N (a tmux pane id such as %%7, as in $TMUX_PANE)", quote(s))
	}
	return PaneID(s), nil
}

// canonicalNumber reports whether s is 1 to max decimal digits without a leading zero (except
// "0" itself). Leading zeros are refused because tmux never prints them: "%07" and "%7" would
// name one pane with two spellings, and a session folder "o07" would not be Name's "o7".
func canonicalNumber(s string, max int) bool {
	if s == "" || len(s) > max || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Num returns N of "%N" (-1 for an invalid id). Folder names use N without the percent sign.
func (p PaneID) Num() int {
	if _, err := ParsePaneID(string(p)); err != nil {
		return -1
	}
	n, err := strconv.Atoi(string(p[1:]))
	if err != nil {
		return -1
	}
	return n
}

// ValidStamp reports whether s is a YYYYMMDD-HHMMSS stamp (digits only, a real calendar time).
func ValidStamp(s string) error {
	ok := len(s) == len(StampLayout)
	for i := 0; ok && i < len(s); i++ {
		if i == 8 {
			ok = s[i] == '-'
		} else {
			ok = s[i] >= '0' && s[i] <= '9'
		}
	}
	if !ok {
		return syntaxf("stamp %s is not YYYYMMDD-HHMMSS (digits, as made by date +%%Y%%m%%d-%%H%%M%%S)", quote(s))
	}
	// time.Parse checks the ranges (month 13, 30 February, hour 24 fail) that the digit test cannot.
	if _, err := time.Parse(StampLayout, s); err != nil {
		return syntaxf("stamp %s is not a real date and time: %v", quote(s), err)
	}
	return nil
}

// ValidID reports whether s is a request id: YYYYMMDD-HHMMSS-xxxx, x lowercase hex, 4 to 16 of them.
// Ids reach file names and tmux buffer names, so nothing else passes.
func ValidID(s string) error {
	n := len(StampLayout)
	if len(s) < n+1+4 || len(s) > n+1+16 || s[n] != '-' || !isLowerHex(s[n+1:]) {
		return syntaxf("id %s is not YYYYMMDD-HHMMSS-xxxx (4 to 16 lowercase hex digits after the stamp)", quote(s))
	}
	if err := ValidStamp(s[:n]); err != nil {
		return syntaxf("id %s: %v", quote(s), err)
	}
	return nil
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// NewID returns "YYYYMMDD-HHMMSS-xxxx" for now (in now's location) with 2 random bytes from r as hex.
func NewID(now time.Time, r io.Reader) (string, error) {
	var b [2]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("read 2 random bytes for a request id: %w", err)
	}
	id := now.Format(StampLayout) + "-" + hex.EncodeToString(b[:])
	// A year outside 0000-9999 formats to a stamp that ValidStamp refuses; say so here rather
	// than write an id that every reader rejects.
	if err := ValidID(id); err != nil {
		return "", fmt.Errorf("make a request id for %s; check the system clock: %w", now, err)
	}
	return id, nil
}

// Capability is what a worker may do for a request.
type Capability string

// The two capabilities a request grants its worker.
const (
	ReadOnly Capability = "READONLY"
	Writable Capability = "WRITABLE"
)

// ParseCapability accepts READONLY or WRITABLE (case-insensitive) and returns the canonical form.
func ParseCapability(s string) (Capability, error) {
	switch {
	case strings.EqualFold(s, string(ReadOnly)):
		return ReadOnly, nil
	case strings.EqualFold(s, string(Writable)):
		return Writable, nil
	}
	return "", syntaxf("capability %s is neither READONLY nor WRITABLE", quote(s))
}

// Session names one orchestrator/worker pair's folder: "{StartedAt}-o{N}-w{M}".
type Session struct {
	StartedAt    string
	Orchestrator PaneID
	Worker       PaneID
}

// Name returns the folder name, e.g. "20260117-155000-o6-w7".
func (s Session) Name() string {
	return s.StartedAt + "-o" + strconv.Itoa(s.Orchestrator.Num()) + "-w" + strconv.Itoa(s.Worker.Num())
}

// ParseSessionName parses a folder name made by Name. It refuses anything else (including
// "..", slashes, and extra suffixes), so a parsed name is always safe to join to the root.
func ParseSessionName(name string) (Session, error) {
	bad := func(what string) (Session, error) {
		return Session{}, syntaxf("session folder name %s %s (want YYYYMMDD-HHMMSS-oN-wM such as 20260117-155000-o6-w7)", quote(name), what)
	}
	n := len(StampLayout)
	if len(name) < n || ValidStamp(name[:n]) != nil {
		return bad("does not start with a YYYYMMDD-HHMMSS stamp")
	}
	rest, ok := strings.CutPrefix(name[n:], "-o")
	if !ok {
		return bad("has no -o after the stamp")
	}
	orch, worker, ok := strings.Cut(rest, "-w")
	if !ok {
		return bad("has no -w")
	}
	o, err := ParsePaneID("%" + orch)
	if err != nil {
		return bad("has a bad orchestrator pane number")
	}
	w, err := ParsePaneID("%" + worker)
	if err != nil {
		return bad("has a bad worker pane number")
	}
	return Session{StartedAt: name[:n], Orchestrator: o, Worker: w}, nil
}

// BufferName returns the seed's shared buffer name for a pair, "msg-o{N}-w{M}". wcomm itself uses a
// unique buffer per delivery; this name appears only in the plain-tmux fallback instructions.
func (s Session) BufferName() string {
	return "msg-o" + strconv.Itoa(s.Orchestrator.Num()) + "-w" + strconv.Itoa(s.Worker.Num())
}

// Kind is the kind of a sequenced file in a session folder.
type Kind string

// The sequenced file kinds.
const (
	KindRequest  Kind = "request"
	KindResponse Kind = "response"
)

// SeqFileName returns "NNN-request.md" / "NNN-response.md", N zero-padded to at least 3 digits.
func SeqFileName(n int, k Kind) string {
	return fmt.Sprintf("%03d-%s.md", n, k)
}

// AwaitLockName names the file every await waiting on exchange n holds a shared flock on: the
// exchange's request file itself, so that no lock file is made per exchange (a new file costs
// an inode, and inode allocation was a large part of a round trip's CPU). notify tests it: when
// an await is waiting, the await is the orchestrator's signal and no RESPONSE line is pasted.
func AwaitLockName(n int) string { return SeqFileName(n, KindRequest) }

// maxSeqDigits bounds sequence numbers far below int overflow.
const maxSeqDigits = 9

// ParseSeqFileName parses a name made by SeqFileName (3 or more digits, n >= 1). ok is false for
// any other name.
func ParseSeqFileName(name string) (n int, k Kind, ok bool) {
	num, kind, found := strings.Cut(name, "-")
	if !found || len(num) < 3 || len(num) > maxSeqDigits {
		return 0, "", false
	}
	switch kind {
	case string(KindRequest) + ".md":
		k = KindRequest
	case string(KindResponse) + ".md":
		k = KindResponse
	default:
		return 0, "", false
	}
	for i := 0; i < len(num); i++ {
		if num[i] < '0' || num[i] > '9' {
			return 0, "", false
		}
	}
	n, err := strconv.Atoi(num)
	// Only SeqFileName's own spelling passes ("0001-request.md" does not), so a file name and
	// its number map one to one: three digits at least, zeros only to pad to three. Told without
	// formatting the name again: a history parses every name of every session folder.
	if err != nil || n < 1 || (len(num) > 3 && num[0] == '0') {
		return 0, "", false
	}
	return n, k, true
}
