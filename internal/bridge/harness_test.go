package bridge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/bridge/lockfile"

	"github.com/wcomm/wcomm/internal/bridge/chatfake"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// fakeEngine keeps questions in memory with the engine's rules for answers: the first valid
// answer wins, an invalid one leaves the question open, a late one is stale. (The end-to-end
// tests run the real engine.)
type fakeEngine struct {
	actions  []*actions.ActionStatus
	dead     []mailbox.DeadLetter
	mu       sync.Mutex
	qs       []*questions.QuestionStatus
	attempts []questions.AnswerOptions
	problems []string // question files that did not load
	follows  []chan watch.WatchEvent
	fulls    int // full looks: Questions asked to judge staleness (not FilesOnly)
}

// Follow is the engine's feed: a question added is an event, as its file would be.
func (f *fakeEngine) Follow(ctx context.Context, o watch.WatchOptions) (*watch.Follower, error) {
	ch := make(chan watch.WatchEvent, 64)
	f.mu.Lock()
	f.follows = append(f.follows, ch)
	f.mu.Unlock()
	go func() {
		<-ctx.Done()
		f.mu.Lock()
		defer f.mu.Unlock()
		f.follows = slices.DeleteFunc(f.follows, func(c chan watch.WatchEvent) bool { return c == ch })
		close(ch)
	}()
	return &watch.Follower{C: ch}, nil
}

func (f *fakeEngine) add(q messages.Question, tag string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	q = q.Normalized()
	seq := len(f.qs) + 1
	q.ID = fmt.Sprintf("%s.q%d-%s", q.Task, seq, tag)
	st := &questions.QuestionStatus{State: questions.QuestionPending}
	st.Question, st.Seq, st.Worker, st.AskedAt = q, seq, "%5", time.Now().UTC()
	st.Exchange = q.Task
	f.qs = append(f.qs, st)
	for _, ch := range f.follows {
		select {
		case ch <- watch.WatchEvent{At: st.AskedAt, Kind: watch.FeedQuestion, ID: q.ID, Event: watch.EventAsked}:
		default:
		}
	}
	return q.ID
}

func (f *fakeEngine) Questions(ctx context.Context, o questions.QuestionsOptions) ([]*questions.QuestionStatus, []string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !o.FilesOnly {
		f.fulls++
	}
	var out []*questions.QuestionStatus
	for _, st := range f.qs {
		c := *st
		if o.Pending && c.State != questions.QuestionPending {
			continue
		}
		out = append(out, &c)
	}
	return out, f.problems, nil
}

func (f *fakeEngine) Answer(ctx context.Context, o questions.AnswerOptions) (*questions.AnswerResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempts = append(f.attempts, o)
	for _, st := range f.qs {
		if st.ID != o.ID {
			continue
		}
		if st.Answer != nil {
			return &questions.AnswerResult{Question: st}, fmt.Errorf("question %s: already answered %q (source %s); the first answer stands: %w", st.ID, st.Answer.Answer, st.Answer.Source, tmuxcomm.ErrStale)
		}
		m, err := messages.MatchAnswer(st.Question, o.Raw)
		if err != nil {
			return &questions.AnswerResult{Question: st}, fmt.Errorf("question %s: %w; the question stays open", st.ID, err)
		}
		st.Answer = &questions.AnswerRecord{ID: st.ID, Answer: m.Value, Raw: o.Raw, Source: o.Source, DecidedBy: messages.DecidedByUser, At: time.Now()}
		st.State = questions.QuestionAnswered
		c := *st
		return &questions.AnswerResult{Question: &c, Signal: "ask"}, nil
	}
	return nil, fmt.Errorf("no question %s: %w", o.ID, tmuxcomm.ErrNotFound)
}

func (f *fakeEngine) Actions(context.Context, actions.ActionsOptions) ([]*actions.ActionStatus, []string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.actions, nil, nil
}

func (f *fakeEngine) DeadLetters(since time.Time) ([]mailbox.DeadLetter, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []mailbox.DeadLetter
	for _, d := range f.dead {
		if !d.At.Before(since) {
			out = append(out, d)
		}
	}
	return out, nil
}

// deadLetter adds a request to pane %2 that was undeliverable at at.
func (f *fakeEngine) deadLetter(id, exchange string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dead = append(f.dead, mailbox.DeadLetter{ID: id, Kind: messages.MailRequest, Pane: "%2", From: "%1", Exchange: exchange,
		State: messages.MailUndeliverable, At: at, Detail: "pane %2 no longer exists"})
}

// approval adds a yes-no approval of action.
func (f *fakeEngine) approval(action, tag string) string {
	id := f.add(messages.Question{Text: "May the dispatcher run action " + action + "?", Task: "task-9", Type: messages.YesNo,
		Context: "A yes lets 'wcomm actions run' run it once."}, tag)
	f.mu.Lock()
	f.qs[len(f.qs)-1].Action = action
	f.mu.Unlock()
	return id
}

func (f *fakeEngine) answer(id string) *questions.AnswerRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, st := range f.qs {
		if st.ID == id {
			return st.Answer
		}
	}
	return nil
}

func (f *fakeEngine) attemptCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.attempts)
}

// logBuf collects a hub's log lines.
type logBuf struct {
	mu    sync.Mutex
	lines []string
}

func (l *logBuf) logf(format string, a ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, a...))
	l.mu.Unlock()
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// tgCallTimeout, when set, bounds the Telegram calls of the hubs startHub starts.
var tgCallTimeout time.Duration

// hubRescan, when set, is the full looks' interval of the hubs startHub starts (default 10ms).
var hubRescan time.Duration

// hubPanes, when set, tells the hubs startHub starts of the panes' changes (Hub.PanesChanged),
// with their safety look an hour apart.
var hubPanes chan struct{}

// running is a hub with its channels running until the test ends or stop is called.
type running struct {
	hub  *Hub
	log  *logBuf
	stop func()
	done chan error
}

// startHub runs a hub over eng in root with the channels cfg configures.
func startHub(t *testing.T, root string, eng Engine, cfg *messages.ChannelsConfig, getenv func(string) string) *running {
	t.Helper()
	return startKeyedHub(t, root, eng, cfg, getenv, "", false)
}

// startKeyedHub is startHub for the bridge of the channels named key (Hub.Channels).
func startKeyedHub(t *testing.T, root string, eng Engine, cfg *messages.ChannelsConfig, getenv func(string) string, key string, unrecorded bool) *running {
	t.Helper()
	lb := &logBuf{}
	h := &Hub{Engine: eng, Root: root, Channels: key, Unrecorded: unrecorded, Logf: lb.logf, Rescan: 10 * time.Millisecond,
		BackoffMin: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond}
	if hubRescan > 0 {
		h.Rescan = hubRescan
	}
	if hubPanes != nil {
		h.PanesChanged, h.Safety = hubPanes, time.Hour
	}
	require.NoError(t, h.Open())
	chans, err := Open(cfg, h, getenv)
	require.NoError(t, err)
	for _, c := range chans {
		if tg, ok := c.(*telegram); ok {
			tg.wait = time.Second // short long polls, so a test ends quickly
			tg.takeOver = 20 * time.Millisecond
			if tgCallTimeout > 0 {
				tg.callTO = tgCallTimeout
			}
		}
	}
	unlock, err := lockfile.Lock(root, key)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{hub: h, log: lb, done: make(chan error, 1)}
	go func() { r.done <- h.Run(ctx, chans) }()
	var once sync.Once
	r.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-r.done:
				require.NoError(t, err)
			case <-time.After(20 * time.Second):
				t.Fatal("the hub did not stop")
			}
			unlock()
		})
	}
	t.Cleanup(r.stop)
	return r
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// runtimeDirs holds the runtime folder of each fake bot's bridges: one per fake, so that the
// bridges of one test's bot meet there, and a short path, as a socket's must be.
var runtimeDirs sync.Map

func runtimeDir(f *chatfake.Telegram) string {
	if d, ok := runtimeDirs.Load(f); ok {
		return d.(string)
	}
	d, err := os.MkdirTemp("", "wcrt")
	require.NoError(f.T, err)
	f.T.Cleanup(func() { os.RemoveAll(d); runtimeDirs.Delete(f) })
	runtimeDirs.Store(f, d)
	return d
}

// tgConfig is a Telegram block for fake f, its token in the environment.
func tgConfig(f *chatfake.Telegram) (*messages.ChannelsConfig, func(string) string) {
	return &messages.ChannelsConfig{Telegram: &messages.TelegramConfig{APIURL: f.Srv.URL, ChatID: f.Chat, AllowedUsers: []int64{777}}},
		envOf(map[string]string{EnvTelegramToken: f.Token, "XDG_RUNTIME_DIR": runtimeDir(f)})
}

// webhookConfig is a webhook block for url.
func webhookConfig(url string) *messages.ChannelsConfig {
	return &messages.ChannelsConfig{Webhook: &messages.WebhookConfig{URL: url}}
}

// runTelegram runs a bridge over eng on the fake chat f, in a root of its own.
func runTelegram(t *testing.T, f *chatfake.Telegram, eng Engine) *running {
	t.Helper()
	cfg, env := tgConfig(f)
	return startHub(t, tempRoot(t), eng, cfg, env)
}

// runSlack runs a bridge over eng on the fake workspace f, in a root of its own.
func runSlack(t *testing.T, f *chatfake.Slack, eng Engine) *running {
	t.Helper()
	cfg, env := slackConfig(f)
	return startHub(t, tempRoot(t), eng, cfg, env)
}

// tgSent waits for a message the bot sent whose text passes ok, and returns that text.
func tgSent(f *chatfake.Telegram, what string, ok func(text string) bool) string {
	var found string
	f.WaitFor(what, func() bool {
		for _, s := range f.Sent {
			if ok(s.Text) {
				found = s.Text
				return true
			}
		}
		return false
	})
	return found
}

// slackThreadPost waits for a post in the thread of ts whose text holds every one of want.
func slackThreadPost(t *testing.T, f *chatfake.Slack, ts string, want ...string) string {
	t.Helper()
	var found string
	eventually(t, fmt.Sprintf("a post in thread %s saying %q", ts, want), func() bool {
		posts, _, _ := f.Snapshot()
		for _, q := range posts {
			if q.ThreadTS == ts && containsAll(q.Text, want) {
				found = q.Text
				return true
			}
		}
		return false
	})
	return found
}

func containsAll(s string, want []string) bool {
	for _, w := range want {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

func tempRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	require.NoError(t, os.Mkdir(root, 0o700))
	return root
}

// eventually polls cond to a deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // the poll interval, to the deadline above
	}
}

func tmuxcommAnswer(id, raw, source string) questions.AnswerOptions {
	return questions.AnswerOptions{ID: id, Raw: raw, Source: source}
}
