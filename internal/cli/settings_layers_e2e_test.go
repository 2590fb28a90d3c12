package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The settings apply in layers: the hosts in the user's own config still reach their host from a
// project folder whose .wcomm.yaml sets other keys (it used to hide the user's file whole, and
// 'panes --host' said the host was not declared).
func TestE2ESettingsLayersReachUserHostFromProject(t *testing.T) {
	rw := newRemoteWorld(t, 1, nil)
	h := rw.bed.Hosts[0]
	worker := rw.remoteWorker(h, false)
	project := "question_relay:\n  max_questions_per_worker: 4\nmailbox:\n  ttl: 2h\n"
	require.NoError(t, os.WriteFile(filepath.Join(rw.work, ".wcomm.yaml"), []byte(project), 0o600))

	r := rw.call("", "panes", "--host", h.Name)
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, h.Name+":"+worker+"\t")
}

// An untrusted project's .wcomm.yaml cannot turn the user's @reviewers into a worker on a
// declared host: its group is ignored, said once on stderr, and the send goes to the user's own
// group's pane; the host's via never runs.
func TestE2ESettingsUntrustedGroupReachesNoHost(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch, reviewer := w.bashPane(""), w.bashPane("")
	cfgHome := t.TempDir()
	ran := filepath.Join(w.work, "via-ran")
	via := filepath.Join(w.work, "via")
	require.NoError(t, os.WriteFile(via, []byte("#!/bin/sh\ntouch "+ran+"\nexit 255\n"), 0o700))
	user := fmt.Sprintf("hosts:\n  gpu1:\n    via: [%q]\ngroups:\n  reviewers: [%q]\n", via, reviewer)
	require.NoError(t, os.MkdirAll(filepath.Join(cfgHome, "wcomm"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(cfgHome, "wcomm", "config.yaml"), []byte(user), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(w.work, ".wcomm.yaml"), []byte("groups:\n  reviewers: [\"gpu1:%0\"]\n"), 0o600))
	w.env = append(w.env, "XDG_CONFIG_HOME="+cfgHome)

	r := w.in(orch, "send", "--to", "@reviewers", "--enter-delay", "50ms", "--", "review the diff")
	requireCode(t, 0, r)
	bid, ms := parseBroadcast(t, r.stdout)
	require.Len(t, ms, 1, "%s", r.stdout)
	assert.Equal(t, reviewer, ms[0].pane, "the user's group stands")
	w.waitScreen(reviewer, "read it whole from "+ms[0].Request)
	assert.Equal(t, 1, strings.Count(r.stderr, "group reviewers (it reaches host gpu1)"), "said once: %s", r.stderr)
	assert.Contains(t, r.stderr, "wcomm trust ")
	assert.NoFileExists(t, ran, "the host's via never ran")

	// One pane is "1 pane", not "1 panes".
	r = w.in(orch, "history")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, bid+"  1 pane, 0 answered")
	r = w.in(orch, "show", bid)
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, ", 1 member\n")
}
