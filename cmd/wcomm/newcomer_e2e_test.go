package main

// What a newcomer meets first, each against the real binary and a real tmux server: doctor on a
// default socket, agent names everywhere a target is taken, script workers in panes, exit codes
// and words of the commands an orchestrator in a shell runs.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A tmux server makes its socket group-writable (0660) in a 0700 folder of its own: nobody else
// can reach it, so doctor must not call it a problem; in a folder others can enter, it is one.
func TestE2EDoctorDefaultSocketMode(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	require.NoError(t, os.Chmod(w.sock, 0o660))
	require.NoError(t, os.Chmod(w.dir, 0o700))

	r := w.in(orch, "doctor")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "problems:     none")

	require.NoError(t, os.Chmod(w.dir, 0o755))
	t.Cleanup(func() { _ = os.Chmod(w.dir, 0o700) })
	r = w.in(orch, "doctor")
	requireCode(t, 1, r)
	assert.Contains(t, r.stdout, "accessible to others")
}

// doctor --pane takes what send --to takes: an agent name found as find does, not only a pane id
// or a tmux target.
func TestE2EDoctorPaneByAgentName(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker, _, _ := w.workerPane(false)

	r := w.in(orch, "doctor", "--pane", "worker", "--json")
	requireCode(t, 0, r)
	d := decode[doctorJSON](t, r)
	require.NotNil(t, d.Pane, "%s", r)
	assert.Equal(t, worker, d.Pane.ID)

	r = w.in(orch, "doctor", "--pane", "no-such-agent")
	requireCode(t, 4, r)
}

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
	assert.Regexp(t, sh+`\s+\S+\s+\d+\s+worker.sh`, r.stdout)

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
