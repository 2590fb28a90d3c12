package cli

// What runs where, against the real binary and a real tmux server: script workers by their script's
// name, each pane's agent, and a send to a host that is not declared.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A worker that is a shell script shows by its script's name in panes and in find's "what runs
// where"; a script named like an agent is not taken for that agent by doctor or send.
func TestE2EScriptWorkers(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	script := "echo SCRIPT READY; while read -r line; do :; done\n"
	require.NoError(t, os.WriteFile(filepath.Join(w.work, "worker.sh"), []byte(script), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(w.work, "codex"), []byte("#!/bin/bash\n"+script), 0o700))
	sh := w.pane("", "bash", "worker.sh")
	w.waitScreen(sh, "SCRIPT READY")
	fake := w.pane("", "./codex")
	w.waitScreen(fake, "SCRIPT READY")

	r := w.in(orch, "panes", "--json")
	requireCode(t, 0, r)
	programs := map[string][]string{}
	for _, p := range decode[[]struct {
		ID       string   `json:"pane_id"`
		Programs []string `json:"programs"`
	}](t, r) {
		programs[p.ID] = p.Programs
	}
	assert.Contains(t, programs[sh], "worker.sh")
	assert.Contains(t, programs[fake], "codex")
	r = w.in(orch, "panes")
	requireCode(t, 0, r)
	assert.Regexp(t, sh+`\s+\S+\s+\S+\s+\d+\s+\S+\s+worker.sh`, r.stdout)

	r = w.in(orch, "find", "no-such-agent")
	requireCode(t, 4, r)
	assert.Contains(t, r.stderr, "worker.sh", "what runs where names the script")

	r = w.in(orch, "doctor", "--pane", fake, "--json")
	requireCode(t, 0, r)
	d := decode[doctorJSON](t, r)
	require.NotNil(t, d.Pane)
	assert.NotEqual(t, "codex", d.Pane.Detection.Profile, "a bash script named codex is not the Codex CLI: %s", d.Pane.Detection.Reason)
	assert.False(t, strings.Contains(r.stdout, "Codex CLI"), "%s", r.stdout)
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
