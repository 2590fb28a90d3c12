// Package bridge carries workers' questions out to chat services and their answers back: the
// answer channels (Telegram, Slack, a webhook) that 'wcomm bridge' runs. It owns the bridge's
// lock and state in the root's .bridge folder (what it posted where, the update offsets), the
// channels' clients, and the rules of who may answer; it decides nothing about questions
// itself: every answer goes through the engine's Answer, the path 'wcomm answer' takes, so the
// first valid answer from any channel wins and a later one is told it is stale.
//
// No inbound listener: Telegram is read by long polling, Slack through Socket Mode (an outgoing
// websocket), and the webhook only posts.
package bridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wcomm/wcomm/messages"
)

// Channel is one chat service as the bridge uses it.
type Channel interface {
	// Name is the channel's name, also the source an answer from it records.
	Name() string
	// Post shows a new question and returns a reference to what was posted (a message id).
	Post(ctx context.Context, q Question) (ref string, err error)
	// Close marks a posted question as decided (answered here or elsewhere, resolved, stale), so
	// nobody answers it twice by mistake.
	Close(ctx context.Context, q Question, ref string, how Outcome) error
	// Receive takes answers until ctx ends; an error (the service down) is retried with backoff.
	// A channel that only posts returns nil at once.
	Receive(ctx context.Context) error
	// Check tells whether the token is valid and the chat reachable, without posting anything.
	Check(ctx context.Context) []Check
}

// Question is a pending question as a channel shows it.
type Question struct {
	ID      string                `json:"id"`
	Token   string                `json:"token"` // short, command-safe: tells questions apart in a chat
	Text    string                `json:"question"`
	Context string                `json:"context,omitempty"`
	Type    messages.QuestionType `json:"type"`
	Options []string              `json:"options"`
	Task    string                `json:"task"`
	Worker  string                `json:"worker"`
	Request string                `json:"request,omitempty"` // the request the question is about
	Action  string                `json:"action,omitempty"`  // an approval: the action a yes authorizes
	AskedAt time.Time             `json:"asked_at"`
	// Accepted says in words which answers the question takes.
	Accepted string `json:"accepted"`
}

// Outcome is how a question ended, for Close.
type Outcome struct {
	State  string // answered, auto-answered, resolved, stale, ...
	Answer string
	Source string
	Reason string
}

// Words says the outcome in a few words.
func (o Outcome) Words() string {
	switch {
	case o.Answer != "" && o.Source != "":
		return fmt.Sprintf("%s: %s (source %s)", o.State, o.Answer, o.Source)
	case o.Answer != "":
		return fmt.Sprintf("%s: %s", o.State, o.Answer)
	case o.Reason != "":
		return fmt.Sprintf("%s: %s", o.State, o.Reason)
	}
	return o.State
}

// Check is one line of doctor's report on a channel.
type Check struct {
	Channel string `json:"channel"`
	What    string `json:"what"`
	OK      bool   `json:"ok"`
	Detail  string `json:"detail,omitempty"`
}

// RetryError is a refusal that says when to try again (HTTP 429 with retry_after).
type RetryError struct {
	After time.Duration
	Err   error
}

func (e *RetryError) Error() string {
	return fmt.Sprintf("%v (retry after %s)", e.Err, e.After)
}

// Unwrap returns the refusal.
func (e *RetryError) Unwrap() error { return e.Err }

// retryAfter is how long err asks to wait, 0 when it does not say.
func retryAfter(err error) time.Duration {
	var re *RetryError
	if errors.As(err, &re) {
		return re.After
	}
	return 0
}
