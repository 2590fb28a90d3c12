//go:build bench

package cli

// The agents' own prompts in `make bench`: a permission prompt to the chat, and the chat's answer
// to the command running, by the two routes. The hook route runs 'wcomm hook' as Claude Code runs
// its PermissionRequest hook (the event JSON on stdin, in the agent's pane); the screen route has
// the bridge's sentry find testdata/fixtures/dialogagent.py's dialog on screen. The bound beside
// each is 500 ms.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/stretchr/testify/require"
)

func (b *bxBench) benchPrompts() {
	d := newDialogWorld(b.t)
	reps := b.n(10, 3)

	// The hook route: hook start → post; press served → the hook's decision out (the agent runs
	// the command as it reads it).
	var hookPost, hookRun []time.Duration
	// The hook runs in its agent's pane, as an agent runs it (one named from outside is refused);
	// its end is seen by its exit code's file, within a millisecond.
	_, hooks := d.hostPane("sleep", "86400")
	for i := 0; i < reps; i++ {
		cmd := fmt.Sprintf("touch hook-%d.txt", i)
		in, err := json.Marshal(map[string]any{"session_id": "bench", "hook_event_name": "PermissionRequest", "tool_name": "Bash",
			"tool_input": map[string]string{"command": cmd, "description": "bench"}, "cwd": d.work, "permission_mode": "default"})
		require.NoError(b.t, err)
		start := time.Now()
		hook := d.runInPane(hooks, "", in, d.env, "hook", "--agent", "claude")
		m, tok := d.post(cmd)
		hookPost = append(hookPost, m.At.Sub(start))
		exited := make(chan time.Time, 1)
		go func() {
			for !hook.exited() {
				time.Sleep(time.Millisecond)
			}
			exited <- time.Now()
		}()
		id := d.tg.Press(777, d.tg.Chat, m.ID, "a:"+tok+":1")
		var end time.Time
		select {
		case end = <-exited:
		case <-time.After(30 * time.Second):
			b.t.Fatalf("the hook did not end after the answer")
		}
		r := hook.wait(b.t, time.Second)
		require.Contains(b.t, r.stdout, `"behavior":"allow"`, "%s", r)
		d.tg.Mu.Lock()
		served := d.tg.Served[id]
		d.tg.Mu.Unlock()
		hookRun = append(hookRun, end.Sub(served))
	}

	// The screen route, the bridge running: dialog drawn → post; press served → command started.
	br := d.startAs("", nil, "bridge")
	defer func() { _ = br.cmd.Process.Signal(os.Interrupt); br.wait(b.t, 10*time.Second) }()
	var screenPost, screenRun []time.Duration
	for i := 0; i < reps; i++ {
		cmd := fmt.Sprintf("touch screen-%d.txt", i)
		d.prompt(cmd)
		m, tok := d.post(cmd)
		screenPost = append(screenPost, m.At.Sub(d.logged("shown", cmd)))
		id := d.tg.Press(777, d.tg.Chat, m.ID, "a:"+tok+":1")
		waitFor(b.t, 10*time.Second, func() bool { return d.made(strings.TrimPrefix(cmd, "touch ")) }, "the command to run")
		d.tg.Mu.Lock()
		served := d.tg.Served[id]
		d.tg.Mu.Unlock()
		screenRun = append(screenRun, d.logged("running", cmd).Sub(served))
		d.waitScreen(d.pane, "● ran: "+cmd)
	}
	detail := func(ds []time.Duration) string {
		return fmt.Sprintf("%d prompts; p90 %s", len(ds), bxFmt("time", bxPct(ds, 0.9)))
	}
	b.rowFloor("permission prompt reaches the chat, hook route (hook start → sendMessage served)", "time",
		bxMedian(hookPost), math.NaN(), 0.5, "bound 500 ms", detail(hookPost)+"; the hook starts the bridge on the first")
	b.rowFloor("chat answer → command running, hook route (press served → the hook's decision out)", "time",
		bxMedian(hookRun), math.NaN(), 0.5, "bound 500 ms", detail(hookRun))
	b.rowFloor("permission dialog reaches the chat, screen route (dialog drawn → sendMessage served)", "time",
		bxMedian(screenPost), math.NaN(), 0.5, "bound 500 ms", detail(screenPost)+"; the sentry looks every 300 ms")
	b.rowFloor("chat answer → command running, screen route (press served → the key taken, command started)", "time",
		bxMedian(screenRun), math.NaN(), 0.5, "bound 500 ms", detail(screenRun)+"; the key waits until the dialog has shown 250 ms")
	b.params = append(b.params, "agents' prompts: a fake Telegram Bot API on loopback; the hook route runs 'wcomm hook --agent claude' in a pane with Claude Code's PermissionRequest event; the screen route draws Claude Code's dialog (testdata/fixtures/dialogagent.py) for the bridge's sentry")
}

// logged is when the agent logged event ("shown", "running") for command.
func (d *dialogWorld) logged(event, command string) time.Time {
	d.t.Helper()
	var at time.Time
	waitFor(d.t, 10*time.Second, func() bool {
		data, _ := os.ReadFile(d.keylog)
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(line), &e) == nil && e[event] == command {
				sec, _ := e["at"].(float64)
				at = time.Unix(0, int64(sec*1e9))
				return true
			}
		}
		return false
	}, "the agent's %s of %q", event, command)
	return at
}
