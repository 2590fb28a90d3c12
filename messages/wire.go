package messages

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sync"
)

// The wire between two wcomm processes on two hosts: the local wcomm runs `VIA... WCOMM __remote`
// (ssh, docker exec, kubectl exec: anything that carries stdin and stdout) and writes one
// WireRequest as a JSON line; the remote wcomm answers with one WireReply line and exits. Both
// carry the version of the wire they speak, so two releases that differ say so instead of
// misreading each other.

// WireVersion is the version of the wire this wcomm speaks. Bump it on any change a peer of the
// previous version would misread.
const WireVersion = 1

// The operations of the wire.
const (
	WireHello = "hello" // the remote's version, binary and root (doctor)
	WireSend  = "send"  // deliver a request under the caller's id (idempotent by id)
	WirePoll  = "poll"  // the responses of these ids that came back
	WirePanes = "panes" // the remote's panes
	WireFind  = "find"  // an agent's pane there
)

// WireRequest is what the local wcomm asks.
type WireRequest struct {
	Version int    `json:"v"`
	Op      string `json:"op"`
	// ID is the exchange's id, chosen by the caller, so that a repeated relay is recognised.
	ID string `json:"id,omitempty"`
	// To is the target there (a pane id or an agent name); From the orchestrator's pane here.
	To         string     `json:"to,omitempty"`
	From       PaneID     `json:"from,omitempty"`
	Capability Capability `json:"capability,omitempty"`
	Agent      string     `json:"agent,omitempty"`
	All        bool       `json:"all,omitempty"`
	First      bool       `json:"first,omitempty"`
	Body       []byte     `json:"body,omitempty"`
	IDs        []string   `json:"ids,omitempty"`
	// NoQueue: the remote fails fast instead of queuing in the pane's outbox there.
	NoQueue bool `json:"no_queue,omitempty"`
	// WaitMS bounds how long a poll waits for a first response (0: it answers at once).
	WaitMS int `json:"wait_ms,omitempty"`
}

// WireReply is the remote's answer. Code is the exit code class of a failure (1 failure, 2 usage,
// 3 timed out, 4 not found or ambiguous).
type WireReply struct {
	Version   int            `json:"v"`
	OK        bool           `json:"ok"`
	Error     string         `json:"error,omitempty"`
	Code      int            `json:"code,omitempty"`
	Exchange  *WireExchange  `json:"exchange,omitempty"`
	Responses []WireResponse `json:"responses,omitempty"`
	Panes     []WirePane     `json:"panes,omitempty"`
	// Binary, Root and Release describe the remote wcomm (hello).
	Binary  string `json:"binary,omitempty"`
	Root    string `json:"root,omitempty"`
	Release string `json:"release,omitempty"`
}

// WireExchange is a relayed request as the remote wrote it.
type WireExchange struct {
	ID           string `json:"id"`
	Worker       PaneID `json:"worker"`
	Target       string `json:"target,omitempty"`
	Agent        string `json:"agent,omitempty"`
	RequestPath  string `json:"request_path"`
	ResponsePath string `json:"response_path"`
	// State is the delivery's state there: submitted, queued ...; Evidence why.
	State    string `json:"state"`
	Evidence string `json:"evidence,omitempty"`
	// Repeated: the id was relayed before; this is the first relay's result, nothing was delivered.
	Repeated bool `json:"repeated,omitempty"`
}

// WireResponse is a response that came back on the remote host.
type WireResponse struct {
	ID   string `json:"id"`
	Body []byte `json:"body"`
}

// WirePane is one pane of the remote host.
type WirePane struct {
	ID      PaneID `json:"id"`
	Target  string `json:"target"`
	Command string `json:"command"`
	Agent   string `json:"agent,omitempty"`
}

// hostNameRE: a host's name in the settings and in HOST:TARGET. No ':' or '/', never a leading
// '-' (it would read as an option to ssh).
var hostNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`) })

// ValidHostName checks a declared host's name.
func ValidHostName(s string) error {
	if !hostNameRE().MatchString(s) {
		return fmt.Errorf("host name %q: use letters, digits, '.', '_' and '-' (at most 64, not starting with '-')", SanitizeField(s))
	}
	return nil
}

// FormatWire encodes v as one JSON line.
func FormatWire(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ParseWireReply decodes one reply line and checks its version against ours: a reply of another
// version is an error naming both.
func ParseWireReply(line []byte) (*WireReply, error) {
	var r WireReply
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, fmt.Errorf("not a wcomm wire reply (%v): %q", err, SanitizeField(string(line[:min(len(line), 120)])))
	}
	return &r, nil
}

// ParseWireRequest decodes one request line.
func ParseWireRequest(line []byte) (*WireRequest, error) {
	var r WireRequest
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, fmt.Errorf("not a wcomm wire request: %v", err)
	}
	return &r, nil
}
