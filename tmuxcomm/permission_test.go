package tmuxcomm

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// An agent's permission prompt as a question, against the in-memory tmux: %2 is the agent whose
// hook asks, %1 a pane an answer may come from.

func permRequest(t *testing.T) messages.PermissionRequest {
	t.Helper()
	var in messages.HookInput
	require.NoError(t, json.Unmarshal([]byte(`{"session_id":"s1","hook_event_name":"PermissionRequest","tool_name":"Bash",
		"tool_input":{"command":"touch k1.txt","description":"Run the requested command"}}`), &in))
	p, err := messages.ParsePermissionRequest("claude", in)
	require.NoError(t, err)
	return p
}

// fakeTerminal is an agent's state as its session file would say it.
type fakeTerminal struct {
	mu    sync.Mutex
	state string
	at    int64
	seen  int // looks at the current state
}

func (f *fakeTerminal) set(state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state, f.at, f.seen = state, f.at+1, 0
}

// looked waits until the hook has looked at the current state.
func (f *fakeTerminal) looked(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.seen > 0
	}, 5*time.Second, time.Millisecond)
}

func (f *fakeTerminal) Status() (string, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen++
	return f.state, f.at, nil
}

type permOutcome struct {
	out *questions.PermissionOutcome
	err error
}

// permHook asks as the agent in %2 and awaits in the background.
func permHook(t *testing.T, e *Engine, ctx context.Context, o questions.AwaitOptions) (*questions.PermissionWait, <-chan permOutcome) {
	t.Helper()
	w, _, err := e.as("%2").AskPermission(context.Background(), permRequest(t))
	require.NoError(t, err)
	t.Cleanup(w.Close)
	require.True(t, lock.IsLocked(w.Question.WaitLock()), "the hook holds its question from the start")
	ch := make(chan permOutcome, 1)
	go func() {
		out, err := w.Await(ctx, o)
		ch <- permOutcome{out, err}
	}()
	return w, ch
}

func permResult(t *testing.T, ch <-chan permOutcome) *questions.PermissionOutcome {
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

func TestPermissionAnswersReachTheHook(t *testing.T) {
	tests := []struct {
		raw, message string
		behavior     string
		wantMessage  string
		updates      int
	}{
		{"allow", "", "allow", "", 0},
		{"always", "", "allow", "", 1},
		{"deny", "use the staging folder", "deny", "use the staging folder", 0},
		{"deny: not today", "", "deny", "not today", 0},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			f := newFake("%1", "%2")
			e := newEngine(t, f, "%1")
			w, ch := permHook(t, e, context.Background(), questions.AwaitOptions{})
			list, _, err := e.Questions(context.Background(), questions.QuestionsOptions{Pending: true})
			require.NoError(t, err)
			require.Len(t, list, 1)
			assert.Equal(t, messages.Permission, list[0].Type)
			assert.Equal(t, "touch k1.txt", list[0].Permission.Subject)

			res, err := e.as("").Answer(context.Background(), questions.AnswerOptions{ID: w.Question.ID, Raw: tt.raw, Message: tt.message, Source: "telegram"})
			require.NoError(t, err)
			assert.Equal(t, SignalAsk, res.Signal, "the hook took it")
			out := permResult(t, ch)
			require.NotNil(t, out.Decision)
			assert.Equal(t, tt.behavior, out.Decision.Behavior)
			assert.Equal(t, tt.wantMessage, out.Decision.Message)
			assert.Len(t, out.Decision.Updates, tt.updates)
			assert.Empty(t, f.Delivered(), "no answer of a permission is typed into any pane")
		})
	}
}

func TestPermissionAnsweredAtTheTerminal(t *testing.T) {
	for _, tt := range []struct{ after, want string }{{"busy", "allow"}, {"idle", "deny"}} {
		t.Run(tt.want, func(t *testing.T) {
			f := newFake("%1", "%2")
			e := newEngine(t, f, "%1")
			term := &fakeTerminal{state: "busy"}
			w, ch := permHook(t, e, context.Background(), questions.AwaitOptions{Terminal: term, Poll: 5 * time.Millisecond})
			term.set(questions.StatusWaiting) // the dialog shows
			term.looked(t)
			term.set(tt.after) // the person answers in the pane
			out := permResult(t, ch)
			assert.Nil(t, out.Decision, "the agent took the terminal's answer: nothing to hand back")
			require.NotNil(t, out.Question.Answer)
			assert.Equal(t, questions.SourceTerminal, out.Question.Answer.Source)
			assert.Equal(t, tt.want, out.Question.Answer.Answer)

			_, err := e.as("").Answer(context.Background(), questions.AnswerOptions{ID: w.Question.ID, Raw: "allow", Source: "telegram"})
			require.ErrorIs(t, err, ErrStale)
			assert.Contains(t, err.Error(), "at the terminal")
			assert.Contains(t, err.Error(), "too late")
		})
	}
}

func TestPermissionExpiresUndecided(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	term := &fakeTerminal{state: questions.StatusWaiting}
	_, ch := permHook(t, e, context.Background(), questions.AwaitOptions{Wait: 50 * time.Millisecond, Terminal: term, Poll: 5 * time.Millisecond})
	out := permResult(t, ch)
	assert.Nil(t, out.Decision, "a timeout decides nothing")
	assert.Equal(t, questions.QuestionResolved, out.Question.State)
	assert.Contains(t, out.Question.Reason, "expired")
}

func TestPermissionHookEndedByTheAgent(t *testing.T) {
	// SIGTERM: after a No at the terminal the state has left waiting; at the hook's timeout it
	// has not.
	for _, tt := range []struct {
		state, want string
	}{{"idle", questions.QuestionAnswered}, {questions.StatusWaiting, questions.QuestionResolved}} {
		t.Run(tt.state, func(t *testing.T) {
			f := newFake("%1", "%2")
			e := newEngine(t, f, "%1")
			term := &fakeTerminal{state: questions.StatusWaiting}
			ctx, cancel := context.WithCancel(context.Background())
			_, ch := permHook(t, e, ctx, questions.AwaitOptions{Terminal: term, Poll: 5 * time.Millisecond})
			term.looked(t)
			if tt.state != questions.StatusWaiting {
				term.set(tt.state)
			}
			cancel()
			out := permResult(t, ch)
			assert.Nil(t, out.Decision)
			assert.Equal(t, tt.want, out.Question.State)
			if tt.want == questions.QuestionAnswered {
				assert.Equal(t, "deny", out.Question.Answer.Answer)
				assert.Equal(t, questions.SourceTerminal, out.Question.Answer.Source)
			}
		})
	}
}

// A waiter that is not the agent's hook (the prompts room's) ends the wait with a cause that says
// why; the question expires with it, and the waiter's own events go to its log.
func TestPermissionEndedWithACause(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	term := &fakeTerminal{state: questions.StatusWaiting}
	ctx, cancel := context.WithCancelCause(context.Background())
	w, ch := permHook(t, e, ctx, questions.AwaitOptions{Terminal: term, Poll: 5 * time.Millisecond})
	term.looked(t)
	cancel(errors.New("the console stopped; the dialog stays for the terminal"))
	out := permResult(t, ch)
	assert.Equal(t, questions.QuestionResolved, out.Question.State)
	assert.Contains(t, out.Question.Reason, "the console stopped")
	assert.NotContains(t, out.Question.Reason, "hook timeout")

	require.NoError(t, w.Log("decision-applied", map[string]string{"via": "test"}))
	data, err := json.Marshal(questions.QuestionEvents(w.Question))
	require.NoError(t, err)
	assert.Contains(t, string(data), "decision-applied")
}

// procsOf makes the engine's process table procs, the caller pid 300.
func procsOf(e *Engine, procs ...proc.Process) *Engine {
	e.SelfPID = 300
	e.Procs = func() (*proc.Table, error) { return proc.NewProcTable(procs), nil }
	e.PaneProcs = func(int, ...int) (*proc.Table, error) { return e.Procs() }
	return e
}

func TestPermissionAnsweredByAnAgentOnlyWhenNamed(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	w, ch := permHook(t, e, context.Background(), questions.AwaitOptions{})
	// The MCP server is an agent's tool; here it runs in pane %1 (pid 1000), under claude.
	inPane := []proc.Process{
		{PID: 1000, PPID: 1, SID: 1000, Comm: "claude", Args: []string{"claude"}},
		{PID: 300, PPID: 1000, SID: 1000, Comm: "wcomm", Args: []string{"wcomm", "mcp"}},
	}
	_, err := procsOf(e.as("%1"), inPane...).Answer(context.Background(), questions.AnswerOptions{ID: w.Question.ID, Raw: "allow", Agent: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "permissions.answerers")
	st, err := questions.FindQuestion(e.Root, w.Question.ID)
	require.NoError(t, err)
	assert.Equal(t, questions.QuestionPending, st.State, "the refusal changed nothing")

	// Named by pane, $TMUX_PANE is believed only from inside that pane: a process elsewhere
	// (under pane %2's pid 1001) that sets it to %1 matches nothing.
	forged := procsOf(e.as("%1"),
		proc.Process{PID: 1001, PPID: 1, SID: 1001, Comm: "claude", Args: []string{"claude"}},
		proc.Process{PID: 300, PPID: 1001, SID: 1001, Comm: "wcomm", Args: []string{"wcomm", "mcp"}})
	forged.PermissionAnswerers = []string{"%1"}
	_, err = forged.Answer(context.Background(), questions.AnswerOptions{ID: w.Question.ID, Raw: "allow", Agent: true})
	require.Error(t, err, "a claimed pane is not the pane")
	assert.Contains(t, err.Error(), "may not answer it")

	named := procsOf(e.as("%1"), inPane...)
	named.PermissionAnswerers = []string{"%1"}
	_, err = named.Answer(context.Background(), questions.AnswerOptions{ID: w.Question.ID, Raw: "deny", Agent: true})
	require.NoError(t, err)
	out := permResult(t, ch)
	require.NotNil(t, out.Decision)
	assert.Equal(t, "deny", out.Decision.Behavior)
}

func TestPermissionCommandLineUnderAnAgentRefused(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	w, _ := permHook(t, e, context.Background(), questions.AwaitOptions{})
	answer := func(procs ...proc.Process) error {
		_, err := procsOf(e.as("%1"), procs...).Answer(context.Background(), questions.AnswerOptions{ID: w.Question.ID, Raw: "allow", CheckCaller: true})
		return err
	}
	// The caller's own process runs under claude: 'wcomm answer' from an agent's tool call.
	err := answer(
		proc.Process{PID: 100, PPID: 1, Comm: "claude", Args: []string{"claude"}},
		proc.Process{PID: 200, PPID: 100, Comm: "bash", Args: []string{"/bin/bash", "-c", "wcomm answer"}},
		proc.Process{PID: 300, PPID: 200, Comm: "wcomm", Args: []string{"wcomm", "answer"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "claude may not answer it")
	// 'setsid -f wcomm answer' from it: no agent above it any more, and no terminal.
	err = answer(proc.Process{PID: 300, PPID: 1, SID: 300, PGRP: 300, TPGID: -1, Comm: "wcomm", Args: []string{"wcomm", "answer"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no controlling terminal")
	// The same command typed by a person in a shell is theirs: the foreground of a terminal no
	// agent runs on.
	err = answer(
		proc.Process{PID: 200, PPID: 1, SID: 200, PGRP: 200, TTY: 34816, TPGID: 300, Comm: "bash", Args: []string{"-bash"}},
		proc.Process{PID: 300, PPID: 200, SID: 200, PGRP: 300, TTY: 34816, TPGID: 300, Comm: "wcomm", Args: []string{"wcomm", "answer"}})
	require.NoError(t, err)
}

// No wait decides a permission question: an 'ask --wait' of its id with a timeout and
// auto-answer on ends undecided, the hook still waits, and the person's answer still decides.
func TestPermissionNeverDecidedByATimeout(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	w, ch := permHook(t, e, context.Background(), questions.AwaitOptions{})
	on := true
	res, err := e.as("%3").WaitQuestions(context.Background(), questions.WaitOptions{IDs: []string{w.Question.ID}, Timeout: 50 * time.Millisecond, TimeoutSet: true, AutoAnswer: &on})
	require.ErrorIs(t, err, ErrTimeout)
	require.Len(t, res.Questions, 1)
	assert.Equal(t, questions.QuestionPending, res.Questions[0].State)
	assert.Nil(t, res.Questions[0].Answer, "nothing decided")
	select {
	case r := <-ch:
		t.Fatalf("the hook ended on a wait's timeout: %+v", r.out)
	default:
	}
	_, err = e.Answer(context.Background(), questions.AnswerOptions{ID: w.Question.ID, Raw: "deny", Source: "telegram"})
	require.NoError(t, err)
	out := permResult(t, ch)
	require.NotNil(t, out.Decision)
	assert.Equal(t, "deny", out.Decision.Behavior)
}

func TestPermissionNotAnsweredOnceTheHookIsGone(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	w, _, err := e.as("%2").AskPermission(context.Background(), permRequest(t))
	require.NoError(t, err)
	w.Close() // the hook was killed
	_, err = e.Answer(context.Background(), questions.AnswerOptions{ID: w.Question.ID, Raw: "allow"})
	require.True(t, errors.Is(err, ErrStale), "%v", err)
	assert.Contains(t, err.Error(), "no longer waits")
	assert.Empty(t, f.Delivered(), "nothing typed into the agent's pane")
	st, err := questions.FindQuestion(e.Root, w.Question.ID)
	require.NoError(t, err)
	assert.Equal(t, questions.QuestionResolved, st.State)
}

func TestPermissionNotAskedThroughAsk(t *testing.T) {
	_, orch, worker, x := qPair(t)
	_ = orch
	q := qQuestion("may I?")
	q.Type, q.Options = messages.Permission, messages.PermissionOptions()
	_, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, Exchange: x.ID})
	var ue *UsageError
	require.ErrorAs(t, err, &ue)
}

func TestPermissionWaitsShown(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	w, ch := permHook(t, e, context.Background(), questions.AwaitOptions{})
	list, _, err := e.Questions(context.Background(), questions.QuestionsOptions{Pending: true})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "permission: Bash touch k1.txt", list[0].Waits)
	srv := f.Server.Key()
	assert.Equal(t, "permission: Bash touch k1.txt", WaitsOn("%2", srv, "", list))
	assert.Equal(t, "", WaitsOn("%1", srv, "", list), "nothing waits on a person in another pane")
	assert.Equal(t, "idle", WaitsOn("%1", srv, "idle", list), "an agent at rest after its turn")
	assert.Equal(t, "", WaitsOn("%2", "another-server", "", list), "a pane of the same id on another server")

	_, err = e.Answer(context.Background(), questions.AnswerOptions{ID: w.Question.ID, Raw: "allow"})
	require.NoError(t, err)
	permResult(t, ch)
	st, err := questions.FindQuestion(e.Root, w.Question.ID)
	require.NoError(t, err)
	assert.Empty(t, st.Waits, "nothing waits once answered")
}
