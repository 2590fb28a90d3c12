package questions_test

// An agent's permission prompt as a question: %2 is the agent whose hook asks, %1 a pane an
// answer may come from. Only the person's answer decides it: never a timeout, a cap, a wait's
// auto-answer, nor an agent the user's own settings do not name.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/core/coretest"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// fakeTerminal is an agent's state as its session file would say it.
type fakeTerminal struct {
	mu    sync.Mutex
	state string
	at    int64
	seen  int // looks at the current state
	err   error
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
	}, 10*time.Second, time.Millisecond)
}

func (f *fakeTerminal) Status() (string, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen++
	return f.state, f.at, f.err
}

type permOutcome struct {
	out *questions.PermissionOutcome
	err error
}

// permHook asks as the agent in %2 and awaits in the background.
func permHook(t *testing.T, w *world, ctx context.Context, o questions.AwaitOptions) (*questions.PermissionWait, <-chan permOutcome) {
	t.Helper()
	pw, _, err := w.desk("%2").AskPermission(context.Background(), coretest.PermissionRequest(t))
	require.NoError(t, err)
	t.Cleanup(pw.Close)
	require.True(t, lock.IsLocked(pw.Question.WaitLock()), "the hook holds its question from the start")
	ch := make(chan permOutcome, 1)
	go func() {
		out, err := pw.Await(ctx, o)
		ch <- permOutcome{out, err}
	}()
	return pw, ch
}

func permResult(t *testing.T, ch <-chan permOutcome) *questions.PermissionOutcome {
	t.Helper()
	select {
	case r := <-ch:
		require.NoError(t, r.err)
		return r.out
	case <-time.After(20 * time.Second):
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
			w := newWorld(t)
			pw, ch := permHook(t, w, context.Background(), questions.AwaitOptions{})
			list, _, err := w.desk("%1").Questions(context.Background(), questions.QuestionsOptions{Pending: true})
			require.NoError(t, err)
			require.Len(t, list, 1)
			assert.Equal(t, messages.Permission, list[0].Type)
			assert.Equal(t, "touch k1.txt", list[0].Permission.Subject)
			assert.Equal(t, "permission: Bash touch k1.txt", list[0].Waits)
			assert.Equal(t, list[0].Worker, list[0].Orchestrator, "no orchestrator: the pane with itself")

			res, err := w.desk("").Answer(context.Background(), questions.AnswerOptions{ID: pw.Question.ID, Raw: tt.raw, Message: tt.message, Source: "telegram"})
			require.NoError(t, err)
			assert.Equal(t, core.SignalAsk, res.Signal, "the hook took it")
			assert.Equal(t, "the agent's permission hook (pane %2) took the answer", res.Say())
			out := permResult(t, ch)
			require.NotNil(t, out.Decision)
			assert.Equal(t, tt.behavior, out.Decision.Behavior)
			assert.Equal(t, tt.wantMessage, out.Decision.Message)
			assert.Len(t, out.Decision.Updates, tt.updates)
			assert.Empty(t, w.tmux.Delivered(), "no answer of a permission is typed into any pane")
			assert.Empty(t, w.mailer.mails(), "nor handed to the mailbox")
			assert.Contains(t, events(out.Question), questions.QDecision)
		})
	}
}

func TestPermissionAnsweredAtTheTerminal(t *testing.T) {
	for _, tt := range []struct{ after, want string }{{"busy", "allow"}, {"idle", "deny"}} {
		t.Run(tt.want, func(t *testing.T) {
			w := newWorld(t)
			term := &fakeTerminal{state: "busy"}
			pw, ch := permHook(t, w, context.Background(), questions.AwaitOptions{Terminal: term, Poll: 5 * time.Millisecond})
			term.set(questions.StatusWaiting) // the dialog shows
			term.looked(t)
			term.set(tt.after) // the person answers in the pane
			out := permResult(t, ch)
			assert.Nil(t, out.Decision, "the agent took the terminal's answer: nothing to hand back")
			require.NotNil(t, out.Question.Answer)
			assert.Equal(t, questions.SourceTerminal, out.Question.Answer.Source)
			assert.Equal(t, tt.want, out.Question.Answer.Answer)
			assert.Contains(t, events(out.Question), questions.QTerminal)

			_, err := w.desk("").Answer(context.Background(), questions.AnswerOptions{ID: pw.Question.ID, Raw: "allow", Source: "telegram"})
			require.True(t, isStale(err), "%v", err)
			assert.Contains(t, err.Error(), "at the terminal")
			assert.Contains(t, err.Error(), "too late")
		})
	}
}

// A state that changes between two looks, without the waiting ever being seen, is an answer at
// the terminal too; a state that cannot be read tells nothing.
func TestPermissionTerminalChangesBetweenLooks(t *testing.T) {
	w := newWorld(t)
	term := &fakeTerminal{state: "idle", err: errors.New("no session file")}
	_, ch := permHook(t, w, context.Background(), questions.AwaitOptions{Terminal: term, Poll: 5 * time.Millisecond})
	term.looked(t)
	term.mu.Lock()
	term.err = nil
	term.mu.Unlock()
	term.looked(t)
	select {
	case r := <-ch:
		t.Fatalf("an unchanged state ended the hook: %+v", r.out)
	case <-time.After(30 * time.Millisecond):
	}
	term.set("busy")
	out := permResult(t, ch)
	require.NotNil(t, out.Question.Answer)
	assert.Equal(t, messages.PermAllow, out.Question.Answer.Answer)
}

func TestPermissionExpiresUndecided(t *testing.T) {
	w := newWorld(t)
	term := &fakeTerminal{state: questions.StatusWaiting}
	pw, ch := permHook(t, w, context.Background(), questions.AwaitOptions{Wait: 50 * time.Millisecond, Terminal: term, Poll: 5 * time.Millisecond})
	out := permResult(t, ch)
	assert.Nil(t, out.Decision, "a timeout decides nothing")
	assert.Nil(t, out.Question.Answer)
	assert.Equal(t, questions.QuestionResolved, out.Question.State)
	assert.Contains(t, out.Question.Reason, "expired")
	assert.Contains(t, out.Question.Reason, "the dialog stays for the terminal")
	assert.Contains(t, events(out.Question), questions.QExpiredP)

	// An answer after it is stale and decides nothing.
	_, err := w.desk("").Answer(context.Background(), questions.AnswerOptions{ID: pw.Question.ID, Raw: "allow"})
	require.True(t, isStale(err), "%v", err)
}

func TestPermissionHookEndedByTheAgent(t *testing.T) {
	// SIGTERM: after a No at the terminal the state has left waiting; at the hook's timeout it
	// has not.
	for _, tt := range []struct {
		state, want string
	}{{"idle", questions.QuestionAnswered}, {questions.StatusWaiting, questions.QuestionResolved}} {
		t.Run(tt.state, func(t *testing.T) {
			w := newWorld(t)
			term := &fakeTerminal{state: questions.StatusWaiting}
			ctx, cancel := context.WithCancel(context.Background())
			_, ch := permHook(t, w, ctx, questions.AwaitOptions{Terminal: term, Poll: 5 * time.Millisecond})
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
			} else {
				assert.Contains(t, out.Question.Reason, "hook timeout")
			}
		})
	}
}

// A waiter that is not the agent's hook ends the wait with a cause, or a reason of its own, that
// says why; the question expires with it, and the waiter's own events go to its log.
func TestPermissionEndedWithACause(t *testing.T) {
	w := newWorld(t)
	term := &fakeTerminal{state: questions.StatusWaiting}
	ctx, cancel := context.WithCancelCause(context.Background())
	pw, ch := permHook(t, w, ctx, questions.AwaitOptions{Terminal: term, Poll: 5 * time.Millisecond})
	term.looked(t)
	cancel(errors.New("the console stopped; the dialog stays for the terminal"))
	out := permResult(t, ch)
	assert.Equal(t, questions.QuestionResolved, out.Question.State)
	assert.Contains(t, out.Question.Reason, "the console stopped")
	assert.NotContains(t, out.Question.Reason, "hook timeout")

	require.NoError(t, pw.Log("decision-applied", map[string]string{"via": "test"}))
	assert.Contains(t, events(pw.Question), "decision-applied")

	w2 := newWorld(t)
	ctx2, cancel2 := context.WithCancel(context.Background())
	_, ch2 := permHook(t, w2, ctx2, questions.AwaitOptions{Ended: "the watcher lost the agent"})
	cancel2()
	out = permResult(t, ch2)
	assert.Equal(t, "expired: the watcher lost the agent", out.Question.Reason)
}

// withProcs makes d's process table procs, the caller pid 300.
func withProcs(d *questions.Desk, procs ...proc.Process) *questions.Desk {
	d.SelfPID = 300
	d.Procs = func() (*proc.Table, error) { return proc.NewProcTable(procs), nil }
	d.PaneProcs = func(int, ...int) (*proc.Table, error) { return d.Procs() }
	return d
}

func TestPermissionAnsweredByAnAgentOnlyWhenNamed(t *testing.T) {
	w := newWorld(t)
	pw, ch := permHook(t, w, context.Background(), questions.AwaitOptions{})
	// The MCP server is an agent's tool; here it runs in pane %1 (pid 1000), under claude.
	inPane := []proc.Process{
		{PID: 1000, PPID: 1, SID: 1000, Comm: "claude", Args: []string{"claude"}},
		{PID: 300, PPID: 1000, SID: 1000, Comm: "wcomm", Args: []string{"wcomm", "mcp"}},
	}
	_, err := withProcs(w.desk("%1"), inPane...).Answer(context.Background(), questions.AnswerOptions{ID: pw.Question.ID, Raw: "allow", Agent: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "permissions.answerers")
	st, err := questions.FindQuestion(w.root, pw.Question.ID)
	require.NoError(t, err)
	assert.Equal(t, questions.QuestionPending, st.State, "the refusal changed nothing")
	assert.Contains(t, events(st), questions.QInvalid)

	// Named by pane, $TMUX_PANE is believed only from inside that pane: a process elsewhere
	// (under pane %2's pid 1001) that sets it to %1 matches nothing.
	forged := withProcs(w.desk("%1"),
		proc.Process{PID: 1001, PPID: 1, SID: 1001, Comm: "claude", Args: []string{"claude"}},
		proc.Process{PID: 300, PPID: 1001, SID: 1001, Comm: "wcomm", Args: []string{"wcomm", "mcp"}})
	forged.PermissionAnswerers = []string{"%1"}
	_, err = forged.Answer(context.Background(), questions.AnswerOptions{ID: pw.Question.ID, Raw: "allow", Agent: true})
	require.Error(t, err, "a claimed pane is not the pane")
	assert.Contains(t, err.Error(), "may not answer it")
	assert.ErrorIs(t, forged.OwnPane(context.Background()), questions.ErrNotOwnPane)

	named := withProcs(w.desk("%1"), inPane...)
	named.PermissionAnswerers = []string{"%1"}
	require.NoError(t, named.OwnPane(context.Background()))
	_, err = named.Answer(context.Background(), questions.AnswerOptions{ID: pw.Question.ID, Raw: "deny", Agent: true})
	require.NoError(t, err)
	out := permResult(t, ch)
	require.NotNil(t, out.Decision)
	assert.Equal(t, "deny", out.Decision.Behavior)
}

// An agent the settings name by its profile may answer; an agent's tool not named may not, even
// outside any pane.
func TestPermissionAnsweredByAnAgentNamedByProfile(t *testing.T) {
	w := newWorld(t)
	pw, ch := permHook(t, w, context.Background(), questions.AwaitOptions{})
	tool := []proc.Process{
		{PID: 1000, PPID: 1, SID: 1000, Comm: "claude", Args: []string{"claude"}},
		{PID: 300, PPID: 1000, SID: 1000, Comm: "wcomm", Args: []string{"wcomm", "mcp"}},
	}
	_, err := withProcs(w.desk(""), tool...).Answer(context.Background(), questions.AnswerOptions{ID: pw.Question.ID, Raw: "allow", Agent: true})
	require.Error(t, err)
	named := withProcs(w.desk(""), tool...)
	named.PermissionAnswerers = []string{"claude"}
	_, err = named.Answer(context.Background(), questions.AnswerOptions{ID: pw.Question.ID, Raw: "allow", Agent: true})
	require.NoError(t, err)
	assert.Equal(t, "allow", permResult(t, ch).Decision.Behavior)
}

func TestPermissionCommandLineUnderAnAgentRefused(t *testing.T) {
	w := newWorld(t)
	pw, _ := permHook(t, w, context.Background(), questions.AwaitOptions{})
	answer := func(procs ...proc.Process) error {
		_, err := withProcs(w.desk("%1"), procs...).Answer(context.Background(), questions.AnswerOptions{ID: pw.Question.ID, Raw: "allow", CheckCaller: true})
		return err
	}
	person := func(procs ...proc.Process) error {
		return withProcs(w.desk("%1"), procs...).RequirePerson(context.Background(), "trust a settings file")
	}
	underClaude := []proc.Process{
		{PID: 100, PPID: 1, Comm: "claude", Args: []string{"claude"}},
		{PID: 200, PPID: 100, Comm: "bash", Args: []string{"/bin/bash", "-c", "wcomm answer"}},
		{PID: 300, PPID: 200, Comm: "wcomm", Args: []string{"wcomm", "answer"}},
	}
	// The caller's own process runs under claude: 'wcomm answer' from an agent's tool call.
	err := answer(underClaude...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "claude may not answer it")
	assert.ErrorIs(t, err, core.ErrNotPerson, "the faces tell a refusal from a failure (the web page: 403)")
	err = person(underClaude...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "only the person may trust a settings file")
	// 'setsid -f wcomm answer' from it: no agent above it any more, and no terminal.
	detached := proc.Process{PID: 300, PPID: 1, SID: 300, PGRP: 300, TPGID: -1, Comm: "wcomm", Args: []string{"wcomm", "answer"}}
	err = answer(detached)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no controlling terminal")
	// The same command typed by a person in a shell is theirs: the foreground of a terminal no
	// agent runs on.
	typed := []proc.Process{
		{PID: 200, PPID: 1, SID: 200, PGRP: 200, TTY: 34816, TPGID: 300, Comm: "bash", Args: []string{"-bash"}},
		{PID: 300, PPID: 200, SID: 200, PGRP: 300, TTY: 34816, TPGID: 300, Comm: "wcomm", Args: []string{"wcomm", "answer"}},
	}
	require.NoError(t, person(typed...))
	require.NoError(t, answer(typed...))
}

// No wait decides a permission question: an 'ask --wait' of its id with a timeout and
// auto-answer on ends undecided, the hook still waits, and the person's answer still decides.
func TestPermissionNeverDecidedByATimeout(t *testing.T) {
	w := newWorld(t)
	pw, ch := permHook(t, w, context.Background(), questions.AwaitOptions{})
	on := true
	res, err := w.desk("%3").WaitQuestions(context.Background(), questions.WaitOptions{IDs: []string{pw.Question.ID}, Timeout: 50 * time.Millisecond, TimeoutSet: true, AutoAnswer: &on})
	require.ErrorIs(t, err, store.ErrTimeout)
	assert.Contains(t, err.Error(), "decided only by the person's answer")
	require.Len(t, res.Questions, 1)
	assert.Equal(t, questions.QuestionPending, res.Questions[0].State)
	assert.Nil(t, res.Questions[0].Answer, "nothing decided")
	select {
	case r := <-ch:
		t.Fatalf("the hook ended on a wait's timeout: %+v", r.out)
	default:
	}
	_, err = w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: pw.Question.ID, Raw: "deny", Source: "telegram"})
	require.NoError(t, err)
	out := permResult(t, ch)
	require.NotNil(t, out.Decision)
	assert.Equal(t, "deny", out.Decision.Behavior)
}

// Nor does a cap: an agent asks leave as often as it needs it, and each is the person's to decide.
func TestPermissionNeverCapped(t *testing.T) {
	w := newWorld(t)
	for i := 0; i < 5; i++ {
		pw, _, err := w.desk("%2").AskPermission(context.Background(), coretest.PermissionRequest(t))
		require.NoError(t, err)
		assert.Equal(t, questions.QuestionPending, pw.Question.State, "question %d", i+1)
		pw.Close()
	}
}

// A decision recorded any way but by the person's answer hands nothing back to the agent.
func TestPermissionOnlyThePersonsAnswerDecides(t *testing.T) {
	w := newWorld(t)
	pw, ch := permHook(t, w, context.Background(), questions.AwaitOptions{})
	// An answer file written as a timeout would write it (no path of the room does).
	a := questions.AnswerRecord{ID: pw.Question.ID, TaskID: pw.Question.Task, Seq: pw.Question.Seq, Answer: messages.PermAllow,
		DecidedBy: messages.DecidedByTimeout, Source: "timeout", Type: messages.Permission, Form: "auto", At: time.Now().UTC()}
	data, err := json.Marshal(a)
	require.NoError(t, err)
	require.NoError(t, store.WriteExclusive(pw.Question.File(messages.SuffixAnswer), data))
	out := permResult(t, ch)
	assert.Nil(t, out.Decision, "an allow decided by a timeout is not handed to the agent")
	assert.NotContains(t, events(out.Question), questions.QDecision)
}

func TestPermissionNotAnsweredOnceTheHookIsGone(t *testing.T) {
	w := newWorld(t)
	pw, _, err := w.desk("%2").AskPermission(context.Background(), coretest.PermissionRequest(t))
	require.NoError(t, err)
	pw.Close() // the hook was killed
	_, err = w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: pw.Question.ID, Raw: "allow"})
	require.True(t, isStale(err), "%v", err)
	assert.Contains(t, err.Error(), "no longer waits")
	assert.Empty(t, w.tmux.Delivered(), "nothing typed into the agent's pane")
	st, err := questions.FindQuestion(w.root, pw.Question.ID)
	require.NoError(t, err)
	assert.Equal(t, questions.QuestionResolved, st.State)
	assert.Nil(t, st.Answer)
}

func TestPermissionInvalidAnswersAndRequests(t *testing.T) {
	w := newWorld(t)
	pw, _ := permHook(t, w, context.Background(), questions.AwaitOptions{})
	_, err := w.desk("").Answer(context.Background(), questions.AnswerOptions{ID: pw.Question.ID, Raw: "maybe"})
	require.ErrorIs(t, err, messages.ErrInvalidAnswer)
	_, err = w.desk("").Answer(context.Background(), questions.AnswerOptions{ID: pw.Question.ID, Raw: "allow", Message: "why"})
	var ue *core.UsageError
	require.ErrorAs(t, err, &ue, "a message goes with a deny only")

	_, _, err = w.desk("").AskPermission(context.Background(), coretest.PermissionRequest(t))
	assert.ErrorContains(t, err, "own pane", "a hook outside a pane asks nothing")
}

// The hook's deny message reaches the agent as the person's words, through its outbox.
func TestPermissionTellHandsTheMessageToThePane(t *testing.T) {
	w := newWorld(t)
	pw, _ := permHook(t, w, context.Background(), questions.AwaitOptions{})
	queued, err := pw.Tell(context.Background(), "use the staging folder")
	require.NoError(t, err)
	assert.False(t, queued)
	assert.Equal(t, []string{"use the staging folder"}, w.delivered("%2"))
	m := w.mailer.mails()[0]
	assert.Equal(t, messages.MailNote, m.Kind)
	assert.Contains(t, m.Summary, "[message from the person, with a deny of "+pw.Question.ID+"]")

	w.mailer.setQueue("%2", true)
	queued, err = pw.Tell(context.Background(), "again")
	require.NoError(t, err)
	assert.True(t, queued)

	w.tmux.Mu.Lock()
	delete(w.tmux.PaneMap, "%2")
	w.tmux.Mu.Unlock()
	_, err = pw.Tell(context.Background(), "gone")
	assert.Error(t, err, "a pane that is gone gets nothing")
}

// Even a record that says auto-answer on (written by hand, or by another tool) is not decided by
// a wait's deadline: a permission is the person's alone.
func TestPermissionRecordWithAutoAnswerStillNotDecidedByATimeout(t *testing.T) {
	w := newWorld(t)
	pw, ch := permHook(t, w, context.Background(), questions.AwaitOptions{})
	var rec map[string]any
	data, err := os.ReadFile(pw.Question.Path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &rec))
	rec["auto_answer_on_timeout"], rec["timeout_seconds"] = true, 0.01
	data, err = json.Marshal(rec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(pw.Question.Path, data, 0o600))

	res, err := w.desk("%3").WaitQuestions(context.Background(), questions.WaitOptions{IDs: []string{pw.Question.ID}})
	require.ErrorIs(t, err, store.ErrTimeout)
	assert.Nil(t, res.Questions[0].Answer, "nothing decided")
	select {
	case r := <-ch:
		t.Fatalf("the hook ended on a wait's timeout: %+v", r.out)
	default:
	}
}
