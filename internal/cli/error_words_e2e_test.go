package cli

// What failures and timeouts say, against the real binary and a real tmux server: an unknown pane
// in wcomm's words, send --from a pane that does not exist, an await's timeout as given, send --wait
// naming the request that went out, global flags before the command and tmux's failures.

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestE2ESmallerOnes: an unknown pane's error is wcomm's own, with one suggestion (not tmux's
// stderr and tmux's hint besides); a failed resend does not suggest running itself again; and
// send --file /dev/zero stops at its 256 MiB bound holding about that much, not two and a half
// times it.
func TestE2ESmallerOnes(t *testing.T) {
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

// TestE2ESendFromNoPane: send --from a pane that does not exist is refused at send, naming the
// pane, with exit 4 (target not found), and nothing is written. Before, the request was sent and
// only the worker's notify failed, later, on a pane that never was.
func TestE2ESendFromNoPane(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	worker := w.catPane()
	r := w.run(call{}, "send", "-S", w.sock, "--from", "%42", "--to", worker, "--", "a task")
	requireCode(t, 4, r)
	assert.Contains(t, r.stderr, `--from %42: no pane "%42"`, "%s", r)
	assert.Empty(t, r.stdout)
	r = w.run(call{}, "history", "--json")
	requireCode(t, 0, r)
	assert.NotContains(t, r.stdout, "a task", "a request was written for a pane that does not exist")
	assert.NotContains(t, w.capture(worker), "a task")
}

// TestE2EAwaitTimeoutWords: await --timeout 2s that times out says "after 2s", the timeout
// given, and exits 3. Before, it said "after 1.999977097s": what was left of it once the wait for
// a relayed send had taken its share.
func TestE2EAwaitTimeoutWords(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.catPane()
	worker := w.catPane()
	s := w.send(orch, worker, "a task no one answers")
	r := w.in(orch, "await", s.ID, "--timeout", "2s")
	requireCode(t, 3, r)
	assert.Contains(t, r.stderr, "no response to "+s.ID+" after 2s;", "%s", r)
}

// send --wait that times out still says on stdout which request went out, as send does.
func TestE2ESendWaitTimeoutPrintsID(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker := w.catPane()
	r := w.in(orch, "send", "--to", worker, "--enter-delay", "50ms", "--wait", "--timeout", "300ms", "--", "never answered")
	requireCode(t, 3, r)
	s := parseSent(t, r.stdout)
	assert.FileExists(t, s.Request)
	r = w.in(orch, "await", s.ID, "--timeout", "100ms")
	requireCode(t, 3, r)

	r = w.in(orch, "send", "--json", "--to", worker, "--enter-delay", "50ms", "--wait", "--timeout", "300ms", "--", "never answered either")
	requireCode(t, 3, r)
	x := decode[exchangeJSON](t, r)
	assert.NotEmpty(t, x.ID)
}

// Global flags stand before the command as tmux takes them; a tmux failure reads as what tmux
// said, never as its command line.
func TestE2EGlobalFlagsFirstAndTmuxErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	worker := w.catPane()
	r := w.run(call{}, "-S", w.sock, "send", "--from", "%0", "--to", worker, "--enter-delay", "50ms", "--", "hello from outside")
	requireCode(t, 0, r)
	s := parseSent(t, r.stdout)
	r = w.run(call{}, "-S", w.sock, "--json", "panes", "--all")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, `"pane_id": "`+worker+`"`)
	r = w.run(call{}, "--root", w.root, "-S", w.sock, "show", s.ID)
	requireCode(t, 0, r)

	r = w.run(call{}, "-S", w.sock, "send", "--from", "%0", "--to", "%999", "--", "to nowhere")
	requireCode(t, 4, r)
	r2 := w.run(call{}, "-S", w.sock, "doctor", "--pane", "%999")
	requireCode(t, 4, r2)
	_, problems, _ := strings.Cut(r2.stdout, "problems:")
	assert.Contains(t, problems, `no pane "%999" on this tmux server`, "one sentence in wcomm's words, not tmux's stderr")
	for _, out := range []string{r.stderr, problems} {
		assert.NotContains(t, out, "#{", "no tmux format in a message")
		assert.NotContains(t, out, "-F ", "no tmux command line in a message")
	}
}
