package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/sshtest"
)

// remoteWorld is a world (the orchestrator's host) with sshd hosts beside it, declared in the
// user's settings, each with a tmux server of its own.
type remoteWorld struct {
	*world
	bed *sshtest.Bed
	env []string // XDG_CONFIG_HOME with the hosts, the ssh control folder
}

func newRemoteWorld(t *testing.T, hosts int, extra func(*sshtest.Bed) string) *remoteWorld {
	t.Helper()
	sshtest.Require(t)
	return remoteWorldOn(t, newWorld(t), hosts, extra)
}

// remoteWorldOn adds sshd hosts to an existing world.
func remoteWorldOn(t *testing.T, w *world, hosts int, extra func(*sshtest.Bed) string) *remoteWorld {
	t.Helper()
	sshtest.Require(t)
	bed := sshtest.Start(t, filepath.Dir(w.bin), hosts)
	cfgHome := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(cfgHome, "wcomm"), 0o700))
	var cfg strings.Builder
	cfg.WriteString("hosts:\n")
	for _, h := range bed.Hosts {
		fmt.Fprintf(&cfg, "  %s:\n    via: [ssh, -F, %q, %s]\n    wcomm: %s/wcomm\n", h.Name, bed.Config, h.Name, sshtest.BinDir)
	}
	if extra != nil {
		cfg.WriteString(extra(bed))
	}
	require.NoError(t, os.WriteFile(filepath.Join(cfgHome, "wcomm", "config.yaml"), []byte(cfg.String()), 0o600))
	control, err := os.MkdirTemp("", "wcs")
	require.NoError(t, err)
	rw := &remoteWorld{world: w, bed: bed, env: []string{"XDG_CONFIG_HOME=" + cfgHome, "WCOMM_SSH_CONTROL_DIR=" + control}}
	t.Cleanup(func() {
		// The masters end with their hosts; the puller once nothing is left to pull.
		waitFor(t, 30*time.Second, func() bool { return !flocked(filepath.Join(w.root, ".remote", "puller.lock")) }, "the puller to exit")
		os.RemoveAll(control)
	})
	return rw
}

// call runs wcomm in pane with the remote settings.
func (rw *remoteWorld) call(pane string, args ...string) result {
	rw.t.Helper()
	return rw.run(call{pane: pane, env: rw.env}, args...)
}

// remoteWorker starts the scripted worker in a tmux server on host h (through ssh), gated when
// gate is set, and returns its pane id there.
func (rw *remoteWorld) remoteWorker(h *sshtest.Host, gate bool) string {
	rw.t.Helper()
	script, err := os.ReadFile(filepath.Join(fixtures, "worker.py"))
	require.NoError(rw.t, err)
	require.NoError(rw.t, os.WriteFile(filepath.Join(h.Share, "worker.py"), script, 0o600))
	argv := []string{"tmux", "-f", "/dev/null", "new-session", "-d", "-s", "w", "-x", "200", "-y", "50",
		"-e", "WCOMM_BIN=" + sshtest.BinDir + "/wcomm", "-e", "WCOMM_ENTER_DELAY=50ms",
		"python3", sshtest.ShareDir + "/worker.py", sshtest.ShareDir + "/worker.log"}
	if gate {
		require.NoError(rw.t, os.Mkdir(filepath.Join(h.Share, "gate"), 0o700))
		argv = append(argv, sshtest.ShareDir+"/gate")
	}
	rw.bed.Run(h, argv...)
	pane := strings.TrimSpace(rw.bed.Run(h, "tmux", "display-message", "-p", "-t", "w", "'#{pane_id}'"))
	require.Regexp(rw.t, `^%\d+$`, pane)
	waitFor(rw.t, 30*time.Second, func() bool {
		out, _ := rw.bed.RunErr(h, "tmux", "capture-pane", "-p", "-t", pane)
		return strings.Contains(out, "WORKER READY")
	}, "the worker on %s", h.Name)
	return pane
}

// workerEvents reads the remote worker's log (in the host's share folder).
func workerEvents(h *sshtest.Host) []map[string]any {
	data, _ := os.ReadFile(filepath.Join(h.Share, "worker.log"))
	var out []map[string]any
	for _, line := range strings.Split(string(data), "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) == nil {
			out = append(out, ev)
		}
	}
	return out
}

func waitWorkerEvent(t *testing.T, h *sshtest.Host, event, id string) map[string]any {
	t.Helper()
	var found map[string]any
	waitFor(t, 30*time.Second, func() bool {
		for _, ev := range workerEvents(h) {
			if ev["event"] == event && ev["id"] == id {
				found = ev
				return true
			}
		}
		return false
	}, "%s of %s on %s", event, id, h.Name)
	return found
}

// The round trip through real sshd: send --to HOST:%N prints "ID RESPONSE-PATH"; the worker there
// answers with its own notify; the answer reaches the orchestrator's await, or, with nobody
// awaiting, its pane as the RESPONSE line; show and history see the exchange whole.
func TestE2ERemoteRoundTrip(t *testing.T) {
	t.Parallel()
	rw := newRemoteWorld(t, 1, nil)
	h := rw.bed.Hosts[0]
	orch := rw.bashPane("")
	worker := rw.remoteWorker(h, true)
	// A local session of the host's name: the declared host wins over its session:window reading.
	rw.tmux("new-session", "-d", "-s", "h1", "cat")

	t.Run("await before notify", func(t *testing.T) {
		r := rw.call(orch, "send", "--to", "h1:"+worker, "count the files")
		requireCode(t, 0, r)
		s := parseSent(t, r.stdout)
		assert.True(t, strings.HasPrefix(s.Response, rw.root+"/"), "the response path is the local mirror's: %s", s.Response)
		got := waitWorkerEvent(t, h, "received", s.ID)
		assert.Equal(t, "count the files", got["body"])
		assert.True(t, strings.HasPrefix(got["response"].(string), "/tmp/worker-comm/"), "the worker answers into its own root: %v", got["response"])
		b := rw.start(call{pane: orch, env: rw.env}, "await", s.ID, "--timeout", "40s")
		require.NoError(t, os.WriteFile(filepath.Join(h.Share, "gate", s.ID), nil, 0o600))
		res := b.wait(t, 45*time.Second)
		requireCode(t, 0, res)
		assert.Equal(t, answerOf(s.ID, "count the files")+"\n", res.stdout)
		n := waitWorkerEvent(t, h, "notified", s.ID)
		assert.Equal(t, float64(0), n["rc"], "the remote notify: %v", n)
		// The whole exchange is here: show by id.
		r = rw.call(orch, "show", "--json", s.ID)
		requireCode(t, 0, r)
		x := decode[exchangeJSON](t, r)
		assert.Equal(t, "answered", x.Status)
		assert.Equal(t, answerOf(s.ID, "count the files"), strings.TrimSuffix(x.ResponseBody, "\n"))
		r = rw.call(orch, "show", s.ID)
		requireCode(t, 0, r)
		assert.Contains(t, r.stdout, "worker:        h1:"+worker+" (on host h1)")
	})

	t.Run("notify without await", func(t *testing.T) {
		r := rw.call(orch, "send", "--to", "h1:"+worker, "list the tests")
		requireCode(t, 0, r)
		s := parseSent(t, r.stdout)
		waitWorkerEvent(t, h, "received", s.ID)
		// A question from the worker there never reaches a pane of the orchestrator's id on its host.
		out, err := rw.bed.RunErr(h, "env", "TMUX=/tmp/tmux-0/default,0,0", "TMUX_PANE="+worker, sshtest.BinDir+"/wcomm",
			"ask", "--task", "t1", "--context", "two-ways-forward.", "--option", "a", "--option", "b", "which")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "came from an orchestrator on another host")
		assert.Contains(t, err.Error(), "best judgment")
		assert.Empty(t, out)
		require.NoError(t, os.WriteFile(filepath.Join(h.Share, "gate", s.ID), nil, 0o600))
		// Nobody awaits: the puller brings the RESPONSE line into the orchestrator's pane.
		// Polled until one line holds both: the pane may be caught with the line half echoed.
		var line, screen string
		waitFor(t, 10*time.Second, func() bool {
			screen, _ = rw.tmuxErr("capture-pane", "-p", "-J", "-S", "-", "-t", orch)
			for _, l := range strings.Split(screen, "\n") {
				if strings.Contains(l, "[RESPONSE") && strings.Contains(l, s.Response) {
					line = l
				}
			}
			return line != ""
		}, "the RESPONSE line in the orchestrator's pane; screen:\n%s", &screen)
		r = rw.call(orch, "parse", "--json", line)
		requireCode(t, 0, r)
		px := decode[exchangeJSON](t, r)
		assert.Equal(t, s.ID, px.ID)
		assert.Equal(t, "answered", px.Status)
		r = rw.call(orch, "await", s.ID, "--timeout", "5s")
		requireCode(t, 0, r)
		assert.Equal(t, answerOf(s.ID, "list the tests")+"\n", r.stdout)
		r = rw.call(orch, "history")
		requireCode(t, 0, r)
		assert.Contains(t, r.stdout, s.ID)
	})

	t.Run("mcp", func(t *testing.T) {
		c := rw.mcpClient(orch, rw.env...)
		res, m := c.call("send", map[string]any{"to": "h1:" + worker, "message": "through the tools"})
		require.False(t, res.IsError, "%s", text(res))
		id, _ := m["id"].(string)
		require.NotEmpty(t, id)
		waitWorkerEvent(t, h, "received", id)
		require.NoError(t, os.WriteFile(filepath.Join(h.Share, "gate", id), nil, 0o600))
		res, m = c.call("await", map[string]any{"id": id, "timeout_seconds": 40})
		require.False(t, res.IsError, "%s", text(res))
		assert.Equal(t, "answered", m["status"])
		assert.Equal(t, answerOf(id, "through the tools")+"\n", m["response"])
	})
}

// An unreachable host queues the message (exit 0, "queued", the reason on stderr) and the puller
// relays it once the host is back; --no-queue fails at once naming the host.
func TestE2ERemoteUnreachable(t *testing.T) {
	t.Parallel()
	rw := newRemoteWorld(t, 1, nil)
	h := rw.bed.Hosts[0]
	orch := rw.bashPane("")
	worker := rw.remoteWorker(h, false)
	// A first round trip opens the shared connection; stopping sshd ends it.
	r := rw.call(orch, "send", "--to", "h1:"+worker, "before the outage", "--wait", "--timeout", "40s")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "BEFORE THE OUTAGE")
	h.Stop(t)

	r = rw.call(orch, "send", "--no-queue", "--to", "h1:"+worker, "never queued")
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "host h1 is unreachable")
	assert.Empty(t, r.stdout)

	r = rw.call(orch, "send", "--to", "h1:"+worker, "wait for the host")
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "queued")
	assert.Contains(t, r.stderr, "unreachable")
	id := strings.TrimSpace(r.stdout)
	require.Regexp(t, `^\d{8}-\d{6}-[0-9a-f]{4}$`, id)
	// Still down: the await times out saying what it waits for.
	r = rw.call(orch, "await", id, "--timeout", "500ms")
	requireCode(t, 3, r)
	assert.Contains(t, r.stderr, "still waits for host h1")

	// A send whose time to live passes while the host is down is dead-lettered.
	r = rw.call(orch, "send", "--ttl", "1s", "--to", "h1:"+worker, "too late")
	requireCode(t, 0, r)
	dead := strings.TrimSpace(r.stdout)
	waitFor(t, 30*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(rw.root, ".remote", "done", dead+".json"))
		return err == nil
	}, "the dead letter")
	r = rw.call(orch, "await", dead, "--timeout", "5s")
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "never reached host h1 (dead after")
	log, _ := os.ReadFile(filepath.Join(rw.root, ".remote", "puller.log"))
	assert.Contains(t, string(log), dead+": host h1 was not reached before")

	h.Start(t)
	r = rw.call(orch, "await", id, "--timeout", "60s")
	requireCode(t, 0, r)
	assert.Equal(t, answerOf(id, "wait for the host")+"\n", r.stdout)
	// Delivered once.
	n := 0
	for _, ev := range workerEvents(h) {
		if ev["event"] == "received" && (ev["id"] == id || ev["id"] == dead) {
			n++
		}
	}
	assert.Equal(t, 1, n, "the queued send delivered once, the dead one never")
}

// TestE2ERemoteQueuedThere: a send to a pane that is busy on its host is queued in that host's
// mailbox; send --json reports the state recorded here, queued (it once said submitted while
// stderr said queued), and show agrees.
func TestE2ERemoteQueuedThere(t *testing.T) {
	t.Parallel()
	rw := newRemoteWorld(t, 1, nil)
	h := rw.bed.Hosts[0]
	orch := rw.bashPane("")
	rw.bed.Run(h, "tmux", "-f", "/dev/null", "new-session", "-d", "-s", "b", "-x", "200", "-y", "50", "bash", "--norc")
	busy := strings.TrimSpace(rw.bed.Run(h, "tmux", "display-message", "-p", "-t", "b", "'#{pane_id}'"))
	require.Regexp(t, `^%\d+$`, busy)
	rw.bed.Run(h, "tmux", "send-keys", "-t", busy, "'sleep 600'", "Enter")
	waitFor(t, 20*time.Second, func() bool {
		out, _ := rw.bed.RunErr(h, "tmux", "display-message", "-p", "-t", busy, "'#{pane_current_command}'")
		return strings.TrimSpace(out) == "sleep"
	}, "sleep in the pane on %s", h.Name)

	// A short time to live: nobody answers, and the puller stops pulling once it passes.
	r := rw.call(orch, "send", "--json", "--ttl", "3s", "--to", "h1:"+busy, "wait for the sleeper")
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "queued on host h1")
	x := decode[exchangeJSON](t, r)
	assert.Equal(t, "queued", x.State, "send --json reports the state recorded: %s", r)
	require.NotEmpty(t, x.ID)
	r = rw.call(orch, "show", "--json", x.ID)
	requireCode(t, 0, r)
	assert.Equal(t, "queued", decode[exchangeJSON](t, r).State)

	// Without --json: the id and response path, and one note of the queue, the host's.
	r = rw.call(orch, "send", "--ttl", "3s", "--to", "h1:"+busy, "and one more")
	requireCode(t, 0, r)
	assert.Equal(t, 1, strings.Count(r.stderr, "queued"), "one note: %s", r.stderr)
	assert.Regexp(t, `^\d{8}-\d{6}-[0-9a-f]{4} /`, r.stdout)
}
