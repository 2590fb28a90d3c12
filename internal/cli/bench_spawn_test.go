//go:build bench && agents

package cli

// The spawn rows of `make bench` (WCOMM_BENCH_ONLY=spawn): for Claude Code, Codex and a plain
// program (testdata/fixtures/linereader.py, the floor), `wcomm spawn` until it returns ready,
// and `wcomm spawn --prompt` until the first prompt reaches the program (the scripted model's
// prompt log, or the reader's log), beside the program's own start: its window opened by a plain
// `tmux new-window`, until its input box first shows (the profile's box, empty and idle, looked
// at every 10 ms; for the reader its READY line), and until a prompt typed then by a plain
// `tmux send-keys` reaches it. The agents and the scripted model are the agents harness's
// (agents_e2e_test.go): `make bench` builds with -tags 'bench agents'.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/profile"
)

// bxSpawnTarget is one program the spawn rows start: its profile ("" for the plain program),
// its command, and how to see a prompt arrive (the time it arrived, zero while it has not).
type bxSpawnTarget struct {
	name    string
	agent   string
	argv    func(rep int) []string
	arrived func(rep int, text string) time.Time
}

func (b *bxBench) benchSpawn() {
	t := b.t
	w := b.s.world
	// As the remote rows without sshd: a machine without Node.js runs the rest of the table.
	if _, err := exec.LookPath("node"); err != nil {
		t.Logf("spawn rows skipped: Node.js is not installed, the agent TUIs cannot run here")
		return
	}
	installed := installAgents(t)
	m := startModel(t, w.work)
	sess := "spawn"
	b.session(sess, "sleep", "86400")
	orch := b.s.window(sess, nil, "cat")
	script, err := filepath.Abs(filepath.Join(agentsDir, "start-agent.sh"))
	require.NoError(t, err)
	reader, err := filepath.Abs(filepath.Join(fixtures, "linereader.py"))
	require.NoError(t, err)
	atModel := func(agent string) func(int, string) time.Time {
		return func(_ int, text string) time.Time {
			for _, p := range m.prompts(t, agent) {
				if strings.Contains(p.Prompt, text) {
					return time.Unix(0, int64(p.T*1e9))
				}
			}
			return time.Time{}
		}
	}
	var targets []bxSpawnTarget
	for _, agent := range []string{"claude", "codex"} {
		targets = append(targets, bxSpawnTarget{name: map[string]string{"claude": "Claude Code", "codex": "Codex"}[agent], agent: agent,
			argv: func(int) []string {
				return []string{"bash", script, agent, installed, filepath.Join(w.work, "bench-"+agent), m.port}
			}, arrived: atModel(agent)})
	}
	readerLog := func(rep int) string { return filepath.Join(w.work, fmt.Sprintf("bench-reader-%d.jsonl", rep)) }
	targets = append(targets, bxSpawnTarget{name: "plain program (linereader.py)",
		argv: func(rep int) []string { return []string{"python3", reader, readerLog(rep)} },
		// The reader logs no time: the poll (every 10 ms) sees the line.
		arrived: func(rep int, text string) time.Time {
			if linesWith(t, readerLog(rep), text) > 0 {
				return time.Now()
			}
			return time.Time{}
		}})

	reps := b.n(5, 2)
	seq := 0
	for _, tg := range targets {
		var ready, first, boxShown, typed []time.Duration
		lost := 0
		spawn := func(prompt string) (string, time.Duration) {
			seq++
			args := []string{"spawn", "--ready-timeout", "5m", "--json"}
			if tg.agent != "" {
				args = append(args, "--agent", tg.agent)
			}
			if prompt != "" {
				args = append(args, "--prompt", prompt)
			}
			start := time.Now()
			r := w.in(orch, append(append(args, "--"), tg.argv(seq)...)...)
			took := time.Since(start)
			require.Equal(t, 0, r.code, "%s", r)
			var sp struct{ Pane string }
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &sp))
			return sp.Pane, took
		}
		arrival := func(text string, bound time.Duration) time.Time {
			var at time.Time
			waitFor(t, bound, func() bool { at = tg.arrived(seq, text); return !at.IsZero() }, "%s: the prompt %q to arrive", tg.name, text)
			return at
		}
		for i := 0; i < reps; i++ {
			// spawn → ready: the command's own run time.
			pane, took := spawn("")
			ready = append(ready, took)
			killPaneTree(w, pane)

			// spawn → the first prompt at the model.
			text := fmt.Sprintf("bench spawn prompt %s %d", tg.name, i)
			start := time.Now()
			pane, _ = spawn(text)
			first = append(first, arrival(text, 2*time.Minute).Sub(start))
			killPaneTree(w, pane)

			// The program's own start, and a prompt typed by send-keys once its box shows.
			seq++
			start = time.Now()
			pane = w.newWindow(sess, "", nil, tg.argv(seq)...)
			b.awaitBox(pane, tg.agent)
			boxShown = append(boxShown, time.Since(start))
			text = fmt.Sprintf("bench typed prompt %s %d", tg.name, i)
			// Enter once the text shows in the box, as a person presses it: an Enter sent with the
			// text lands inside Codex's paste burst (a newline in the box, nothing submitted).
			w.tmux("send-keys", "-t", pane, "-l", text)
			b.awaitTyped(pane, tg.agent, text)
			w.tmux("send-keys", "-t", pane, "Enter")
			var at time.Time
			deadline := time.Now().Add(30 * time.Second)
			for at.IsZero() && time.Now().Before(deadline) {
				at = tg.arrived(seq, text)
				time.Sleep(5 * time.Millisecond) // polling interval
			}
			if at.IsZero() {
				lost++ // typed into a TUI not yet taking input: counted, not retried
			} else {
				typed = append(typed, at.Sub(start))
			}
			killPaneTree(w, pane)
		}
		own := bxMedian(boxShown)
		n := fmt.Sprintf("%d starts", reps)
		b.rowFloor("spawn → ready (wcomm spawn's run time), "+tg.name, "time", bxMedian(ready), math.NaN(), own,
			"its own start: window → input box", n+"; p90 "+bxFmt("time", bxPct(ready, 0.9)))
		b.rowFloor("spawn → first prompt at the "+map[bool]string{true: "model", false: "program"}[tg.agent != ""]+", "+tg.name, "time",
			bxMedian(first), bxMedian(typed), own, "its own start: window → input box",
			fmt.Sprintf("%s; reference: window → box → send-keys, Enter → arrived, %d of %d arrived", n, len(typed), len(typed)+lost))
	}
	b.params = append(b.params, "spawn: Claude Code and Codex from the agents harness (testdata/agents, npm install in the user cache) against its scripted model on loopback; "+
		"the floor is the program's own start (tmux new-window until its input box shows, empty and idle, looked at every 10 ms); "+
		"the reference types the prompt with tmux send-keys once the box shows, and Enter once the text shows in the box")
}

// awaitBox waits until the program in pane shows its input box, empty and idle (agent's profile),
// or, for the plain program, its READY line.
func (b *bxBench) awaitBox(pane, agent string) {
	w := b.s.world
	if agent == "" {
		waitFor(b.t, time.Minute, func() bool { return strings.Contains(w.capture(pane), "LINE READER READY") }, "the reader's READY line in %s", pane)
		return
	}
	prof := profile.Defaults().Lookup(agent)
	client := &paneops.Client{Server: paneops.Server{Socket: w.sock}}
	waitFor(b.t, agentStartBound, func() bool {
		s, err := client.Screen(context.Background(), messages.PaneID(pane))
		if err != nil {
			return false
		}
		in := prof.Inspect(s)
		return in.Empty() && !in.Busy
	}, "%s's input box in %s", agent, pane)
}

// awaitTyped waits, up to 10 s, until text shows on the pane's screen (in the agent's input box).
func (b *bxBench) awaitTyped(pane, agent, text string) {
	w := b.s.world
	prof := profile.Defaults().Lookup(agent)
	client := &paneops.Client{Server: paneops.Server{Socket: w.sock}}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if agent == "" {
			if strings.Contains(w.capture(pane), text) {
				return
			}
		} else if s, err := client.Screen(context.Background(), messages.PaneID(pane)); err == nil &&
			strings.Contains(strings.Join(prof.Inspect(s).Lines, " "), text) {
			return
		}
		time.Sleep(10 * time.Millisecond) // polling interval
	}
}
