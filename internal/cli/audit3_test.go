package cli

// The third audit's reproductions, kept apart from the other end-to-end tests so that they can be
// run again as the audit's own cases: each one failed against the code it was found in.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAudit3UntrustedProfiles: a project's .wcomm.yaml that renames the built-in shell profile's
// detection changes nothing about how a worker's bash is typed into until the user trusts the
// file, and the sender is told the file's profiles were ignored and how to trust it. Before,
// bash was taken for an unknown program, the whole request pasted and Enter pressed: bash ran the
// request's lines.
func TestAudit3UntrustedProfiles(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	conf := filepath.Join(w.work, ".wcomm.yaml")
	require.NoError(t, os.WriteFile(conf, []byte("agent_profiles:\n  - name: shell\n    detect:\n      names: [no-such-shell]\n"), 0o600))
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}

	victim := t.TempDir()
	worker := w.promptPane(victim, nil, "bash", "--norc", "--noprofile", "-i")
	orch := w.catPane()
	pwned := filepath.Join(victim, "pwned")
	r := w.run(call{pane: orch, env: env}, "send", "--to", worker, "--enter-delay", "50ms", "--", "touch "+pwned)
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, conf+" is not trusted")
	assert.Contains(t, r.stderr, "agent_profiles")
	assert.Contains(t, r.stderr, "wcomm trust "+conf)
	w.waitScreen(worker, "# [WORKER")
	w.settle(worker)
	assert.NoFileExists(t, pwned, "the request's line ran in the worker's shell")

	// Trusted, the file's profiles apply: the same bash is now an unknown program to wcomm.
	requireCode(t, 0, w.run(call{env: env}, "trust", conf))
	r = w.run(call{pane: orch, env: env}, "doctor", "--pane", worker, "--json")
	assert.NotContains(t, r.stderr, "not trusted")
	var doc struct {
		Pane struct {
			Profile struct {
				Name string `json:"name"`
			} `json:"profile"`
		} `json:"pane"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), "%s", r)
	assert.Equal(t, "generic", doc.Pane.Profile.Name)
}

// TestAudit3CopyModeBeforeEnter: a person who enters copy mode between a paste and its Enter
// takes no Enter away: the Enter is refused inside tmux (the mode is checked in the Enter's own
// call), the delivery is not logged as submitted, the next message waits instead of joining that
// line, and once the person leaves copy mode the deliverer presses the Enter; the orchestrator
// gets both RESPONSE lines, each submitted on its own.
func TestAudit3CopyModeBeforeEnter(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec, recLog := w.recorderPane()
	worker := w.catPane()
	s1 := w.send(rec, worker, "first task")
	s2 := w.send(rec, worker, "second task")

	first := w.start(call{pane: worker, env: []string{"WCOMM_ENTER_DELAY=3s"}}, "notify", "--response", s1.Response, "--", "first answer")
	waitFor(t, 15*time.Second, func() bool {
		out, _ := w.tmuxErr("display-message", "-p", "-t", rec, "#{@wcomm-pasted}")
		return strings.TrimSpace(out) != ""
	}, "the first RESPONSE line's paste")
	w.tmux("copy-mode", "-t", rec)
	r := first.wait(t, time.Minute)
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "copy mode", "the notifier says why its line waits")
	assert.NotContains(t, w.exchangeEvents(s1.ID), "notified", "logged as delivered while its Enter went into copy mode")
	for _, it := range w.inboxItems(rec, "--all") {
		assert.NotEqual(t, "delivered", it["state"], "%v", it)
	}

	r = w.in(worker, "notify", "--response", s2.Response, "--", "second answer")
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "queued")
	w.tmux("send-keys", "-t", rec, "-X", "cancel")

	waitFor(t, 20*time.Second, func() bool { return len(jsonLines(t, recLog)) >= 2 }, "both RESPONSE lines")
	waitNoDeliverer(t, w.root)
	entries := jsonLines(t, recLog)
	require.Len(t, entries, 2, "%v", entries)
	for i, s := range []sent{s1, s2} {
		assert.Equal(t, true, entries[i]["enter"], "line %d submitted on its own: %v", i+1, entries)
		assert.Contains(t, entries[i]["paste"], s.Response)
		assert.Equal(t, 1, strings.Count(entries[i]["paste"].(string), "[RESPONSE"), "%v", entries)
	}
	for _, s := range []sent{s1, s2} {
		waitFor(t, 10*time.Second, func() bool { return slicesContains(w.exchangeEvents(s.ID), "notified") }, "%s recorded as notified", s.ID)
	}
}

func slicesContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestAudit3KilledNotifier: a notifier killed with SIGKILL between its paste and its Enter leaves
// a guard behind, started right after the paste, that becomes the pane's deliverer and presses
// the Enter: the orchestrator gets its RESPONSE line exactly once without any other message to
// its pane. Before, nothing came until some other message went to that pane.
func TestAudit3KilledNotifier(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec, recLog := w.recorderPane()
	worker := w.catPane()
	s := w.send(rec, worker, "a task")

	n := w.start(call{pane: worker, env: []string{"WCOMM_ENTER_DELAY=5s"}}, "notify", "--response", s.Response, "--", "the answer")
	waitFor(t, 15*time.Second, func() bool {
		out, _ := w.tmuxErr("display-message", "-p", "-t", rec, "#{@wcomm-pasted}")
		return strings.TrimSpace(out) != ""
	}, "the notifier's paste")
	require.NoError(t, n.cmd.Process.Kill())
	r := n.wait(t, time.Minute)
	require.Equal(t, -1, r.code, "killed: %s", r)
	assert.Empty(t, jsonLines(t, recLog), "killed before its Enter: nothing submitted yet")

	waitFor(t, 30*time.Second, func() bool { return len(jsonLines(t, recLog)) >= 1 }, "the RESPONSE line's Enter")
	waitNoDeliverer(t, w.root)
	entries := jsonLines(t, recLog)
	require.Len(t, entries, 1, "%v", entries)
	assert.Equal(t, true, entries[0]["enter"])
	assert.Contains(t, entries[0]["paste"], s.Response)
	waitFor(t, 10*time.Second, func() bool { return slicesContains(w.exchangeEvents(s.ID), "notified") }, "the exchange recorded as notified")
}

// runToFull runs wcomm with its stdout on /dev/full, where every write fails (ENOSPC).
func (w *world) runToFull(c call, args ...string) result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	require.NoError(w.t, err)
	defer full.Close()
	cmd := w.cmd(ctx, c, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = full, &stderr
	return finish(w.t, args, cmd.Run(), &bytes.Buffer{}, &stderr)
}

// TestAudit3OutputBeforeState: what hands a message over is its output, so a state that says it
// was handed over is written only after that output succeeded. An await whose stdout is full
// fails and leaves the response unread (the next plain await returns it); a hook whose stdout is
// full takes nothing (the message still waits, and the next hook hands it over). Before, the
// exchange was marked read and the message recorded as delivered via the hook.
func TestAudit3OutputBeforeState(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker := w.catPane()

	s := w.send(orch, worker, "a task")
	requireCode(t, 0, w.in(worker, "notify", "--response", s.Response, "--", "the answer"))
	w.waitScreen(orch, "# [RESPONSE")
	r := w.runToFull(call{pane: orch}, "await", s.ID)
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "no space left on device")
	assert.NotContains(t, w.exchangeEvents(s.ID), "read")
	r = w.in(orch, "await", "--timeout", "5s")
	requireCode(t, 0, r)
	assert.Equal(t, "the answer\n", r.stdout, "the plain await finds the response still unread")

	s = w.send(orch, worker, "another task")
	w.tmux("copy-mode", "-t", orch) // someone reads the pane: the line waits
	requireCode(t, 0, w.in(worker, "notify", "--response", s.Response, "--", "answer"))
	stop := []byte(`{"hook_event_name":"Stop","stop_hook_active":false}`)
	r = w.runToFull(call{pane: orch, stdin: stop}, "hook", "--agent", "claude")
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "nothing was taken")
	items := w.inboxItems(orch, "--peek")
	require.Len(t, items, 1, "still waiting: %v", items)
	r = w.run(call{pane: orch, stdin: stop}, "hook", "--agent", "claude")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, s.Response)
	all := w.inboxItems(orch, "--all")
	require.Len(t, all, 2, "%v", all)
	assert.Equal(t, "hook", all[1]["via"])
}
