//go:build bench

package cli

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/paneops"
)

// ---------------------------------------------------------------------------------------------
// ui

// benchUI measures the console as a person meets it: the time from opening it in a tmux window to
// its first whole screen (panes, questions read, the newest exchanges), over the 10,000-exchange
// history root and over an empty one; the share of a core it takes while nothing changes; and how
// long a send takes to show on it. The window is opened, and the screen read with capture-pane,
// through one tmux client kept open (control mode), captures 2 ms apart: a tmux client started for
// each call takes tens of ms of wall time here (and, for captures in a loop, most of a core), which
// would count the harness's own process starts in the console's time and slow the console down.
// Each time still includes tmux opening the window, up to one poll interval and one capture.
func (b *bxBench) benchUI() {
	// Not read-only: the console's windows are opened and sized through it too.
	ctl := (&paneops.Client{Server: paneops.Server{Socket: b.s.sock}}).ControlFlags("uib", "ignore-size,no-output")
	defer ctl.Close()
	b.screens = ctl.Client()
	defer func() { b.screens = nil }()
	big := b.historyRoot()
	empty := filepath.Join(b.s.work, "ui-empty-root")
	require.NoError(b.t, os.MkdirAll(empty, 0o700))
	shell := b.session("uib", "bash", "--norc", "--noprofile", "-i")
	for i := 0; i < 5; i++ {
		b.s.tmux("split-window", "-d", "-t", "uib", "--", "bash", "--norc", "--noprofile", "-i")
		b.s.tmux("select-layout", "-t", "uib", "tiled")
	}
	_ = shell
	goal := 0.150
	for _, c := range []struct {
		name, root string
		want       string
	}{
		{"ui first screen, 10,000 exchanges", big, "await-woken"},
		{"ui first screen, empty root", empty, "no exchanges yet"},
	} {
		var ds []time.Duration
		measure(b.n(10, 3), 0, func() time.Duration {
			pane, took := b.openConsole(c.root, c.want)
			b.s.tmux("send-keys", "-t", pane, "q")
			b.waitDead(pane)
			b.s.tmux("kill-pane", "-t", pane)
			ds = append(ds, took)
			return took
		})
		b.rowFloor(c.name, "time", bxMedian(ds[1:]), math.NaN(), goal, "the issue's bound", fmt.Sprintf("%d / —", len(ds)-1))
	}

	// Idle: nothing changes in tmux or the root; the console still reads tmux once a second.
	pane, _ := b.openConsole(big, "await-woken")
	pid, err := strconv.Atoi(strings.TrimSpace(b.s.tmux("display-message", "-p", "-t", pane, "#{pane_pid}")))
	require.NoError(b.t, err)
	// Let the live feed's first look at the whole root (every delivery log) end first: a fixed
	// wait would count the rest of it as idle on a loaded machine. Quiet is a second in which the
	// console used at most 2 % of a core (two clock ticks), seen within a minute.
	b.waitQuiet(pid)
	span := time.Duration(math.Max(10, 20*math.Min(b.scale, 1))) * time.Second
	self0, kids0 := bxCPU(b.t, pid)
	live0 := bxLiveCPU(pid)
	start := time.Now()
	time.Sleep(span)
	self1, kids1 := bxCPU(b.t, pid)
	live1 := bxLiveCPU(pid)
	wall := time.Since(start).Seconds()
	// The tmux clients it ran and waited for are in cutime; the one it keeps open is counted
	// from its own stat, and a client alive at the start and reaped since is in cutime whole,
	// so its part from before the span is taken off.
	kids := bxKidsDelta(kids0, kids1, live0, live1)
	selfPct := 100 * (self1 - self0) / wall
	kidsPct := 100 * kids / wall
	b.rowFloor("ui idle, 10,000 exchanges, 6 panes: CPU", "cpu", selfPct+kidsPct, math.NaN(), 1, "the issue's bound",
		fmt.Sprintf("1 / — (%.0f s; itself %.2f %%, its tmux clients %.2f %%)", wall, selfPct, kidsPct))

	// Live: a send between two of the panes shows on the console without a key.
	panes := strings.Fields(b.s.tmux("list-panes", "-t", "uib", "-F", "#{pane_id}"))
	require.GreaterOrEqual(b.t, len(panes), 3)
	var ds []time.Duration
	measure(b.n(10, 3), 0, func() time.Duration {
		out := b.must(b.s.wcommIn(panes[1], nil, "send", "--root", big, "--to", panes[2], "--", "a request for the console bench"))
		seq := strings.TrimSuffix(filepath.Base(strings.Fields(out.Stdout)[1]), "-response.md")
		n, _ := strconv.Atoi(seq)
		mark := fmt.Sprintf("#%d %s→%s", n-1, panes[1], panes[2])
		sent := time.Now()
		b.waitScreen(pane, mark)
		took := time.Since(sent)
		ds = append(ds, took)
		return took
	})
	b.rowFloor("ui: a send shows on screen (from send's exit)", "time", bxMedian(ds[1:]), math.NaN(), 1, "the issue's bound", fmt.Sprintf("%d / —", len(ds)-1))
	b.s.tmux("send-keys", "-t", pane, "q")
	b.waitDead(pane)
	b.params = append(b.params, "ui: the console in an 80x24 tmux window of a session of 6 idle bash panes; the first screen is timed from new-window to the capture that shows the panes, the questions read and the newest exchange (new-window and the captures through one tmux client kept open, captures 2 ms apart); CPU is utime+stime of the console, of the tmux clients it ran and waited for (cutime+cstime) and of those still running (the one it keeps open), over the span, from /proc/PID/stat")
}

// openConsole opens 'wcomm ui --root root' in an 80x24 window of session uib and returns its pane
// and the time until its screen showed want with the panes and the questions read.
func (b *bxBench) openConsole(root, want string) (string, time.Duration) {
	ctx := context.Background()
	start := time.Now()
	out, err := b.screens.Run(ctx, nil, "new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "uib:", "--", b.s.bin, "ui", "--root", root, "-S", b.s.sock)
	require.NoError(b.t, err)
	pane := strings.TrimSpace(out)
	_, err = b.screens.Run(ctx, nil, "resize-window", "-t", pane, "-x", "80", "-y", "24")
	require.NoError(b.t, err)
	b.waitScreen(pane, "no pending questions", want, "shell    idle")
	return pane, time.Since(start)
}

// waitScreen polls a pane's screen until it shows every text.
func (b *bxBench) waitScreen(pane string, texts ...string) {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var s string
	for time.Now().Before(deadline) {
		var out string
		var err error
		if b.screens != nil {
			out, err = b.screens.Run(context.Background(), nil, "capture-pane", "-p", "-t", pane)
		} else {
			out, err = b.s.tmuxErr("capture-pane", "-p", "-t", pane)
		}
		s = out
		ok := err == nil
		for _, t := range texts {
			ok = ok && strings.Contains(out, t)
		}
		if ok {
			return
		}
		if b.screens != nil {
			time.Sleep(2 * time.Millisecond) // a poll interval, not a wait for a race
		}
	}
	b.t.Fatalf("pane %s never showed %q:\n%s", pane, texts, s)
}

func (b *bxBench) waitDead(pane string) {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if d, _ := b.s.paneDead(pane); d {
			return
		}
	}
	b.t.Fatalf("pane %s did not exit", pane)
}

// waitQuiet waits until the process pid spends a second with at most two clock ticks of CPU.
func (b *bxBench) waitQuiet(pid int) {
	b.t.Helper()
	deadline := time.Now().Add(time.Minute)
	prev, _ := bxCPU(b.t, pid)
	for time.Now().Before(deadline) {
		time.Sleep(time.Second) // the window quiet is judged over
		cur, _ := bxCPU(b.t, pid)
		if cur-prev <= 0.02 {
			return
		}
		prev = cur
	}
	b.t.Fatalf("the console (pid %d) never went quiet after its first screen", pid)
}

// bxLiveCPU is the CPU time (utime+stime, seconds) of each running descendant of pid, from
// /proc/PID/task/TID/children.
func bxLiveCPU(pid int) map[int]float64 {
	out := map[int]float64{}
	var walk func(int)
	walk = func(p int) {
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", p))
		for _, t := range tasks {
			data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", p, t.Name()))
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(data)) {
				c, err := strconv.Atoi(f)
				if err != nil {
					continue
				}
				if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c)); err == nil {
					s := string(st)
					fs := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
					u, _ := strconv.ParseFloat(fs[11], 64)
					k, _ := strconv.ParseFloat(fs[12], 64)
					out[c] = (u + k) / 100
				}
				walk(c)
			}
		}
	}
	walk(pid)
	return out
}

// bxCPU reads a process's CPU time in seconds from /proc/PID/stat: its own (utime+stime) and that
// of the children it waited for (cutime+cstime).
func bxCPU(t require.TestingT, pid int) (self, children float64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	s := string(data)
	// The command name is in parentheses and may hold spaces: fields start after the last ')'.
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	tick := func(i int) float64 {
		v, err := strconv.ParseFloat(f[i], 64)
		require.NoError(t, err)
		return v / 100 // USER_HZ is 100 on Linux
	}
	// Fields after the name, 0-based: 11 utime, 12 stime, 13 cutime, 14 cstime.
	return tick(11) + tick(12), tick(13) + tick(14)
}

// bxKidsDelta is the CPU a process's children spent over a span: what its reaped children added
// (cutime and cstime), plus what its live ones spent, less the part from before the span of one
// alive at the start and reaped since (which is in the reaped children's figure whole).
func bxKidsDelta(kids0, kids1 float64, live0, live1 map[int]float64) float64 {
	kids := kids1 - kids0
	for p, v := range live1 {
		kids += v - live0[p]
	}
	for p, v := range live0 {
		if _, ok := live1[p]; !ok {
			kids -= v
		}
	}
	return kids
}
