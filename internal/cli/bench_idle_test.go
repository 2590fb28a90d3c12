//go:build bench

package cli

// The idle rows of `make bench` (WCOMM_BENCH_ONLY=idle): what the console and the bridge cost
// while nothing happens, over 20 idle panes, as a person's laptop runs them all day. Each row is
// held against the goal: at most 0.2 % of a core with the tmux server's CPU over the same
// time, and at most 10 wake-ups a second.

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/stretchr/testify/require"
)

func (b *bxBench) benchIdle() {
	const panes = 20
	b.session("idle", "bash", "--norc", "--noprofile", "-i")
	for i := 1; i < panes; i++ {
		b.s.tmux("new-window", "-d", "-t", "idle:", "--", "bash", "--norc", "--noprofile", "-i")
	}
	root := filepath.Join(b.s.work, "idle-root")
	require.NoError(b.t, os.MkdirAll(root, 0o700))
	// 30 s whatever the scale: /proc counts CPU in 10 ms ticks, and the bound is 0.2 % of a core.
	span := 30 * time.Second
	srv, err := strconv.Atoi(strings.TrimSpace(b.s.tmux("display-message", "-p", "#{pid}")))
	require.NoError(b.t, err)

	// The tmux server's cost a daemon causes is its CPU with the daemon less its CPU without, just
	// before: the server is the bench's, whose other sessions (an agent's TUI among them) spend
	// their own.
	uiBase := b.serverIdle(srv, span)

	// The console, over every session, in a window of a session of its own.
	out := b.s.tmux("new-session", "-d", "-P", "-F", "#{pane_pid}", "-s", "idlec", "-x", "160", "-y", "48", "--",
		b.s.bin, "ui", "--all", "--root", root, "-S", b.s.sock)
	ui, err := strconv.Atoi(strings.TrimSpace(out))
	require.NoError(b.t, err)
	b.waitQuiet(ui)
	b.idleRows("ui", ui, srv, span, uiBase)
	b.s.tmux("kill-session", "-t", "idlec")
	bridgeBase := b.serverIdle(srv, span)

	// The bridge, with a webhook channel (it takes no answers, so nothing polls a chat), started
	// as 'wcomm bridge' is, outside tmux.
	xdg := filepath.Join(b.s.work, "idle-xdg")
	require.NoError(b.t, os.MkdirAll(filepath.Join(xdg, "wcomm"), 0o700))
	require.NoError(b.t, os.WriteFile(filepath.Join(xdg, "wcomm", "config.yaml"),
		[]byte("channels:\n  webhook: {url: \"http://127.0.0.1:9/hook\"}\n"), 0o600))
	rt, err := os.MkdirTemp("", "wcrt")
	require.NoError(b.t, err)
	defer os.RemoveAll(rt)
	cmd := exec.Command(b.s.bin, "bridge", "-S", b.s.sock, "--root", root, "--idle-exit", "0")
	cmd.Env = append(cleanEnv(), "XDG_CONFIG_HOME="+xdg, "XDG_RUNTIME_DIR="+rt)
	logPath := filepath.Join(b.s.work, "idle-bridge.log")
	logf, err := os.Create(logPath)
	require.NoError(b.t, err)
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(b.t, cmd.Start())
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	waitFor(b.t, 20*time.Second, func() bool {
		data, _ := os.ReadFile(logPath)
		return strings.Contains(string(data), "runs webhook")
	}, "the bridge to start (its log: %s)", logPath)
	b.waitQuiet(cmd.Process.Pid)
	b.idleRows("bridge", cmd.Process.Pid, srv, span, bridgeBase)
	b.params = append(b.params, fmt.Sprintf("idle: the console (wcomm ui --all, in a 160x48 window) and the bridge "+
		"(a webhook channel, --idle-exit 0) each alone over %d idle bash windows of one session and no exchange; "+
		"over %s once quiet, CPU is utime+stime of the daemon, of the tmux clients it ran (cutime+cstime) and keeps open, "+
		"and what the tmux server spent beyond its CPU over the same span with no daemon, just before, from /proc/PID/stat; wake-ups are the voluntary context switches of every thread of "+
		"the daemon and of the clients it keeps open, from /proc/PID/task/TID/status", panes, span))
}

// idleRows measures the daemon pid (with the processes it keeps open) and the tmux server srv
// over span, and writes its two rows.
func (b *bxBench) idleRows(name string, pid, srv int, span time.Duration, baseline float64) {
	self0, kids0 := bxCPU(b.t, pid)
	live0 := bxLiveCPU(pid)
	srv0, _ := bxCPU(b.t, srv)
	wake0 := bxWakes(pid)
	start := time.Now()
	time.Sleep(span) // the span measured: the daemon is left alone
	self1, kids1 := bxCPU(b.t, pid)
	live1 := bxLiveCPU(pid)
	srv1, _ := bxCPU(b.t, srv)
	wake1 := bxWakes(pid)
	wall := time.Since(start).Seconds()
	kids := bxKidsDelta(kids0, kids1, live0, live1)
	own := 100 * (self1 - self0 + kids) / wall
	server := 100 * (srv1 - srv0) / wall
	caused := math.Max(0, server-baseline)
	b.rowFloor(fmt.Sprintf("%s idle, 20 panes: CPU with the tmux server's it causes", name), "cpu", own+caused, math.NaN(), 0.2, "the issue's bound",
		fmt.Sprintf("1 / — (%.0f s; itself and its clients %.2f %%, the tmux server %.2f %% with it and %.2f %% without it, just before)", wall, own, server, baseline))
	b.rowFloor(fmt.Sprintf("%s idle, 20 panes: wake-ups", name), "wakes", float64(wake1-wake0)/wall, math.NaN(), 10, "the issue's bound",
		fmt.Sprintf("1 / — (%.0f s, voluntary context switches)", wall))
}

// bxWakes is the number of voluntary context switches of every thread of pid and of its running
// descendants.
func bxWakes(pid int) int {
	n := 0
	procs := []int{pid}
	for p := range bxLiveCPU(pid) {
		procs = append(procs, p)
	}
	for _, p := range procs {
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", p))
		for _, t := range tasks {
			data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", p, t.Name()))
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(data), "\n") {
				if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
					k, _ := strconv.Atoi(strings.TrimSpace(v))
					n += k
				}
			}
		}
	}
	return n
}

// serverIdle is the tmux server srv's CPU over span, in % of a core, with no daemon running.
func (b *bxBench) serverIdle(srv int, span time.Duration) float64 {
	s0, _ := bxCPU(b.t, srv)
	start := time.Now()
	time.Sleep(span) // the span measured: nothing of the bench runs
	s1, _ := bxCPU(b.t, srv)
	return 100 * (s1 - s0) / time.Since(start).Seconds()
}
