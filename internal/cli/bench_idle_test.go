//go:build bench

package cli

// The idle rows of `make bench` (WCOMM_BENCH_ONLY=idle): what the console and the bridge cost
// while nothing happens, over 20 idle panes of a tmux server of their own, as a person's laptop
// runs them all day, and again with 200 more panes in that server, where what they cost the
// server must not grow. Each row is held against the goal: at most 0.2 % of a core with
// the tmux server's CPU over the same time, and at most 10 wake-ups a second.

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
	const panes, others = 20, 200
	// A private server of the section's own, as the bar measures: the bench's server holds
	// the other sections' sessions (an agent's TUI among them), which spend their own.
	p := newWorld(b.t)
	p.tmux("new-session", "-d", "-s", "idle", "-x", "160", "-y", "48", "--", "bash", "--norc", "--noprofile", "-i")
	for i := 1; i < panes; i++ {
		p.tmux("new-window", "-d", "-t", "idle:", "--", "bash", "--norc", "--noprofile", "-i")
	}
	root := filepath.Join(p.work, "idle-root")
	require.NoError(b.t, os.MkdirAll(root, 0o700))
	// 30 s whatever the scale: /proc counts CPU in 10 ms ticks, and the bound is 0.2 % of a core.
	span := 30 * time.Second
	srv := p.pid

	// The tmux server's cost a daemon causes is its CPU with the daemon less its CPU without, just
	// before.
	base := b.serverIdle(srv, span)
	pid, stop := b.idleUI(p, root)
	b.idleRows("ui", pid, srv, span, base)
	stop()
	pid, stop = b.idleBridge(p, root)
	b.idleRows("bridge", pid, srv, span, base)
	stop()

	// The same with 200 more panes in the server, in 10 sessions of their own: what a daemon costs
	// the server should not grow with them.
	for i := 0; i < others/20; i++ {
		name := fmt.Sprintf("others%d", i)
		p.tmux("new-session", "-d", "-s", name, "--", "sleep", "86400")
		for j := 1; j < 20; j++ {
			p.tmux("new-window", "-d", "-t", name+":", "--", "sleep", "86400")
		}
	}
	base = b.serverIdle(srv, span)
	pid, stop = b.idleUI(p, root)
	b.idleCPURow(fmt.Sprintf("ui idle, %d panes and %d others in the server", panes, others), pid, srv, span, base)
	stop()
	pid, stop = b.idleBridge(p, root)
	b.idleCPURow(fmt.Sprintf("bridge idle, %d panes and %d others in the server", panes, others), pid, srv, span, base)
	stop()
	b.params = append(b.params, fmt.Sprintf("idle: the console (wcomm ui --all, in a 160x48 window of a session of its own) and the bridge "+
		"(a webhook channel, --idle-exit 0) each alone over %d idle bash windows of one session of a private tmux server (beside its first window, a sleep), and no exchange; "+
		"then each again with %d more panes (sleeps) in %d more sessions of that server; "+
		"over %s once quiet, CPU is utime+stime of the daemon, of the tmux clients it ran (cutime+cstime) and keeps open, "+
		"and what the tmux server spent beyond its CPU over the same span with no daemon, just before, from /proc/PID/stat; wake-ups are the voluntary context switches of every thread of "+
		"the daemon and of the clients it keeps open, from /proc/PID/task/TID/status", panes, others, others/20, span))
}

// idleUI starts the console over every session of p's server, in a window of a session of its
// own, and returns its pid once quiet and how to end it.
func (b *bxBench) idleUI(p *world, root string) (int, func()) {
	out := p.tmux("new-session", "-d", "-P", "-F", "#{pane_pid}", "-s", "idlec", "-x", "160", "-y", "48", "--",
		p.bin, "ui", "--all", "--root", root, "-S", p.sock)
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	require.NoError(b.t, err)
	b.waitQuiet(pid)
	return pid, func() { p.tmux("kill-session", "-t", "idlec") }
}

// idleBridge starts the bridge on p's server with a webhook channel (it takes no answers, so
// nothing polls a chat), as 'wcomm bridge' is started, outside tmux; it returns its pid once
// quiet and how to end it.
func (b *bxBench) idleBridge(p *world, root string) (int, func()) {
	xdg := filepath.Join(p.work, "idle-xdg")
	require.NoError(b.t, os.MkdirAll(filepath.Join(xdg, "wcomm"), 0o700))
	require.NoError(b.t, os.WriteFile(filepath.Join(xdg, "wcomm", "config.yaml"),
		[]byte("channels:\n  webhook: {url: \"http://127.0.0.1:9/hook\"}\n"), 0o600))
	rt, err := os.MkdirTemp("", "wcrt")
	require.NoError(b.t, err)
	cmd := exec.Command(p.bin, "bridge", "-S", p.sock, "--root", root, "--idle-exit", "0")
	cmd.Env = append(cleanEnv(), "XDG_CONFIG_HOME="+xdg, "XDG_RUNTIME_DIR="+rt)
	logPath := filepath.Join(p.work, "idle-bridge.log")
	logf, err := os.Create(logPath)
	require.NoError(b.t, err)
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(b.t, cmd.Start())
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		_ = logf.Close()
		_ = os.RemoveAll(rt)
	}
	waitFor(b.t, 20*time.Second, func() bool {
		data, _ := os.ReadFile(logPath)
		return strings.Contains(string(data), "runs webhook")
	}, "the bridge to start (its log: %s)", logPath)
	b.waitQuiet(cmd.Process.Pid)
	return cmd.Process.Pid, stop
}

// idleRows measures the daemon pid (with the processes it keeps open) and the tmux server srv
// over span, and writes its two rows: its CPU with the server's it causes, and its wake-ups.
func (b *bxBench) idleRows(name string, pid, srv int, span time.Duration, baseline float64) {
	m := b.idleMeasure(pid, srv, span, baseline)
	b.rowFloor(fmt.Sprintf("%s idle, 20 panes: CPU with the tmux server's it causes", name), "cpu", m.own+m.caused, math.NaN(), 0.2, "the issue's bound",
		fmt.Sprintf("1 / — (%.0f s; itself and its clients %.2f %%, the tmux server %.2f %% with it and %.2f %% without it, just before)", m.wall, m.own, m.server, baseline))
	b.rowFloor(fmt.Sprintf("%s idle, 20 panes: wake-ups", name), "wakes", m.wakes, math.NaN(), 10, "the issue's bound",
		fmt.Sprintf("1 / — (%.0f s, voluntary context switches)", m.wall))
}

// idleCPURow measures as idleRows and writes the CPU row alone, named op.
func (b *bxBench) idleCPURow(op string, pid, srv int, span time.Duration, baseline float64) {
	m := b.idleMeasure(pid, srv, span, baseline)
	b.rowFloor(op+": CPU with the tmux server's it causes", "cpu", m.own+m.caused, math.NaN(), 0.2, "the issue's bound",
		fmt.Sprintf("1 / — (%.0f s; itself and its clients %.2f %% waking %.1f times a second, the tmux server %.2f %% with it and %.2f %% without it, just before)",
			m.wall, m.own, m.wakes, m.server, baseline))
}

// bxIdle is what idleMeasure measured: CPU in % of a core, wake-ups a second.
type bxIdle struct{ wall, own, server, caused, wakes float64 }

// idleMeasure measures the daemon pid (with the processes it keeps open) and the tmux server srv
// over span.
func (b *bxBench) idleMeasure(pid, srv int, span time.Duration, baseline float64) bxIdle {
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
	server := 100 * (srv1 - srv0) / wall
	return bxIdle{wall: wall, own: 100 * (self1 - self0 + kids) / wall, server: server, caused: math.Max(0, server-baseline),
		wakes: float64(wake1-wake0) / wall}
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
