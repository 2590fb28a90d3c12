package cli

// The third audit's reproductions, kept apart from the other end-to-end tests so that they can be
// run again as the audit's own cases: each one failed against the code it was found in.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	requireCode(t, 0, w.asPerson(env, "trust", conf))
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

// TestAudit3TamperedIntent: the dispatcher runs only what hashes to the approved definition. An
// intent file whose stored command was changed after the approval (its definition_hash left as
// it was) is blocked, never run, and --dry-run says so and shows the command that would have run.
// Before, the stored argv ran, and the check compared the settings with the stored hash only.
func TestAudit3TamperedIntent(t *testing.T) {
	t.Parallel()
	a := newAWorld(t)
	id := a.ask("tamper", "publish")
	a.answer(id, "yes")
	var intent string
	require.NoError(t, filepath.WalkDir(a.root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".intent") {
			intent = p
		}
		return err
	}))
	require.NotEmpty(t, intent)
	var in map[string]any
	require.NoError(t, json.Unmarshal([]byte(readString(t, intent)), &in))
	pwned := filepath.Join(a.work, "pwned")
	in["definition"].(map[string]any)["run"] = []string{"touch", pwned}
	data, err := json.Marshal(in)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(intent, data, 0o600))

	r := a.as("", nil, "actions", "run", "--dry-run", "--id", id)
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "action publish (touch "+pwned+")")
	assert.Contains(t, r.stdout, "would block")
	assert.Contains(t, r.stdout, "does not hash to the approved definition")
	r = a.as("", nil, "actions", "run", "--id", id)
	requireCode(t, 1, r)
	assert.Contains(t, r.stdout, id+": publish blocked")
	assert.NoFileExists(t, pwned, "the tampered command ran")
	assert.Empty(t, a.executions())
}

// TestAudit3KilledNotifier: a notifier killed with SIGKILL between its paste and its Enter leaves
// a guard behind, started before the paste and asleep until the notifier ends, that becomes the
// pane's deliverer and presses the Enter: the orchestrator gets its RESPONSE line exactly once
// without any other message to its pane. Before, nothing came until some other message went to
// that pane.
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
	// Checked before the kill: once the notifier is dead its guard may press the Enter at once.
	require.Empty(t, jsonLines(t, recLog), "paste seen, Enter still 5 s away: nothing submitted yet")
	require.NoError(t, n.cmd.Process.Kill())
	r := n.wait(t, time.Minute)
	require.Equal(t, -1, r.code, "killed: %s", r)

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
	orch, hooks := w.hostBashPane() // the agent's hooks run in its pane
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
	r = w.runInPaneTo(hooks, "/dev/full", "", stop, nil, "hook", "--agent", "claude").wait(t, time.Minute)
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "nothing was taken")
	items := w.inboxItems(orch, "--peek")
	require.Len(t, items, 1, "still waiting: %v", items)
	r = w.hookIn(hooks, nil, stop, "hook", "--agent", "claude")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, s.Response)
	all := w.inboxItems(orch, "--all")
	require.Len(t, all, 2, "%v", all)
	assert.Equal(t, "hook", all[1]["via"])
}

// TestAudit3MCPBadFrames: the MCP server answers every malformed line with a JSON-RPC error and
// goes on serving: a garbage line, a truncated object, a batch, an object as id, a message
// without "jsonrpc", a trailing NUL, a frame over 16 MiB. Before, each one ended the server
// without a reply.
func TestAudit3MCPBadFrames(t *testing.T) {
	t.Parallel()
	bin := wcommBin(t)
	cmd := exec.Command(bin, "mcp")
	cmd.Env = append(cleanEnv(), "WCOMM_ROOT="+filepath.Join(t.TempDir(), "root"))
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewReaderSize(stdout, 1<<20)
	type reply struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	roundTrip := func(frame []byte) reply {
		t.Helper()
		_, err := stdin.Write(append(frame, '\n'))
		require.NoError(t, err, "the server is gone; its stderr:\n%s", stderr)
		got := make(chan []byte, 1)
		go func() { line, _ := lines.ReadBytes('\n'); got <- line }()
		select {
		case line := <-got:
			var r reply
			require.NoError(t, json.Unmarshal(line, &r), "%q; stderr:\n%s", line, stderr)
			return r
		case <-time.After(30 * time.Second):
			t.Fatalf("no reply to %.60q; stderr:\n%s", frame, stderr)
			return reply{}
		}
	}
	r := roundTrip([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"audit","version":"1"}}}`))
	require.Nil(t, r.Error)
	_, err = stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	require.NoError(t, err)

	big := append(append([]byte(`{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"pad":"`), bytes.Repeat([]byte("a"), 17<<20)...), `"}}`...)
	for _, tt := range []struct {
		name  string
		frame []byte
		code  int
		id    string
	}{
		{"garbage", []byte("garbage"), -32700, "null"},
		{"truncated object", []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"`), -32700, "null"},
		{"batch", []byte(`[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`), -32600, "null"},
		{"object id", []byte(`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`), -32600, "null"},
		{"no jsonrpc", []byte(`{"id":5,"method":"tools/list"}`), -32600, "5"},
		{"trailing NUL", []byte("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\"}\x00"), -32700, "null"},
		{"over 16 MiB", big, -32600, "8"}, // its id, read from its start
	} {
		r := roundTrip(tt.frame)
		require.NotNil(t, r.Error, "%s: an error reply", tt.name)
		assert.Equal(t, tt.code, r.Error.Code, tt.name)
		assert.Equal(t, tt.id, string(r.ID), tt.name)
		// And it goes on serving.
		r = roundTrip([]byte(`{"jsonrpc":"2.0","id":"after","method":"tools/list"}`))
		require.Nil(t, r.Error, "after %s", tt.name)
		assert.Contains(t, string(r.Result), `"tools"`, "after %s", tt.name)
	}
}

// TestAudit3PlantedStores: in a root that was loose (0777) before first use, store folders that
// another user (uid 65534) planted are refused, not used, and so is a symlink at ROOT/.ids to a
// folder outside the root: one owner-and-symlink check for every store. Before, only .outbox and
// .locks were checked: the other user's .ids, .where and .panes were written to, and the link
// was followed.
func TestAudit3PlantedStores(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.catPane()
	worker := w.catPane()
	require.NoError(t, os.MkdirAll(w.root, 0o700))
	require.NoError(t, os.Chmod(w.root, 0o777))
	const other = 65534
	plant := func(name string) string {
		d := filepath.Join(w.root, name)
		require.NoError(t, os.Mkdir(d, 0o777))
		require.NoError(t, os.Chown(d, other, other))
		return d
	}
	ids, where, panes := plant(".ids"), plant(".where"), plant(".panes")

	r := w.run(call{pane: orch}, "send", "--to", worker, "--", "a task")
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, ids+" is owned by uid 65534")
	require.NoError(t, os.Remove(ids))

	s := w.send(orch, worker, "a task")
	for _, d := range []string{where, panes} {
		entries, err := os.ReadDir(d)
		require.NoError(t, err)
		assert.Empty(t, entries, "%s, another user's folder, was written to", d)
	}
	r = w.run(call{pane: orch}, "show", s.ID)
	requireCode(t, 0, r)

	outside := t.TempDir()
	require.NoError(t, os.RemoveAll(filepath.Join(w.root, ".ids")))
	require.NoError(t, os.Symlink(outside, filepath.Join(w.root, ".ids")))
	r = w.run(call{pane: orch}, "send", "--to", worker, "--", "another task")
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, ".ids is a symlink")
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "the symlink was followed and written through")
}

// TestAudit3SmallerOnes: an unknown pane's error is wcomm's own, with one suggestion (not tmux's
// stderr and tmux's hint besides); a failed resend does not suggest running itself again; and
// send --file /dev/zero stops at its 256 MiB bound holding about that much, not two and a half
// times it.
func TestAudit3SmallerOnes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.catPane()
	worker := w.bashPane("")

	r := w.in(orch, "send", "--to", "%99", "--", "a task")
	requireCode(t, 4, r)
	assert.Equal(t, "wcomm send: no pane \"%99\" on this tmux server; run 'wcomm panes --all' to see which panes exist\n", r.stderr)

	w.tmux("select-pane", "-d", "-t", worker) // input off: every paste is refused
	r = w.in(orch, "send", "--no-queue", "--to", worker, "--", "a task")
	requireCode(t, 1, r)
	require.Contains(t, r.stderr, "'wcomm send --resend ", "a refused send names its resend: %s", r)
	id := regexp.MustCompile(`send --resend (\S+)'`).FindStringSubmatch(r.stderr)[1]
	r = w.in(orch, "send", "--no-queue", "--resend", id)
	requireCode(t, 1, r)
	assert.NotContains(t, r.stderr, "--resend", "a failed resend suggests itself: %s", r)
	assert.Contains(t, r.stderr, "wcomm show "+id)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := w.cmd(ctx, call{pane: orch}, "send", "--to", worker, "--file", "/dev/zero")
	rss := filepath.Join(w.work, "peak-rss")
	withPeakRSS(t, cmd, rss)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	require.Error(t, err)
	assert.Contains(t, stderr.String(), "larger than 256 MiB")
	kib := readPeakRSS(t, rss)
	t.Logf("send --file /dev/zero: peak resident %d MiB", kib>>10)
	assert.Less(t, kib<<10, int64(384<<20), "peak resident memory for a 256 MiB bound")
}
