package door

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// follow finds the fake TUI's thread and follows it until the test ends.
func follow(t *testing.T, s *fakeAppServer) *CodexFollower {
	t.Helper()
	f := s.finder()
	fd := f.FindFor(context.Background(), CodexAppServer, "%3", []int{s.pid})
	require.True(t, fd.UsesSocket(), fd.Why)
	fl, err := f.FollowCodex(context.Background(), fd)
	require.NoError(t, err)
	t.Cleanup(fl.Close)
	return fl
}

// nextApproval is the follower's next approval, within a bound.
func nextApproval(t *testing.T, fl *CodexFollower) CodexApproval {
	t.Helper()
	select {
	case a := <-fl.Approvals():
		return a
	case <-fl.Done():
		t.Fatalf("the follower stopped: %v", fl.Err())
	case <-time.After(5 * time.Second):
		t.Fatal("no approval reached the follower")
	}
	return CodexApproval{}
}

// outcomeWhen waits, within a bound, for a's outcome to satisfy ok.
func outcomeWhen(t *testing.T, fl *CodexFollower, a CodexApproval, ok func(CodexOutcome) bool) CodexOutcome {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		out, changed := fl.Outcome(a)
		if ok(out) {
			return out
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("the outcome stayed %+v", out)
		}
	}
}

func TestCodexFollowAnswersAnApproval(t *testing.T) {
	for _, tt := range []struct{ decision, status string }{{CodexAccept, "completed"}, {CodexDecline, "declined"}} {
		t.Run(tt.decision, func(t *testing.T) {
			s := newFakeAppServer(t)
			fl := follow(t, s)
			var resume resumeParams
			for _, c := range s.logged() {
				if c.Method == "thread/resume" {
					require.NoError(t, json.Unmarshal(c.Params, &resume))
				}
			}
			assert.Equal(t, resumeParams{ThreadID: "th-mine", ExcludeTurns: true}, resume, "resumed without its history")

			id := s.ask(codexCommandApproval, commandApproval("th-mine", "call_2", "touch x"))
			a := nextApproval(t, fl)
			assert.Equal(t, CodexCommand, a.Kind)
			assert.Equal(t, "touch x", a.Command, "the command as the model gave it")
			assert.Equal(t, "/bin/bash -lc 'touch x'", a.Shell)
			assert.Equal(t, "scripted test needs to write", a.Reason)
			assert.Equal(t, "/home/u/project", a.Cwd)
			assert.Equal(t, "call_2", a.ItemID)
			assert.Equal(t, []string{"accept", "acceptWithExecpolicyAmendment", "cancel"}, a.Decisions)
			assert.False(t, a.Offers(CodexAcceptForSession), "no session rule offered")

			require.NoError(t, fl.Answer(context.Background(), a, tt.decision))
			out := outcomeWhen(t, fl, a, func(o CodexOutcome) bool { return o.ItemStatus != "" })
			assert.True(t, out.Resolved)
			assert.False(t, out.ResolvedFirst, "resolved by this answer")
			assert.Equal(t, tt.decision, out.Sent)
			assert.Equal(t, tt.status, out.ItemStatus)
			assert.Equal(t, tt.decision == CodexAccept, out.Ran())
			assert.Equal(t, []string{`{"id":` + jsonInt(id) + `,"result":{"decision":"` + tt.decision + `"}}`}, s.clientReplies())

			err := fl.Answer(context.Background(), a, CodexAccept)
			assert.ErrorIs(t, err, ErrCodexResolved, "answered once")
			assert.Len(t, s.clientReplies(), 1)
		})
	}
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

// A request pending when the follower resumes is replayed to it at once, even ahead of the
// resume's reply.
func TestCodexFollowGetsThePendingRequest(t *testing.T) {
	s := newFakeAppServer(t)
	s.ask(codexCommandApproval, commandApproval("th-mine", "call_1", "touch early"))
	fl := follow(t, s)
	a := nextApproval(t, fl)
	assert.Equal(t, "touch early", a.Command)
}

// The person answers in the TUI first: the follower is told it was resolved, by the item which
// way, and its own answer is not sent.
func TestCodexFollowAnsweredInTheTUI(t *testing.T) {
	for _, tt := range []struct{ decision, status string }{{"accept", "completed"}, {"cancel", "declined"}} {
		t.Run(tt.decision, func(t *testing.T) {
			s := newFakeAppServer(t)
			fl := follow(t, s)
			id := s.ask(codexCommandApproval, commandApproval("th-mine", "call_3", "touch y"))
			a := nextApproval(t, fl)
			s.decide(id, tt.decision)
			out := outcomeWhen(t, fl, a, func(o CodexOutcome) bool { return o.ItemStatus != "" })
			assert.True(t, out.Resolved)
			assert.True(t, out.ResolvedFirst)
			assert.Empty(t, out.Sent)
			assert.Equal(t, tt.status, out.ItemStatus)
			assert.ErrorIs(t, fl.Answer(context.Background(), a, CodexAccept), ErrCodexResolved)
			assert.Empty(t, s.clientReplies(), "nothing sent after the TUI's answer")
		})
	}
}

// The follower's answer crosses the TUI's: the app-server drops it without a word, and the item's
// status says the TUI's answer counted.
func TestCodexFollowAnswerCrossesTheTUIs(t *testing.T) {
	s := newFakeAppServer(t)
	fl := follow(t, s)
	id := s.ask(codexCommandApproval, commandApproval("th-mine", "call_6", "touch z"))
	a := nextApproval(t, fl)
	tell := s.decideQuietly(id, "cancel") // the person pressed Esc; the news is on its way
	require.NoError(t, fl.Answer(context.Background(), a, CodexAccept), "sent: nothing said otherwise yet")
	tell()
	out := outcomeWhen(t, fl, a, func(o CodexOutcome) bool { return o.ItemStatus != "" })
	assert.Equal(t, CodexAccept, out.Sent)
	assert.False(t, out.ResolvedFirst, "resolved after the reply was sent")
	assert.Equal(t, "declined", out.ItemStatus)
	assert.False(t, out.Ran(), "the TUI's answer counted, not this one")
}

func TestCodexFollowIgnoresOtherThreads(t *testing.T) {
	s := newFakeAppServer(t)
	fl := follow(t, s)
	s.ask(codexCommandApproval, commandApproval("th-other", "call_9", "touch other"))
	s.ask(codexCommandApproval, commandApproval("th-mine", "call_4", "touch mine"))
	a := nextApproval(t, fl)
	assert.Equal(t, "touch mine", a.Command, "the other thread's request was not handed out")
}

func TestCodexFollowFileChange(t *testing.T) {
	s := newFakeAppServer(t)
	fl := follow(t, s)
	s.broadcast(map[string]any{"method": "item/started", "params": map[string]any{"threadId": "th-mine",
		"item": map[string]any{"type": "fileChange", "id": "call_5", "status": "inProgress",
			"changes": []any{map[string]any{"path": "/home/u/project/a.go", "kind": map[string]any{"type": "update"}}}}}})
	s.ask(codexFileChangeApproval, map[string]any{"threadId": "th-mine", "turnId": "turn-1", "itemId": "call_5", "reason": "write a.go"})
	a := nextApproval(t, fl)
	assert.Equal(t, CodexFileChange, a.Kind)
	assert.Equal(t, []string{"/home/u/project/a.go"}, a.Files)
	assert.Equal(t, "write a.go", a.Reason)
	assert.Nil(t, a.Decisions, "a file change lists none")
}

// A message into the thread from the follower's own connection: one turn/start, answered.
func TestCodexFollowSays(t *testing.T) {
	s := newFakeAppServer(t)
	fl := follow(t, s)
	require.NoError(t, fl.Say(context.Background(), "the person declined: use the staging folder"))
	var p turnStartParams
	n := 0
	for _, c := range s.logged() {
		if c.Method == "turn/start" {
			n++
			require.NoError(t, json.Unmarshal(c.Params, &p))
		}
	}
	assert.Equal(t, 1, n)
	assert.Equal(t, turnStartParams{ThreadID: "th-mine", Input: []userInput{{Type: "text", Text: "the person declined: use the staging folder"}}}, p)
}

func TestCodexFollowRefused(t *testing.T) {
	t.Run("before the thread's first message", func(t *testing.T) {
		s := newFakeAppServer(t)
		s.resumeErr = "no rollout found for thread id "
		f := s.finder()
		fd := f.FindFor(context.Background(), CodexAppServer, "%3", []int{s.pid})
		require.True(t, fd.UsesSocket(), fd.Why)
		_, err := f.FollowCodex(context.Background(), fd)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no rollout found")
	})
	t.Run("the TUI has exited", func(t *testing.T) {
		s := newFakeAppServer(t)
		f := s.finder()
		fd := f.FindFor(context.Background(), CodexAppServer, "%3", []int{s.pid})
		require.True(t, fd.UsesSocket(), fd.Why)
		f.ProcStart = func(int) (uint64, error) { return 999, nil } // the pid was reused
		_, err := f.FollowCodex(context.Background(), fd)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "has ended")
		assert.NotContains(t, s.methods(), "thread/resume")
	})
	t.Run("not a Codex finding", func(t *testing.T) {
		_, err := Finder{}.FollowCodex(context.Background(), typed("no Codex TUI process in this pane"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no Codex TUI process")
	})
}

// The follower stops when its context ends, and when the app-server goes away.
func TestCodexFollowStops(t *testing.T) {
	t.Run("context", func(t *testing.T) {
		s := newFakeAppServer(t)
		f := s.finder()
		fd := f.FindFor(context.Background(), CodexAppServer, "%3", []int{s.pid})
		ctx, cancel := context.WithCancel(context.Background())
		fl, err := f.FollowCodex(ctx, fd)
		require.NoError(t, err)
		cancel()
		select {
		case <-fl.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the follower did not stop with its context")
		}
		assert.Error(t, fl.Err())
		err = fl.Say(context.Background(), "x")
		assert.ErrorIs(t, err, ErrNotWritten)
	})
	t.Run("connection lost", func(t *testing.T) {
		s := newFakeAppServer(t)
		fl := follow(t, s)
		s.mu.Lock()
		conns := s.conns
		s.mu.Unlock()
		for _, c := range conns {
			c.c.Close()
		}
		select {
		case <-fl.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the follower did not notice the lost connection")
		}
		assert.Error(t, fl.Err())
		_, changed := fl.Outcome(CodexApproval{RequestID: "0"})
		select {
		case <-changed:
		default:
			t.Fatal("a waiter after the end would wait for ever")
		}
		assert.False(t, errors.Is(fl.Err(), context.Canceled))
	})
}

// A write's deadline is lifted after it: a deadline left on the connection would fail the reader's
// answer to the next ping, and the follower with it.
func TestCodexFollowOutlivesAWriteDeadline(t *testing.T) {
	s := newFakeAppServer(t)
	fl := follow(t, s)
	s.ask(codexCommandApproval, commandApproval("th-mine", "call_7", "touch d"))
	a := nextApproval(t, fl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	require.NoError(t, fl.Answer(ctx, a, CodexAccept))
	<-ctx.Done() // the answer's deadline has passed
	s.mu.Lock()
	conns := s.conns
	s.mu.Unlock()
	for _, c := range conns {
		c.mu.Lock()
		_ = c.c.WriteControl(websocket.PingMessage, []byte("p"), time.Now().Add(time.Second))
		c.mu.Unlock()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		pongs := s.pongs
		s.mu.Unlock()
		if pongs > 0 {
			break
		}
		select {
		case <-fl.Done():
			t.Fatalf("the follower stopped: %v", fl.Err())
		case <-time.After(10 * time.Millisecond): // polling the server's count
		}
		require.True(t, time.Now().Before(deadline), "no pong came back")
	}
	require.NoError(t, fl.Say(context.Background(), "still here"))
}
