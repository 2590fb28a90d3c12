package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/tmuxcomm"
)

// TestE2EFacesRules runs each rule that the engine's front door holds for both faces through the
// command line (the real wcomm) and through MCP (the real wcomm-mcp), as the same panes of one
// tmux server, and compares what each face did: the refusals of an empty message, an empty
// target, a missing task, an unknown profile and a busy wait over its cap (the same class and the
// engine's words, each face adding only its own hint or argument name); and the defaults (the
// capability, the task, the ask's timeout and its auto-answer notice), a send to HOST:TARGET and
// an answer's wording, which must come out the same.
func TestE2EFacesRules(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.catPane()
	worker := w.catPane()
	lonely := w.catPane() // no request is addressed to it
	mo := w.mcpClient(orch)
	mw := w.mcpClient(worker)
	ml := w.mcpClient(lonely)

	// The refusals: a failed command and a failed tool call with the same exit code, and the
	// engine's words in both.
	for _, tc := range []struct {
		name     string
		pane     string
		args     []string
		client   *mcpClient
		tool     string
		in       map[string]any
		code     int
		words    string
		cliExtra string // the command line's own part: its hint or flag name
		mcpExtra string // the tool's own part
	}{
		{"empty message", orch, []string{"send", "--to", worker, "  "}, mo, "send", map[string]any{"to": worker, "message": "  "},
			exitUsage, "empty message: give the request's text", "(give it as arguments, --file F or on stdin with -)", "(give message)"},
		{"no message at all", orch, []string{"send", "--to", worker}, mo, "send", map[string]any{"to": worker, "message": ""},
			exitUsage, "empty message: give the request's text", "(give it as arguments", "(give message)"},
		{"empty target", orch, []string{"send", "never sent"}, mo, "send", map[string]any{"to": "", "message": "never sent"},
			exitUsage, "no target: name the worker's pane or its agent", "(pass --to PANE or --to AGENT)", "(give to: a pane id"},
		{"empty response", worker, []string{"notify", "--id", "20200101-000000-ffff", ""}, mw, "notify", map[string]any{"id": "20200101-000000-ffff", "message": " "},
			exitUsage, "empty response: give the response's text", "(give it as arguments", "(give message)"},
		{"missing task", lonely, []string{"ask", "--context", "c", "--option", "A", "--option", "B", "--", "Which?"}, ml, "ask",
			map[string]any{"question": "Which?", "context": "c", "options": []string{"A", "B"}},
			exitUsage, "ask needs a task: no request addressed to your pane names the task", "(pass --task ID)", "(give task)"},
		{"unknown profile", orch, []string{"send", "--to", worker, "--agent", "nosuch", "never sent"}, mo, "send", map[string]any{"to": worker, "message": "never sent", "agent": "nosuch"},
			exitUsage, `unknown agent profile "nosuch": choose one of ` + tmuxcomm.ProfileNames(), "--agent: ", "agent: "},
		{"busy wait over its cap", orch, []string{"send", "--to", worker, "--no-queue", "--busy-wait", "11m", "never sent"}, mo, "send",
			map[string]any{"to": worker, "message": "never sent", "no_queue": true, "busy_wait_seconds": 660},
			exitUsage, "the busy wait 11m0s is not between 0 and 10m0s", "--busy-wait: ", "busy_wait_seconds: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cli := w.in(tc.pane, tc.args...)
			res, out := tc.client.call(tc.tool, tc.in)
			require.True(t, res.IsError, "the tool call succeeded where the command failed: %s", text(res))
			requireCode(t, tc.code, cli)
			assert.Equal(t, float64(cli.code), out["exit_code"], "the same class; mcp: %s", text(res))
			first, _, _ := strings.Cut(cli.stderr, "\n")
			msg := out["error"].(string)
			for _, s := range []string{first, msg} {
				assert.Contains(t, s, tc.words, "the engine's words in both faces")
			}
			assert.Contains(t, first, tc.cliExtra)
			assert.Contains(t, msg, tc.mcpExtra)
			if tc.tool == "ask" {
				assert.True(t, strings.HasSuffix(first, tmuxcomm.BestJudgment), "%s", first)
				assert.True(t, strings.HasSuffix(msg, tmuxcomm.BestJudgment), "%s", msg)
			}
		})
	}
	assert.NotContains(t, w.capture(worker), "never sent", "nothing was sent by either face")

	t.Run("the profiles named in help", func(t *testing.T) {
		r := w.in(orch, "send", "--help")
		requireCode(t, 0, r)
		assert.Contains(t, r.stdout, "("+tmuxcomm.ProfileNames()+")")
		tools, err := mo.cs.ListTools(t.Context(), nil)
		require.NoError(t, err)
		for _, tl := range tools.Tools {
			if tl.Name == "send" {
				data, err := json.Marshal(tl.InputSchema)
				require.NoError(t, err)
				assert.Contains(t, string(data), "("+tmuxcomm.ProfileNames()+")")
			}
		}
	})

	// sendBoth sends one request from each face and returns the exchanges as each reported them.
	sendBoth := func(t *testing.T, cliEnv []string, client *mcpClient, to string) (cliX, mcpX map[string]any) {
		t.Helper()
		r := w.run(call{pane: orch, env: cliEnv}, "send", "--json", "--to", to, "a task from the command line")
		requireCode(t, 0, r)
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &cliX), "%s", r)
		res, out := client.call("send", map[string]any{"to": to, "message": "a task from MCP"})
		require.False(t, res.IsError, "%s", text(res))
		return cliX, out
	}

	t.Run("default capability", func(t *testing.T) {
		cliX, mcpX := sendBoth(t, nil, mo, worker)
		assert.Equal(t, string(tmuxcomm.DefaultCapability), cliX["capability"])
		assert.Equal(t, cliX["capability"], mcpX["capability"])
		w.waitScreen(worker, "a task from MCP")
	})

	// askBoth asks one question from each face as the worker and returns the questions' JSON.
	askBoth := func(t *testing.T, env []string, client *mcpClient, cliArgs []string, in map[string]any) (cliQ, mcpQ map[string]any) {
		t.Helper()
		cliR := w.run(call{pane: worker, env: env}, append([]string{"ask", "--json", "--to", orch, "--context", "c", "--option", "A", "--option", "B"}, append(cliArgs, "--", "Which one?")...)...)
		requireCode(t, 0, cliR)
		var cr struct{ Questions []map[string]any }
		require.NoError(t, json.Unmarshal([]byte(cliR.stdout), &cr), "%s", cliR)
		require.Len(t, cr.Questions, 1)
		args := map[string]any{"question": "Which one?", "context": "c", "options": []string{"A", "B"}, "to": orch}
		for k, v := range in {
			args[k] = v
		}
		res, out := client.call("ask", args)
		require.False(t, res.IsError, "%s", text(res))
		qs, _ := out["questions"].([]any)
		require.Len(t, qs, 1, "%s", text(res))
		return cr.Questions[0], qs[0].(map[string]any)
	}

	t.Run("task from the environment", func(t *testing.T) {
		env := []string{"WCOMM_TASK=faces-env"}
		cliQ, mcpQ := askBoth(t, env, w.mcpClient(worker, env...), []string{"--urgency", "non-blocking"}, map[string]any{"urgency": "non-blocking"})
		assert.Equal(t, "faces-env", cliQ["task_id"])
		assert.Equal(t, cliQ["task_id"], mcpQ["task_id"])
	})

	var pending []string
	t.Run("task from the request", func(t *testing.T) {
		r := w.in(worker, "history", "--json", "--pending")
		requireCode(t, 0, r)
		cliQ, mcpQ := askBoth(t, nil, mw, []string{"--urgency", "non-blocking"}, map[string]any{"urgency": "non-blocking"})
		assert.Regexp(t, `^\d{8}-\d{6}-[0-9a-f]{4}$`, cliQ["task_id"], "the id of the request the worker works on")
		assert.Contains(t, r.stdout, cliQ["task_id"])
		assert.Equal(t, cliQ["task_id"], mcpQ["task_id"])
		pending = []string{cliQ["id"].(string), mcpQ["id"].(string)}
	})

	t.Run("ask defaults and the auto-answer notice", func(t *testing.T) {
		// Neither face names a timeout or auto-answer: the settings' (here the environment's)
		// apply, and both tell the worker the same of the option taken for it.
		env := []string{"WCOMM_QUESTION_TIMEOUT=1s"}
		r := w.run(call{pane: worker, env: env}, "ask", "--task", "faces-auto-cli", "--to", orch, "--context", "c", "--option", "A", "--option", "B", "--", "Which one?")
		requireCode(t, 0, r)
		assert.Contains(t, r.stdout, "DECIDED_BY: auto-timeout")
		_, id, _ := strings.Cut(r.stdout, "\nID: ")
		id = strings.TrimSpace(id)
		res, out := w.mcpClient(worker, env...).call("ask", map[string]any{"task": "faces-auto-mcp", "to": orch, "context": "c", "options": []string{"A", "B"}, "question": "Which one?"})
		require.False(t, res.IsError, "%s", text(res))
		qs, _ := out["questions"].([]any)
		require.Len(t, qs, 1, "%s", text(res))
		q := qs[0].(map[string]any)
		assert.Equal(t, "auto-answered", q["state"])
		assert.Contains(t, text(res), "DECIDED_BY: auto-timeout")
		note := func(id string) string {
			return "nobody answered " + id + " in time; its first option was taken for you: mark the choice \"assumed — needs review\""
		}
		assert.Contains(t, r.stderr, "wcomm ask: "+note(id))
		assert.Contains(t, text(res), note(q["id"].(string)))
	})

	t.Run("an answer's wording", func(t *testing.T) {
		require.Len(t, pending, 2)
		r := w.in(orch, "answer", pending[0], "2")
		requireCode(t, 0, r)
		how, _, _ := strings.Cut(r.stderr, "\n")
		cliLine := strings.TrimSpace(r.stdout) + "; " + how
		res, _ := mo.call("answer", map[string]any{"id": pending[1], "answer": "2"})
		require.False(t, res.IsError, "%s", text(res))
		mcpLine, _, _ := strings.Cut(text(res), "\n")
		assert.Equal(t, strings.ReplaceAll(cliLine, pending[0], pending[1]), mcpLine)
		assert.Contains(t, mcpLine, "no ask was waiting: the ANSWER block was pasted into worker pane "+worker)
	})

	t.Run("a remote target", func(t *testing.T) {
		// A declared host that cannot be reached: both faces queue the send here and report it
		// queued, as its record says.
		cfgHome := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(cfgHome, "wcomm"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(cfgHome, "wcomm", "config.yaml"),
			[]byte("hosts:\n  nowhere:\n    via: [sh, -c, 'exit 255', nowhere]\n"), 0o600))
		env := []string{"XDG_CONFIG_HOME=" + cfgHome, "WCOMM_MAIL_TTL=2s"}
		cliX, mcpX := sendBoth(t, env, w.mcpClient(orch, env...), "nowhere:%1")
		for _, x := range []map[string]any{cliX, mcpX} {
			assert.Equal(t, "queued", x["state"], "%v", x)
			assert.Equal(t, "nowhere", x["host"], "%v", x)
			id, _ := x["id"].(string)
			assert.FileExists(t, filepath.Join(w.root, ".remote", "queue", id+".json"), "the state reported is the state recorded")
		}
		assert.Contains(t, cliX["reason"], "unreachable")
		assert.Contains(t, mcpX["reason"], "unreachable", "the same field as the command line's")
		waitFor(t, 30*time.Second, func() bool { return !flocked(filepath.Join(w.root, ".remote", "puller.lock")) }, "the puller to give up and exit")
	})
}
