package questions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

func TestAskBlockingWakesOnAnswer(t *testing.T) {
	w := newWorld(t)
	x := w.request("%1", "%2")
	done := askAsync(w.desk("%2"), questions.AskOptions{Questions: []messages.Question{numbered("bcrypt or argon2?")}, Wait: true, Timeout: time.Minute, AutoAnswer: true, MaxQuestions: 3})
	st := w.waitAsked(1)

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

	// The question file appears before its QUESTION block is handed over: wait for it.
	require.Eventually(t, func() bool { return len(w.delivered("%1")) == 1 }, 10*time.Second, time.Millisecond)
	mail := w.mailer.mails()[0]
	assert.Equal(t, messages.MailQuestion, mail.Kind)
	assert.Equal(t, []string{st.ID}, mail.Question)
	assert.Equal(t, messages.PaneID("%2"), mail.From)
	q, err := messages.ParseQuestionBlock(w.delivered("%1")[0])
	require.NoError(t, err)
	assert.Equal(t, st.ID, q.ID)
	assert.Equal(t, "bcrypt or argon2?", q.Text)
	assert.Contains(t, w.delivered("%1")[0], "To answer: wcomm answer "+st.ID+" A")

	ar, err := w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: "b"})
	require.NoError(t, err)
	assert.Equal(t, core.SignalAsk, ar.Signal)
	assert.Equal(t, "the worker's waiting ask (pane %2) woke on the answer", ar.Say())
	assert.Equal(t, st.ID+" answered: Use argon2 (stronger but new dep); "+ar.Say(), ar.Line())
	out := outcome(t, done)
	require.NoError(t, out.err)
	require.Len(t, out.res.Questions, 1)
	assert.True(t, out.res.Delivered)
	got := out.res.Questions[0]
	assert.Equal(t, questions.QuestionAnswered, got.State)
	assert.Equal(t, messages.Answer{Text: "Use argon2 (stronger but new dep)", Task: "task-3", DecidedBy: "user", ID: st.ID}, *got.AnswerBlock())
	assert.Equal(t, "b", got.Answer.Raw)
	assert.Equal(t, "letter", got.Answer.Form)
	assert.Equal(t, "local", got.Answer.Source)
	assert.Empty(t, w.delivered("%2"), "a waiting ask is the signal: nothing typed into the worker")
	assert.Equal(t, []string{questions.QAsked, questions.QAccepted, questions.QAskWoken}, events(got))
	assert.False(t, lock.IsLocked(st.WaitLock()), "the ask let its question go")
}

func TestAskAnswerPastedWhenNoAskWaits(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("bcrypt or argon2?"))}, MaxQuestions: 3})
	require.NoError(t, err)
	st := res.Questions[0]
	assert.Equal(t, questions.QuestionPending, st.State)
	assert.Equal(t, "answer: bcrypt or argon2?", st.Waits)
	assert.Nil(t, st.AnswerBlock())

	ar, err := w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: "Use BCRYPT (already in deps)", Source: "telegram"})
	require.NoError(t, err)
	assert.Equal(t, core.SignalPasted, ar.Signal)
	assert.Contains(t, ar.Say(), "pasted into worker pane %2")
	typed := w.delivered("%2")
	require.Len(t, typed, 1)
	a, err := messages.ParseAnswerBlock(typed[0])
	require.NoError(t, err)
	assert.Equal(t, messages.Answer{Text: "Use bcrypt (already in deps)", Task: "task-3", DecidedBy: "user", ID: st.ID}, a)
	assert.Equal(t, messages.MailAnswer, w.mailer.mails()[1].Kind)
	assert.Contains(t, events(ar.Question), questions.QAccepted)
	assert.Empty(t, ar.Question.Waits, "nothing waits once answered")

	// ask --wait after the fact returns the recorded answer at once.
	wres, err := w.desk("%2").WaitQuestions(context.Background(), questions.WaitOptions{IDs: []string{st.ID}})
	require.NoError(t, err)
	assert.Equal(t, "telegram", wres.Questions[0].Answer.Source)
	assert.Equal(t, "text", wres.Questions[0].Answer.Form)
}

// A worker whose pane is busy gets the answer queued in its outbox, and an ask that then takes it
// marks it read, so the queued block is not typed after all.
func TestAskAnswerQueuedForABusyWorker(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, MaxQuestions: 3})
	require.NoError(t, err)
	st := res.Questions[0]
	w.mailer.setQueue("%2", true)
	ar, err := w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: "1"})
	require.NoError(t, err)
	assert.Equal(t, core.SignalQueued, ar.Signal)
	assert.Contains(t, ar.Say(), "is busy: the ANSWER block is queued")
	assert.Empty(t, w.delivered("%2"))

	// The mailbox logs the queued block in the question's log; an ask that returns the answer
	// logs it read.
	require.NoError(t, w.desk("%2").LogQ(st, questions.QAnswerQueued, nil))
	_, err = w.desk("%2").WaitQuestions(context.Background(), questions.WaitOptions{IDs: []string{st.ID}})
	require.NoError(t, err)
	evs := events(st)
	assert.Equal(t, questions.QAnswerRead, evs[len(evs)-1])
}

// A blocking ask to an orchestrator whose pane is busy: the QUESTION block waits in its outbox.
func TestAskQueuedForABusyOrchestrator(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	w.mailer.setQueue("%1", true)
	res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, MaxQuestions: 3})
	require.NoError(t, err)
	assert.True(t, res.Queued)
	assert.False(t, res.Delivered)
	assert.Empty(t, w.delivered("%1"))
}

func TestAskAnswerValidationByType(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	ask := func(q messages.Question) *questions.QuestionStatus {
		res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(q)}, MaxQuestions: 10})
		require.NoError(t, err)
		return res.Questions[0]
	}
	yn := numbered("ship it?")
	yn.Type, yn.Options = messages.YesNo, nil
	fixed := numbered("retry?")
	fixed.Type, fixed.Options = messages.Fixed, []string{"retry", "stop"}
	free := numbered("which port?")
	free.Type, free.Options, free.Pattern = messages.Freeform, nil, "[0-9]{2,5}"
	tests := []struct {
		name    string
		q       messages.Question
		invalid []string
		valid   string
		want    string
		form    string
	}{
		{"numbered by number", numbered("a"), []string{"3", "C", "bcrypt"}, "1", "Use bcrypt (already in deps)", "number"},
		{"yes-no", yn, []string{"maybe", "C"}, "Y", "yes", "yes-no"},
		{"fixed", fixed, []string{"A", "1", "retry now"}, "STOP", "stop", "fixed"},
		{"freeform with pattern", free, []string{"port 80", "x"}, " 8080 ", "8080", "freeform"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := ask(tt.q)
			for _, bad := range tt.invalid {
				_, err := w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: bad})
				require.ErrorIs(t, err, messages.ErrInvalidAnswer, bad)
				assert.Contains(t, err.Error(), "accepted: ")
				assert.Contains(t, err.Error(), "the question stays open")
				_, statErr := os.Stat(st.File(messages.SuffixAnswer))
				assert.True(t, errors.Is(statErr, os.ErrNotExist), "an invalid answer must not consume the question")
			}
			ar, err := w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: tt.valid})
			require.NoError(t, err)
			assert.Equal(t, tt.want, ar.Question.Answer.Answer)
			assert.Equal(t, tt.q.Type, ar.Question.Answer.Type)
			assert.Equal(t, tt.form, ar.Question.Answer.Form)
			assert.Equal(t, len(tt.invalid), count(events(ar.Question), questions.QInvalid))
		})
	}
}

// A message goes with a permission question's deny only: on any other question it is refused,
// and the question stays open.
func TestAskAnswerMessageOnlyWithAPermissionDeny(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, MaxQuestions: 3})
	require.NoError(t, err)
	_, err = w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: res.Questions[0].ID, Raw: "A", Message: "why"})
	var ue *core.UsageError
	require.ErrorAs(t, err, &ue)
	st, err := questions.FindQuestion(w.root, res.Questions[0].ID)
	require.NoError(t, err)
	assert.Equal(t, questions.QuestionPending, st.State)
}

func TestAskRacingAnswersFirstValidWins(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("bcrypt or argon2?"))}, MaxQuestions: 3})
	require.NoError(t, err)
	id := res.Questions[0].ID

	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			raw := []string{"A", "B", "Z"}[i%3] // Z is invalid: it never wins
			_, errs[i] = w.desk("").Answer(context.Background(), questions.AnswerOptions{ID: id, Raw: raw, Source: "racer"})
		}(i)
	}
	wg.Wait()
	won, invalid := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case errors.Is(err, messages.ErrInvalidAnswer):
			invalid++
		default:
			assert.True(t, isStale(err), "%v", err)
			assert.Contains(t, err.Error(), "the first answer stands")
		}
	}
	assert.Equal(t, 1, won)
	st, err := questions.FindQuestion(w.root, id)
	require.NoError(t, err)
	evs := events(st)
	assert.Equal(t, 1, count(evs, questions.QAccepted))
	assert.Equal(t, n-1-invalid, count(evs, questions.QStale))
	assert.Contains(t, []string{"Use bcrypt (already in deps)", "Use argon2 (stronger but new dep)"}, st.Answer.Answer)

	// A late answer changes nothing and is logged as stale.
	_, err = w.desk("").Answer(context.Background(), questions.AnswerOptions{ID: id, Raw: "A"})
	require.True(t, isStale(err), "%v", err)
	st2, err := questions.FindQuestion(w.root, id)
	require.NoError(t, err)
	assert.Equal(t, st.Answer.Answer, st2.Answer.Answer, "the first answer stands")
	assert.Equal(t, 1, count(events(st2), questions.QAccepted))
}

func TestAskTimeout(t *testing.T) {
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
			w := newWorld(t)
			w.request("%1", "%2")
			res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{numbered("q?")}, Wait: true,
				Timeout: 150 * time.Millisecond, AutoAnswer: tt.auto, MaxQuestions: 3})
			st := res.Questions[0]
			assert.Equal(t, tt.wantState, st.State)
			if tt.wantErr == nil {
				require.NoError(t, err)
				assert.Equal(t, messages.Answer{Text: "Use bcrypt (already in deps)", Task: "task-3", DecidedBy: "auto-timeout", ID: st.ID}, *st.AnswerBlock())
				assert.Contains(t, st.AutoNote(), "its first option was taken for you")
				assert.False(t, st.TimedOut())
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			assert.True(t, st.TimedOut())
			assert.Empty(t, st.AutoNote())
			assert.True(t, strings.HasSuffix(err.Error(), core.BestJudgment), err.Error())
			assert.Contains(t, err.Error(), "ask --wait "+st.ID)
			assert.Contains(t, events(st), questions.QTimedOut)
			// Still pending, still answerable; no ask waits now, so the answer is typed.
			ar, err := w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: "2"})
			require.NoError(t, err)
			assert.Equal(t, core.SignalPasted, ar.Signal)
			assert.Len(t, w.delivered("%2"), 1)
		})
	}
}

// A question without options is never auto-answered: there is no first option to take.
func TestAskTimeoutWithoutOptionsDecidesNothing(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	q := numbered("which port?")
	q.Type, q.Options = messages.Freeform, nil
	res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, Wait: true,
		Timeout: 50 * time.Millisecond, AutoAnswer: true, MaxQuestions: 3})
	require.ErrorIs(t, err, store.ErrTimeout)
	assert.Equal(t, questions.QuestionPending, res.Questions[0].State)
	assert.Nil(t, res.Questions[0].Answer)
}

func TestAskCapPerWorkerPerTask(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	var states []string
	for i := 0; i < 5; i++ {
		q := nonBlocking(numbered("q?"))
		if i == 4 {
			q.Task = "task-4"
		}
		res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, MaxQuestions: 3})
		require.NoError(t, err)
		states = append(states, res.Questions[0].State)
		if i == 3 {
			b := res.Questions[0].AnswerBlock()
			require.NotNil(t, b)
			assert.Equal(t, messages.DecidedByCap, b.DecidedBy)
			assert.Contains(t, b.Text, `"assumed — needs review"`)
			assert.Equal(t, "task-3.q4", messages.QuestionStem(res.Questions[0].Task, res.Questions[0].Seq))
			_, err := w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: res.Questions[0].ID, Raw: "A"})
			assert.True(t, isStale(err), "a capped question takes no answer: %v", err)
		}
	}
	assert.Equal(t, []string{questions.QuestionPending, questions.QuestionPending, questions.QuestionPending, questions.QuestionCapExceeded, questions.QuestionPending}, states,
		"the cap is per task: task-4's first question is relayed")
	assert.Len(t, w.delivered("%1"), 4, "3 relayed questions and task-4's: the capped one was never handed over")
}

// Without MaxQuestions the settings' default cap applies, not no cap at all.
func TestAskDefaultCap(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	capped := -1
	for i := 0; i < 10 && capped < 0; i++ {
		res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}})
		require.NoError(t, err)
		if res.Questions[0].State == questions.QuestionCapExceeded {
			capped = i
		}
	}
	assert.Equal(t, settings.DefaultMaxQuestions, capped, "the default cap holds")
}

func TestAskSequenceAcrossConcurrentAskers(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	const n = 6
	var wg sync.WaitGroup
	got := make([]string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, MaxQuestions: n})
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

func TestAskIDUniqueAcrossFolders(t *testing.T) {
	w := newWorld(t, "%1", "%2", "%3")
	worker := w.desk("%2")
	// The same two random bytes come first for both asks: the second must pick another tag.
	worker.Rand = bytes.NewReader([]byte{0xab, 0x01, 0xab, 0x01, 0xcd, 0x02})
	var ids []string
	for _, orch := range []string{"%1", "%3"} {
		res, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, To: orch, MaxQuestions: 3})
		require.NoError(t, err)
		ids = append(ids, res.Questions[0].ID)
	}
	assert.Equal(t, []string{"task-3.q1-ab01", "task-3.q1-cd02"}, ids)

	// The end of an id names it once it is unique; the shared end names both.
	d := w.desk("")
	id, err := d.QuestionID("q1-cd02")
	require.NoError(t, err)
	assert.Equal(t, "task-3.q1-cd02", id)
	_, err = d.QuestionID("q1")
	assert.Error(t, err)
}

func TestAskPlacement(t *testing.T) {
	w := newWorld(t)
	worker := w.desk("%2")
	_, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{numbered("q?")}})
	require.ErrorIs(t, err, store.ErrNotFound)
	var need *core.NeedError
	require.ErrorAs(t, err, &need)
	assert.Equal(t, core.NeedOrchestrator, need.Need)
	assert.Contains(t, err.Error(), "name the orchestrator's pane")

	_, err = worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{numbered("q?")}, To: "%2"})
	assert.ErrorContains(t, err, "your own pane")

	bad := numbered("q?")
	bad.Task = "../../etc"
	_, err = worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{bad}, To: "%1"})
	require.ErrorIs(t, err, messages.ErrSyntax)
	entries, _ := os.ReadDir(w.root)
	assert.Empty(t, entries, "nothing is written for an invalid question")

	_, err = worker.Ask(context.Background(), questions.AskOptions{To: "%1"})
	assert.ErrorContains(t, err, "no question to ask")
	_, err = w.desk("").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{numbered("q?")}, To: "%1"})
	assert.Error(t, err, "an ask outside any pane has no worker")

	// With To and no request, the pair's folder is made as send makes it, and reused by send.
	res, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, To: "%1"})
	require.NoError(t, err)
	assert.Empty(t, res.Questions[0].Exchange)
	x := w.request("%1", "%2")
	assert.Equal(t, res.Questions[0].Dir, x.Dir)

	// A request to the worker ties the question, by id or as the newest open one.
	res, err = worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, Exchange: x.ID})
	require.NoError(t, err)
	assert.Equal(t, x.ID, res.Questions[0].Exchange)
	res, err = worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, To: "%1"})
	require.NoError(t, err)
	assert.Equal(t, x.ID, res.Questions[0].Exchange, "the open request from the pane named")

	// A request addressed to another pane is not the asker's to ask about.
	_, err = w.desk("%1").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{numbered("q?")}, Exchange: x.ID})
	assert.ErrorContains(t, err, "is addressed to pane %2, not to your pane %1")

	// An answered request takes no question.
	w.respond(x)
	_, err = worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{numbered("q?")}, Exchange: x.ID})
	require.True(t, isStale(err), "%v", err)
	assert.Contains(t, err.Error(), "already answered")
}

// A request that came through a tmux server that has since restarted has no orchestrator pane
// left to ask.
func TestAskAfterTheServerRestarted(t *testing.T) {
	w := newWorld(t)
	x := w.request("%1", "%2")
	w.tmux.Mu.Lock()
	w.tmux.Server.StartTime++
	w.tmux.Mu.Unlock()
	_, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{numbered("q?")}, Exchange: x.ID})
	require.True(t, isStale(err), "%v", err)
	assert.Contains(t, err.Error(), "has since restarted")
}

func TestAskUndelivered(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	w.tmux.Mu.Lock()
	w.tmux.Refuse["%1"] = true
	w.tmux.Mu.Unlock()
	res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{numbered("q?")}, Wait: true, Timeout: time.Minute, MaxQuestions: 3})
	require.ErrorIs(t, err, core.ErrUnrelayed)
	assert.True(t, strings.HasSuffix(err.Error(), core.BestJudgment))
	st := res.Questions[0]
	assert.Equal(t, questions.QuestionPending, st.State)
	assert.Contains(t, events(st), questions.QUndelivered)
	assert.False(t, lock.IsLocked(st.WaitLock()), "an ask that reached nobody waits for nothing")
	// The question stays answerable; the answer goes into the worker's pane.
	ar, err := w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: "A"})
	require.NoError(t, err)
	assert.Equal(t, core.SignalPasted, ar.Signal)
}

// An answer whose worker pane refuses it is still recorded: the worker gets it with ask --wait.
func TestAskAnswerRecordedWhenTheWorkerRefuses(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, MaxQuestions: 3})
	require.NoError(t, err)
	w.tmux.Mu.Lock()
	w.tmux.Refuse["%2"] = true
	w.tmux.Mu.Unlock()
	ar, err := w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: res.Questions[0].ID, Raw: "A"})
	require.NoError(t, err)
	assert.Empty(t, ar.Signal)
	assert.Contains(t, ar.Warning, "ask --wait "+res.Questions[0].ID)
	assert.Equal(t, questions.QuestionAnswered, ar.Question.State)
	assert.Contains(t, events(ar.Question), questions.QAnswerLost)
}

func TestAskHook(t *testing.T) {
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
		{"a failing hook's words are said", []string{"sh", "-c", "echo no route >&2; exit 3"}, false, time.Second, nil, "no route"},
		{"slow hook is killed", []string{"sleep", "30"}, false, 100 * time.Millisecond, nil, "did not finish within 100ms"},
		{"hook reaches someone when the pane refuses", []string{"tee", out}, true, time.Second, nil, "could not paste"},
		{"nothing reaches anyone", []string{"false"}, true, time.Second, core.ErrUnrelayed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(out)
			w := newWorld(t)
			w.request("%1", "%2")
			w.tmux.Mu.Lock()
			w.tmux.Refuse["%1"] = tt.refuse
			w.tmux.Mu.Unlock()
			start := time.Now()
			res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, MaxQuestions: 3,
				Hook: tt.hook, HookTimeout: tt.timeout, Dir: t.TempDir()})
			assert.Less(t, time.Since(start), 10*time.Second)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			if tt.warn != "" {
				assert.Contains(t, strings.Join(res.Warnings, "\n"), tt.warn)
				if tt.hook[0] != "tee" {
					assert.Contains(t, events(res.Questions[0]), "hook-failed")
				}
			}
			if tt.hook[0] == "tee" {
				data, err := os.ReadFile(out)
				require.NoError(t, err)
				var got questions.QuestionStatus
				require.NoError(t, json.Unmarshal(data, &got))
				assert.Equal(t, res.Questions[0].ID, got.ID)
				assert.Equal(t, "q?", got.Text)
				assert.Equal(t, questions.QuestionPending, got.State)
				assert.Contains(t, events(res.Questions[0]), questions.QHookRan)
			}
		})
	}
}

func TestAskStale(t *testing.T) {
	t.Run("request answered", func(t *testing.T) {
		w := newWorld(t)
		x := w.request("%1", "%2")
		res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, MaxQuestions: 3})
		require.NoError(t, err)
		w.respond(x)
		list, _, err := w.desk("%1").Questions(context.Background(), questions.QuestionsOptions{})
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.Equal(t, questions.QuestionStale, list[0].State)
		assert.Contains(t, list[0].Reason, "request "+x.ID+" was answered")
		assert.Empty(t, list[0].Waits)
		pending, _, _ := w.desk("%1").Questions(context.Background(), questions.QuestionsOptions{Pending: true})
		assert.Empty(t, pending, "a stale question is not surfaced")
		files, _, _ := w.desk("%1").Questions(context.Background(), questions.QuestionsOptions{FilesOnly: true})
		assert.Equal(t, questions.QuestionPending, files[0].State, "the files alone judge no staleness")
		_, err = w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: res.Questions[0].ID, Raw: "A"})
		require.True(t, isStale(err), "%v", err)
		assert.Contains(t, err.Error(), "was answered")
		assert.Contains(t, events(res.Questions[0]), questions.QStale)
	})
	t.Run("worker pane gone", func(t *testing.T) {
		w := newWorld(t)
		w.request("%1", "%2")
		res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, MaxQuestions: 3})
		require.NoError(t, err)
		w.tmux.Mu.Lock()
		delete(w.tmux.PaneMap, "%2")
		w.tmux.Mu.Unlock()
		_, err = w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: res.Questions[0].ID, Raw: "A"})
		require.True(t, isStale(err), "%v", err)
		assert.Contains(t, err.Error(), "worker pane %2 is gone")
		_, statErr := os.Stat(res.Questions[0].File(messages.SuffixAnswer))
		assert.True(t, errors.Is(statErr, os.ErrNotExist), "a stale answer records no answer")
	})
	t.Run("worker pane dead", func(t *testing.T) {
		w := newWorld(t)
		w.request("%1", "%2")
		res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, MaxQuestions: 3})
		require.NoError(t, err)
		w.tmux.Mu.Lock()
		p := w.tmux.PaneMap["%2"]
		p.Dead = true
		w.tmux.PaneMap["%2"] = p
		w.tmux.Mu.Unlock()
		st, err := w.desk("%1").Question(context.Background(), res.Questions[0].ID)
		require.NoError(t, err)
		assert.Equal(t, questions.QuestionStale, st.State)
		assert.Contains(t, st.Reason, "worker pane %2 is dead")
	})
	t.Run("server restarted", func(t *testing.T) {
		w := newWorld(t)
		w.request("%1", "%2")
		_, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, MaxQuestions: 3})
		require.NoError(t, err)
		w.tmux.Mu.Lock()
		w.tmux.Server.StartTime++
		w.tmux.Mu.Unlock()
		list, _, _ := w.desk("%1").Questions(context.Background(), questions.QuestionsOptions{})
		assert.Equal(t, questions.QuestionStale, list[0].State)
		assert.Contains(t, list[0].Reason, "restarted")
	})
	t.Run("another server on another socket tells nothing", func(t *testing.T) {
		w := newWorld(t)
		w.request("%1", "%2")
		_, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, MaxQuestions: 3})
		require.NoError(t, err)
		w.tmux.Mu.Lock()
		w.tmux.Server.StartTime++
		w.tmux.Server.Socket = "/tmp/other"
		delete(w.tmux.PaneMap, "%2")
		w.tmux.Mu.Unlock()
		list, _, _ := w.desk("%1").Questions(context.Background(), questions.QuestionsOptions{})
		assert.Equal(t, questions.QuestionPending, list[0].State, "a pane of another server is not the worker's")
	})
}

func TestAskResolve(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	done := askAsync(w.desk("%2"), questions.AskOptions{Questions: []messages.Question{numbered("q?")}, Wait: true, Timeout: time.Minute, MaxQuestions: 3})
	st := w.waitAsked(1)
	orch := w.desk("%1")

	_, err := orch.ResolveQuestion(context.Background(), st.ID, "  ")
	assert.ErrorContains(t, err, "needs a reason")
	_, err = orch.ResolveQuestion(context.Background(), st.ID, strings.Repeat("r", 1001))
	var ue *core.UsageError
	assert.ErrorAs(t, err, &ue)
	got, err := orch.ResolveQuestion(context.Background(), st.ID, "task was cancelled")
	require.NoError(t, err)
	assert.Equal(t, questions.QuestionResolved, got.State)
	assert.Equal(t, messages.PaneID("%1"), got.Resolved.Pane)

	out := outcome(t, done)
	require.ErrorIs(t, out.err, core.ErrNoAnswer)
	assert.Contains(t, out.err.Error(), "task was cancelled")
	assert.True(t, strings.HasSuffix(out.err.Error(), core.BestJudgment))

	_, err = orch.Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: "A"})
	require.True(t, isStale(err), "%v", err)
	assert.Contains(t, err.Error(), "resolved without an answer")
	_, err = orch.ResolveQuestion(context.Background(), st.ID, "again")
	assert.ErrorIs(t, err, store.ErrAnswered)
	_, statErr := os.Stat(st.File(messages.SuffixAnswer))
	assert.True(t, errors.Is(statErr, os.ErrNotExist), "resolve invents no answer")

	_, err = orch.ResolveQuestion(context.Background(), "task-3.q9-0000", "gone")
	assert.ErrorIs(t, err, store.ErrNotFound)
}

// A killed ask leaves its question pending; an ask --wait (the worker's restart) picks it up and
// wakes on the answer.
func TestAskSurvivesAKilledAsk(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := w.desk("%2").Ask(ctx, questions.AskOptions{Questions: []messages.Question{numbered("q?")}, Wait: true, Timeout: time.Minute, MaxQuestions: 3})
		done <- err
	}()
	st := w.waitAsked(1)
	cancel()
	err := <-done
	require.ErrorIs(t, err, context.Canceled)
	assert.True(t, strings.HasSuffix(err.Error(), core.BestJudgment))
	assert.False(t, lock.IsLocked(st.WaitLock()))

	pending, _, err := w.desk("%1").Questions(context.Background(), questions.QuestionsOptions{Pending: true})
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Equal(t, st.ID, pending[0].ID)

	waitDone := make(chan askOutcome, 1)
	go func() {
		res, err := w.desk("%2").WaitQuestions(context.Background(), questions.WaitOptions{IDs: []string{st.ID}})
		waitDone <- askOutcome{res, err}
	}()
	require.Eventually(t, func() bool { return lock.IsLocked(st.WaitLock()) }, 10*time.Second, 5*time.Millisecond)
	ar, err := w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: "2"})
	require.NoError(t, err)
	assert.Equal(t, core.SignalAsk, ar.Signal)
	out := outcome(t, waitDone)
	require.NoError(t, out.err)
	assert.Equal(t, "Use argon2 (stronger but new dep)", out.res.Questions[0].Answer.Answer)
	assert.Empty(t, w.delivered("%2"))
}

func TestAskWaitDeadlineFromRecord(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	worker := w.desk("%2")
	q := nonBlocking(numbered("q?"))
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
	_, err = worker.WaitQuestions(context.Background(), questions.WaitOptions{})
	assert.ErrorContains(t, err, "no question id")
	_, err = newWorld(t).desk("%2").WaitQuestions(context.Background(), questions.WaitOptions{IDs: []string{"task-3.q1-0000"}})
	assert.ErrorIs(t, err, store.ErrNotFound, "no root yet")
}

// A wait for a question resolved meanwhile ends with ErrNoAnswer, not a timeout.
func TestAskWaitForAResolvedQuestion(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, MaxQuestions: 3})
	require.NoError(t, err)
	_, err = w.desk("%1").ResolveQuestion(context.Background(), res.Questions[0].ID, "not needed")
	require.NoError(t, err)
	_, err = w.desk("%2").WaitQuestions(context.Background(), questions.WaitOptions{IDs: []string{res.Questions[0].ID}})
	require.ErrorIs(t, err, core.ErrNoAnswer)
	assert.Contains(t, err.Error(), "not needed")
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}

func TestAskGitBinding(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("the git binding test needs git: %v", err)
	}
	repo := t.TempDir()
	gitIn(t, repo, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\n"), 0o600))
	gitIn(t, repo, "add", "a.txt")
	gitIn(t, repo, "commit", "-q", "-m", "one")

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
			gitIn(t, repo, "commit", "-q", "-am", "two")
		}, "HEAD moved from"},
		{"folder gone", func() {
			require.NoError(t, os.RemoveAll(filepath.Join(repo, ".git")))
		}, "cannot be read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.request("%1", "%2")
			res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("may I deploy?"))}, MaxQuestions: 3, BindGit: true, Dir: repo})
			require.NoError(t, err)
			require.NotNil(t, res.Questions[0].Git)
			assert.Len(t, res.Questions[0].Git.Fingerprint, 32)
			assert.Contains(t, w.delivered("%1")[0], "bound to the git state of "+repo)
			tt.change()
			_, err = w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: res.Questions[0].ID, Raw: "A"})
			if tt.reason == "" {
				require.NoError(t, err)
				return
			}
			require.True(t, isStale(err), "%v", err)
			assert.Contains(t, err.Error(), tt.reason)
			st, err := questions.FindQuestion(w.root, res.Questions[0].ID)
			require.NoError(t, err)
			assert.Equal(t, questions.QuestionPending, st.State, "the files keep it pending; it is judged stale")
		})
	}

	w := newWorld(t)
	w.request("%1", "%2")
	_, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{numbered("q?")}, BindGit: true, Dir: t.TempDir()})
	assert.ErrorContains(t, err, "not inside a git work tree")
}

// An ask of several questions at once hands them over in one block and waits for them all.
func TestAskSeveralQuestionsAtOnce(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	yn := numbered("ship it?")
	yn.Type, yn.Options = messages.YesNo, nil
	done := askAsync(w.desk("%2"), questions.AskOptions{Questions: []messages.Question{numbered("which hash?"), yn}, Wait: true, Timeout: time.Minute, MaxQuestions: 3})
	st2 := w.waitAsked(2)
	require.Eventually(t, func() bool { return len(w.delivered("%1")) == 1 }, 10*time.Second, time.Millisecond)
	assert.Len(t, w.mailer.mails()[0].Question, 2, "both questions in one block")
	list, _, err := w.desk("").Questions(context.Background(), questions.QuestionsOptions{})
	require.NoError(t, err)
	require.Len(t, list, 2)
	_, err = w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: st2.ID, Raw: "yes"})
	require.NoError(t, err)
	select {
	case <-done:
		t.Fatal("the ask ended with a question still open")
	case <-time.After(50 * time.Millisecond):
	}
	_, err = w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: list[0].ID, Raw: "1"})
	require.NoError(t, err)
	out := outcome(t, done)
	require.NoError(t, out.err)
	for _, st := range out.res.Questions {
		assert.Equal(t, questions.QuestionAnswered, st.State)
	}
}

// A permission question is an agent's hook's, never asked by ask; an approval is one yes-no
// question.
func TestAskRefusesWhatItDoesNotAsk(t *testing.T) {
	w := newWorld(t)
	x := w.request("%1", "%2")
	q := numbered("may I?")
	q.Type, q.Options = messages.Permission, messages.PermissionOptions()
	_, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, Exchange: x.ID})
	var ue *core.UsageError
	require.ErrorAs(t, err, &ue)

	_, err = w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{numbered("q?")}, Exchange: x.ID, Intent: &messages.Intent{Action: "publish"}})
	assert.ErrorContains(t, err, "one yes-no question")
	list, _, _ := w.desk("").Questions(context.Background(), questions.QuestionsOptions{})
	assert.Empty(t, list, "nothing asked")
}

// The bridge to the answer channels is started for a relayed question; a failure to start it is
// a warning, worded by whether the settings or the start failed.
func TestAskStartsTheBridge(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		warn string
	}{
		{"started", nil, ""},
		{"unusable channels", core.ErrChannelsUnusable, "still reaches you by its other routes"},
		{"failed start", errors.New("no binary"), "run 'wcomm bridge'"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.request("%1", "%2")
			d := w.desk("%2")
			started := 0
			d.Helpers.Bridge = func() error { started++; return tt.err }
			res, err := d.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, MaxQuestions: 3})
			require.NoError(t, err)
			assert.Equal(t, 1, started)
			if tt.warn == "" {
				assert.Empty(t, res.Warnings)
			} else {
				assert.Contains(t, strings.Join(res.Warnings, "\n"), tt.warn)
			}
		})
	}
}

// A wait starts the bridge for a question still pending, and nothing for one already decided.
func TestWaitStartsTheBridgeOnlyWhilePending(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	d := w.desk("%2")
	started := 0
	d.Helpers.Bridge = func() error { started++; return errors.New("no wcomm-bridge") }
	res, err := d.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?")), nonBlocking(numbered("r?"))}, MaxQuestions: 3})
	require.NoError(t, err)
	require.Equal(t, 1, started, "one start for the ask's questions")
	ids := []string{res.Questions[0].ID, res.Questions[1].ID}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	wres, _ := d.WaitQuestions(ctx, questions.WaitOptions{IDs: ids})
	assert.Equal(t, 2, started, "one start for the wait")
	require.Len(t, wres.Warnings, 1)
	assert.Contains(t, wres.Warnings[0], "could not start the bridge to your answer channels (no wcomm-bridge); run 'wcomm bridge'")

	for _, id := range ids {
		_, err = w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: id, Raw: "1"})
		require.NoError(t, err)
	}
	wres, err = d.WaitQuestions(context.Background(), questions.WaitOptions{IDs: ids})
	require.NoError(t, err)
	assert.Empty(t, wres.Warnings)
	assert.Equal(t, 2, started, "nothing pending: no bridge started")
}

// An answer and a resolve racing for one question: exactly one of them decides it, and the
// files say which.
func TestAnswerAndResolveRacing(t *testing.T) {
	for i := 0; i < 5; i++ {
		w := newWorld(t)
		w.request("%1", "%2")
		res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, MaxQuestions: 3})
		require.NoError(t, err)
		id := res.Questions[0].ID
		var aerr, rerr error
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, aerr = w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: id, Raw: "A"})
		}()
		go func() {
			defer wg.Done()
			_, rerr = w.desk("%1").ResolveQuestion(context.Background(), id, "not needed")
		}()
		wg.Wait()
		require.True(t, (aerr == nil) != (rerr == nil), "answer: %v; resolve: %v", aerr, rerr)
		st, err := questions.FindQuestion(w.root, id)
		require.NoError(t, err)
		if aerr == nil {
			assert.Equal(t, questions.QuestionAnswered, st.State)
			assert.ErrorIs(t, rerr, store.ErrAnswered)
			assert.Nil(t, st.Resolved)
		} else {
			assert.Equal(t, questions.QuestionResolved, st.State)
			assert.True(t, isStale(aerr), "%v", aerr)
			assert.Nil(t, st.Answer)
		}
	}
}
