package cli

// The fifth audit's newcomer defects, against the real binary and a private tmux server: notify
// without an id says which request it answered and what is still open; panes shows each pane's
// agent; a send to an undeclared host says how to declare it.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notify without --id answers the newest open request: it names it, and the others still open.
func TestE2ENotifyNamesWhatItAnswered(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker := w.catPane()
	first := w.send(orch, worker, "first task")
	second := w.send(orch, worker, "second task")
	third := w.send(orch, worker, "third task")

	// show says the delivery's state in the status line and its evidence on a line of its own,
	// never parentheses in parentheses.
	r := w.in(orch, "show", first.ID)
	requireCode(t, 0, r)
	assert.Regexp(t, `(?m)^status: +pending \(submitted, (un)?verified\)$`, r.stdout)
	assert.Regexp(t, `(?m)^evidence: +\S`, r.stdout)
	for _, line := range strings.Split(r.stdout[:strings.Index(r.stdout, "--- request")], "\n") {
		depth, deepest := 0, 0
		for _, c := range line {
			depth += map[rune]int{'(': 1, ')': -1}[c]
			deepest = max(deepest, depth)
		}
		assert.LessOrEqual(t, deepest, 1, "line %q", line)
	}

	r = w.in(worker, "notify", "--enter-delay", "50ms", "--", "third done")
	requireCode(t, 0, r)
	assert.Equal(t, third.Response+"\n", r.stdout, "stdout stays the response path")
	assert.Contains(t, r.stderr, "answered request "+third.ID+", the newest open one addressed to your pane; 2 others still open, newest first: "+
		second.ID+", "+first.ID)

	r = w.in(worker, "--json", "notify", "--enter-delay", "50ms", "--", "second done")
	requireCode(t, 0, r)
	var res struct {
		Exchange  struct{ ID string } `json:"exchange"`
		Newest    bool                `json:"newest"`
		StillOpen []string            `json:"still_open"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	assert.Equal(t, second.ID, res.Exchange.ID)
	assert.True(t, res.Newest)
	assert.Equal(t, []string{first.ID}, res.StillOpen)

	r = w.in(worker, "notify", "--enter-delay", "50ms", "--", "first done")
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "answered request "+first.ID+", the newest open one addressed to your pane; no other request is open")

	// Named by its id, the request needs no such words.
	fourth := w.send(orch, worker, "fourth task")
	r = w.in(worker, "notify", "--enter-delay", "50ms", "--id", fourth.ID, "--", "fourth done")
	requireCode(t, 0, r)
	assert.NotContains(t, r.stderr, "answered request")
}

// panes shows the AGENT column send --all decides by (text and --json), doctor marks no worked
// around tmux bug as a problem, and a send to HOST:TARGET of an undeclared host says how to
// declare it.
func TestE2EPanesAgentAndUndeclaredHost(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cfgHome := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(cfgHome, "wcomm"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(cfgHome, "wcomm", "config.yaml"),
		[]byte("agent_profiles:\n  - {name: scripted, kind: agent, detect: {names: [scripted-agent]}}\n"), 0o600))
	w.env = append(w.env, "XDG_CONFIG_HOME="+cfgHome)
	data, err := os.ReadFile(filepath.Join(fixtures, "worker.py"))
	require.NoError(t, err)
	agentBin := filepath.Join(w.work, "scripted-agent")
	require.NoError(t, os.WriteFile(agentBin, data, 0o700))
	agent := w.pane("", "python3", agentBin, filepath.Join(w.work, "agent.jsonl"))
	w.waitScreen(agent, "WORKER READY")
	shell := w.bashPane("")

	r := w.in(shell, "panes")
	requireCode(t, 0, r)
	assert.Regexp(t, `(?m)^PANE +NAME +TARGET +PID +AGENT +PROGRAMS$`, r.stdout)
	assert.Regexp(t, `(?m)^`+agent+` +\S+ +\S+ +\d+ +scripted +`, r.stdout)
	assert.Regexp(t, `(?m)^`+shell+` +\S+ +\S+ +\d+ +- +\(you\)`, r.stdout)

	r = w.in(shell, "--json", "panes")
	requireCode(t, 0, r)
	var panes []struct {
		ID    string `json:"pane_id"`
		Agent string `json:"agent"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &panes), r.stdout)
	agents := map[string]string{}
	for _, p := range panes {
		agents[p.ID] = p.Agent
	}
	assert.Equal(t, "scripted", agents[agent])
	assert.Equal(t, "", agents[shell])

	// doctor marks with '!' only what is a problem: tmux bugs wcomm works around are not.
	r = w.in(shell, "doctor")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "problems:     none")
	assert.NotRegexp(t, `(?m)^\s*!`, r.stdout)
	assert.Regexp(t, `(?m)^  \* trailing-semicolon `, r.stdout)

	r = w.in(shell, "send", "--to", "gpu1:codex", "--", "hello")
	requireCode(t, exitNotFound, r)
	assert.Contains(t, r.stderr, "if gpu1 is another machine, declare it under hosts: in ~/.config/wcomm/config.yaml")
	assert.Contains(t, r.stderr, "wcomm help remote")
}
