package cli

// The fourth audit's newcomer trips and the smaller points it found, each against the real binary
// (and a real tmux server where the command needs one): each one failed against the code it was
// found in.

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAudit4ForeignRoot: a root another user (uid 65534) owns is refused by every command that
// reads it, in the same words and with the same exit code (1), whatever the command would have
// read there. Before, history refused it while questions printed "no questions" and exited 0,
// actions listed nothing, and show, await and answer called it "no exchanges yet" (exit 4).
func TestAudit4ForeignRoot(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.catPane()
	worker := w.catPane()
	require.NoError(t, os.MkdirAll(w.root, 0o700))
	require.NoError(t, os.Chown(w.root, 65534, 65534))
	want := "root " + w.root + " is owned by uid 65534, not by you"

	const xid, qid = "20260101-000000-a1b2", "task-3.q1-a1b2"
	resp := filepath.Join(w.root, "20260101-000000-o1-w2", "002-response.md")
	for _, args := range [][]string{
		{"history"},
		{"history", "--json"},
		{"questions"},
		{"questions", "--json"},
		{"questions", "--pending"},
		{"questions", qid},
		{"questions", "resolve", qid, "--reason", "gone"},
		{"answer", qid, "yes"},
		{"actions"},
		{"show", xid},
		{"await", xid, "--timeout", "1s"},
		{"parse", "[RESPONSE started_at=20260101-000000 orchestrator=%1 worker=%2] " + resp},
		{"inbox", "--pane", orch},
		{"watch", "--count", "1", "--timeout", "1s"},
		{"send", "--to", worker, "--", "a task"},
		{"send", "--resend", xid},
		{"notify", "--id", xid, "--", "an answer"},
		{"ask", "--task", "task-3", "--context", "c", "--option", "a", "--option", "b", "--", "which?"},
		{"ask", "--context", "c", "--option", "a", "--option", "b", "--", "which?"},
	} {
		r := w.in(orch, args...)
		assert.Equal(t, 1, r.code, "%s", r)
		assert.Contains(t, r.stderr, want, "%s", r)
		assert.Empty(t, r.stdout, "%s", r)
	}
}

// TestAudit4NoQueueIntoCopyMode: a pane whose last paste waits for its Enter because a person went
// into copy mode takes nothing more; send --no-queue into it fails saying what happened: nothing
// of this message was pasted, the pane is in copy mode. Before, the sender read "pasted into pane
// %N, Enter not pressed" about its own message, which was never pasted.
func TestAudit4NoQueueIntoCopyMode(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec, recLog := w.recorderPane()
	worker := w.catPane()
	s1 := w.send(rec, worker, "first task")

	first := w.start(call{pane: worker, env: []string{"WCOMM_ENTER_DELAY=3s"}}, "notify", "--response", s1.Response, "--", "first answer")
	waitFor(t, 15*time.Second, func() bool {
		out, _ := w.tmuxErr("display-message", "-p", "-t", rec, "#{@wcomm-pasted}")
		return strings.TrimSpace(out) != ""
	}, "the RESPONSE line's paste")
	w.tmux("copy-mode", "-t", rec)
	requireCode(t, 0, first.wait(t, time.Minute))

	r := w.in(worker, "send", "--no-queue", "--to", rec, "--", "a second task")
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "nothing was pasted", "%s", r)
	assert.Contains(t, r.stderr, "copy mode", "%s", r)
	assert.NotContains(t, r.stderr, "pasted into pane", "the sender is told of a paste that never happened: %s", r)
	assert.NotContains(t, w.buffers(), "a second task")

	// Out of copy mode, the waiting line is submitted, and it alone reaches the recorder.
	w.tmux("send-keys", "-t", rec, "-X", "cancel")
	waitFor(t, 20*time.Second, func() bool { return len(jsonLines(t, recLog)) >= 1 }, "the RESPONSE line")
	waitNoDeliverer(t, w.root)
	entries := jsonLines(t, recLog)
	require.Len(t, entries, 1, "%v", entries)
	assert.NotContains(t, entries[0]["paste"], "a second task")
}

// TestAudit4SendFromNoPane: send --from a pane that does not exist is refused at send, naming the
// pane, with exit 4 (target not found), and nothing is written. Before, the request was sent and
// only the worker's notify failed, later, on a pane that never was.
func TestAudit4SendFromNoPane(t *testing.T) {
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

// TestAudit4AwaitTimeoutWords: await --timeout 2s that times out says "after 2s", the timeout
// given, and exits 3. Before, it said "after 1.999977097s": what was left of it once the wait for
// a relayed send had taken its share.
func TestAudit4AwaitTimeoutWords(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.catPane()
	worker := w.catPane()
	s := w.send(orch, worker, "a task no one answers")
	r := w.in(orch, "await", s.ID, "--timeout", "2s")
	requireCode(t, 3, r)
	assert.Contains(t, r.stderr, "no response to "+s.ID+" after 2s;", "%s", r)
}

// TestAudit4InstallMCPHelpNamesWhatItWrites: the variables install-mcp --help says Codex is told
// to forward are the ones it writes into env_vars, all of them. Before, the help named $TMUX and
// $TMUX_PANE, and the file got WCOMM_ROOT too.
func TestAudit4InstallMCPHelpNamesWhatItWrites(t *testing.T) {
	var help, out, errb bytes.Buffer
	require.Equal(t, 0, Run(Companions{}, []string{"install-mcp", "--help"}, strings.NewReader(""), &help, &errb), errb.String())
	require.Equal(t, 0, Run(Companions{}, []string{"install-mcp", "--for", "codex", "--dir", t.TempDir(), "--dry-run"}, strings.NewReader(""), &out, &errb), errb.String())

	m := regexp.MustCompile(`(?m)^env_vars = \[(.*)\]$`).FindStringSubmatch(out.String())
	require.NotNil(t, m, "%s", out.String())
	var written []string
	for _, v := range strings.Split(m[1], ",") {
		written = append(written, "$"+strings.Trim(strings.TrimSpace(v), `"`))
	}
	codex := regexp.MustCompile(`(?s)Codex: .*?\nGemini CLI:`).FindString(help.String())
	require.NotEmpty(t, codex, "%s", help.String())
	var named []string
	for _, v := range regexp.MustCompile(`\$[A-Z_]+`).FindAllString(codex, -1) {
		if v != "$CODEX_HOME" {
			named = append(named, v)
		}
	}
	assert.Equal(t, written, named, "the help names what is written, in its order")
}

// TestAudit4DoctorChannelWords: a Telegram token file that does not exist is reported by doctor
// in the settings' words (channels.telegram, the file), without the hidden command that checks the
// channels. Before, it read "wcomm-bridge: wcomm __channels: ...".
func TestAudit4DoctorChannelWords(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	home := t.TempDir()
	conf := filepath.Join(home, ".config", "wcomm", "config.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(conf), 0o700))
	missing := filepath.Join(home, "no-such-token")
	require.NoError(t, os.WriteFile(conf, []byte("channels:\n  telegram:\n    token_file: "+missing+"\n    chat_id: 5\n    allowed_users: [7]\n"), 0o600))
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}

	r := w.run(call{env: env}, "doctor", "-S", w.sock)
	assert.Contains(t, r.stdout, "channels.telegram", "%s", r)
	assert.Contains(t, r.stdout, missing, "%s", r)
	assert.NotContains(t, r.stdout+r.stderr, "__channels", "%s", r)
	assert.NotContains(t, r.stdout+r.stderr, "wcomm-bridge:", "%s", r)
}
