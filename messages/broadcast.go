package messages

// A broadcast is one send to several panes: its id, its record's schema, the target list a send
// takes (several targets, comma-separated, @group) and the names of the settings' groups.

import (
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"
)

// BroadcastPrefix starts every broadcast id, so that a reference tells a broadcast from an
// exchange (YYYYMMDD-HHMMSS-xxxx) by its first characters.
const BroadcastPrefix = "bc-"

// broadcastHex is the number of random hex digits of a broadcast id: 32 bits, since every id of
// the same second is claimed with O_EXCL anyway and a longer one only costs columns.
const broadcastHex = 8

// NewBroadcastID returns "bc-YYYYMMDD-HHMMSS-xxxxxxxx" for now, with random bits read from r.
func NewBroadcastID(now time.Time, r io.Reader) (string, error) {
	var b [broadcastHex / 2]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("read random bytes for a broadcast id: %w", err)
	}
	id := BroadcastPrefix + now.Format(StampLayout) + "-" + hex.EncodeToString(b[:])
	if err := ValidBroadcastID(id); err != nil {
		return "", fmt.Errorf("make a broadcast id for %s; check the system clock: %w", now, err)
	}
	return id, nil
}

// IsBroadcastID reports whether s is written as a broadcast id (its prefix); ValidBroadcastID
// checks the rest.
func IsBroadcastID(s string) bool { return strings.HasPrefix(s, BroadcastPrefix) }

// ValidBroadcastID reports whether s is a broadcast id: "bc-" then an exchange id's form with
// exactly 8 hex digits. It names a file under the root, so nothing else passes.
func ValidBroadcastID(s string) error {
	rest, ok := strings.CutPrefix(s, BroadcastPrefix)
	if !ok || len(rest) != len(StampLayout)+1+broadcastHex || ValidID(rest) != nil {
		return syntaxf("broadcast id %s is not bc-YYYYMMDD-HHMMSS-xxxxxxxx (8 lowercase hex digits after the stamp)", quote(s))
	}
	return nil
}

// Broadcast is the record of one broadcast (ROOT/.broadcasts/ID.json): who sent it, to which
// targets, and which exchange each one got. Each exchange's log names the broadcast too, so the
// record is a hint that a scan of the exchanges can stand in for.
type Broadcast struct {
	ID      string            `json:"id"`
	From    PaneID            `json:"from"`
	At      time.Time         `json:"at"`
	Members []BroadcastMember `json:"members"`
}

// BroadcastMember is one target of a broadcast and what its send became.
type BroadcastMember struct {
	// Target is the target as the send named it, a group's member expanded ("codex", "%3",
	// "gpu1:claude").
	Target string `json:"target"`
	// Pane is the pane it resolved to here; for a worker on another host, its pane there once
	// the host has said it.
	Pane PaneID `json:"pane,omitempty"`
	Host string `json:"host,omitempty"`
	// Exchange is the id of the member's exchange, Session and Seq where its request is; all
	// empty when its send failed before the request was written (Error says why).
	Exchange string `json:"exchange,omitempty"`
	Session  string `json:"session,omitempty"`
	Seq      int    `json:"seq,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Label is how output names a member: its pane, with its host for a worker on another host.
func (m BroadcastMember) Label() string {
	if m.Host != "" {
		return m.Host + ":" + string(m.Pane)
	}
	return string(m.Pane)
}

// maxTargets bounds one send's targets: far more than the fleets of 20 or 30 agents that
// orchestrators run, and few enough that a mistaken list cannot start thousands of deliveries.
const maxTargets = 256

// SplitTargets reads a send's targets: each given value may hold several, separated by commas
// ("%3,codex,gpu1:%2"); spaces around each are dropped. An empty one ("%3,,%4", a trailing comma)
// is an error: it is a typo, not a target.
func SplitTargets(given []string) ([]string, error) {
	var out []string
	for _, g := range given {
		for _, t := range strings.Split(g, ",") {
			t = strings.TrimSpace(t)
			if t == "" {
				return nil, syntaxf("target list %s holds an empty target; separate targets with one comma", quote(g))
			}
			if strings.ContainsFunc(t, func(r rune) bool { return r < 0x20 || r == 0x7f || r == ' ' || r == '\t' }) {
				return nil, syntaxf("target %s holds a space or a control character", quote(t))
			}
			out = append(out, t)
			if len(out) > maxTargets {
				return nil, syntaxf("more than %d targets in one send", maxTargets)
			}
		}
	}
	return out, nil
}

// GroupName returns the group a target names ("@reviewers" names "reviewers"), ok false for any
// other target.
func GroupName(target string) (string, bool) { return strings.CutPrefix(target, "@") }

// ValidGroupName reports whether s may name a group of the settings: a lowercase letter or digit,
// then letters, digits, '_' and '-', at most 64 in all; it follows '@' in a target list, so
// neither commas nor colons can be part of it.
func ValidGroupName(s string) error {
	ok := s != "" && len(s) <= 64 && isLowerAlnum(s[0])
	for i := 1; ok && i < len(s); i++ {
		ok = isLowerAlnum(s[i]) || s[i] == '_' || s[i] == '-'
	}
	if !ok {
		return fmt.Errorf("group name %s: use lowercase letters, digits, '_' and '-' (at most 64, starting with a letter or digit)", quote(s))
	}
	return nil
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
