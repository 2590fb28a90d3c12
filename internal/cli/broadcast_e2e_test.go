package cli

// End-to-end tests of broadcasts: one send to several panes (several --to, commas, a group of the
// settings, --all), the await of all their answers, a refusal that writes nothing, the same
// through MCP, and history's grouping. Real bash panes and the scripted worker, a private tmux
// server, the built binary.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var broadcastIDLine = regexp.MustCompile(`^bc-\d{8}-\d{6}-[0-9a-f]{8}$`)

// member is one line of a broadcast's output: "PANE ID RESPONSE-PATH".
type member struct {
	pane string
	sent
}

// parseBroadcast reads what a broadcast send printed: its id, then one line per pane.
func parseBroadcast(t *testing.T, stdout string) (string, []member) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.GreaterOrEqual(t, len(lines), 2, "send printed %q", stdout)
	require.Regexp(t, broadcastIDLine, lines[0])
	var ms []member
	for _, l := range lines[1:] {
		pane, rest, ok := strings.Cut(l, " ")
		require.True(t, ok, "line %q is not PANE ID RESPONSE-PATH", l)
		ms = append(ms, member{pane: pane, sent: parseSent(t, rest+"\n")})
	}
	return lines[0], ms
}

// requestFiles lists every request file under root.
func requestFiles(t *testing.T, root string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "*", "*-request.md"))
	require.NoError(t, err)
	return files
}

// pointerCount is how many times a shell pane's screen shows the comment line pointing at request.
func (w *world) pointerCount(pane, request string) int {
	w.t.Helper()
	return strings.Count(w.capture(pane), "read it whole from "+request)
}

// waitRead waits until an await has returned exchange s's response (its log says "read").
func waitRead(t *testing.T, s sent) {
	t.Helper()
	log := filepath.Join(s.Dir, fmt.Sprintf("%03d-delivery.jsonl", s.Seq))
	waitFor(t, 20*time.Second, func() bool {
		data, _ := os.ReadFile(log)
		return strings.Contains(string(data), `"state":"read"`)
	}, "an await to return the response of %s", s.ID)
}

func TestE2EBroadcast(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	b1, b2, b3 := w.bashPane(""), w.bashPane(""), w.bashPane("")

	t.Run("several bash panes, awaited together", func(t *testing.T) {
		// b1 three times (a list, repeated, and again): one pane, one request.
		r := w.in(orch, "send", "--to", b1+","+b2, "--to", b3, "--to", b1, "--enter-delay", "50ms", "--", "review the diff")
		requireCode(t, 0, r)
		bid, ms := parseBroadcast(t, r.stdout)
		require.Len(t, ms, 3, "%s", r.stdout)
		assert.Equal(t, []string{b1, b2, b3}, []string{ms[0].pane, ms[1].pane, ms[2].pane})
		ids := map[string]bool{}
		for _, m := range ms {
			ids[m.ID] = true
			assert.Regexp(t, `-o`+orch[1:]+`-w`+m.pane[1:]+`$`, m.Dir)
			files, _ := filepath.Glob(filepath.Join(m.Dir, "*-request.md"))
			assert.Equal(t, []string{m.Request}, files, "one request in %s's own session", m.pane)
			w.waitScreen(m.pane, "read it whole from "+m.Request)
			w.settle(m.pane)
			assert.Equal(t, 1, w.pointerCount(m.pane, m.Request), "pane %s got its request once", m.pane)
		}
		assert.Len(t, ids, 3, "an exchange of its own for each pane")
		// The live feed names the broadcast once for each of its exchanges.
		r = w.in(orch, "watch", "--since", "10m", "--timeout", "1s", "--json")
		var named []string
		for _, line := range strings.Split(r.stdout, "\n") {
			if strings.Contains(line, `"event":"broadcast"`) && strings.Contains(line, bid) {
				named = append(named, regexp.MustCompile(`"id":"([^"]+)"`).FindStringSubmatch(line)[1])
			}
		}
		assert.ElementsMatch(t, []string{ms[0].ID, ms[1].ID, ms[2].ID}, named, "%s", r)
		assert.Equal(t, os.FileMode(0o600), mode(t, filepath.Join(w.root, ".broadcasts", bid+".json")))

		// The await of the broadcast waits on all three; the answers come one after the other, and
		// each is printed under its pane as it comes.
		b := w.start(call{pane: orch}, "await", bid, "--timeout", "30s")
		for _, m := range ms {
			m := m
			waitFor(t, 10*time.Second, func() bool { return flocked(awaitLockIn(m.Dir, m.Seq)) }, "the await to wait on %s", m.ID)
		}
		for _, i := range []int{2, 0, 1} {
			m := ms[i]
			r := w.in(m.pane, "notify", "--id", m.ID, "--enter-delay", "50ms", "answer from "+m.pane)
			requireCode(t, 0, r)
			waitRead(t, m.sent)
		}
		r = b.wait(t, 20*time.Second)
		requireCode(t, 0, r)
		want := ""
		for _, i := range []int{2, 0, 1} {
			want += fmt.Sprintf("--- %s %s\nanswer from %s\n", ms[i].pane, ms[i].ID, ms[i].pane)
		}
		assert.Equal(t, want, r.stdout, "each answer under its pane, in the order they came")

		// history groups them: the broadcast's id on each exchange (--json), and together (text).
		r = w.in(orch, "history", "--json")
		requireCode(t, 0, r)
		var tagged []string
		for _, s := range decode[struct {
			Sessions []struct {
				Exchanges []struct {
					ID        string `json:"id"`
					Broadcast string `json:"broadcast"`
				} `json:"exchanges"`
			} `json:"sessions"`
		}](t, r).Sessions {
			for _, x := range s.Exchanges {
				if x.Broadcast == bid {
					tagged = append(tagged, x.ID)
				}
			}
		}
		assert.ElementsMatch(t, []string{ms[0].ID, ms[1].ID, ms[2].ID}, tagged)
		r = w.in(orch, "history")
		requireCode(t, 0, r)
		_, group, ok := strings.Cut(r.stdout, "\nBROADCASTS\n")
		require.True(t, ok, "history text has a BROADCASTS part:\n%s", r.stdout)
		assert.Contains(t, group, bid+"  3 panes, 3 answered: review the diff\n")
		for _, m := range ms {
			assert.Regexp(t, `(?m)^  `+regexp.QuoteMeta(m.pane)+` +`+m.ID+`  answered$`, group)
		}

		// show takes the broadcast's id: every exchange whole, under its pane, in the record's order.
		r = w.in(orch, "show", bid)
		requireCode(t, 0, r)
		assert.Contains(t, r.stdout, "broadcast "+bid+" from "+orch)
		at := -1
		for _, m := range ms {
			i := strings.Index(r.stdout, fmt.Sprintf("--- %s %s\nid:            %s\n", m.pane, m.ID, m.ID))
			assert.Greater(t, i, at, "%s shown whole, after the one before it:\n%s", m.ID, r.stdout)
			at = i
		}
		assert.Equal(t, 3, strings.Count(r.stdout, "review the diff"), "each request's body once")
		shown := decode[struct {
			Broadcast struct {
				ID string `json:"id"`
			} `json:"broadcast"`
			Exchanges []struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			} `json:"exchanges"`
		}](t, w.in(orch, "show", bid, "--json"))
		assert.Equal(t, bid, shown.Broadcast.ID)
		require.Len(t, shown.Exchanges, 3)
		for i, m := range ms {
			assert.Equal(t, m.ID, shown.Exchanges[i].ID)
			assert.Equal(t, "answered", shown.Exchanges[i].Status)
		}
		requireCode(t, exitNotFound, w.in(orch, "show", "bc-20200101-000000-0badc0de"))
	})

	t.Run("one unknown target writes nothing", func(t *testing.T) {
		before := requestFiles(t, w.root)
		records, _ := os.ReadDir(filepath.Join(w.root, ".broadcasts"))
		r := w.in(orch, "send", "--to", b1+",%999,"+b2, "--enter-delay", "50ms", "--", "never sent")
		requireCode(t, exitNotFound, r)
		assert.Empty(t, r.stdout)
		assert.Contains(t, r.stderr, `target %999: no pane "%999"`)
		assert.Contains(t, r.stderr, "nothing was sent to any target")
		assert.Equal(t, before, requestFiles(t, w.root), "no request file written")
		after, _ := os.ReadDir(filepath.Join(w.root, ".broadcasts"))
		assert.Len(t, after, len(records), "no broadcast recorded")
		queued, _ := filepath.Glob(filepath.Join(w.root, ".outbox", "*", "queue", "*"))
		assert.Empty(t, queued, "nothing in any mailbox")
		w.settle(b1)
		assert.NotContains(t, w.capture(b1), "never sent")
	})

	t.Run("a group from the settings", func(t *testing.T) {
		cfg := filepath.Join(w.work, ".wcomm.yaml")
		require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf("groups:\n  pair: [%q, %q]\n", b2, b3)), 0o600))
		t.Cleanup(func() { os.Remove(cfg) })
		r := w.in(orch, "send", "--to", "@pair", "--enter-delay", "50ms", "--", "group work")
		requireCode(t, 0, r)
		_, ms := parseBroadcast(t, r.stdout)
		require.Len(t, ms, 2, "%s", r.stdout)
		assert.Equal(t, []string{b2, b3}, []string{ms[0].pane, ms[1].pane})
		for _, m := range ms {
			w.waitScreen(m.pane, "read it whole from "+m.Request)
			w.settle(m.pane)
			assert.Equal(t, 1, w.pointerCount(m.pane, m.Request))
		}
		r = w.in(orch, "send", "--to", "@trio", "--", "no such group")
		requireCode(t, exitNotFound, r)
		assert.Contains(t, r.stderr, `no group "trio" in the settings (the settings have @pair)`)
	})

	t.Run("an await with one pane never answering", func(t *testing.T) {
		r := w.in(orch, "send", "--to", b1+","+b2, "--enter-delay", "50ms", "--", "who answers?")
		requireCode(t, 0, r)
		bid, ms := parseBroadcast(t, r.stdout)
		require.Len(t, ms, 2)
		requireCode(t, 0, w.in(b1, "notify", "--id", ms[0].ID, "--enter-delay", "50ms", "b1 did"))
		r = w.in(orch, "await", bid, "--timeout", "500ms")
		requireCode(t, exitTimeout, r)
		assert.Equal(t, fmt.Sprintf("--- %s %s\nb1 did\n", b1, ms[0].ID), r.stdout, "the answer that came is printed")
		assert.Contains(t, r.stderr, fmt.Sprintf("1 of 2 answered (%s)", b1))
		assert.Contains(t, r.stderr, "no response yet from "+b2)
		assert.Contains(t, r.stderr, "wcomm await "+bid)

		// By ids, --json: the answer and the one missing, each with its pane.
		r = w.in(orch, "await", ms[0].ID, ms[1].ID, "--timeout", "300ms", "--json")
		requireCode(t, exitTimeout, r)
		got := decode[struct {
			Answered []struct {
				Pane string `json:"pane"`
			} `json:"answered"`
			Missing []struct {
				Pane     string `json:"pane"`
				ID       string `json:"id"`
				TimedOut bool   `json:"timed_out"`
			} `json:"missing"`
		}](t, r)
		require.Len(t, got.Answered, 1)
		assert.Equal(t, b1, got.Answered[0].Pane)
		require.Len(t, got.Missing, 1)
		assert.Equal(t, b2, got.Missing[0].Pane)
		assert.Equal(t, ms[1].ID, got.Missing[0].ID)
		assert.True(t, got.Missing[0].TimedOut)
	})

	t.Run("send --wait waits for all", func(t *testing.T) {
		before := requestFiles(t, w.root)
		b := w.start(call{pane: orch}, "send", "--to", b2+","+b3, "--enter-delay", "50ms", "--wait", "--timeout", "30s", "--", "wait for us")
		// The two new requests, found on disk while send waits.
		var ms []member
		for _, p := range []string{b2, b3} {
			var req string
			waitFor(t, 10*time.Second, func() bool {
				for _, f := range requestFiles(t, w.root) {
					if !slices.Contains(before, f) && strings.HasSuffix(filepath.Dir(f), "-w"+p[1:]) {
						req = f
						return w.pointerCount(p, f) == 1
					}
				}
				return false
			}, "the new request in %s", p)
			id := regexp.MustCompile(`id=(\S+)`).FindStringSubmatch(readString(t, req))[1]
			ms = append(ms, member{pane: p, sent: sent{ID: id, Dir: filepath.Dir(req)}})
		}
		for _, m := range ms {
			requireCode(t, 0, w.in(m.pane, "notify", "--id", m.ID, "--enter-delay", "50ms", "done by "+m.pane))
		}
		r := b.wait(t, 20*time.Second)
		requireCode(t, 0, r)
		lines := strings.Split(r.stdout, "\n")
		require.Regexp(t, broadcastIDLine, lines[0])
		for _, m := range ms {
			assert.Contains(t, r.stdout, fmt.Sprintf("--- %s %s\ndone by %s\n", m.pane, m.ID, m.pane))
		}
		assert.Contains(t, r.stderr, "waiting for every answer")
	})
}

// TestE2EBroadcastAll: --all reaches every other pane of the session that runs an agent, never
// the sender's, nor a shell. The agents are the scripted worker under a name a profile of the
// user's settings calls an agent.
func TestE2EBroadcastAll(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cfgHome := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(cfgHome, "wcomm"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(cfgHome, "wcomm", "config.yaml"),
		[]byte("agent_profiles:\n  - {name: scripted, kind: agent, detect: {names: [scripted-agent]}}\n"), 0o600))
	w.env = append(w.env, "XDG_CONFIG_HOME="+cfgHome)
	// The scripted worker as a program of that name (a copy: its name is what a profile sees).
	script, err := filepath.Abs(filepath.Join(fixtures, "worker.py"))
	require.NoError(t, err)
	agentBin := filepath.Join(w.work, "scripted-agent")
	data, err := os.ReadFile(script)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(agentBin, data, 0o700))
	agent := func() (pane, log string) {
		log = filepath.Join(w.work, fmt.Sprintf("agent-%d.jsonl", time.Now().UnixNano()))
		pane = w.pane("", "python3", agentBin, log)
		w.waitScreen(pane, "WORKER READY")
		return pane, log
	}
	sender, senderLog := agent()
	a1, log1 := agent()
	a2, log2 := agent()
	shell := w.bashPane("")

	r := w.in(sender, "send", "--all", "--enter-delay", "50ms", "--", "every agent")
	requireCode(t, 0, r)
	bid, ms := parseBroadcast(t, r.stdout)
	var panes []string
	for _, m := range ms {
		panes = append(panes, m.pane)
	}
	assert.ElementsMatch(t, []string{a1, a2}, panes, "the agents, not the sender %s nor the shell %s", sender, shell)
	for _, l := range []string{log1, log2} {
		waitLog(t, l, "the request", func(m map[string]any) bool { return m["event"] == "notified" })
	}
	r = w.in(sender, "await", bid, "--timeout", "30s")
	requireCode(t, 0, r)
	for _, m := range ms {
		assert.Contains(t, r.stdout, fmt.Sprintf("--- %s %s\nanswer to %s: EVERY AGENT\n", m.pane, m.ID, m.ID))
	}
	data, _ = os.ReadFile(senderLog)
	assert.NotContains(t, string(data), `"received"`, "the sender got no request")
	w.settle(shell)
	assert.NotContains(t, w.capture(shell), "every agent")
}

// TestE2EMCPBroadcast: the MCP send takes a list, and the MCP await the broadcast's id or the ids.
func TestE2EMCPBroadcast(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.catPane()
	b1, b2 := w.bashPane(""), w.bashPane("")
	c := w.mcpClient(orch)

	// An unknown target among them: a tool error of class not_found, and nothing written.
	res, out := c.call("send", map[string]any{"to": b1, "targets": []string{"%999"}, "message": "never"})
	require.True(t, res.IsError, "%s", text(res))
	assert.Equal(t, "not_found", out["class"])
	assert.Contains(t, out["error"], "%999")
	assert.Empty(t, requestFiles(t, w.root))

	res, out = c.call("send", map[string]any{"to": b1, "targets": []string{b2}, "message": "mcp broadcast"})
	require.False(t, res.IsError, "%s", text(res))
	bid, _ := out["broadcast_id"].(string)
	require.Regexp(t, broadcastIDLine, bid)
	xs, _ := out["exchanges"].([]any)
	require.Len(t, xs, 2)
	var ids []string
	for i, p := range []string{b1, b2} {
		x := xs[i].(map[string]any)
		assert.Equal(t, p, x["worker"])
		assert.Equal(t, bid, x["broadcast"])
		ids = append(ids, x["id"].(string))
		w.waitScreen(p, "id="+x["id"].(string))
	}
	assert.Contains(t, text(res), "broadcast "+bid+" to 2 panes")

	// One answer: the await of the broadcast says waiting, with the answer it has.
	requireCode(t, 0, w.in(b1, "notify", "--id", ids[0], "--enter-delay", "50ms", "one"))
	res, out = c.call("await", map[string]any{"id": bid, "timeout_seconds": 0.5})
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, "waiting", out["status"])
	answers, _ := out["answers"].([]any)
	require.Len(t, answers, 1)
	assert.Equal(t, b1, answers[0].(map[string]any)["pane"])
	missing, _ := out["missing"].([]any)
	require.Len(t, missing, 1)
	assert.Equal(t, b2, missing[0].(map[string]any)["pane"])
	assert.Contains(t, text(res), "--- "+b1+" "+ids[0]+"\none\n")
	assert.Contains(t, text(res), "call await again")

	// Both: the await of the ids (a list) is answered, each answer under its pane.
	requireCode(t, 0, w.in(b2, "notify", "--id", ids[1], "--enter-delay", "50ms", "two"))
	res, out = c.call("await", map[string]any{"ids": ids, "timeout_seconds": 10})
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, "answered", out["status"])
	answers, _ = out["answers"].([]any)
	require.Len(t, answers, 2)
	assert.Contains(t, text(res), "--- "+b1+" "+ids[0]+"\none\n")
	assert.Contains(t, text(res), "--- "+b2+" "+ids[1]+"\ntwo\n")

	// A single id is awaited as before.
	res, out = c.call("await", map[string]any{"id": ids[1], "timeout_seconds": 5})
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, "answered", out["status"])
	assert.Equal(t, "two", strings.TrimSpace(out["response"].(string)))
}
