package tmuxcomm

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// The door takes a question by the end of its id in every verb that names one: a face passes
// what it was given, and looks nothing up itself.
func TestDoorQuestionsByTheEndOfTheirIDs(t *testing.T) {
	_, orch, worker, _ := qPair(t)
	ctx := context.Background()
	res, err := worker.desk.Ask(ctx, questions.AskOptions{Questions: []messages.Question{qQuestion("bcrypt or argon2?"), qQuestion("tabs or spaces?")}, MaxQuestions: 3})
	require.NoError(t, err)
	require.Len(t, res.Questions, 2)
	one, two := res.Questions[0].ID, res.Questions[1].ID
	tail := func(id string) string { return id[len(id)-4:] }

	got, _, err := orch.Questions(ctx, questions.QuestionsOptions{IDs: []string{tail(two), one}})
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, []string{two, one}, []string{got[0].ID, got[1].ID}, "in the order named")
	_, _, err = orch.Questions(ctx, questions.QuestionsOptions{IDs: []string{"ffff"}})
	assert.Equal(t, ClassNotFound, ClassOf(err), "%v", err)
	_, _, err = orch.Questions(ctx, questions.QuestionsOptions{IDs: []string{one}, Pending: true})
	assert.Equal(t, ClassUsage, ClassOf(err), "pending lists; it names no question")

	ans, err := orch.Answer(ctx, AnswerOptions{AnswerOptions: questions.AnswerOptions{ID: tail(one), Raw: "1"}})
	require.NoError(t, err)
	assert.Equal(t, one, ans.Question.ID)

	got, _, err = orch.Questions(ctx, questions.QuestionsOptions{IDs: []string{tail(two)}, Resolve: "task was cancelled"})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, questions.QuestionResolved, got[0].State)
	_, _, err = orch.Questions(ctx, questions.QuestionsOptions{IDs: []string{one, two}, Resolve: "both"})
	assert.Equal(t, ClassUsage, ClassOf(err), "resolve closes one question")

	// ask --wait takes the end of an id too, and returns at once for a decided question.
	waited, off, err := worker.Ask(ctx, Asking{Again: &Waiting{IDs: []string{tail(one)}}})
	require.NoError(t, err)
	assert.Nil(t, off)
	require.Len(t, waited.Questions, 1)
	assert.Equal(t, one, waited.Questions[0].ID)
	assert.Equal(t, questions.QuestionAnswered, waited.Questions[0].State)
}

// Find looks for an agent or a target, never both, and with Detect says what runs in the pane
// and how a delivery reaches it; Panes with Waits says what waits on a person there.
func TestDoorFindAndPanes(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	ctx := context.Background()
	_, err := e.Find(ctx, FindOptions{Agent: "codex", Target: "%2"})
	assert.Equal(t, ClassUsage, ClassOf(err), "%v", err)
	_, err = e.Find(ctx, FindOptions{})
	assert.Equal(t, ClassUsage, ClassOf(err), "%v", err)

	got, err := e.Find(ctx, FindOptions{Target: "%2", Detect: true, Profile: "claude"})
	require.NoError(t, err)
	assert.Equal(t, messages.PaneID("%2"), got.Pane.ID)
	require.NotNil(t, got.Detection.Profile)
	assert.Equal(t, "claude", got.Detection.Profile.Name)
	assert.NotEmpty(t, got.Route.Route)
	plain, err := e.Find(ctx, FindOptions{Target: "%2"})
	require.NoError(t, err)
	assert.Nil(t, plain.Detection.Profile, "no detection unless asked")
	assert.Equal(t, door.Finding{}, plain.Route)

	e.cfg.Procs = func() (*proc.Table, error) { return proc.NewProcTable(nil), nil }
	worker := e.as("%2")
	_, err = worker.desk.Ask(ctx, questions.AskOptions{Questions: []messages.Question{qQuestion("q?")}, To: "%1", MaxQuestions: 3})
	require.NoError(t, err)
	panes, err := e.Panes(ctx, PanesOptions{Scope: paneops.Scope{All: true}, Waits: true})
	require.NoError(t, err)
	require.Len(t, panes, 2)
	waits := map[messages.PaneID]string{}
	for _, p := range panes {
		waits[p.ID] = p.Waits
	}
	assert.Contains(t, waits["%2"], "answer", "its blocking question waits on a person")
	bare, err := e.Panes(ctx, PanesOptions{Scope: paneops.Scope{All: true}})
	require.NoError(t, err)
	for _, p := range bare {
		assert.Empty(t, p.Waits, "nothing said of what waits unless asked")
	}
}

// A deliverer's job drains the pane's outbox; a watcher's goes to the lifecycle room; an unknown
// job is a usage error. Each runs on an engine of its own: the one it came through stays as it
// was built.
func TestDoorHelperJobs(t *testing.T) {
	f, b, e, spawned := mailboxWorld(t)
	ctx := context.Background()
	b.set("%2", true)
	x, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("task")})
	require.NoError(t, err)
	require.Equal(t, []messages.PaneID{"%2"}, *spawned, "the send started the pane's deliverer")
	b.set("%2", false)

	srv, _ := f.ServerInfo(ctx)
	require.NoError(t, e.RunHelper(ctx, HelperJob{Kind: HelperDeliverer, Server: srv.Key(), Pane: "%2"}))
	assert.Equal(t, exchange.StateSubmitted, exchange.LoadExchange(x.Dir, x.Seq, false).State)
	assert.NotNil(t, e.cfg.Helpers.Deliverer, "the engine is as it was built")

	err = e.RunHelper(ctx, HelperJob{Kind: HelperWatcher, Server: srv.Key(), Pane: "%2"})
	assert.ErrorIs(t, err, errNoLifecycle, "the fake cannot start panes: the watcher's room refused")
	err = e.RunHelper(ctx, HelperJob{Kind: "janitor"})
	assert.Equal(t, ClassUsage, ClassOf(err), "%v", err)
}

// A helper's job that runs otherwise (its own tmux client, no helper of its kind) runs on an
// engine derived for it, with the door's settings; the engine it came from is not changed.
func TestDoorDerivedEngineLeavesTheEngineAsBuilt(t *testing.T) {
	f, other := newFake("%1"), newFake("%1")
	e := newEngine(t, f, "%1")
	e.Settings.MaxQuestions = 7
	e.cfg.Helpers.Bridge = func() error { return nil }
	e.cfg.Helpers.Guard = func(string, string, messages.PaneID, int) error { return nil }
	nine := messages.PaneID("%9")
	v := e.derive(callConfig{tmux: other, self: &nine})
	assert.Same(t, other, v.cfg.Tmux.(*fakeTmux))
	assert.Equal(t, messages.PaneID("%9"), v.cfg.Self)
	assert.Nil(t, v.cfg.Helpers.Guard, "a call on another client starts no guard")
	assert.NotNil(t, v.cfg.Helpers.Bridge)
	assert.Equal(t, 7, v.Settings.MaxQuestions, "the door's settings come along")
	assert.Same(t, v.cfg, v.desk.Config, "the rooms share the derived settings")
	assert.Same(t, f, e.cfg.Tmux.(*fakeTmux))
	assert.Equal(t, messages.PaneID("%1"), e.cfg.Self)
	assert.NotNil(t, e.cfg.Helpers.Bridge)
}

// The person's inbox lists the dead letters, oldest first; a pane's inbox has none.
func TestDoorInboxDeadLetters(t *testing.T) {
	f, b, e, _ := mailboxWorld(t)
	ctx := context.Background()
	b.set("%2", true)
	_, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("task")})
	require.NoError(t, err)
	f.Mu.Lock()
	delete(f.PaneMap, "%2")
	f.Mu.Unlock()
	drainPane(t, f, e, "%2")

	res, err := e.Inbox(ctx, mailbox.InboxOptions{Dead: true})
	require.NoError(t, err)
	require.Len(t, res.Dead, 1)
	assert.Equal(t, messages.MailUndeliverable, res.Dead[0].State)
	mine, err := e.Inbox(ctx, mailbox.InboxOptions{})
	require.NoError(t, err)
	assert.Empty(t, mine.Dead)
}

// Actions lists, runs and trusts through one door: an intent is named by the end of its
// question's id, and only the person trusts a settings file.
func TestDoorActions(t *testing.T) {
	f := newFake("%1")
	e := newEngine(t, f, "%1")
	ctx := context.Background()
	res, err := e.Actions(ctx, ActionsOptions{})
	require.NoError(t, err)
	assert.Empty(t, res.List)
	_, err = e.Actions(ctx, ActionsOptions{RunOptions: actions.RunOptions{ActionsOptions: actions.ActionsOptions{ID: "ffff"}}})
	assert.Equal(t, ClassNotFound, ClassOf(err), "%v", err)

	file := filepath.Join(t.TempDir(), ".wcomm.yaml")
	require.NoError(t, os.WriteFile(file, []byte("question_relay:\n  timeout: 30s\n"), 0o600))
	home := t.TempDir()
	e.Getenv = func(k string) string { return map[string]string{"HOME": home, "XDG_CONFIG_HOME": home}[k] }
	// The unit test's process is not the person's (no terminal of its own, or the table is
	// unreadable): trust is refused and nothing is written.
	_, err = e.Actions(ctx, ActionsOptions{Trust: file})
	require.ErrorContains(t, err, "only the person may trust a settings file")
	_, statErr := os.Stat(filepath.Join(home, "wcomm"))
	assert.True(t, os.IsNotExist(statErr), "no trust list written")
}

// An ask and an answer take the call's choices: an ask made outside the worker's pane names it
// (--from), and the door checks what a call chooses before it acts.
func TestDoorAskAndAnswerTakeTheCallsChoices(t *testing.T) {
	f := newFake("%1", "%2")
	orch := newEngine(t, f, "%1")
	outside := orch.as("")
	ctx := context.Background()
	q := qQuestion("bcrypt or argon2?")
	res, off, err := outside.Ask(ctx, Asking{Questions: []messages.Question{q}, To: "%1", Choices: Choices{From: "%2"}})
	require.NoError(t, err)
	assert.Nil(t, off)
	require.Len(t, res.Questions, 1)
	assert.Equal(t, messages.PaneID("%2"), res.Questions[0].Worker, "asked in the name of the pane --from names")
	assert.Equal(t, messages.PaneID(""), outside.cfg.Self, "the engine is as it was built")

	_, _, err = outside.Ask(ctx, Asking{Questions: []messages.Question{q}, To: "%1", Choices: Choices{From: "%9"}})
	assert.Equal(t, ClassNotFound, ClassOf(err), "a --from pane that does not exist: %v", err)

	long := time.Hour
	_, err = orch.Answer(ctx, AnswerOptions{AnswerOptions: questions.AnswerOptions{ID: res.Questions[0].ID, Raw: "1"}, Choices: Choices{EnterDelay: &long}})
	assert.Equal(t, ClassUsage, ClassOf(err), "%v", err)
	st, _, err := orch.Questions(ctx, questions.QuestionsOptions{IDs: []string{res.Questions[0].ID}})
	require.NoError(t, err)
	assert.Equal(t, questions.QuestionPending, st[0].State, "nothing answered on a refused choice")
}
