package tmuxcomm

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/tmuxcomm/core/coretest"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// The permission hook's wait hears of an answer, and of the agent's state file changing, from the
// watch room's feed: with the feed's rescan and the wait's own look set to an hour, only the
// file events can end these waits.

// fileTerminal is an agent's state in a file of its own, as Claude Code's session file is.
type fileTerminal struct {
	path  string
	mu    sync.Mutex
	at    int64
	looks map[int64]int // looks at each recorded state
}

func (f *fileTerminal) set(t *testing.T, state string) int64 {
	t.Helper()
	f.mu.Lock()
	f.at++
	at := f.at
	f.mu.Unlock()
	data, err := json.Marshal(map[string]any{"status": state, "at": at})
	require.NoError(t, err)
	tmp := f.path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, data, 0o600))
	require.NoError(t, os.Rename(tmp, f.path))
	return at
}

func (f *fileTerminal) Status() (string, int64, error) {
	data, err := os.ReadFile(f.path)
	if err != nil {
		return "", 0, err
	}
	var s struct {
		Status string
		At     int64
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return "", 0, err
	}
	f.mu.Lock()
	f.looks[s.At]++
	f.mu.Unlock()
	return s.Status, s.At, nil
}

// looked waits until the wait has looked at the state recorded as at.
func (f *fileTerminal) looked(t *testing.T, at int64) {
	t.Helper()
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.looks[at] > 0
	}, 10*time.Second, time.Millisecond, "the wait did not look at the new state: no event woke it")
}

type feedOutcome struct {
	out *questions.PermissionOutcome
	err error
}

func feedResult(t *testing.T, ch <-chan feedOutcome) *questions.PermissionOutcome {
	t.Helper()
	select {
	case r := <-ch:
		require.NoError(t, r.err)
		return r.out
	case <-time.After(10 * time.Second):
		t.Fatal("the hook did not end")
	}
	return nil
}

// stateTerminal is an agent's state in memory, counting the looks at it.
type stateTerminal struct {
	mu    sync.Mutex
	state string
	at    int64
	seen  int
}

func (f *stateTerminal) Status() (string, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen++
	return f.state, f.at, nil
}

// feedHook asks as the agent in %2 and awaits in the background, woken by the feed alone.
func feedHook(t *testing.T, e *Engine, term questions.Terminal, also ...string) (*questions.PermissionWait, <-chan feedOutcome) {
	t.Helper()
	w, _, err := e.as("%2").desk.AskPermission(context.Background(), coretest.PermissionRequest(t))
	require.NoError(t, err)
	t.Cleanup(w.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	fl, err := watch.Follow(ctx, watch.WatchOptions{Session: filepath.Base(w.Question.Dir), Questions: true, Rescan: time.Hour, Also: also}, e.Watch)
	require.NoError(t, err)
	ch := make(chan feedOutcome, 1)
	go func() {
		out, err := w.Await(ctx, questions.AwaitOptions{Terminal: term, Changes: fl.Wake, Poll: time.Hour})
		ch <- feedOutcome{out, err}
	}()
	return w, ch
}

func TestPermissionHookHearsTheAnswerFromTheFeed(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	w, ch := feedHook(t, e, nil)
	_, err := e.as("").Answer(context.Background(), AnswerOptions{AnswerOptions: questions.AnswerOptions{ID: w.Question.ID, Raw: "allow", Source: "telegram"}})
	require.NoError(t, err)
	out := feedResult(t, ch)
	require.NotNil(t, out.Decision, "the answer reached the hook")
	assert.Equal(t, "allow", out.Decision.Behavior)
}

func TestPermissionHookHearsTheTerminalFromTheFeed(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	dir := t.TempDir()
	term := &fileTerminal{path: filepath.Join(dir, "4242.json"), looks: map[int64]int{}}
	first := term.set(t, "busy")
	_, ch := feedHook(t, e, term, dir)
	term.looked(t, first)
	term.looked(t, term.set(t, questions.StatusWaiting)) // the dialog shows
	term.set(t, "busy")                                  // the person allows it in the pane
	out := feedResult(t, ch)
	assert.Nil(t, out.Decision, "the agent took the terminal's answer: nothing to hand back")
	require.NotNil(t, out.Question.Answer)
	assert.Equal(t, questions.SourceTerminal, out.Question.Answer.Source)
	assert.Equal(t, "allow", out.Question.Answer.Answer)
}

// TestFollowReportsQuestionsAndOtherFolders: a follower of one session's questions hears its
// question answered, and an entry written in a folder it was also given, by file events alone.
func TestFollowReportsQuestionsAndOtherFolders(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	w, _, err := e.as("%2").desk.AskPermission(context.Background(), coretest.PermissionRequest(t))
	require.NoError(t, err)
	t.Cleanup(w.Close)
	other := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fl, err := watch.Follow(ctx, watch.WatchOptions{Session: filepath.Base(w.Question.Dir), Questions: true, Rescan: time.Hour, Also: []string{other}}, e.Watch)
	require.NoError(t, err)
	next := func(what string) watch.WatchEvent {
		t.Helper()
		select {
		case ev, ok := <-fl.C:
			require.True(t, ok, "the feed ended: %v", fl.Err())
			return ev
		case <-time.After(10 * time.Second):
			t.Fatalf("no event after %s", what)
		}
		return watch.WatchEvent{}
	}
	_, err = e.as("").Answer(context.Background(), AnswerOptions{AnswerOptions: questions.AnswerOptions{ID: w.Question.ID, Raw: "allow", Source: "telegram"}})
	require.NoError(t, err)
	ev := next("the answer")
	assert.Equal(t, watch.FeedQuestion, ev.Kind)
	assert.Equal(t, w.Question.ID, ev.ID)
	assert.Equal(t, watch.EventAnswered, ev.Event)

	for len(fl.C) > 0 {
		<-fl.C // the answer's log lines
	}
	path := filepath.Join(other, "state.json")
	require.NoError(t, os.WriteFile(path, []byte("{}"), 0o600))
	for ev = next("a file written in the other folder"); ev.Kind == watch.FeedQuestion; ev = next("a file written in the other folder") {
	}
	assert.Equal(t, watch.WatchEvent{At: ev.At, Kind: watch.FeedFile, Event: watch.EventChanged, Path: path}, ev)
	cancel()
	for range fl.C {
	}
	assert.NoError(t, fl.Err(), "a follow ended by its context ends without an error")
}

// TestPermissionWaitLooksBeforeItsFeedStarts: the wait reads the dialog's state before it starts
// its feed, so a person who answers in the pane while the feed starts changes a state it has
// seen: a first look after the change would take the answered state for the dialog's own.
func TestPermissionWaitLooksBeforeItsFeedStarts(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	w, _, err := e.as("%2").desk.AskPermission(context.Background(), coretest.PermissionRequest(t))
	require.NoError(t, err)
	t.Cleanup(w.Close)
	term := &stateTerminal{state: questions.StatusWaiting}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := w.Await(ctx, questions.AwaitOptions{Terminal: term, Poll: time.Hour, Changes: func() <-chan struct{} {
		term.mu.Lock()
		seen := term.seen
		term.mu.Unlock()
		assert.Positive(t, seen, "the feed started before the first look")
		term.mu.Lock()
		term.state, term.at = "idle", term.at+1 // the person refuses in the pane while the feed starts
		term.mu.Unlock()
		return nil
	}})
	require.NoError(t, err)
	require.NotNil(t, out.Question.Answer, "the refusal in the pane was seen")
	assert.Equal(t, questions.SourceTerminal, out.Question.Answer.Source)
	assert.Equal(t, "deny", out.Question.Answer.Answer)
}

// TestPermissionHookKeepsTheDialogsStateFromBeforeItAsked: the hook reads the agent's state
// before it asks, so a refusal typed in the pane before its wait's first look (a loaded
// machine) is still seen as the refusal, not taken for the dialog's own state.
func TestPermissionHookKeepsTheDialogsStateFromBeforeItAsked(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	term := &stateTerminal{state: questions.StatusWaiting, at: 1}
	looked := firstLook(term)
	w, _, err := e.as("%2").desk.AskPermission(context.Background(), coretest.PermissionRequest(t))
	require.NoError(t, err)
	t.Cleanup(w.Close)
	term.mu.Lock()
	term.state, term.at = "idle", 2 // the person refuses in the pane at once
	term.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := w.Await(ctx, questions.AwaitOptions{Terminal: looked, Poll: 5 * time.Millisecond})
	require.NoError(t, err)
	require.NotNil(t, out.Question.Answer, "the refusal in the pane was seen")
	assert.Equal(t, questions.SourceTerminal, out.Question.Answer.Source)
	assert.Equal(t, "deny", out.Question.Answer.Answer)
}
