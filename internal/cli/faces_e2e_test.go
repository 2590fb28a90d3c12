package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestE2EFacesAgree runs the same calls through the command line (the real wcomm) and through
// MCP (the real wcomm-mcp over stdio, started as 'wcomm mcp'), both as the same panes of one
// tmux server, and compares what each face says: the exit code and the tool error's exit_code
// and class, and the words. Both faces go through the engine's front door (tmuxcomm.Door), so
// none of these may differ.
func TestE2EFacesAgree(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.catPane()
	worker := w.catPane()
	mo := w.mcpClient(orch)
	mw := w.mcpClient(worker)

	// agree checks that a failed command and a failed tool call say the same: the same exit code
	// and the same words after "wcomm COMMAND: ".
	agree := func(what string, cli result, res *mcp.CallToolResult, out map[string]any) {
		t.Helper()
		require.True(t, res.IsError, "%s: the tool call succeeded where the command failed: %s", what, text(res))
		assert.NotEqual(t, 0, cli.code, "%s: %s", what, cli)
		assert.Equal(t, float64(cli.code), out["exit_code"], "%s: exit code; cli: %s; mcp: %s", what, cli, text(res))
		cmd := cli.args[0]
		first, _, _ := strings.Cut(cli.stderr, "\n")
		assert.Equal(t, "wcomm "+cmd+": "+out["error"].(string), first, "%s: the same words", what)
	}

	t.Run("misspelt key in the settings file", func(t *testing.T) {
		conf := filepath.Join(w.work, ".wcomm.yaml")
		require.NoError(t, os.WriteFile(conf, []byte("question_relay:\n  timeout_secs: 30\n"), 0o600))
		defer os.Remove(conf)
		for _, tc := range []struct {
			args []string
			tool string
			in   map[string]any
		}{
			{[]string{"history"}, "history", map[string]any{}},
			{[]string{"panes"}, "panes", map[string]any{}},
			{[]string{"send", "--to", worker, "hello"}, "send", map[string]any{"to": worker, "message": "hello"}},
			{[]string{"questions"}, "questions", map[string]any{}},
		} {
			cli := w.in(orch, tc.args...)
			res, out := mo.call(tc.tool, tc.in)
			agree(tc.tool, cli, res, out)
			assert.Contains(t, out["error"], ".wcomm.yaml:2:", "%s: the file and line", tc.tool)
			assert.Equal(t, "failure", out["class"])
		}
		assert.NotContains(t, w.capture(worker), "hello", "nothing was sent by either face")
	})

	// Two requests for the worker, answered while the orchestrator's pane cannot take a line (it
	// is in copy mode): the command's notify and the tool's both say the line was queued.
	send := func(msg string) string {
		r := w.in(orch, "send", "--json", "--to", worker, msg)
		requireCode(t, 0, r)
		var x struct{ ID string }
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &x))
		w.waitScreen(worker, x.ID)
		return x.ID
	}
	t.Run("a queued notify", func(t *testing.T) {
		one, two := send("first task"), send("second task")
		w.tmux("copy-mode", "-t", orch)
		cli := w.in(worker, "notify", "--id", one, "Done one.")
		requireCode(t, 0, cli)
		res, out := mw.call("notify", map[string]any{"id": two, "message": "Done two."})
		require.False(t, res.IsError, "%s", text(res))
		assert.Equal(t, "queued", out["signal"])
		queued := "queued: pane " + orch + " is not ready ("
		assert.Contains(t, cli.stderr, queued)
		assert.Contains(t, text(res), queued, "the tool says queued when the line was queued")
		assert.NotContains(t, text(res), "was pasted")
		w.tmux("send-keys", "-t", orch, "-X", "cancel")
		waitNoDeliverer(t, w.root)
		w.waitScreen(orch, "/002-response.md") // both lines reached the pane
		w.waitScreen(orch, "/004-response.md")
	})

	t.Run("an unknown pane", func(t *testing.T) {
		cli := w.in(orch, "send", "--to", "%999", "anyone there?")
		res, out := mo.call("send", map[string]any{"to": "%999", "message": "anyone there?"})
		agree("send", cli, res, out)
		assert.Equal(t, exitNotFound, cli.code)
		assert.Equal(t, "not_found", out["class"])
	})

	t.Run("a malformed id", func(t *testing.T) {
		cli := w.in(orch, "show", "20260117-1200-zz")
		res, out := mo.call("show", map[string]any{"ref": "20260117-1200-zz"})
		agree("show", cli, res, out)

		cli = w.in(orch, "answer", "not-a-question", "yes")
		res, out = mo.call("answer", map[string]any{"id": "not-a-question", "answer": "yes"})
		agree("answer", cli, res, out)
		assert.Equal(t, exitUsage, cli.code)
		assert.Equal(t, "usage", out["class"])
	})

	t.Run("a stale answer", func(t *testing.T) {
		r := w.in(worker, qAskArgs("faces", "--to", orch, "--urgency", "non-blocking")...)
		requireCode(t, 0, r)
		r = w.in(orch, "questions", "--json", "--pending")
		requireCode(t, 0, r)
		var qs struct{ Questions []qJSON }
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &qs))
		require.Len(t, qs.Questions, 1)
		id := qs.Questions[0].ID
		requireCode(t, 0, w.in(orch, "answer", id, "1"))

		cli := w.in(orch, "answer", id, "2")
		res, out := mo.call("answer", map[string]any{"id": id, "answer": "2"})
		agree("answer", cli, res, out)
		assert.Contains(t, out["error"], "stale")
	})
}
