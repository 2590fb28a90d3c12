package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// kitPaste loads text into a named buffer through stdin and pastes it into the pane, as a person
// pastes a prompt into an agent.
func kitPaste(t *testing.T, w *world, pane, text string) {
	t.Helper()
	cmd := exec.Command("tmux", "-S", w.sock, "load-buffer", "-b", "kit-prompt", "-")
	cmd.Env = cleanEnv()
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "load-buffer: %s", out)
	w.tmux("paste-buffer", "-d", "-b", "kit-prompt", "-t", pane)
}

// TestKitPromptDrivesAnExchangeE2E pastes the orchestrator prompt into a pane whose reader follows
// its steps literally: find, send, await against the scripted worker.
func TestKitPromptDrivesAnExchangeE2E(t *testing.T) {
	w := newWorld(t)
	worker, workerLog, _ := w.workerPane(false)

	prompt := w.run(call{}, "prompt", "orchestrator")
	require.Equal(t, 0, prompt.code, prompt.String())

	results := filepath.Join(w.work, "kit-reader.jsonl")
	script, err := filepath.Abs(filepath.Join(fixtures, "kit_reader.py"))
	require.NoError(t, err)
	task := "count the go files in ./pkg"
	orch := w.pane("", "python3", script, results, "worker.py", task)
	// A reader that dies keeps its screen (a traceback) for the failure message.
	w.tmux("set-option", "-p", "-t", orch, "remain-on-exit", "on")
	w.waitScreen(orch, "KIT READER READY")
	kitPaste(t, w, orch, prompt.stdout+"KIT-GO\n")
	// Three wcomm runs and a worker's answer: longer than one screen wait when the machine is busy.
	var screen string
	waitFor(t, 45*time.Second, func() bool {
		out, err := w.tmuxErr("capture-pane", "-p", "-J", "-S", "-", "-t", orch)
		screen = out
		if err != nil {
			screen = err.Error()
		}
		return err == nil && (strings.Contains(out, "KIT READER DONE") || strings.Contains(out, "KIT READER FAILED"))
	}, "the reader to finish; its screen:\n%s", &screen)

	runs := jsonLines(t, results)
	require.Len(t, runs, 3, "screen:\n%s\nruns: %v", screen, runs)
	for _, r := range runs {
		require.EqualValues(t, 0, r["rc"], "%v", r)
	}
	assert.Equal(t, "wcomm find worker.py", runs[0]["cmd"])
	assert.Equal(t, worker+"\n", runs[0]["stdout"])

	assert.Equal(t, "wcomm send --to "+worker+" 'count the go files in ./pkg'", runs[1]["cmd"])
	fields := strings.Fields(runs[1]["stdout"].(string))
	require.Len(t, fields, 2, "send prints ID RESPONSE-PATH")
	id, respPath := fields[0], fields[1]
	assert.True(t, strings.HasPrefix(respPath, w.root+string(filepath.Separator)), respPath)

	assert.Equal(t, "wcomm await "+id+" --timeout 30m", runs[2]["cmd"])
	assert.Equal(t, "answer to "+id+": "+strings.ToUpper(task)+"\n", runs[2]["stdout"])

	got := waitLog(t, workerLog, "the worker's receipt", event("received", id))
	assert.Equal(t, task, got["body"])
	assert.Equal(t, respPath, got["response"])
}

// TestKitWatchShowsAnExchangeE2E follows a scripted exchange with `watch --json --count N`.
func TestKitWatchShowsAnExchangeE2E(t *testing.T) {
	w := newWorld(t)
	// The worker holds its answer until the gate opens: a scripted worker answers within the
	// enter delay, before the sender has logged its Enter, which would make the order a race.
	worker, workerLog, gate := w.workerPane(true)
	orch := w.catPane()

	// --since replays what happened before the watch was in place, so the test need not know when
	// that is: every event comes exactly once either way.
	watching := w.start(call{}, "watch", "--json", "--count", "6", "--timeout", "45s", "--since", "1h")
	r := w.in(orch, "send", "--to", worker, "hello from the orchestrator")
	require.Equal(t, 0, r.code, r.String())
	id := strings.Fields(r.stdout)[0]
	openGate(t, gate, id)
	waitLog(t, workerLog, "the worker's notify", event("notified", id))

	res := watching.wait(t, 50*time.Second)
	require.Equal(t, 0, res.code, res.String())
	var names []string
	var session string
	for _, line := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		var ev watch.WatchEvent
		require.NoError(t, json.Unmarshal([]byte(line), &ev), line)
		names = append(names, ev.Event)
		if session == "" {
			session = ev.Session
		}
		assert.Equal(t, session, ev.Session)
		if ev.Kind == watch.FeedExchange {
			assert.Equal(t, id, ev.ID)
			assert.Equal(t, 1, ev.Seq)
		}
	}
	assert.Equal(t, []string{"session", "request", "pasted", "submitted", "answered", "notified"}, names)
	assert.Contains(t, session, "-w"+strings.TrimPrefix(worker, "%"))
}

// TestKitCompletionE2E loads the bash script and lists the panes and agents of a private server.
func TestKitCompletionE2E(t *testing.T) {
	w := newWorld(t)
	worker, _, _ := w.workerPane(false)
	shell := w.bashPane("")

	want := strings.Fields(w.tmux("list-panes", "-a", "-F", "#{pane_id}"))
	r := w.run(call{}, "__complete", "-S", w.sock, "panes")
	require.Equal(t, 0, r.code, r.String())
	got := strings.Fields(r.stdout)
	sort.Strings(got)
	sort.Strings(want)
	assert.Equal(t, want, got, "every live pane of the server")

	r = w.run(call{}, "__complete", "-S", w.sock, "agents", "work")
	require.Equal(t, 0, r.code, r.String())
	assert.Equal(t, "worker.py\n", r.stdout)

	r = w.run(call{}, "__complete", "-S", w.sock, "--describe", "panes", worker)
	require.Equal(t, 0, r.code, r.String())
	assert.True(t, strings.HasPrefix(r.stdout, worker+"\tworker.py"), r.stdout)

	env := append(cleanEnv(), "PATH="+filepath.Dir(w.bin)+string(os.PathListSeparator)+os.Getenv("PATH"), "WCOMM_ROOT="+w.root)
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", "source <(wcomm completion bash) && complete -p wcomm")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "-F _wcomm wcomm")

	script := filepath.Join(w.work, "wcomm.bash")
	r = w.run(call{}, "completion", "bash")
	require.NoError(t, os.WriteFile(script, []byte(r.stdout), 0o600))
	got = kitBashComplete(t, script, env, "wcomm", "send", "-S", w.sock, "--to", "%")
	assert.Contains(t, got, worker)
	assert.Contains(t, got, shell)
	got = kitBashComplete(t, script, env, "wcomm", "find", "-S", w.sock, "wor")
	assert.Equal(t, []string{"worker.py"}, got)

	if kitHaveShell(t, "fish") {
		fishScript := filepath.Join(w.work, "wcomm.fish")
		r = w.run(call{}, "completion", "fish")
		require.NoError(t, os.WriteFile(fishScript, []byte(r.stdout), 0o600))
		cmd := exec.Command("fish", "--no-config", "-c", "source "+shQuote(fishScript)+"; complete -C"+shQuote("wcomm send -S "+w.sock+" --to %"))
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Contains(t, string(out), worker+"\tworker.py")
	}
}

// TestKitInstallSkillTwiceE2E runs the real binary twice: the second run changes no byte.
func TestKitInstallSkillTwiceE2E(t *testing.T) {
	bin := wcommBin(t)
	dir := t.TempDir()
	runBin := func() string {
		out, err := exec.Command(bin, "install-skill", "--dir", dir).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	snapshot := func() map[string]string {
		m := map[string]string{}
		require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			require.NoError(t, err)
			if !d.IsDir() {
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				m[p] = string(data)
			}
			return nil
		}))
		return m
	}
	out := runBin()
	// The skill, the AGENTS.md and GEMINI.md blocks, and the three agents' hook settings.
	assert.Equal(t, 6, strings.Count(out, "created "), out)
	first := snapshot()
	require.Len(t, first, 6)
	out = runBin()
	assert.Equal(t, 6, strings.Count(out, "unchanged "), out)
	assert.Equal(t, first, snapshot())
}

// TestKitVersionLdflagsE2E builds with the Makefile's -X flags and checks that version shows them.
func TestKitVersionLdflagsE2E(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "wcomm")
	build := exec.Command("go", "build", "-ldflags", "-X github.com/wcomm/wcomm/internal/buildinfo.version=v9.8.7 -X github.com/wcomm/wcomm/internal/buildinfo.commit=feedc0de", "-o", bin, wcommPkg)
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin, "version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.True(t, strings.HasPrefix(string(out), "wcomm v9.8.7 (commit feedc0de, go"), string(out))
}
