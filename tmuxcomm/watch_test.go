package tmuxcomm

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// watching is a Watch running in the background for a test.
type watching struct {
	events chan watch.WatchEvent
	done   chan error
	cancel context.CancelFunc
}

// startWatch runs e.Watch until the test ends and waits until its watches are in place.
func startWatch(t *testing.T, e *Engine, o watch.WatchOptions) *watching {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &watching{events: make(chan watch.WatchEvent, 1000), done: make(chan error, 1), cancel: cancel}
	ready := make(chan struct{})
	o.Started = func() { close(ready) }
	go func() {
		w.done <- e.Watch(ctx, o, func(ev watch.WatchEvent) error {
			w.events <- ev
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-w.done
	})
	select {
	case <-ready:
	case err := <-w.done:
		w.done <- err // for the cleanup, which waits for the watch's end
		t.Fatalf("watch ended before it started: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not start within 10s")
	}
	return w
}

// next returns the next n events, failing when they do not come within 10 s.
func (w *watching) next(t *testing.T, n int) []watch.WatchEvent {
	t.Helper()
	var out []watch.WatchEvent
	deadline := time.After(10 * time.Second)
	for len(out) < n {
		select {
		case ev := <-w.events:
			out = append(out, ev)
		case <-deadline:
			t.Fatalf("got %d of %d events: %v", len(out), n, eventNames(out))
		}
	}
	return out
}

// quiet checks that no event comes for a while: the only way to show an absence. The wait is not
// what makes anything pass.
func (w *watching) quiet(t *testing.T) {
	t.Helper()
	select {
	case ev := <-w.events:
		t.Fatalf("unexpected event %s %s %s", ev.Kind, ev.Event, ev.ID)
	case <-time.After(300 * time.Millisecond):
	}
}

func eventNames(evs []watch.WatchEvent) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Kind+":"+ev.Event)
	}
	return out
}

func TestWatchReportsAnExchangeInOrder(t *testing.T) {
	tests := []struct {
		name   string
		before bool // the exchange happens before the watch starts, which replays it
	}{
		{"live", false},
		{"replayed", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake("%1", "%2")
			e := newEngine(t, f, "%1")
			var w *watching
			if !tc.before {
				w = startWatch(t, e, watch.WatchOptions{})
			}
			x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("list the failing tests\nin ./pkg")})
			require.NoError(t, err)
			_, err = e.as("%2").Notify(context.Background(), NotifyOptions{Ref: x.ResponsePath, Body: []byte("all 14 pass\nnone fail")})
			require.NoError(t, err)
			if tc.before {
				w = startWatch(t, e, watch.WatchOptions{Since: time.Hour})
			}

			evs := w.next(t, 6)
			assert.Equal(t, []string{"session:session", "exchange:request", "exchange:pasted", "exchange:submitted",
				"exchange:answered", "exchange:notified"}, eventNames(evs))
			for _, ev := range evs {
				assert.Equal(t, x.Session, ev.Session)
				if ev.Kind == watch.FeedExchange {
					assert.Equal(t, 1, ev.Seq)
					assert.Equal(t, x.ID, ev.ID)
				}
			}
			assert.Equal(t, map[string]string{"orchestrator": "%1", "worker": "%2"}, evs[0].Detail)
			assert.Equal(t, "%2", evs[1].Detail["worker"])
			assert.Equal(t, "READONLY", evs[1].Detail["capability"])
			assert.Equal(t, "list the failing tests", evs[1].Detail["summary"])
			assert.Equal(t, x.RequestPath, evs[1].Path)
			assert.Equal(t, "%2", evs[2].Detail["pane"])
			assert.Equal(t, "all 14 pass", evs[4].Detail["summary"])
			assert.Equal(t, x.ResponsePath, evs[4].Path)
			assert.Equal(t, "%1", evs[5].Detail["pane"])
			w.quiet(t)
		})
	}
}

func TestWatchReportsOnlyNewEventsWithoutSince(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	old, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("old one")})
	require.NoError(t, err)
	pending, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("still open")})
	require.NoError(t, err)

	w := startWatch(t, e, watch.WatchOptions{})
	w.quiet(t)

	// An exchange open before the watch began is reported when it is answered, with its id.
	_, err = e.as("%2").Notify(context.Background(), NotifyOptions{Ref: pending.ResponsePath, Body: []byte("late answer")})
	require.NoError(t, err)
	evs := w.next(t, 2)
	assert.Equal(t, []string{"exchange:answered", "exchange:notified"}, eventNames(evs))
	assert.Equal(t, pending.ID, evs[0].ID)
	assert.Equal(t, pending.Seq, evs[0].Seq)
	assert.Equal(t, "late answer", evs[0].Detail["summary"])

	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("new one")})
	require.NoError(t, err)
	evs = w.next(t, 3)
	assert.Equal(t, []string{"exchange:request", "exchange:pasted", "exchange:submitted"}, eventNames(evs))
	for _, ev := range evs {
		assert.Equal(t, x.ID, ev.ID)
		assert.NotEqual(t, old.ID, ev.ID)
	}
	w.quiet(t)
}

func TestWatchReportsUndeliveredAndAwaitWoken(t *testing.T) {
	f := newFake("%1", "%2", "%3")
	f.Refuse["%3"] = true
	e := newEngine(t, f, "%1")
	w := startWatch(t, e, watch.WatchOptions{})

	_, err := e.Send(context.Background(), SendOptions{To: "%3", Body: []byte("into a refusing pane")})
	require.ErrorIs(t, err, store.ErrUndelivered)
	evs := w.next(t, 3)
	assert.Equal(t, []string{"session:session", "exchange:request", "exchange:refused"}, eventNames(evs))
	assert.NotEmpty(t, evs[2].Detail["error"])

	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("awaited")})
	require.NoError(t, err)
	w.next(t, 4) // session, request, pasted, submitted
	awaited := make(chan error, 1)
	go func() {
		_, err := e.awaitRef(context.Background(), x.ID, 10*time.Second)
		awaited <- err
	}()
	awaitLock := filepath.Join(x.Dir, messages.AwaitLockName(x.Seq))
	deadline := time.Now().Add(10 * time.Second)
	for !lock.IsLocked(awaitLock) {
		require.True(t, time.Now().Before(deadline), "await never took its lock")
		time.Sleep(5 * time.Millisecond)
	}
	_, err = e.as("%2").Notify(context.Background(), NotifyOptions{Ref: x.ID, Body: []byte("done")})
	require.NoError(t, err)
	require.NoError(t, <-awaited)
	// The await wakes on the response file and logs that it read it, while notify logs the answer
	// and that it left the signal to the await: the order of those lines depends on who runs first.
	evs = w.next(t, 3)
	assert.ElementsMatch(t, []string{"exchange:answered", "exchange:read", "exchange:await-woken"}, eventNames(evs))
}

// writeSeedRequest writes a request the way the seed's plain procedure does: cat > file, no log.
func writeSeedRequest(t *testing.T, dir string, n int, id, body string) (req, resp string) {
	t.Helper()
	s, err := messages.ParseSessionName(filepath.Base(dir))
	require.NoError(t, err)
	req = filepath.Join(dir, messages.SeqFileName(n, messages.KindRequest))
	resp = filepath.Join(dir, messages.SeqFileName(n+1, messages.KindResponse))
	text := messages.FormatRequest(messages.Request{
		Header: messages.RequestHeader{Capability: messages.Writable, ID: id, StartedAt: s.StartedAt,
			Orchestrator: s.Orchestrator, Worker: s.Worker, Bytes: -1},
		Body:         body,
		Instructions: messages.Instructions{ResponsePath: resp, Fallback: messages.FallbackCommand(s, resp)},
	})
	require.NoError(t, os.WriteFile(req, []byte(text), 0o600))
	return req, resp
}

func TestWatchReportsSeedStyleFiles(t *testing.T) {
	e := newEngine(t, newFake(), "")
	root, err := e.cfg.RootDir(true)
	require.NoError(t, err)
	w := startWatch(t, e, watch.WatchOptions{})

	dir := filepath.Join(root, "20260117-120000-o6-w7")
	require.NoError(t, os.Mkdir(dir, 0o700))
	evs := w.next(t, 1)
	assert.Equal(t, []string{"session:session"}, eventNames(evs))
	assert.Equal(t, "%6", evs[0].Detail["orchestrator"])

	id := "20260117-120000-beef"
	_, resp := writeSeedRequest(t, dir, 1, id, "implement the auth module")
	evs = w.next(t, 1)
	assert.Equal(t, []string{"exchange:request"}, eventNames(evs))
	assert.Equal(t, id, evs[0].ID)
	assert.Equal(t, "WRITABLE", evs[0].Detail["capability"])

	text := messages.FormatResponse(messages.Response{Header: messages.ResponseHeader{ID: id, StartedAt: "20260117-120000",
		Orchestrator: "%6", Worker: "%7", RequestBytes: -1}, Body: "done: auth module in place"})
	require.NoError(t, os.WriteFile(resp, []byte(text), 0o600))
	evs = w.next(t, 1)
	assert.Equal(t, []string{"exchange:answered"}, eventNames(evs))
	assert.Equal(t, "done: auth module in place", evs[0].Detail["summary"])
	w.quiet(t)
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, store.WriteAtomic(path, data))
}

// logLine appends an event to a question's log as the relay writes it.
func logLine(t *testing.T, stem, state string, detail map[string]string) {
	t.Helper()
	line, err := json.Marshal(exchange.Event{State: state, At: time.Now().UTC(), Detail: detail})
	require.NoError(t, err)
	require.NoError(t, store.AppendLine(stem+".answers.jsonl", line))
}

// TestWatchReportsQuestions writes a question's files as the relay's writer does, in the record
// types it writes, and reads the events.
func TestWatchReportsQuestions(t *testing.T) {
	e := newEngine(t, newFake(), "")
	root, err := e.cfg.RootDir(true)
	require.NoError(t, err)
	dir := filepath.Join(root, "20260117-120000-o6-w7")
	require.NoError(t, os.Mkdir(dir, 0o700))
	w := startWatch(t, e, watch.WatchOptions{Session: "20260117-120000-o6-w7"})
	q := filepath.Join(dir, "task-3.q1")

	steps := []struct {
		name  string
		write func()
		want  string
		check func(ev watch.WatchEvent)
	}{
		{"asked", func() {
			writeJSON(t, q+".question", questions.QuestionRecord{Seq: 1, Worker: "%7", Question: messages.Question{ID: "task-3.q1-a1b2",
				Text: "bcrypt or argon2?\nmore", Task: "task-3", Urgency: messages.Blocking, Options: []string{"bcrypt", "argon2"}}})
		}, "asked", func(ev watch.WatchEvent) {
			assert.Equal(t, "task-3.q1-a1b2", ev.ID)
			assert.Equal(t, 1, ev.Seq)
			assert.Equal(t, map[string]string{"question": "bcrypt or argon2?", "urgency": "blocking", "options": "bcrypt | argon2",
				"asker": "%7", "task": "task-3"}, ev.Detail)
		}},
		{"invalid attempt", func() {
			logLine(t, q, questions.QInvalid, map[string]string{"raw": "C", "error": "not an option", "source": "local"})
		}, "answer-invalid", func(ev watch.WatchEvent) {
			assert.Equal(t, "task-3.q1-a1b2", ev.ID)
			assert.Equal(t, map[string]string{"answer": "C", "reason": "not an option", "source": "local", "task": "task-3"}, ev.Detail)
		}},
		{"accepted attempt is the answer file's", func() {
			logLine(t, q, questions.QAccepted, map[string]string{"decided_by": messages.DecidedByTimeout, "answer": "bcrypt"})
			writeJSON(t, q+".answer", questions.AnswerRecord{Answer: "bcrypt", DecidedBy: messages.DecidedByTimeout})
		}, "auto-answered", func(ev watch.WatchEvent) {
			assert.Equal(t, "bcrypt", ev.Detail["answer"])
			assert.Equal(t, "auto-timeout", ev.Detail["by"])
		}},
		{"late attempt", func() {
			logLine(t, q, questions.QStale, map[string]string{"raw": "B", "reason": "already answered", "source": "user"})
		}, "answer-stale", func(ev watch.WatchEvent) {
			assert.Equal(t, "already answered", ev.Detail["reason"])
		}},
		{"a log line of no state is no event", func() {
			require.NoError(t, store.AppendLine(q+".answers.jsonl", []byte(`{"status":"invalid","answer":"C"}`)))
			logLine(t, q, questions.QAnswerPasted, nil)
		}, "answer-pasted", nil},
		{"cap", func() {
			writeJSON(t, filepath.Join(dir, "task-4.q2.question"), questions.QuestionRecord{Question: messages.Question{Text: "and the host?"}})
			writeJSON(t, filepath.Join(dir, "task-4.q2.answer"), questions.AnswerRecord{Answer: "best judgment", DecidedBy: messages.DecidedByCap})
		}, "asked cap-exceeded", func(ev watch.WatchEvent) {
			assert.Equal(t, "task-4.q2", ev.ID)
		}},
		{"answered by the user", func() {
			writeJSON(t, filepath.Join(dir, "task-5.q1.question"), questions.QuestionRecord{Question: messages.Question{Text: "go on?"}})
			writeJSON(t, filepath.Join(dir, "task-5.q1.answer"), questions.AnswerRecord{Answer: "yes", DecidedBy: messages.DecidedByUser})
		}, "asked answered", nil},
		{"resolved", func() {
			writeJSON(t, filepath.Join(dir, "task-6.q1.question"), questions.QuestionRecord{Question: messages.Question{Text: "deploy?"}})
			writeJSON(t, filepath.Join(dir, "task-6.q1.resolved"), questions.ResolvedRecord{Reason: "not needed", Pane: "%6"})
		}, "asked resolved", func(ev watch.WatchEvent) {
			assert.Equal(t, map[string]string{"reason": "not needed", "by": "%6", "task": "task-6"}, ev.Detail)
		}},
		{"names the writer never makes are not questions", func() {
			writeJSON(t, filepath.Join(dir, "task-8.q0.question"), questions.QuestionRecord{Question: messages.Question{Text: "q0?"}})
			writeJSON(t, filepath.Join(dir, "task-9.q1.question"), questions.QuestionRecord{Question: messages.Question{Text: "real?"}})
		}, "asked", func(ev watch.WatchEvent) {
			assert.Equal(t, "task-9.q1", ev.ID)
		}},
		{"damaged question", func() {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "task-7.q1.question"), []byte("not json"), 0o600))
		}, "asked", func(ev watch.WatchEvent) {
			assert.Contains(t, ev.Detail["error"], "not a valid question file")
		}},
	}
	for _, s := range steps {
		s.write()
		want := strings.Fields(s.want)
		evs := w.next(t, len(want))
		var got []string
		for _, ev := range evs {
			assert.Equal(t, watch.FeedQuestion, ev.Kind, s.name)
			got = append(got, ev.Event)
		}
		assert.Equal(t, want, got, s.name)
		if s.check != nil {
			s.check(evs[len(evs)-1])
		}
	}
	w.quiet(t)
}

// TestWatchFollowsTheQuestionRelay drives a question through the relay's own Ask and Answer.
func TestWatchFollowsTheQuestionRelay(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	worker := e.as("%2")
	ctx := context.Background()
	w := startWatch(t, e, watch.WatchOptions{})

	x, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("implement the auth module")})
	require.NoError(t, err)
	w.next(t, 4) // session, request, pasted, submitted

	res, err := worker.desk.Ask(ctx, questions.AskOptions{Questions: []messages.Question{{Text: "bcrypt or argon2?", Task: "task-3",
		Urgency: messages.NonBlocking, Type: messages.Numbered, Options: []string{"bcrypt", "argon2"},
		Context: "The plan names no hash."}}, MaxQuestions: 3})
	require.NoError(t, err)
	require.Len(t, res.Questions, 1)
	qid := res.Questions[0].ID
	evs := w.next(t, 2)
	assert.Equal(t, []string{"question:asked", "question:delivered"}, eventNames(evs))
	assert.Equal(t, qid, evs[0].ID)
	assert.Equal(t, x.Session, evs[0].Session)
	assert.Equal(t, "bcrypt or argon2?", evs[0].Detail["question"])
	assert.Equal(t, "bcrypt | argon2", evs[0].Detail["options"])
	assert.Equal(t, "%1", evs[1].Detail["pane"])

	_, err = e.desk.Answer(ctx, questions.AnswerOptions{ID: qid, Raw: "C"})
	require.Error(t, err)
	evs = w.next(t, 1)
	assert.Equal(t, []string{"question:answer-invalid"}, eventNames(evs))
	assert.Equal(t, "C", evs[0].Detail["answer"])
	assert.NotEmpty(t, evs[0].Detail["reason"])

	_, err = e.desk.Answer(ctx, questions.AnswerOptions{ID: qid, Raw: "B", Source: "telegram"})
	require.NoError(t, err)
	evs = w.next(t, 2)
	assert.Equal(t, []string{"question:answered", "question:answer-pasted"}, eventNames(evs))
	assert.Equal(t, "argon2", evs[0].Detail["answer"])
	assert.Equal(t, "user", evs[0].Detail["by"])
	assert.Equal(t, "telegram", evs[0].Detail["source"])

	_, err = e.desk.Answer(ctx, questions.AnswerOptions{ID: qid, Raw: "A"})
	require.ErrorIs(t, err, core.ErrStale)
	evs = w.next(t, 1)
	assert.Equal(t, []string{"question:answer-stale"}, eventNames(evs))
	w.quiet(t)
}

func TestWatchSessionFilter(t *testing.T) {
	e := newEngine(t, newFake(), "")
	root, err := e.cfg.RootDir(true)
	require.NoError(t, err)
	// A session folder is named by the stamp of its first send: one that is not there is an
	// unknown session, not one to wait for.
	err = e.Watch(context.Background(), watch.WatchOptions{Session: "20260117-120000-o6-w7"}, func(watch.WatchEvent) error { return nil })
	require.ErrorIs(t, err, store.ErrNotFound)

	require.NoError(t, os.Mkdir(filepath.Join(root, "20260117-120000-o6-w7"), 0o700))
	w := startWatch(t, e, watch.WatchOptions{Session: "20260117-120000-o6-w7"})
	for _, name := range []string{"20260117-120000-o6-w8", "20260117-120000-o6-w7"} {
		dir := filepath.Join(root, name)
		if _, err := os.Stat(dir); err != nil {
			require.NoError(t, os.Mkdir(dir, 0o700))
		}
		writeSeedRequest(t, dir, 1, "20260117-120000-00"+name[len(name)-2:], "task for "+name)
	}
	evs := w.next(t, 1)
	for _, ev := range evs {
		assert.Equal(t, "20260117-120000-o6-w7", ev.Session)
	}
	w.quiet(t)

	err = e.Watch(context.Background(), watch.WatchOptions{Session: "../etc"}, func(watch.WatchEvent) error { return nil })
	require.ErrorIs(t, err, messages.ErrSyntax)
}

func TestWatchEnds(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	_, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("one")})
	require.NoError(t, err)

	t.Run("emit stops it", func(t *testing.T) {
		n := 0
		err := e.Watch(context.Background(), watch.WatchOptions{Since: time.Hour}, func(watch.WatchEvent) error {
			n++
			if n == 2 {
				return watch.ErrStopWatch
			}
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, 2, n)
	})
	t.Run("emit fails it", func(t *testing.T) {
		boom := errors.New("boom")
		err := e.Watch(context.Background(), watch.WatchOptions{Since: time.Hour}, func(watch.WatchEvent) error { return boom })
		require.ErrorIs(t, err, boom)
	})
	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		err := e.Watch(ctx, watch.WatchOptions{}, func(watch.WatchEvent) error { return nil })
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
	t.Run("the root removed ends it", func(t *testing.T) {
		// A daemon that follows the feed (the bridge) hears that nothing more can come, though
		// the watch itself sleeps until its next event.
		e := newEngine(t, newFake("%1", "%2"), "%1")
		_, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("one")})
		require.NoError(t, err)
		w := startWatch(t, e, watch.WatchOptions{})
		require.NoError(t, os.RemoveAll(e.cfg.Root))
		select {
		case err := <-w.done:
			require.Error(t, err)
			assert.Contains(t, err.Error(), "is gone")
			w.done <- err // for the cleanup, which waits for the watch's end
		case <-time.After(10 * time.Second):
			t.Fatal("the watch went on with its root gone")
		}
	})
	t.Run("cancel wakes it at once", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- e.Watch(ctx, watch.WatchOptions{}, func(watch.WatchEvent) error { return nil }) }()
		cancel()
		select {
		case err := <-done:
			require.ErrorIs(t, err, context.Canceled)
		case <-time.After(5 * time.Second):
			t.Fatal("watch did not end after cancel")
		}
	})
}

// TestWatchReplayLeavesOldExchangesUnread: a replay (Since) records an exchange whose files were
// all last written before its window without reading them: on a root of 10,000 exchanges that is
// every delivery log, seconds of CPU at each console start. The old exchange here has log lines
// stamped now in a file last written two hours ago, so a read of it would replay them. What
// happens to it later is still reported, with its id; an exchange in the window is replayed whole.
func TestWatchReplayLeavesOldExchangesUnread(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	ctx := context.Background()
	old, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("old one")})
	require.NoError(t, err)
	_, err = e.as("%2").Notify(ctx, NotifyOptions{Ref: old.ResponsePath, Body: []byte("done long ago")})
	require.NoError(t, err)
	oldLog := filepath.Join(filepath.Dir(old.RequestPath), exchange.LogName(old.Seq))
	past := time.Now().Add(-2 * time.Hour)
	for _, p := range []string{old.RequestPath, old.ResponsePath, oldLog} {
		require.NoError(t, os.Chtimes(p, past, past))
	}
	recent, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("recent one")})
	require.NoError(t, err)
	_, err = e.as("%2").Notify(ctx, NotifyOptions{Ref: recent.ResponsePath, Body: []byte("done now")})
	require.NoError(t, err)

	w := startWatch(t, e, watch.WatchOptions{Since: time.Hour})
	evs := w.next(t, 6)
	assert.Equal(t, []string{"session:session", "exchange:request", "exchange:pasted", "exchange:submitted",
		"exchange:answered", "exchange:notified"}, eventNames(evs))
	for _, ev := range evs[1:] {
		assert.Equal(t, recent.ID, ev.ID)
	}
	w.quiet(t)

	line, err := json.Marshal(exchange.Event{State: exchange.StateAwaitWoken, At: time.Now().UTC(), Detail: map[string]string{"pid": "1"}})
	require.NoError(t, err)
	require.NoError(t, store.AppendLine(oldLog, line))
	evs = w.next(t, 1)
	assert.Equal(t, "exchange:"+exchange.StateAwaitWoken, eventNames(evs)[0])
	assert.Equal(t, old.ID, evs[0].ID, "the id of an exchange recorded without reading it")
	assert.Equal(t, old.Seq, evs[0].Seq)
	w.quiet(t)
}
