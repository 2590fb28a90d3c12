package messages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"
)

// MailKind says what a piece of mail carries to its pane.
type MailKind string

// The kinds of mail: every message wcomm types into a pane goes through a pane's outbox as one.
const (
	MailRequest  MailKind = "request"  // a request, to its worker
	MailResponse MailKind = "response" // the RESPONSE line, to the orchestrator
	MailQuestion MailKind = "question" // QUESTION blocks, to the orchestrator
	MailAnswer   MailKind = "answer"   // an ANSWER block, to the worker that asked
	MailNote     MailKind = "note"     // the person's own words to an agent (a deny's message)
)

// Mail is one message waiting in a pane's outbox (the file queue/ID.json). It is written once and
// never changed: what became of it is a MailOutcome beside it.
type Mail struct {
	ID   string   `json:"id"`
	Kind MailKind `json:"kind"`
	// Pane is the pane it is for; Server the key of that pane's tmux server ("PID-STARTTIME"),
	// Socket the server's socket path, so a deliverer can reach it from anywhere.
	Pane   PaneID `json:"pane"`
	Server string `json:"server"`
	Socket string `json:"socket,omitempty"`
	From   PaneID `json:"from,omitempty"`
	// Session and Seq name the exchange (request, response); Question the question (question,
	// answer: the first of a relayed group).
	Session  string   `json:"session,omitempty"`
	Seq      int      `json:"seq,omitempty"`
	Exchange string   `json:"exchange,omitempty"` // the exchange's id
	Question []string `json:"questions,omitempty"`
	// Text is the message as the pane's reader gets it: the RESPONSE line, the QUESTION or
	// ANSWER block. A request's text is made from its file when it is delivered. Summary is the
	// one line an interactive shell gets instead (made inert when typed).
	Text    string `json:"text,omitempty"`
	Summary string `json:"summary,omitempty"`
	// Agent forces the delivery profile (send --agent).
	Agent string `json:"agent,omitempty"`
	// Held says why a request over a loop cap (or from a source held by the settings) waits in
	// the outbox's held folder until a person releases it; HeldKey names what it was held for
	// ("chain-ID", "pair-%N"), so the person is told once per chain or pair, not per message.
	Held     string    `json:"held,omitempty"`
	HeldKey  string    `json:"held_key,omitempty"`
	QueuedAt time.Time `json:"queued_at"`
	Expires  time.Time `json:"expires"`
	// Request is a request's whole text while its sender still holds it, so the sender's own
	// delivery pastes it without reading back the file it just wrote. It is never stored: a
	// deliverer, a hook or an inbox reads the file, which stays the truth.
	Request []byte `json:"-"`
}

// MailOutcome is what became of a piece of mail (the file done/ID.json), written once.
type MailOutcome struct {
	Mail  Mail      `json:"mail"`
	State string    `json:"state"` // delivered, superseded, expired, undeliverable, cancelled
	At    time.Time `json:"at"`
	// Via says how it was delivered: "paste" (typed into the pane and submitted), "hook" (an
	// agent's own hook handed it to the model), "inbox" (read with wcomm inbox).
	Via string `json:"via,omitempty"`
	// With names the other mail delivered in the same paste (coalesced RESPONSE lines).
	With   []string `json:"with,omitempty"`
	Detail string   `json:"detail,omitempty"`
}

// Mail outcome states.
const (
	MailDelivered     = "delivered"
	MailSuperseded    = "superseded" // no longer needed: answered, read by an await, resolved
	MailExpired       = "expired"    // its time to live passed first
	MailUndeliverable = "undeliverable"
	MailCancelled     = "cancelled" // withdrawn by its sender before it was delivered
)

// maxMailFile bounds a mail or outcome file: a RESPONSE line or a few QUESTION blocks.
const maxMailFile = 1 << 20

// NewMailID returns an id that sorts by time: nanoseconds since the epoch, zero-padded, and 4
// random hex digits. Only [0-9a-f-], so it can be a file name and a tmux pane option's value.
func NewMailID(now time.Time, r io.Reader) (string, error) {
	var b [2]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("mail id: %w", err)
	}
	return fmt.Sprintf("%020d-%02x%02x", now.UnixNano(), b[0], b[1]), nil
}

// ValidMailID checks a mail id's form (as NewMailID makes it).
func ValidMailID(s string) error {
	if len(s) != 25 || s[20] != '-' || !isLowerHex(s[21:]) {
		return syntaxf("mail id %s is not NNNNNNNNNNNNNNNNNNNN-hhhh", quote(s))
	}
	if _, err := strconv.ParseUint(s[:20], 10, 64); err != nil {
		return syntaxf("mail id %s is not NNNNNNNNNNNNNNNNNNNN-hhhh", quote(s))
	}
	return nil
}

// Validate checks what a deliverer relies on: the id, the kind, the pane, the server.
func (m Mail) Validate() error {
	if err := ValidMailID(m.ID); err != nil {
		return err
	}
	switch m.Kind {
	case MailRequest, MailResponse, MailQuestion, MailAnswer, MailNote:
	default:
		return syntaxf("mail kind %s is not request, response, question, answer or note", quote(string(m.Kind)))
	}
	if _, err := ParsePaneID(string(m.Pane)); err != nil {
		return err
	}
	if m.Server == "" {
		return syntaxf("mail has no server")
	}
	if (m.Kind == MailRequest || m.Kind == MailResponse) && (m.Seq <= 0 || m.Session == "") {
		return syntaxf("%s mail names no exchange", m.Kind)
	}
	if (m.Kind == MailQuestion || m.Kind == MailAnswer) && len(m.Question) == 0 {
		return syntaxf("%s mail names no question", m.Kind)
	}
	return nil
}

// FormatMail encodes a piece of mail as its file holds it.
func FormatMail(m Mail) []byte {
	data, _ := json.Marshal(m) // a struct of strings, numbers and times always encodes
	return append(data, '\n')
}

// ParseMail decodes and validates a mail file, refusing unknown fields.
func ParseMail(data []byte) (Mail, error) {
	var m Mail
	if err := decodeStrictJSON(data, &m); err != nil {
		return Mail{}, err
	}
	return m, m.Validate()
}

// FormatMailOutcome encodes an outcome as its file holds it.
func FormatMailOutcome(o MailOutcome) []byte {
	data, _ := json.Marshal(o)
	return append(data, '\n')
}

// ParseMailOutcome decodes and validates an outcome file.
func ParseMailOutcome(data []byte) (MailOutcome, error) {
	var o MailOutcome
	if err := decodeStrictJSON(data, &o); err != nil {
		return MailOutcome{}, err
	}
	switch o.State {
	case MailDelivered, MailSuperseded, MailExpired, MailUndeliverable, MailCancelled:
	default:
		return MailOutcome{}, syntaxf("mail outcome %s is not delivered, superseded, expired, undeliverable or cancelled", quote(o.State))
	}
	return o, o.Mail.Validate()
}

// decodeStrictJSON decodes one JSON object, bounded, with no unknown fields and nothing after it.
func decodeStrictJSON(data []byte, v any) error {
	if len(data) > maxMailFile {
		return syntaxf("%d bytes, more than the %d a mail file holds", len(data), maxMailFile)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return syntaxf("%v", err)
	}
	if dec.More() {
		return syntaxf("text after the JSON object")
	}
	return nil
}
