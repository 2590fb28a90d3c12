package tmuxcomm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// The question relay against the in-memory tmux of engine_test.go: %1 is the orchestrator, %2
// the worker.

func qQuestion(text string) messages.Question {
	return messages.Question{Text: text, Task: "task-3", Urgency: messages.Blocking, Type: messages.Numbered,
		Options: []string{"Use bcrypt (already in deps)", "Use argon2 (stronger but new dep)"},
		Context: "The plan names no hash; bcrypt is already a dependency."}
}

// qPair sends a request from %1 to %2 and returns the orchestrator's engine, the worker's engine
// and the exchange the worker's questions tie to.
func qPair(t *testing.T) (*fakeTmux, *Engine, *Engine, *exchange.Exchange) {
	t.Helper()
	f := newFake("%1", "%2")
	orch := newEngine(t, f, "%1")
	x, err := orch.Send(context.Background(), core.SendOptions{To: "%2", Body: []byte("implement the auth module")})
	require.NoError(t, err)
	return f, orch, orch.as("%2"), x
}

// qAskAsync runs a blocking ask in the background and returns a channel with its outcome.
type qOutcome struct {
	res *questions.AskResult
	err error
}

func qAskAsync(e *Engine, o questions.AskOptions) <-chan qOutcome {
	ch := make(chan qOutcome, 1)
	go func() {
		res, err := e.Ask(context.Background(), o)
		ch <- qOutcome{res, err}
	}()
	return ch
}

// qWaitQuestion polls until exactly n questions exist and returns the newest pending one.
func qWaitQuestion(t *testing.T, e *Engine, n int) *questions.QuestionStatus {
	t.Helper()
	var list []*questions.QuestionStatus
	require.Eventually(t, func() bool {
		list, _, _ = e.Questions(context.Background(), questions.QuestionsOptions{})
		return len(list) == n && lock.IsLocked(list[n-1].WaitLock()) || len(list) == n && list[n-1].Urgency == messages.NonBlocking
	}, 5*time.Second, 5*time.Millisecond)
	return list[n-1]
}

func qEvents(st *questions.QuestionStatus) []string {
	var out []string
	for _, ev := range questions.QuestionEvents(st) {
		out = append(out, ev.State)
	}
	return out
}

func TestQuestionAskBlockingWakesOnAnswer(t *testing.T) {
	f, orch, worker, x := qPair(t)
	done := qAskAsync(worker, questions.AskOptions{Questions: []messages.Question{qQuestion("bcrypt or argon2?")}, Wait: true, Timeout: 10 * time.Second, AutoAnswer: true, MaxQuestions: 3})
	st := qWaitQuestion(t, orch, 1)

	assert.Regexp(t, `^task-3\.q1-[0-9a-f]{4}$`, st.ID)
	assert.Equal(t, x.ID, st.Exchange)
	assert.Equal(t, x.Seq, st.ExchangeSeq)
	assert.Equal(t, x.Dir, st.Dir)
	assert.Equal(t, messages.PaneID("%2"), st.Worker)
	assert.Equal(t, messages.PaneID("%1"), st.Orchestrator)
	info, err := os.Stat(st.Path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	raw, err := os.ReadFile(st.Path)
	require.NoError(t, err)
	var rec map[string]any
	require.NoError(t, json.Unmarshal(raw, &rec))
	for _, k := range []string{"task_id", "question", "urgency", "options", "context", "seq", "id"} {
		assert.Contains(t, rec, k, "a field other tools read: %s", k)
	}

	// The question file appears before its QUESTION block is pasted: wait for the paste.
	require.Eventually(t, func() bool { return len(f.Delivered()) == 2 }, 5*time.Second, time.Millisecond)
	ds := f.Delivered()
	assert.Equal(t, messages.PaneID("%1"), ds[1].Pane)
	q, err := messages.ParseQuestionBlock(string(ds[1].Content))
	require.NoError(t, err)
	assert.Equal(t, st.ID, q.ID)
	assert.Equal(t, "bcrypt or argon2?", q.Text)
	assert.Contains(t, string(ds[1].Content), "To answer: wcomm answer "+st.ID+" A")
	// The ask records the delivery once its paste has returned: wait for the record, so that
	// the answer below comes after it, as the order checked at the end says.
	require.Eventually(t, func() bool { return slices.Contains(qEvents(st), questions.QDelivered) }, 5*time.Second, time.Millisecond)

	start := time.Now()
	ar, err := orch.Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: "b"})
	require.NoError(t, err)
	assert.Equal(t, core.SignalAsk, ar.Signal)
	out := <-done
	require.NoError(t, out.err)
	t.Logf("ask woke %s after the answer call started", time.Since(start))
	require.Len(t, out.res.Questions, 1)
	got := out.res.Questions[0]
	assert.Equal(t, questions.QuestionAnswered, got.State)
	assert.Equal(t, messages.Answer{Text: "Use argon2 (stronger but new dep)", Task: "task-3", DecidedBy: "user", ID: st.ID}, *got.AnswerBlock())
	assert.Equal(t, "b", got.Answer.Raw)
	assert.Equal(t, "letter", got.Answer.Form)
	assert.Equal(t, "local", got.Answer.Source)
	assert.Len(t, f.Delivered(), 2, "a waiting ask is the signal: nothing pasted into the worker")
	assert.Equal(t, []string{questions.QAsked, questions.QDelivered, questions.QAccepted, questions.QAskWoken}, qEvents(got))
}

func TestQuestionAnswerPastedWhenNoAskWaits(t *testing.T) {
	f, orch, worker, _ := qPair(t)
	q := qQuestion("bcrypt or argon2?")
	q.Urgency = messages.NonBlocking
	res, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, MaxQuestions: 3})
	require.NoError(t, err)
	st := res.Questions[0]
	assert.Equal(t, questions.QuestionPending, st.State)

	ar, err := orch.Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: "Use BCRYPT (already in deps)", Source: "telegram"})
	require.NoError(t, err)
	assert.Equal(t, core.SignalPasted, ar.Signal)
	ds := f.Delivered()
	last := ds[len(ds)-1]
	assert.Equal(t, messages.PaneID("%2"), last.Pane)
	assert.True(t, last.Submit)
	a, err := messages.ParseAnswerBlock(string(last.Content))
	require.NoError(t, err)
	assert.Equal(t, messages.Answer{Text: "Use bcrypt (already in deps)", Task: "task-3", DecidedBy: "user", ID: st.ID}, a)

	// ask --wait after the fact returns the recorded answer at once.
	wres, err := worker.WaitQuestions(context.Background(), questions.WaitOptions{IDs: []string{st.ID}})
	require.NoError(t, err)
	assert.Equal(t, "telegram", wres.Questions[0].Answer.Source)
	assert.Equal(t, "text", wres.Questions[0].Answer.Form)
}

func TestQuestionAnswerValidationByType(t *testing.T) {
	_, orch, worker, _ := qPair(t)
	ask := func(q messages.Question) *questions.QuestionStatus {
		q.Urgency = messages.NonBlocking
		res, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, MaxQuestions: 10})
		require.NoError(t, err)
		return res.Questions[0]
	}
	yn := qQuestion("ship it?")
	yn.Type, yn.Options = messages.YesNo, nil
	fixed := qQuestion("retry?")
	fixed.Type, fixed.Options = messages.Fixed, []string{"retry", "stop"}
	free := qQuestion("which port?")
	free.Type, free.Options, free.Pattern = messages.Freeform, nil, "[0-9]{2,5}"
	tests := []struct {
		name    string
		q       messages.Question
		invalid []string
		valid   string
		want    string
	}{
		{"numbered by number", qQuestion("a"), []string{"3", "C", "bcrypt"}, "1", "Use bcrypt (already in deps)"},
		{"yes-no", yn, []string{"maybe", "C"}, "Y", "yes"},
		{"fixed", fixed, []string{"A", "1", "retry now"}, "STOP", "stop"},
		{"freeform with pattern", free, []string{"port 80", "x"}, " 8080 ", "8080"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := ask(tt.q)
			for _, bad := range tt.invalid {
				_, err := orch.Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: bad})
				require.ErrorIs(t, err, messages.ErrInvalidAnswer, bad)
				assert.Contains(t, err.Error(), "accepted: ")
				assert.Contains(t, err.Error(), "the question stays open")
				_, statErr := os.Stat(st.File(messages.SuffixAnswer))
				assert.True(t, errors.Is(statErr, os.ErrNotExist), "an invalid answer must not consume the question")
			}
			ar, err := orch.Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: tt.valid})
			require.NoError(t, err)
			assert.Equal(t, tt.want, ar.Question.Answer.Answer)
			assert.Equal(t, tt.q.Type, ar.Question.Answer.Type)
			evs := qEvents(ar.Question)
			assert.Equal(t, len(tt.invalid), strings.Count(strings.Join(evs, " "), questions.QInvalid))
		})
	}
}

func TestQuestionRacingAnswersOneWins(t *testing.T) {
	_, orch, worker, _ := qPair(t)
	q := qQuestion("bcrypt or argon2?")
	q.Urgency = messages.NonBlocking
	res, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, MaxQuestions: 3})
	require.NoError(t, err)
	id := res.Questions[0].ID

	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			raw := []string{"A", "B"}[i%2]
			_, errs[i] = orch.as("").Answer(context.Background(), questions.AnswerOptions{ID: id, Raw: raw, Source: "racer"})
		}(i)
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
			continue
		}
		assert.ErrorIs(t, err, core.ErrStale)
		assert.Contains(t, err.Error(), "the first answer stands")
	}
	assert.Equal(t, 1, won)
	st, err := questions.FindQuestion(filepath.Dir(res.Questions[0].Dir), id)
	require.NoError(t, err)
	evs := strings.Join(qEvents(st), " ")
	assert.Equal(t, 1, strings.Count(evs, questions.QAccepted))
	assert.Equal(t, n-1, strings.Count(evs, questions.QStale))
}

func TestQuestionTimeout(t *testing.T) {
	tests := []struct {
		name      string
		auto      bool
		wantState string
		wantErr   error
	}{
		{"auto-answer takes the first option", true, questions.QuestionAutoAnswered, nil},
		{"without auto-answer the ask times out", false, questions.QuestionPending, store.ErrTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, worker, _ := qPair(t)
			res, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{qQuestion("q?")}, Wait: true,
				Timeout: 150 * time.Millisecond, AutoAnswer: tt.auto, MaxQuestions: 3})
			st := res.Questions[0]
			assert.Equal(t, tt.wantState, st.State)
			if tt.wantErr == nil {
				require.NoError(t, err)
				assert.Equal(t, messages.Answer{Text: "Use bcrypt (already in deps)", Task: "task-3", DecidedBy: "auto-timeout", ID: st.ID}, *st.AnswerBlock())
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			assert.True(t, strings.HasSuffix(err.Error(), core.BestJudgment), err.Error())
			assert.Contains(t, err.Error(), "ask --wait "+st.ID)
			assert.Contains(t, qEvents(st), questions.QTimedOut)
			// Still pending, still answerable; no ask waits now, so the answer is pasted.
			ar, err := worker.as("%1").Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: "2"})
			require.NoError(t, err)
			assert.Equal(t, core.SignalPasted, ar.Signal)
			assert.Equal(t, messages.PaneID("%2"), f.Delivered()[len(f.Delivered())-1].Pane)
		})
	}
}

func TestQuestionCap(t *testing.T) {
	f, _, worker, _ := qPair(t)
	var states []string
	for i := 0; i < 5; i++ {
		q := qQuestion("q?")
		q.Urgency = messages.NonBlocking
		if i == 4 {
			q.Task = "task-4"
		}
		res, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, MaxQuestions: 3})
		require.NoError(t, err)
		states = append(states, res.Questions[0].State)
		if i == 3 {
			b := res.Questions[0].AnswerBlock()
			require.NotNil(t, b)
			assert.Equal(t, messages.DecidedByCap, b.DecidedBy)
			assert.Contains(t, b.Text, `"assumed — needs review"`)
			assert.Equal(t, "task-3.q4", messages.QuestionStem(res.Questions[0].Task, res.Questions[0].Seq))
		}
	}
	assert.Equal(t, []string{questions.QuestionPending, questions.QuestionPending, questions.QuestionPending, questions.QuestionCapExceeded, questions.QuestionPending}, states,
		"the cap is per task: task-4's first question is relayed")
	// 1 request + 3 relayed questions + task-4's: the capped one was never pasted.
	assert.Len(t, f.Delivered(), 5)
}

func TestQuestionSequenceAcrossConcurrentAskers(t *testing.T) {
	_, _, worker, _ := qPair(t)
	const n = 6
	var wg sync.WaitGroup
	got := make([]string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			q := qQuestion("q?")
			q.Urgency = messages.NonBlocking
			res, err := worker.as("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, MaxQuestions: n})
			if assert.NoError(t, err) {
				got[i] = messages.QuestionStem(res.Questions[0].Task, res.Questions[0].Seq)
			}
		}(i)
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, s := range got {
		assert.False(t, seen[s], "duplicate %s", s)
		seen[s] = true
	}
	for i := 1; i <= n; i++ {
		assert.True(t, seen[messages.QuestionStem("task-3", i)], "task-3.q%d", i)
	}
}

func TestQuestionIDUniqueAcrossFolders(t *testing.T) {
	f := newFake("%1", "%2", "%3")
	worker := newEngine(t, f, "%2")
	// The same two random bytes come first for both asks: the second must pick another tag.
	worker.Rand = bytes.NewReader([]byte{0xab, 0x01, 0xab, 0x01, 0xcd, 0x02})
	var ids []string
	for _, orch := range []string{"%1", "%3"} {
		q := qQuestion("q?")
		q.Urgency = messages.NonBlocking
		res, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, To: orch, MaxQuestions: 3})
		require.NoError(t, err)
		ids = append(ids, res.Questions[0].ID)
	}
	assert.Equal(t, []string{"task-3.q1-ab01", "task-3.q1-cd02"}, ids)
}

func TestQuestionPlacement(t *testing.T) {
	f := newFake("%1", "%2")
	worker := newEngine(t, f, "%2")
	_, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{qQuestion("q?")}})
	require.ErrorIs(t, err, store.ErrNotFound)
	var need *core.NeedError
	require.ErrorAs(t, err, &need)
	assert.Equal(t, core.NeedOrchestrator, need.Need)
	assert.Contains(t, err.Error(), "name the orchestrator's pane")

	_, err = worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{qQuestion("q?")}, To: "%2"})
	assert.ErrorContains(t, err, "your own pane")

	bad := qQuestion("q?")
	bad.Task = "../../etc"
	_, err = worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{bad}, To: "%1"})
	require.ErrorIs(t, err, messages.ErrSyntax)
	entries, _ := os.ReadDir(worker.Root)
	assert.Empty(t, entries, "nothing is written for an invalid question")

	// With --to and no request, the pair's folder is made as send makes it, and reused by send.
	q := qQuestion("q?")
	q.Urgency = messages.NonBlocking
	res, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, To: "%1"})
	require.NoError(t, err)
	assert.Empty(t, res.Questions[0].Exchange)
	x, err := worker.as("%1").Send(context.Background(), core.SendOptions{To: "%2", Body: []byte("work")})
	require.NoError(t, err)
	assert.Equal(t, res.Questions[0].Dir, x.Dir)
}

func TestQuestionUndelivered(t *testing.T) {
	f, orch, worker, _ := qPair(t)
	f.Mu.Lock()
	f.Refuse["%1"] = true
	f.Mu.Unlock()
	res, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{qQuestion("q?")}, Wait: true, Timeout: time.Minute, MaxQuestions: 3})
	require.ErrorIs(t, err, core.ErrUnrelayed)
	assert.True(t, strings.HasSuffix(err.Error(), core.BestJudgment))
	st := res.Questions[0]
	assert.Equal(t, questions.QuestionPending, st.State)
	assert.Contains(t, qEvents(st), questions.QUndelivered)
	// The question stays answerable; the answer goes into the worker's pane.
	ar, err := orch.Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: "A"})
	require.NoError(t, err)
	assert.Equal(t, core.SignalPasted, ar.Signal)
}

func TestQuestionHook(t *testing.T) {
	if _, err := exec.LookPath("tee"); err != nil {
		t.Fatalf("the hook test needs tee: %v", err)
	}
	out := filepath.Join(t.TempDir(), "hook.json")
	tests := []struct {
		name    string
		hook    []string
		refuse  bool
		timeout time.Duration
		wantErr error
		warn    string
	}{
		{"hook gets the question JSON", []string{"tee", out}, false, time.Second, nil, ""},
		{"failing hook is a warning", []string{"false"}, false, time.Second, nil, "on_question for"},
		{"slow hook is killed", []string{"sleep", "30"}, false, 100 * time.Millisecond, nil, "did not finish within 100ms"},
		{"hook reaches someone when the pane refuses", []string{"tee", out}, true, time.Second, nil, "could not paste"},
		{"nothing reaches anyone", []string{"false"}, true, time.Second, core.ErrUnrelayed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(out)
			f, _, worker, _ := qPair(t)
			f.Mu.Lock()
			f.Refuse["%1"] = tt.refuse
			f.Mu.Unlock()
			q := qQuestion("q?")
			q.Urgency = messages.NonBlocking
			start := time.Now()
			res, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, MaxQuestions: 3,
				Hook: tt.hook, HookTimeout: tt.timeout, Dir: t.TempDir()})
			assert.Less(t, time.Since(start), 10*time.Second)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			if tt.warn != "" {
				assert.Contains(t, strings.Join(res.Warnings, "\n"), tt.warn)
			}
			if tt.hook[0] == "tee" {
				data, err := os.ReadFile(out)
				require.NoError(t, err)
				var got questions.QuestionStatus
				require.NoError(t, json.Unmarshal(data, &got))
				assert.Equal(t, res.Questions[0].ID, got.ID)
				assert.Equal(t, "q?", got.Text)
				assert.Equal(t, questions.QuestionPending, got.State)
				assert.Contains(t, qEvents(res.Questions[0]), questions.QHookRan)
			}
		})
	}
}

func TestQuestionStale(t *testing.T) {
	t.Run("request answered", func(t *testing.T) {
		_, orch, worker, x := qPair(t)
		q := qQuestion("q?")
		q.Urgency = messages.NonBlocking
		res, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, MaxQuestions: 3})
		require.NoError(t, err)
		_, err = worker.Notify(context.Background(), NotifyOptions{Ref: x.ID, Body: []byte("done anyway")})
		require.NoError(t, err)
		list, _, err := orch.Questions(context.Background(), questions.QuestionsOptions{})
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.Equal(t, questions.QuestionStale, list[0].State)
		assert.Contains(t, list[0].Reason, "request "+x.ID+" was answered")
		pending, _, _ := orch.Questions(context.Background(), questions.QuestionsOptions{Pending: true})
		assert.Empty(t, pending, "a stale question is not surfaced")
		_, err = orch.Answer(context.Background(), questions.AnswerOptions{ID: res.Questions[0].ID, Raw: "A"})
		require.ErrorIs(t, err, core.ErrStale)
		assert.Contains(t, err.Error(), "was answered")
	})
	t.Run("worker pane gone", func(t *testing.T) {
		f, orch, worker, _ := qPair(t)
		q := qQuestion("q?")
		q.Urgency = messages.NonBlocking
		res, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, MaxQuestions: 3})
		require.NoError(t, err)
		f.Mu.Lock()
		delete(f.PaneMap, "%2")
		f.Mu.Unlock()
		_, err = orch.Answer(context.Background(), questions.AnswerOptions{ID: res.Questions[0].ID, Raw: "A"})
		require.ErrorIs(t, err, core.ErrStale)
		assert.Contains(t, err.Error(), "worker pane %2 is gone")
	})
	t.Run("server restarted", func(t *testing.T) {
		f, orch, worker, _ := qPair(t)
		q := qQuestion("q?")
		q.Urgency = messages.NonBlocking
		res, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, MaxQuestions: 3})
		require.NoError(t, err)
		f.Mu.Lock()
		f.Server.StartTime++
		f.Mu.Unlock()
		list, _, _ := orch.Questions(context.Background(), questions.QuestionsOptions{})
		assert.Equal(t, questions.QuestionStale, list[0].State)
		assert.Contains(t, list[0].Reason, "restarted")
		_ = res
	})
}

func TestQuestionResolve(t *testing.T) {
	_, orch, worker, _ := qPair(t)
	done := qAskAsync(worker, questions.AskOptions{Questions: []messages.Question{qQuestion("q?")}, Wait: true, Timeout: time.Minute, MaxQuestions: 3})
	st := qWaitQuestion(t, orch, 1)

	_, err := orch.ResolveQuestion(context.Background(), st.ID, "  ")
	assert.ErrorContains(t, err, "needs a reason")
	got, err := orch.ResolveQuestion(context.Background(), st.ID, "task was cancelled")
	require.NoError(t, err)
	assert.Equal(t, questions.QuestionResolved, got.State)

	out := <-done
	require.ErrorIs(t, out.err, core.ErrNoAnswer)
	assert.Contains(t, out.err.Error(), "task was cancelled")
	assert.True(t, strings.HasSuffix(out.err.Error(), core.BestJudgment))

	_, err = orch.Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: "A"})
	require.ErrorIs(t, err, core.ErrStale)
	assert.Contains(t, err.Error(), "resolved without an answer")
	_, err = orch.ResolveQuestion(context.Background(), st.ID, "again")
	assert.ErrorIs(t, err, store.ErrAnswered)
	_, statErr := os.Stat(st.File(messages.SuffixAnswer))
	assert.True(t, errors.Is(statErr, os.ErrNotExist), "resolve invents no answer")
}

func TestQuestionSurvivesKilledAsk(t *testing.T) {
	_, orch, worker, _ := qPair(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := worker.Ask(ctx, questions.AskOptions{Questions: []messages.Question{qQuestion("q?")}, Wait: true, Timeout: time.Minute, MaxQuestions: 3})
		done <- err
	}()
	st := qWaitQuestion(t, orch, 1)
	cancel()
	err := <-done
	require.ErrorIs(t, err, context.Canceled)
	assert.True(t, strings.HasSuffix(err.Error(), core.BestJudgment))
	assert.False(t, lock.IsLocked(st.WaitLock()))

	pending, _, err := orch.Questions(context.Background(), questions.QuestionsOptions{Pending: true})
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Equal(t, st.ID, pending[0].ID)

	waitDone := make(chan qOutcome, 1)
	go func() {
		res, err := worker.WaitQuestions(context.Background(), questions.WaitOptions{IDs: []string{st.ID}})
		waitDone <- qOutcome{res, err}
	}()
	require.Eventually(t, func() bool { return lock.IsLocked(st.WaitLock()) }, 5*time.Second, 5*time.Millisecond)
	ar, err := orch.Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: "2"})
	require.NoError(t, err)
	assert.Equal(t, core.SignalAsk, ar.Signal)
	out := <-waitDone
	require.NoError(t, out.err)
	assert.Equal(t, "Use argon2 (stronger but new dep)", out.res.Questions[0].Answer.Answer)
}

func TestQuestionWaitDeadlineFromRecord(t *testing.T) {
	_, _, worker, _ := qPair(t)
	q := qQuestion("q?")
	q.Urgency = messages.NonBlocking
	res, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, Timeout: 100 * time.Millisecond, AutoAnswer: true, MaxQuestions: 3})
	require.NoError(t, err)
	// The question's own deadline (asked_at + 100ms) applies to a later wait, with its auto-answer.
	wres, err := worker.WaitQuestions(context.Background(), questions.WaitOptions{IDs: []string{res.Questions[0].ID}})
	require.NoError(t, err)
	assert.Equal(t, questions.QuestionAutoAnswered, wres.Questions[0].State)

	// An explicit timeout and auto-answer off override the record.
	res, err = worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, Timeout: time.Hour, AutoAnswer: true, MaxQuestions: 3})
	require.NoError(t, err)
	off := false
	_, err = worker.WaitQuestions(context.Background(), questions.WaitOptions{IDs: []string{res.Questions[0].ID}, Timeout: 50 * time.Millisecond, TimeoutSet: true, AutoAnswer: &off})
	require.ErrorIs(t, err, store.ErrTimeout)
	assert.Contains(t, err.Error(), "within 50ms")

	// A question asked without auto-answer is never auto-answered by a waiter's default.
	res, err = worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, Timeout: time.Hour, AutoAnswer: false, MaxQuestions: 3})
	require.NoError(t, err)
	on := true
	wres, err = worker.WaitQuestions(context.Background(), questions.WaitOptions{IDs: []string{res.Questions[0].ID}, Timeout: 50 * time.Millisecond, TimeoutSet: true, AutoAnswer: &on})
	require.ErrorIs(t, err, store.ErrTimeout)
	assert.Equal(t, questions.QuestionPending, wres.Questions[0].State, "the record's false stands")

	_, err = worker.WaitQuestions(context.Background(), questions.WaitOptions{IDs: []string{"task-3.q9-0000"}})
	assert.ErrorIs(t, err, store.ErrNotFound)
}

func qGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}

func TestQuestionGitBinding(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("the git binding test needs git: %v", err)
	}
	repo := t.TempDir()
	qGit(t, repo, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\n"), 0o600))
	qGit(t, repo, "add", "a.txt")
	qGit(t, repo, "commit", "-q", "-m", "one")

	tests := []struct {
		name   string
		change func()
		reason string
	}{
		{"unchanged", func() {}, ""},
		{"work tree edited", func() {
			require.NoError(t, os.WriteFile(filepath.Join(repo, "a.txt"), []byte("two\n"), 0o600))
		}, "the work tree differs"},
		{"new commit", func() {
			qGit(t, repo, "commit", "-q", "-am", "two")
		}, "HEAD moved from"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, orch, worker, _ := qPair(t)
			q := qQuestion("may I deploy?")
			q.Urgency = messages.NonBlocking
			res, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, MaxQuestions: 3, BindGit: true, Dir: repo})
			require.NoError(t, err)
			require.NotNil(t, res.Questions[0].Git)
			assert.Len(t, res.Questions[0].Git.Fingerprint, 32)
			tt.change()
			_, err = orch.Answer(context.Background(), questions.AnswerOptions{ID: res.Questions[0].ID, Raw: "A"})
			if tt.reason == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, core.ErrStale)
			assert.Contains(t, err.Error(), tt.reason)
			st, err := questions.FindQuestion(filepath.Dir(res.Questions[0].Dir), res.Questions[0].ID)
			require.NoError(t, err)
			assert.Equal(t, questions.QuestionPending, st.State, "the files keep it pending; it is judged stale")
		})
	}

	_, _, worker, _ := qPair(t)
	_, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{qQuestion("q?")}, BindGit: true, Dir: t.TempDir()})
	assert.ErrorContains(t, err, "not inside a git work tree")
}

func TestQuestionFilesAreNotForeign(t *testing.T) {
	assert.True(t, exchange.IsQuestionFile("task-3.q1.question"))
	assert.True(t, exchange.IsQuestionFile("task-3.q1.answers.jsonl"))
	assert.False(t, exchange.IsQuestionFile("001-request.md"))
	assert.False(t, exchange.IsQuestionFile(".task-3.q1.wait.lock"))
}

func TestQuestionIntoShellOrchestratorIsACommentLine(t *testing.T) {
	f, _, worker, _ := qPair(t)
	f.Mu.Lock()
	p := f.PaneMap["%1"]
	p.Command = "bash" // the orchestrator's pane is at a shell prompt
	f.PaneMap["%1"] = p
	f.Mu.Unlock()

	q := qQuestion("drop the table?; $(touch pwn)")
	q.Urgency = messages.NonBlocking
	res, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, MaxQuestions: 3})
	require.NoError(t, err)
	ds := f.Delivered()
	last := ds[len(ds)-1]
	require.Equal(t, messages.PaneID("%1"), last.Pane)
	line := string(last.Content)
	assert.True(t, strings.HasPrefix(line, "# "), "a shell runs a QUESTION block's lines: only a comment goes in, got %q", line)
	assert.NotContains(t, line, "\n")
	assert.NotContains(t, line, "$")
	assert.Contains(t, line, res.Questions[0].ID)
}
