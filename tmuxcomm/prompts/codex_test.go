package prompts

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// A command's approval as Codex 0.169.0 asks it: accept, a lasting execpolicy rule, or cancel.
var touchApproval = door.CodexApproval{RequestID: "0", Kind: door.CodexCommand, ThreadID: "th-1", ItemID: "call_2",
	Reason: "scripted test needs to write", Command: "touch x", Shell: "/bin/bash -lc 'touch x'", Cwd: "/w",
	Decisions: []string{"accept", "acceptWithExecpolicyAmendment", "cancel"}}

func TestCodexRequest(t *testing.T) {
	req := codexRequest(touchApproval, 4242)
	assert.Equal(t, "codex", req.Agent)
	assert.Equal(t, "Bash", req.Tool)
	assert.Equal(t, "touch x", req.Subject)
	assert.Equal(t, "scripted test needs to write", req.Description)
	assert.Equal(t, "/w", req.Cwd)
	assert.Equal(t, 4242, req.PID)
	assert.Equal(t, []string{messages.PermAllow, messages.PermDeny}, req.Answers, "a lasting rule is broader than always")
	q := messages.PermissionQuestion(req, "%3").Normalized()
	require.NoError(t, q.Validate())

	session := touchApproval
	session.Decisions = append(session.Decisions, door.CodexAcceptForSession)
	assert.Empty(t, codexRequest(session, 1).Answers, "a session rule offered: all three answers")

	file := door.CodexApproval{Kind: door.CodexFileChange, Files: []string{"/w/a.go", "/w/b.go"}, Reason: "edit"}
	req = codexRequest(file, 1)
	assert.Equal(t, "Edit", req.Tool)
	assert.Equal(t, "/w/a.go\n/w/b.go", req.Subject)
	assert.Equal(t, "a change of files", codexRequest(door.CodexApproval{Kind: door.CodexFileChange}, 1).Subject)
}

func TestCodexDecision(t *testing.T) {
	session := touchApproval
	session.Decisions = append(session.Decisions, door.CodexAcceptForSession)
	for _, tt := range []struct {
		answer string
		a      door.CodexApproval
		want   string
	}{
		{messages.PermAllow, touchApproval, door.CodexAccept},
		{messages.PermDeny, touchApproval, door.CodexDecline},
		{messages.PermAlways, session, door.CodexAcceptForSession},
		{messages.PermAlways, touchApproval, door.CodexAccept}, // never a lasting rule
	} {
		assert.Equal(t, tt.want, codexDecision(tt.answer, tt.a), "%s", tt.answer)
	}
}

func TestCodexApplied(t *testing.T) {
	for _, tt := range []struct {
		name     string
		decision string
		out      door.CodexOutcome
		applied  bool
		why      string
	}{
		{"accepted, the command runs", "accept", door.CodexOutcome{Resolved: true, Sent: "accept"}, true, ""},
		{"accepted and done", "accept", door.CodexOutcome{Resolved: true, Sent: "accept", ItemStatus: "completed"}, true, ""},
		{"accepted, the command failed", "accept", door.CodexOutcome{Resolved: true, Sent: "accept", ItemStatus: "failed"}, true, ""},
		{"declined", "decline", door.CodexOutcome{Resolved: true, Sent: "decline", ItemStatus: "declined"}, true, ""},
		{"never resolved", "accept", door.CodexOutcome{Sent: "accept"}, false, "not known"},
		{"the TUI first", "accept", door.CodexOutcome{Resolved: true, ResolvedFirst: true, ItemStatus: "declined"}, false, "Codex keeps that answer"},
		{"crossed: accept sent, declined in the TUI", "accept", door.CodexOutcome{Resolved: true, Sent: "accept", ItemStatus: "declined"}, false, "did not run"},
		{"crossed: decline sent, accepted in the TUI", "decline", door.CodexOutcome{Resolved: true, Sent: "decline", ItemStatus: "completed"}, false, "the command ran"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			applied, why := codexApplied(tt.decision, tt.out)
			assert.Equal(t, tt.applied, applied)
			if tt.why != "" {
				assert.Contains(t, why, tt.why)
			}
		})
	}
}

// fakeState is a follower's view of one request, changed by the test.
type fakeState struct {
	mu      sync.Mutex
	out     door.CodexOutcome
	changed chan struct{}
	done    chan struct{}
}

func newFakeState() *fakeState {
	return &fakeState{changed: make(chan struct{}), done: make(chan struct{})}
}

func (f *fakeState) set(out door.CodexOutcome) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.out = out
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeState) Done() <-chan struct{} { return f.done }
func (f *fakeState) Err() error            { return errors.New("connection lost") }
func (f *fakeState) Outcome(door.CodexApproval) (door.CodexOutcome, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.out, f.changed
}

func TestCodexTerminal(t *testing.T) {
	tests := []struct {
		name  string
		out   door.CodexOutcome
		after string // the state once resolved
	}{
		{"yes in the TUI: the command ran", door.CodexOutcome{Resolved: true, ResolvedFirst: true, ItemStatus: "completed"}, "busy"},
		{"yes in the TUI: the command still runs", door.CodexOutcome{Resolved: true, ResolvedFirst: true, ResolvedAt: time.Now().Add(-time.Second)}, "busy"},
		{"Esc in the TUI", door.CodexOutcome{Resolved: true, ResolvedFirst: true, ItemStatus: "declined"}, "idle"},
		{"resolved a moment ago, the item's status not yet come", door.CodexOutcome{Resolved: true, ResolvedFirst: true, ResolvedAt: time.Now()}, questions.StatusWaiting},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newFakeState()
			term := &codexTerminal{fl: st, a: touchApproval}
			state, _, err := term.Status()
			require.NoError(t, err)
			assert.Equal(t, questions.StatusWaiting, state, "pending")
			st.set(tt.out)
			state, _, err = term.Status()
			require.NoError(t, err)
			assert.Equal(t, tt.after, state)
		})
	}
	t.Run("answered before the first look: still seen as an answer", func(t *testing.T) {
		st := newFakeState()
		st.set(door.CodexOutcome{Resolved: true, ResolvedFirst: true, ItemStatus: "declined"})
		term := &codexTerminal{fl: st, a: touchApproval}
		state, _, _ := term.Status()
		assert.Equal(t, questions.StatusWaiting, state, "the dialog was waiting when it came")
		state, _, _ = term.Status()
		assert.Equal(t, "idle", state)
	})
	t.Run("the connection lost", func(t *testing.T) {
		st := newFakeState()
		close(st.done)
		_, _, err := (&codexTerminal{fl: st, a: touchApproval}).Status()
		assert.Error(t, err, "nothing is known: not an answer")
	})
}

// After a reply the sentry waits for what Codex says of it: resolved, and a decline's item status.
func TestCodexSettled(t *testing.T) {
	st := newFakeState()
	got := make(chan door.CodexOutcome, 1)
	go func() { got <- codexSettled(context.Background(), st, touchApproval, door.CodexDecline) }()
	st.set(door.CodexOutcome{Sent: "decline", Resolved: true})
	select {
	case out := <-got:
		t.Fatalf("settled before the decline's item status: %+v", out)
	case <-time.After(50 * time.Millisecond): // the waiter had its chance to return early
	}
	st.set(door.CodexOutcome{Sent: "decline", Resolved: true, ItemStatus: "declined"})
	select {
	case out := <-got:
		assert.Equal(t, "declined", out.ItemStatus)
	case <-time.After(5 * time.Second):
		t.Fatal("not settled")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := codexSettled(ctx, newFakeState(), touchApproval, door.CodexAccept)
	assert.False(t, out.Resolved, "an ended context returns what is known")
}
