package actions_test

// The approved-actions room against the shared in-memory tmux (core/coretest) and a real git
// repository: %1 is the person's orchestrator pane, %2 the worker that asks. The settings file
// registering the actions is a project file the person trusted, as 'wcomm trust' does. Each
// action appends its intent's id to runs.log outside the repository, so the log counts runs.

import (
	"context"
	"encoding/json"
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
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/core/coretest"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

// typist hands every block to its pane at once (the mailbox's part, not this room's).
type typist struct{ tmux *coretest.Tmux }

func (m typist) Post(ctx context.Context, root string, mail messages.Mail, pane paneops.Pane, srv paneops.ServerInfo) (*core.Posted, error) {
	if _, err := m.tmux.Deliver(ctx, paneops.Delivery{Pane: pane.ID, Content: []byte(mail.Text), Submit: true}); err != nil {
		return nil, err
	}
	return &core.Posted{Mail: mail, Outcome: messages.MailDelivered}, nil
}

type aWorld struct {
	t      *testing.T
	tmux   *coretest.Tmux
	root   string
	work   string // the asker's folder, holding the settings file
	repo   string // the git repository the actions run in
	runs   string
	config string
	getenv func(string) string
}

// publish appends the intent's id to runs.log and prints its targets.
const publish = `["sh", "-c", "echo $WCOMM_INTENT_ID >> ../runs.log; echo published $WCOMM_ACTION_TARGETS"]`

func configWith(run string) string {
	return "actions:\n  publish:\n    run: " + run + "\n    targets: [docs]\n    dir: repo\n" +
		"  fail:\n    run: [\"sh\", \"-c\", \"echo broken >&2; exit 3\"]\n    dir: repo\n" +
		"  slow:\n    run: [\"sleep\", \"30\"]\n    dir: repo\n"
}

func newAWorld(t *testing.T) *aWorld {
	t.Helper()
	_, err := exec.LookPath("git")
	require.NoError(t, err, "the approved-action tests need git")
	base := t.TempDir()
	xdg := filepath.Join(base, "xdg")
	a := &aWorld{t: t, tmux: coretest.NewTmux("%1", "%2"), root: filepath.Join(base, "root"), work: filepath.Join(base, "work")}
	a.repo = filepath.Join(a.work, "repo")
	a.runs = filepath.Join(a.work, "runs.log")
	a.config = filepath.Join(a.work, ".wcomm.yaml")
	a.getenv = func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return xdg
		}
		return ""
	}
	require.NoError(t, os.MkdirAll(filepath.Join(a.repo, "docs"), 0o700))
	a.write("docs/index.md", "# Docs\n")
	a.git("init", "-q")
	a.git("add", "docs")
	a.git("commit", "-q", "-m", "docs")
	a.writeConfig(configWith(publish), true)
	return a
}

func (a *aWorld) write(rel, body string) {
	a.t.Helper()
	require.NoError(a.t, os.WriteFile(filepath.Join(a.repo, rel), []byte(body), 0o600))
}

func (a *aWorld) git(args ...string) {
	a.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", a.repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(a.t, err, "git %v: %s", args, out)
}

// writeConfig writes the settings file, trusted by the person or not.
func (a *aWorld) writeConfig(body string, trust bool) {
	a.t.Helper()
	require.NoError(a.t, os.WriteFile(a.config, []byte(body), 0o600))
	if trust {
		_, _, err := settings.TrustConfig(a.config, a.getenv, time.Now())
		require.NoError(a.t, err)
	}
}

func (a *aWorld) settings() settings.Values {
	a.t.Helper()
	s, err := settings.LoadFile(a.config, a.getenv)
	require.NoError(a.t, err)
	return s
}

func (a *aWorld) engineConfig(self string) *core.Config {
	cfg := coretest.Config(a.t, a.tmux, self)
	cfg.Root = a.root
	return cfg
}

func (a *aWorld) desk(self string) *questions.Desk {
	cfg := a.engineConfig(self)
	return &questions.Desk{Config: cfg, Book: &exchange.Book{Config: cfg}, Finder: &fleet.Finder{Config: cfg}, Mailer: typist{a.tmux}}
}

// registry is the room as the door builds it, for a caller in pane self.
func (a *aWorld) registry(self string) *actions.Registry {
	d := a.desk(self)
	return &actions.Registry{Config: d.Config, Desk: d}
}

// ask has the worker ask the person to approve action, and returns the question's id.
func (a *aWorld) ask(action string, targets ...string) string {
	a.t.Helper()
	in, err := a.registry("%2").PrepareIntent(context.Background(), actions.IntentOptions{Action: action, Settings: a.settings(), Targets: targets, Dir: a.work, RunID: "run-1"})
	require.NoError(a.t, err)
	q := messages.Question{Task: "task-3", Text: "May I run " + action + "?", Type: messages.YesNo, Urgency: messages.NonBlocking,
		Context: "The docs are ready; publishing them is the last step."}
	res, err := a.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, To: "%1", MaxQuestions: 10, Intent: in})
	require.NoError(a.t, err)
	return res.Questions[0].ID
}

func (a *aWorld) answer(id, raw string) {
	a.t.Helper()
	_, err := a.desk("").Answer(context.Background(), questions.AnswerOptions{ID: id, Raw: raw, Source: "telegram"})
	require.NoError(a.t, err)
}

// action is the intent of id as a listing gives it.
func (a *aWorld) action(id string) *actions.ActionStatus {
	a.t.Helper()
	list, problems, err := a.registry("").Actions(context.Background(), actions.ActionsOptions{Getenv: a.getenv, ID: id})
	require.NoError(a.t, err)
	require.Empty(a.t, problems)
	require.Len(a.t, list, 1)
	return list[0]
}

func (a *aWorld) run(o actions.RunOptions) ([]*actions.ActionRun, error) {
	o.Getenv = a.getenv
	return a.registry("").RunActions(context.Background(), o)
}

// ran lists the intents the actions ran for, one per run.
func (a *aWorld) ran() []string {
	data, err := os.ReadFile(a.runs)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(a.t, err)
	return strings.Fields(string(data))
}

// qlog is the question log's events of id.
func (a *aWorld) qlog(id string) []string {
	a.t.Helper()
	st, err := questions.FindQuestion(a.root, id)
	require.NoError(a.t, err)
	var out []string
	for _, ev := range questions.QuestionEvents(st) {
		out = append(out, ev.State)
	}
	return out
}

func TestPrepareIntentNeedsARegisteredAction(t *testing.T) {
	a := newAWorld(t)
	reg := a.registry("%2")
	_, err := reg.PrepareIntent(context.Background(), actions.IntentOptions{Action: "deploy", Settings: a.settings()})
	require.ErrorIs(t, err, actions.ErrUnregistered)
	assert.Contains(t, err.Error(), "registered: fail, publish, slow")

	_, err = reg.PrepareIntent(context.Background(), actions.IntentOptions{Action: "publish", Settings: settings.Defaults()})
	require.ErrorIs(t, err, actions.ErrUnregistered)
	assert.Contains(t, err.Error(), "no settings file registers any")

	// A file the person has not trusted as it is now registers nothing, and says so.
	a.writeConfig(configWith(publish)+"\n", false)
	_, err = reg.PrepareIntent(context.Background(), actions.IntentOptions{Action: "publish", Settings: a.settings()})
	require.ErrorIs(t, err, actions.ErrUnregistered)
	assert.Contains(t, err.Error(), "trust")

	a.writeConfig("question_relay:\n  enabled: true\n", true)
	_, err = reg.PrepareIntent(context.Background(), actions.IntentOptions{Action: "publish", Settings: a.settings()})
	require.ErrorIs(t, err, actions.ErrUnregistered)
	assert.Contains(t, err.Error(), "registers none")
}

func TestPrepareIntentFingerprintsWhatAYesWouldAuthorize(t *testing.T) {
	a := newAWorld(t)
	a.write("notes.md", "n\n")
	in, err := a.registry("%2").PrepareIntent(context.Background(), actions.IntentOptions{Action: "publish", Settings: a.settings(),
		Targets: []string{"repo/notes.md", filepath.Join(a.repo, "docs")}, Dir: a.work, RunID: "run-1"})
	require.NoError(t, err)
	assert.Equal(t, "publish", in.Action)
	assert.Equal(t, a.repo, in.Definition.Dir)
	assert.Equal(t, in.Definition.Hash(), in.DefinitionHash)
	assert.Equal(t, a.config, in.Config)
	assert.Equal(t, "run-1", in.RunID)
	require.Len(t, in.Targets, 3, "the action's own docs (as the settings name it, from its folder) and the two extra ones")
	assert.Equal(t, messages.Target{Path: "docs", Kind: messages.TargetDir, SHA256: in.Targets[2].SHA256}, in.Targets[0])
	assert.Equal(t, filepath.Join(a.repo, "notes.md"), in.Targets[1].Path)
	assert.Equal(t, messages.TargetFile, in.Targets[1].Kind)
	assert.Equal(t, filepath.Join(a.repo, "docs"), in.Targets[2].Path, "an extra target relative to the asker's folder is made absolute")
	assert.Equal(t, a.repo, in.Git.Dir)
	assert.Len(t, in.Git.Head, 40)
	assert.Equal(t, 1, in.Git.Changed, "notes.md is untracked")

	_, err = a.registry("%2").PrepareIntent(context.Background(), actions.IntentOptions{Action: "publish", Settings: a.settings(), Targets: []string{"gone.md"}, Dir: a.work})
	assert.ErrorContains(t, err, "name files or folders that exist")

	// An action whose folder is no git work tree cannot be bound to its state.
	require.NoError(t, os.RemoveAll(filepath.Join(a.repo, ".git")))
	_, err = a.registry("%2").PrepareIntent(context.Background(), actions.IntentOptions{Action: "publish", Settings: a.settings()})
	assert.ErrorContains(t, err, "whose git state an approval is bound to")
}

// A yes runs the action once: a second dispatcher, or a second run, finds it consumed.
func TestActionApprovedRunsOnce(t *testing.T) {
	a := newAWorld(t)
	id := a.ask("publish")
	st := a.action(id)
	assert.Equal(t, actions.ActionPending, st.Status)
	assert.Equal(t, "May I run publish?", st.Question)
	runs, err := a.run(actions.RunOptions{})
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, actions.DidNothing, runs[0].Did)
	assert.Equal(t, "not approved yet", runs[0].Note)
	_, err = a.run(actions.RunOptions{ActionsOptions: actions.ActionsOptions{ID: id}})
	require.ErrorIs(t, err, actions.ErrNotRun)

	a.answer(id, "yes")
	st = a.action(id)
	assert.Equal(t, actions.ActionApproved, st.Status)
	assert.False(t, st.Stale)
	assert.Empty(t, st.Reasons)
	assert.Equal(t, "telegram", st.Answer.Source)

	runs, err = a.run(actions.RunOptions{DryRun: true})
	require.NoError(t, err)
	assert.Equal(t, actions.DidNothing, runs[0].Did)
	assert.Empty(t, a.ran(), "a dry run runs nothing")
	assert.Equal(t, actions.ActionApproved, a.action(id).Status, "and claims nothing")

	runs, err = a.run(actions.RunOptions{ActionsOptions: actions.ActionsOptions{ID: id}})
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, actions.DidRun, runs[0].Did)
	assert.Equal(t, actions.ActionExecuted, runs[0].Status)
	assert.Equal(t, []string{id}, a.ran())
	out, err := os.ReadFile(runs[0].Output)
	require.NoError(t, err)
	assert.Equal(t, "published docs\n", string(out), "its targets in its environment, its output beside the intent")

	st = a.action(id)
	assert.Equal(t, actions.ActionExecuted, st.Status)
	assert.Equal(t, 0, st.Result.ExitCode)
	assert.Equal(t, messages.DecisionRun, st.Dispatch.Decision)
	runs, err = a.run(actions.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, actions.DidNothing, runs[0].Did)
	assert.Contains(t, runs[0].Note, "already consumed")
	_, err = a.run(actions.RunOptions{ActionsOptions: actions.ActionsOptions{ID: id}})
	require.ErrorIs(t, err, actions.ErrNotRun)
	assert.Equal(t, []string{id}, a.ran(), "an approval runs once")
	evs := a.qlog(id)
	assert.Contains(t, evs, "action-claimed")
	assert.Contains(t, evs, "action-executed")
}

// Of dispatchers racing for one approval, exactly one runs it.
func TestActionRacingDispatchersRunItOnce(t *testing.T) {
	a := newAWorld(t)
	id := a.ask("publish")
	a.answer(id, "yes")
	const n = 4
	var wg sync.WaitGroup
	did := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs, err := a.run(actions.RunOptions{})
			if assert.NoError(t, err) && assert.Len(t, runs, 1) {
				did[i] = runs[0].Did
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, strings.Count(strings.Join(did, " "), actions.DidRun), "%v", did)
	assert.Equal(t, []string{id}, a.ran())
}

// An approval holds only while the state it approved holds: any change blocks it, with the
// reason, and it never runs.
func TestActionApprovalHoldsOnlyWhileItsStateHolds(t *testing.T) {
	tests := []struct {
		name   string
		change func(a *aWorld, id string)
		reason string
	}{
		{"target edited", func(a *aWorld, _ string) { a.write("docs/index.md", "# Other docs\n") }, "content changed"},
		{"target removed", func(a *aWorld, _ string) { require.NoError(t, os.RemoveAll(filepath.Join(a.repo, "docs"))) }, "cannot be reconstructed"},
		{"target turned into a file", func(a *aWorld, _ string) {
			require.NoError(t, os.RemoveAll(filepath.Join(a.repo, "docs")))
			a.write("docs", "x")
		}, "was a dir and is now a file"},
		{"new commit", func(a *aWorld, _ string) {
			a.write("other.md", "o\n")
			a.git("add", "other.md")
			a.git("commit", "-q", "-m", "other")
		}, "HEAD of "},
		{"work tree changed", func(a *aWorld, _ string) { a.write("untracked.md", "u\n") }, "git status of"},
		{"definition changed and trusted", func(a *aWorld, _ string) {
			a.writeConfig(configWith(`["sh", "-c", "echo $WCOMM_INTENT_ID >> ../runs.log; rm -rf docs"]`), true)
		}, "the action's definition changed"},
		{"definition no longer registered", func(a *aWorld, _ string) {
			a.writeConfig("actions:\n  other:\n    run: [\"true\"]\n", true)
		}, "is no longer registered"},
		{"settings no longer trusted", func(a *aWorld, _ string) { a.writeConfig(configWith(publish)+"# edited\n", false) }, "no longer trusted"},
		{"settings file gone", func(a *aWorld, _ string) { require.NoError(t, os.Remove(a.config)) }, "cannot be read"},
		{"intent file edited", func(a *aWorld, id string) {
			st, err := questions.FindQuestion(a.root, id)
			require.NoError(t, err)
			path := st.File(messages.SuffixIntent)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			in, err := messages.ParseIntent(data)
			require.NoError(t, err)
			in.Definition.Run = []string{"sh", "-c", "echo $WCOMM_INTENT_ID >> ../runs.log; echo pwned"}
			require.NoError(t, os.WriteFile(path, messages.FormatIntent(in), 0o600))
		}, "its intent file was changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAWorld(t)
			id := a.ask("publish")
			a.answer(id, "yes")
			require.Equal(t, actions.ActionApproved, a.action(id).Status)
			tt.change(a, id)

			st := a.action(id)
			assert.Equal(t, actions.ActionStale, st.Status)
			assert.True(t, st.Stale)
			assert.Contains(t, strings.Join(st.Reasons, "\n"), tt.reason)

			runs, err := a.run(actions.RunOptions{})
			require.NoError(t, err)
			require.Len(t, runs, 1)
			assert.Equal(t, actions.DidBlock, runs[0].Did)
			assert.Contains(t, runs[0].Note, tt.reason)
			assert.Empty(t, a.ran(), "a stale approval never runs")

			st = a.action(id)
			assert.Equal(t, actions.ActionBlocked, st.Status, "the block is recorded")
			assert.Equal(t, messages.DecisionBlock, st.Dispatch.Decision)
			assert.Contains(t, a.qlog(id), "action-blocked")
			_, err = a.run(actions.RunOptions{ActionsOptions: actions.ActionsOptions{ID: id}})
			require.ErrorIs(t, err, actions.ErrNotRun)
			assert.Contains(t, err.Error(), "blocked: ")
			assert.Empty(t, a.ran(), "nor later")
		})
	}
}

// A change put back before the dispatcher looks leaves the approval fresh: what holds is the
// state, not its history.
func TestActionApprovalHoldsWhenTheStateIsPutBack(t *testing.T) {
	a := newAWorld(t)
	id := a.ask("publish")
	a.answer(id, "yes")
	a.write("docs/index.md", "# Other docs\n")
	assert.Equal(t, actions.ActionStale, a.action(id).Status)
	a.write("docs/index.md", "# Docs\n")
	assert.Equal(t, actions.ActionApproved, a.action(id).Status)
}

func TestActionRefused(t *testing.T) {
	t.Run("answered no", func(t *testing.T) {
		a := newAWorld(t)
		id := a.ask("publish")
		a.answer(id, "no")
		st := a.action(id)
		assert.Equal(t, actions.ActionDenied, st.Status)
		assert.Contains(t, st.Reasons[0], `the approval was denied: answered "no" (source telegram`)
		runs, err := a.run(actions.RunOptions{})
		require.NoError(t, err)
		assert.Equal(t, actions.DidNothing, runs[0].Did)
		assert.Contains(t, runs[0].Note, "denied: ")
		_, err = a.run(actions.RunOptions{ActionsOptions: actions.ActionsOptions{ID: id}})
		require.ErrorIs(t, err, actions.ErrNotRun)
		assert.Empty(t, a.ran())
	})
	t.Run("resolved without an answer", func(t *testing.T) {
		a := newAWorld(t)
		id := a.ask("publish")
		_, err := a.desk("%1").ResolveQuestion(context.Background(), id, "not now")
		require.NoError(t, err)
		st := a.action(id)
		assert.Equal(t, actions.ActionDenied, st.Status)
		assert.Contains(t, st.Reasons[0], "resolved without an answer (not now)")
		runs, err := a.run(actions.RunOptions{})
		require.NoError(t, err)
		assert.Equal(t, actions.DidNothing, runs[0].Did)
		assert.Empty(t, a.ran())
	})
	t.Run("a timeout approves nothing", func(t *testing.T) {
		a := newAWorld(t)
		id := a.ask("publish")
		on := true
		_, err := a.desk("%2").WaitQuestions(context.Background(), questions.WaitOptions{IDs: []string{id}, Timeout: 30 * time.Millisecond, TimeoutSet: true, AutoAnswer: &on})
		require.Error(t, err)
		assert.Equal(t, actions.ActionPending, a.action(id).Status)
		runs, err := a.run(actions.RunOptions{})
		require.NoError(t, err)
		assert.Equal(t, actions.DidNothing, runs[0].Did)
		assert.Empty(t, a.ran())
	})
	t.Run("an unknown id", func(t *testing.T) {
		a := newAWorld(t)
		a.ask("publish")
		_, _, err := a.registry("").Actions(context.Background(), actions.ActionsOptions{Getenv: a.getenv, ID: "task-3.q9-0000"})
		assert.ErrorContains(t, err, "no approved-action intent task-3.q9-0000")
	})
}

func TestActionFailedAndTimedOut(t *testing.T) {
	a := newAWorld(t)
	fail := a.ask("fail")
	a.answer(fail, "yes")
	runs, err := a.run(actions.RunOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "action of "+fail+" failed")
	require.Len(t, runs, 1)
	assert.Equal(t, actions.DidRun, runs[0].Did)
	assert.Equal(t, actions.ActionFailed, runs[0].Status)
	assert.Equal(t, []string{"sh exited 3"}, runs[0].Reasons)
	out, err := os.ReadFile(runs[0].Output)
	require.NoError(t, err)
	assert.Equal(t, "broken\n", string(out))
	st := a.action(fail)
	assert.Equal(t, actions.ActionFailed, st.Status)
	assert.Equal(t, 3, st.Result.ExitCode)
	assert.Contains(t, a.qlog(fail), "action-failed")

	slow := a.ask("slow")
	a.answer(slow, "yes")
	start := time.Now()
	runs, err = a.run(actions.RunOptions{ActionsOptions: actions.ActionsOptions{ID: slow}, Timeout: 100 * time.Millisecond})
	require.Error(t, err)
	assert.Less(t, time.Since(start), 20*time.Second)
	assert.Contains(t, runs[0].Reasons[0], "did not finish within 100ms and was killed")
	assert.Equal(t, -1, a.action(slow).Result.ExitCode)
}

// A claim whose dispatcher still runs is running; one whose dispatcher died before recording a
// result is interrupted, and never run again.
func TestActionClaimedByAnotherDispatcher(t *testing.T) {
	a := newAWorld(t)
	id := a.ask("publish")
	a.answer(id, "yes")
	st, err := questions.FindQuestion(a.root, id)
	require.NoError(t, err)
	host, _ := os.Hostname()
	claim := func(pid int) {
		require.NoError(t, os.WriteFile(st.File(messages.SuffixDispatch), messages.FormatDispatch(messages.Dispatch{Decision: messages.DecisionRun, PID: pid, Host: host, At: time.Now().UTC()}), 0o600))
	}
	claim(os.Getpid())
	got := a.action(id)
	assert.Equal(t, actions.ActionRunning, got.Status)
	assert.Contains(t, got.Reasons[0], "is still running it")
	runs, err := a.run(actions.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, actions.DidNothing, runs[0].Did)

	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	claim(dead.Process.Pid)
	got = a.action(id)
	assert.Equal(t, actions.ActionInterrupted, got.Status)
	assert.Contains(t, got.Reasons[0], "it is never run again")
	runs, err = a.run(actions.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, actions.DidNothing, runs[0].Did)
	assert.Empty(t, a.ran())

	// Another host's dispatcher cannot be looked at from here: it is taken to run.
	require.NoError(t, os.WriteFile(st.File(messages.SuffixDispatch), messages.FormatDispatch(messages.Dispatch{Decision: messages.DecisionRun, PID: dead.Process.Pid, Host: "elsewhere.invalid", At: time.Now().UTC()}), 0o600))
	assert.Equal(t, actions.ActionRunning, a.action(id).Status)
}

// A newer approval of the same action supersedes an older one, which no longer runs.
func TestActionSupersededByANewerAsk(t *testing.T) {
	a := newAWorld(t)
	older := a.ask("publish")
	newer := a.ask("publish")
	a.answer(older, "yes")
	a.answer(newer, "yes")
	st := a.action(older)
	assert.Equal(t, actions.ActionStale, st.Status)
	assert.Contains(t, st.Reasons[0], "superseded by "+newer)
	assert.Equal(t, actions.ActionApproved, a.action(newer).Status)
	runs, err := a.run(actions.RunOptions{})
	require.NoError(t, err)
	require.Len(t, runs, 2)
	assert.Equal(t, []string{newer}, a.ran())
}

// Age never makes an approval stale; past AdvisoryAge a listing only points it out.
func TestActionAgeIsAdvisory(t *testing.T) {
	a := newAWorld(t)
	id := a.ask("publish")
	a.answer(id, "yes")
	reg := a.registry("")
	reg.Now = func() time.Time { return time.Now().Add(actions.AdvisoryAge + time.Hour) }
	list, _, err := reg.Actions(context.Background(), actions.ActionsOptions{Getenv: a.getenv})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.True(t, list[0].Old)
	assert.Greater(t, list[0].AgeSeconds, int64(actions.AdvisoryAge/time.Second))
	assert.Equal(t, actions.ActionApproved, list[0].Status)
}

// A listing names the intent files it cannot read, and lists the rest.
func TestActionsNameUnreadableIntents(t *testing.T) {
	a := newAWorld(t)
	good := a.ask("publish")
	bad := a.ask("fail")
	st, err := questions.FindQuestion(a.root, bad)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(st.File(messages.SuffixIntent), []byte("{not an intent"), 0o600))
	list, problems, err := a.registry("").Actions(context.Background(), actions.ActionsOptions{Getenv: a.getenv})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, good, list[0].ID)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0], st.File(messages.SuffixIntent))

	list, _, err = newAWorld(t).registry("").Actions(context.Background(), actions.ActionsOptions{})
	require.NoError(t, err)
	assert.Empty(t, list, "no root yet, no intents")
}

// A link among the targets is bound by where it points: repointing it makes the approval stale.
func TestActionLinkTargetIsBoundByWhereItPoints(t *testing.T) {
	a := newAWorld(t)
	link := filepath.Join(a.repo, "docs", "latest")
	require.NoError(t, os.Symlink("index.md", link))
	a.git("add", "docs")
	a.git("commit", "-q", "-m", "link")
	id := a.ask("publish", "repo/docs/latest")
	a.answer(id, "yes")
	require.Equal(t, actions.ActionApproved, a.action(id).Status)
	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink("/etc/passwd", link))
	st := a.action(id)
	assert.Equal(t, actions.ActionStale, st.Status)
	assert.Contains(t, strings.Join(st.Reasons, "\n"), "target "+link+"'s content changed")
}

// An approval over the worker's question cap is answered by the cap, which approves nothing.
func TestActionOverTheCapIsNotApproved(t *testing.T) {
	a := newAWorld(t)
	in, err := a.registry("%2").PrepareIntent(context.Background(), actions.IntentOptions{Action: "publish", Settings: a.settings(), Dir: a.work})
	require.NoError(t, err)
	q := messages.Question{Task: "task-3", Text: "May I publish?", Type: messages.YesNo, Urgency: messages.NonBlocking, Context: "The docs are ready."}
	var id string
	for range 2 {
		res, err := a.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, To: "%1", MaxQuestions: 1, Intent: in})
		require.NoError(t, err)
		id = res.Questions[0].ID
	}
	st := a.action(id)
	assert.Equal(t, actions.ActionDenied, st.Status)
	assert.Equal(t, []string{"no one approved it: decided by cap-exceeded"}, st.Reasons)
	runs, err := a.run(actions.RunOptions{ActionsOptions: actions.ActionsOptions{ID: id}})
	require.ErrorIs(t, err, actions.ErrNotRun)
	assert.Equal(t, actions.DidNothing, runs[0].Did)
	assert.Empty(t, a.ran())
}

// A yes that is not the person's (an answer file a timeout would write) approves nothing.
func TestActionApprovedOnlyByThePersonsYes(t *testing.T) {
	a := newAWorld(t)
	id := a.ask("publish")
	st, err := questions.FindQuestion(a.root, id)
	require.NoError(t, err)
	ans := questions.AnswerRecord{ID: id, TaskID: st.Task, Seq: st.Seq, Answer: "yes", DecidedBy: messages.DecidedByTimeout,
		Source: "timeout", Type: messages.YesNo, Form: "auto", Option: 1, At: time.Now().UTC()}
	data, err := json.Marshal(ans)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(st.File(messages.SuffixAnswer), data, 0o600))
	got := a.action(id)
	assert.Equal(t, actions.ActionDenied, got.Status)
	assert.Equal(t, []string{"no one approved it: decided by auto-timeout"}, got.Reasons)
	_, err = a.run(actions.RunOptions{ActionsOptions: actions.ActionsOptions{ID: id}})
	require.ErrorIs(t, err, actions.ErrNotRun)
	assert.Empty(t, a.ran())
}
