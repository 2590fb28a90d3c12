package cli

// End-to-end tests of approved actions: ask --action, answer, actions, actions run and trust,
// the built binary against a private tmux server (harness_test.go) and a real git repository.
// The action is a python3 program that appends the intent's id to runs.log outside the
// repository, so the log counts executions exactly.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// aWorld is a question world whose working folder holds a trusted .wcomm.yaml registering
// actions that run in repo, a git repository with a committed docs folder.
type aWorld struct {
	*qWorld
	repo string
	runs string // one line per execution: the intent's id
}

const publishRun = `["python3", "-c", "import os; open('../runs.log', 'a').write(os.environ['WCOMM_INTENT_ID'] + '\\n'); print('published', os.environ['WCOMM_ACTION_TARGETS'])"]`

func aConfig(publish string) string {
	return "actions:\n  publish:\n    run: " + publish + "\n    targets: [docs]\n    dir: repo\n" +
		"  slow:\n    run: [\"python3\", \"-c\", \"import os, time; open('../slow.pid', 'w').write(str(os.getpid())); time.sleep(60)\"]\n    dir: repo\n"
}

func newAWorld(t *testing.T) *aWorld {
	t.Helper()
	_, err := exec.LookPath("git")
	require.NoError(t, err, "the approved-action tests need git")
	a := &aWorld{qWorld: newQWorld(t)}
	a.repo = filepath.Join(a.work, "repo")
	a.runs = filepath.Join(a.work, "runs.log")
	require.NoError(t, os.MkdirAll(filepath.Join(a.repo, "docs"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(a.repo, "docs", "index.md"), []byte("# Docs\n"), 0o600))
	a.git("init", "-q")
	a.git("add", "docs")
	a.git("commit", "-q", "-m", "docs")
	a.writeConfig(aConfig(publishRun))
	return a
}

func (a *aWorld) git(args ...string) {
	a.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", a.repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(a.t, err, "git %v: %s", args, out)
}

// writeConfig writes the settings file and trusts it.
func (a *aWorld) writeConfig(body string) {
	a.t.Helper()
	require.NoError(a.t, os.WriteFile(filepath.Join(a.work, ".wcomm.yaml"), []byte(body), 0o600))
	requireCode(a.t, 0, a.asPerson(nil, "trust"))
}

// ask asks a non-blocking approval of action and returns the question's id.
func (a *aWorld) ask(task, action string, extra ...string) string {
	a.t.Helper()
	args := append([]string{"ask", "--task", task, "--action", action, "--to", a.orch, "--urgency", "non-blocking"}, extra...)
	r := a.as(a.worker, nil, args...)
	requireCode(a.t, 0, r)
	id := strings.TrimSpace(r.stdout)
	require.Regexp(a.t, `^`+task+`\.q\d+-[0-9a-f]{4}$`, id)
	return id
}

// answer answers as the person does: typed in a shell of their own (an approval is theirs).
func (a *aWorld) answer(id, value string) {
	a.t.Helper()
	requireCode(a.t, 0, a.asPerson(nil, "answer", id, value))
}

// aJSON is one intent as `actions --json` prints it.
type aJSON struct {
	ID         string   `json:"id"`
	QuestionID string   `json:"question_id"`
	Action     string   `json:"action"`
	Status     string   `json:"status"`
	Stale      bool     `json:"stale"`
	Reasons    []string `json:"reasons"`
	Output     string   `json:"output"`
	AgeSeconds int64    `json:"age_seconds"`
	Targets    []struct {
		Path   string `json:"path"`
		SHA256 string `json:"sha256"`
	} `json:"targets"`
	Git struct {
		Head string `json:"head"`
	} `json:"git"`
	Answer *struct {
		Answer string `json:"answer"`
		Source string `json:"source"`
	} `json:"answer"`
	Dispatch *struct {
		Decision string `json:"decision"`
		PID      int    `json:"pid"`
	} `json:"dispatch"`
	Result *struct {
		ExitCode int `json:"exit_code"`
	} `json:"result"`
}

func (a *aWorld) action(id string) aJSON {
	a.t.Helper()
	r := a.as("", nil, "actions", "--json")
	requireCode(a.t, 0, r)
	var out struct {
		Actions  []aJSON  `json:"actions"`
		Problems []string `json:"problems"`
	}
	require.NoError(a.t, json.Unmarshal([]byte(r.stdout), &out), "%s", r)
	assert.Empty(a.t, out.Problems)
	for _, j := range out.Actions {
		if j.ID == id {
			return j
		}
	}
	a.t.Fatalf("no intent %s in %s", id, r)
	return aJSON{}
}

// executions returns the ids runs.log holds, one per execution.
func (a *aWorld) executions() []string {
	a.t.Helper()
	data, err := os.ReadFile(a.runs)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(a.t, err)
	return strings.Fields(string(data))
}

func TestE2EActionApprovedRunsOnce(t *testing.T) {
	t.Parallel()
	a := newAWorld(t)
	id := a.ask("docs", "publish", "--target", "repo/docs/index.md", "Publish the docs?")
	assert.Contains(t, a.pastes(a.orchLog, 1)[0], "Publish the docs?")
	j := a.action(id)
	assert.Equal(t, "pending", j.Status)
	assert.Equal(t, "publish", j.Action)
	require.Len(t, j.Targets, 2, "the action's target and the --target")
	assert.Equal(t, "docs", j.Targets[0].Path)
	assert.Len(t, j.Git.Head, 40)

	// An agent's tool (here the test's own process, in no terminal of a person) may not approve it.
	r := a.as("", nil, "answer", id, "yes")
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, `the approval of action "publish"`)
	assert.Contains(t, r.stderr, "may not answer it")
	assert.Equal(t, "pending", a.action(id).Status, "nothing recorded")

	a.answer(id, "yes")
	j = a.action(id)
	assert.Equal(t, "approved", j.Status)
	assert.False(t, j.Stale)
	assert.Equal(t, "local", j.Answer.Source)
	r = a.as("", nil, "questions")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "approved actions: 1 approved and not yet run")
	r = a.as("", nil, "doctor")
	assert.Contains(t, r.stdout, "actions:      approved actions: 1 approved and not yet run")

	// A dry run prints the decision and changes nothing.
	r = a.as("", nil, "actions", "run", "--dry-run")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, id+": action publish (python3 -c")
	assert.Contains(t, r.stdout, "question "+id+", targets docs,")
	assert.Contains(t, r.stdout, "approval yes by local at ")
	assert.Contains(t, r.stdout, "status approved, stale no, would run")
	assert.Empty(t, a.executions())
	assert.Nil(t, a.action(id).Dispatch, "a dry run claims nothing")

	r = a.as("", nil, "actions", "run")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, id+": publish executed (exit 0)")
	assert.Equal(t, []string{id}, a.executions())
	j = a.action(id)
	assert.Equal(t, "executed", j.Status)
	require.NotNil(t, j.Result)
	assert.Equal(t, 0, j.Result.ExitCode)
	out, err := os.ReadFile(j.Output)
	require.NoError(t, err)
	assert.Contains(t, string(out), "published docs")
	info, err := os.Stat(j.Output)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	// Neither a second run nor a run by id repeats it.
	r = a.as("", nil, "actions", "run")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "already consumed")
	r = a.as("", nil, "actions", "run", "--id", id)
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "already consumed")
	assert.Equal(t, []string{id}, a.executions())

	// watch replays the dispatcher's events from the question's log.
	r = a.as("", nil, "watch", "--since", "1h", "--json", "--timeout", "1s")
	assert.Contains(t, r.stdout, `"action-executed"`)
}

func TestE2EActionStaleIsBlocked(t *testing.T) {
	t.Parallel()
	a := newAWorld(t)

	// A changed target.
	id1 := a.ask("t1", "publish")
	a.answer(id1, "yes")
	require.NoError(t, os.WriteFile(filepath.Join(a.repo, "docs", "index.md"), []byte("# Docs, edited\n"), 0o600))
	r := a.as("", nil, "actions", "run", "--dry-run", "--id", id1)
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "status stale, stale yes, would block")
	assert.Contains(t, r.stdout, "reason: target docs's content changed")
	r = a.as("", nil, "actions", "run", "--id", id1)
	requireCode(t, 1, r)
	assert.Contains(t, r.stdout, id1+": publish blocked")
	assert.Contains(t, r.stderr, "target docs's content changed")
	j := a.action(id1)
	assert.Equal(t, "blocked", j.Status)
	assert.Equal(t, "block", j.Dispatch.Decision)
	// Blocked stays blocked: putting the content back does not revive it.
	require.NoError(t, os.WriteFile(filepath.Join(a.repo, "docs", "index.md"), []byte("# Docs\n"), 0o600))
	requireCode(t, 1, a.as("", nil, "actions", "run", "--id", id1))

	// A moved HEAD.
	id2 := a.ask("t2", "publish")
	a.answer(id2, "yes")
	a.git("commit", "-q", "--allow-empty", "-m", "moved")
	r = a.as("", nil, "actions", "run", "--id", id2)
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "HEAD of "+a.repo+" moved from ")

	// A changed definition (trusted again, so only the definition differs).
	id3 := a.ask("t3", "publish")
	a.answer(id3, "yes")
	a.writeConfig(aConfig(strings.Replace(publishRun, `"-c"`, `"-B", "-c"`, 1)))
	r = a.as("", nil, "actions", "run", "--id", id3)
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "the action's definition changed in "+filepath.Join(a.work, ".wcomm.yaml"))
	// An untrusted change is named as that.
	id4 := a.ask("t4", "publish")
	a.answer(id4, "yes")
	require.NoError(t, os.WriteFile(filepath.Join(a.work, ".wcomm.yaml"), []byte(aConfig(publishRun)+"# edited\n"), 0o600))
	j = a.action(id4)
	assert.Equal(t, "stale", j.Status)
	assert.Contains(t, strings.Join(j.Reasons, "\n"), "no longer trusted")
	a.writeConfig(aConfig(publishRun))

	// No never runs; age is advisory only.
	id5 := a.ask("t5", "publish")
	a.answer(id5, "no")
	j = a.action(id5)
	assert.Equal(t, "denied", j.Status)
	assert.Contains(t, j.Reasons[0], `answered "no"`)
	r = a.as("", nil, "actions", "run")
	requireCode(t, 0, r)
	r = a.as("", nil, "actions", "run", "--id", id5)
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "denied")
	assert.Empty(t, a.executions(), "nothing stale or denied ever ran")
	// A newer approval of the same action supersedes an older one.
	id6 := a.ask("t6", "publish")
	a.answer(id6, "yes")
	id7 := a.ask("t7", "publish")
	a.answer(id7, "yes")
	assert.Contains(t, strings.Join(a.action(id6).Reasons, "\n"), "superseded by "+id7)
	requireCode(t, 0, a.as("", nil, "actions", "run"))
	assert.Equal(t, []string{id7}, a.executions())
}

func TestE2EActionAskRefuses(t *testing.T) {
	t.Parallel()
	a := newAWorld(t)
	r := a.as(a.worker, nil, "ask", "--task", "x", "--action", "nope", "--to", a.orch, "Run it?")
	requireCode(t, 2, r)
	assert.Contains(t, r.stderr, `no action "nope" is registered; registered: publish, slow`)
	r = a.as(a.worker, nil, "ask", "--task", "x", "--action", "publish", "--option", "a", "--option", "b", "--to", a.orch, "Run it?")
	requireCode(t, 2, r)
	r = a.as(a.worker, nil, "ask", "--task", "x", "--action", "publish", "--target", "repo/missing", "--to", a.orch, "Run it?")
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "missing: no such file or directory")

	// An untrusted project file registers nothing, and ask says how to trust it.
	require.NoError(t, os.WriteFile(filepath.Join(a.work, ".wcomm.yaml"), []byte(aConfig(publishRun)+"# changed\n"), 0o600))
	r = a.as(a.worker, nil, "ask", "--task", "x", "--action", "publish", "--to", a.orch, "Run it?")
	requireCode(t, 2, r)
	assert.Contains(t, r.stderr, "is not trusted: wcomm ignores its actions publish, slow;")
	assert.Contains(t, r.stderr, "run 'wcomm trust "+filepath.Join(a.work, ".wcomm.yaml")+"'")
	assert.Empty(t, a.questions(false), "nothing was asked")
}

func TestE2EActionRacingDispatchers(t *testing.T) {
	t.Parallel()
	a := newAWorld(t)
	id := a.ask("race", "publish")
	a.answer(id, "yes")
	var runs []*bg
	for i := 0; i < 4; i++ {
		runs = append(runs, a.startAs("", nil, "actions", "run"))
	}
	runs = append(runs, a.startAs("", nil, "actions", "run", "--id", id))
	ran := 0
	for _, b := range runs {
		r := b.wait(t, 30*time.Second)
		if strings.Contains(r.stdout, id+": publish executed") {
			ran++
		}
	}
	assert.Equal(t, 1, ran, "exactly one dispatcher ran it")
	assert.Equal(t, []string{id}, a.executions())
	assert.Equal(t, "executed", a.action(id).Status)
}

func TestE2EActionCrashBetweenClaimAndRecord(t *testing.T) {
	t.Parallel()
	a := newAWorld(t)
	id := a.ask("crash", "slow")
	a.answer(id, "yes")
	b := a.startAs("", nil, "actions", "run", "--id", id)
	pidFile := filepath.Join(a.work, "slow.pid")
	var pid int
	waitFor(t, 20*time.Second, func() bool {
		data, err := os.ReadFile(pidFile)
		if err != nil || len(data) == 0 {
			return false
		}
		pid, err = strconv.Atoi(string(data))
		return err == nil
	}, "the slow action to start")
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	j := a.action(id)
	assert.Equal(t, "running", j.Status)
	assert.Equal(t, b.cmd.Process.Pid, j.Dispatch.PID)

	// The dispatcher dies between its claim and its record.
	require.NoError(t, b.cmd.Process.Kill())
	b.wait(t, 10*time.Second)
	j = a.action(id)
	assert.Equal(t, "interrupted", j.Status)
	assert.Nil(t, j.Result)
	assert.Contains(t, j.Reasons[0], "ended before recording a result; whether the command ran, or finished, is unknown")
	r := a.as("", nil, "actions")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, id+": interrupted: dispatcher pid ")
	r = a.as("", nil, "actions", "run", "--id", id)
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "interrupted")
}
