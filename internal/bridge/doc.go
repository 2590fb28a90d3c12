// Package bridge carries workers' questions out to chat services and their answers back: the
// answer channels (Telegram, Slack, a webhook) that 'wcomm bridge' runs. It owns the bridge's
// lock and state in the root's .bridge folder, one per channel configuration (what it posted
// where, what a service refused, the answer under way), the channels' clients, what a post may
// hold on each service, and the rules of who may answer which question (own.go: a bridge serves
// only the questions asked where its channels applied); it decides nothing about questions
// itself: every answer goes through the engine's Answer, the path 'wcomm answer' takes, so the
// first valid answer from any channel wins and a later one is told it is stale.
//
// The hub (hub.go) hears of a question's change from the engine's feed (the watch room's
// Follow) and makes a full look every two seconds (look.go); channels read it (lookup.go,
// status.go), give it answers (answer.go), and post and take in their own goroutines
// (outbound.go).
//
// No inbound listener: Telegram is read by long polling, Slack through Socket Mode (an outgoing
// websocket), and the webhook only posts. The bridges of one Telegram bot (several roots, or
// several channel configurations naming it) share its updates: one of them polls and hands each
// update to the bridge it belongs to, over unix sockets in a private folder of the user's
// runtime folder (share.go).
package bridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
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
	// Permission is set on an agent's permission prompt: what it asks leave for.
	Permission *Permission `json:"permission,omitempty"`
}

// Permission is an agent's permission prompt as a channel shows it.
type Permission struct {
	Agent   string `json:"agent"`
	Pane    string `json:"pane"`
	Tool    string `json:"tool"`
	Subject string `json:"subject"` // the command or file, whole: a post fits it
	Always  string `json:"always,omitempty"`
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
	case o.Source == questions.SourceTerminal:
		return "answered at the terminal: " + o.Answer
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

// RefusedError is a service's permanent refusal of one post (a text or a button it does not
// take): the same post would be refused again, so the bridge records it, tells the log, and goes
// on with the other questions instead of trying it for ever.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }

// Unwrap returns the refusal.
func (e *RefusedError) Unwrap() error { return e.Err }

// isRefused reports whether err is a permanent refusal of the post.
func isRefused(err error) bool {
	var re *RefusedError
	return errors.As(err, &re)
}

// refusesPost reports whether an HTTP status refuses the request itself for good: a 4xx, but
// not 429 (try later), 408 (timed out) or those that say the channel is wrong (401, 403, 404:
// the token or the address), which every post would get until the settings are fixed.
func refusesPost(code int) bool {
	switch code {
	case 401, 403, 404, 408, 429:
		return false
	}
	return code >= 400 && code < 500
}
