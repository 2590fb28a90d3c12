package settings

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
)

// Loops bound what agents send each other, so that two agents told to answer each other cannot
// do so forever (an overnight run of one such pair counted 398 messages). A request sent by a pane
// while it handles another is chained to it (messages.RequestHeader's chain and depth); a chained
// request over a cap is held in its receiver's outbox for a person to release, never dropped.
// Inbound says per source what happens to a request before the caps: accept (the caps apply),
// hold, or refuse (the sender gets an error, the receiver nothing), as the agents' own
// crossSessionInbound settings do for their sessions.
type Loops struct {
	// Rate chained requests one pane may send another per Per; 0: no cap.
	Rate int           `json:"rate"`
	Per  time.Duration `json:"per"`
	// ChainDepth is the deepest a chain may go; 0: no cap.
	ChainDepth int `json:"chain_depth"`
	// Inbound are the per-source policies, the first that matches applies (default accept).
	Inbound []InboundRule `json:"inbound,omitempty"`
}

// InboundRule is one per-source policy: From is a pattern (path.Match) of the sender's pane id
// ("%3"), its session:window.pane ("work:1.*"), its agent ("codex"), or for a request relayed here
// from another host, "relayed:" and that host's pane id ("relayed:*").
type InboundRule struct {
	From   string `json:"from"`
	Policy string `json:"policy"`
}

// The inbound policies.
const (
	PolicyAccept = "accept"
	PolicyHold   = "hold"
	PolicyRefuse = "refuse"
)

// DefaultLoops are the caps without settings: 20 chained requests per pair in 10 minutes, and a
// chain 10 deep. A person's own dispatch (a request from a pane handling none) is never capped.
func DefaultLoops() Loops { return Loops{Rate: 20, Per: 10 * time.Minute, ChainDepth: 10} }

// loopsFile is the loops block.
type loopsFile struct {
	Rate       *string       `yaml:"rate"`
	ChainDepth *int          `yaml:"chain_depth"`
	Inbound    []InboundRule `yaml:"inbound"`
}

// resolve applies the block over l.
func (f loopsFile) resolve(l Loops) (Loops, error) {
	if f.Rate != nil {
		n, per, err := ParseRate(*f.Rate)
		if err != nil {
			return l, fmt.Errorf("rate: %w", err)
		}
		l.Rate, l.Per = n, per
	}
	if f.ChainDepth != nil {
		if *f.ChainDepth < 0 {
			return l, fmt.Errorf("chain_depth is %d; want 0 (no cap) or more", *f.ChainDepth)
		}
		l.ChainDepth = *f.ChainDepth
	}
	if f.Inbound != nil {
		for i, r := range f.Inbound {
			if strings.TrimSpace(r.From) == "" {
				return l, fmt.Errorf("inbound[%d]: no from: name a pane (%%3), an agent (codex) or relayed:* (requests from other hosts)", i)
			}
			if _, err := path.Match(r.From, ""); err != nil {
				return l, fmt.Errorf("inbound[%d]: from %q is not a pattern: %w", i, r.From, err)
			}
			switch r.Policy {
			case PolicyAccept, PolicyHold, PolicyRefuse:
			default:
				return l, fmt.Errorf("inbound[%d]: policy %q is not accept, hold or refuse", i, r.Policy)
			}
		}
		l.Inbound = f.Inbound
	}
	return l, nil
}

// ParseRate reads "N/DURATION" ("20/10m"); "0" or "off" is no cap.
func ParseRate(s string) (n int, per time.Duration, err error) {
	s = strings.TrimSpace(s)
	if s == "0" || s == "off" {
		return 0, 0, nil
	}
	num, window, ok := strings.Cut(s, "/")
	if ok {
		n, err = strconv.Atoi(strings.TrimSpace(num))
	}
	if ok && err == nil {
		per, err = time.ParseDuration(strings.TrimSpace(window))
	}
	if !ok || err != nil || n < 1 || per <= 0 {
		return 0, 0, fmt.Errorf("%q is not requests per window such as 20/10m (or off)", s)
	}
	return n, per, nil
}
