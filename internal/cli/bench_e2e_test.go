//go:build bench

package cli

// `make bench`: wcomm side by side with the bash reference of the seed's procedure
// (testdata/reference), on a private tmux server this test starts and stops. It prints one table:
// operation, wcomm median, reference median, ratio, and the run's parameters.
//
//	go test -tags 'bench agents' -run TestBenchTable -v -timeout 30m ./internal/cli
//
// WCOMM_BENCH_SCALE (default 1) scales the repetitions (1,000 round trips at 1; 0.1 for a quick
// run); the sizes (10/50/200 panes, 500/2,000/5,000 processes, 10,000 exchanges, 10 MB) are fixed.
// WCOMM_BENCH_OUT names a file that receives the table as Markdown (between its markers, when it
// has them: see bxSplice). WCOMM_BENCH_ONLY runs some
// sections only (comma-separated: find, send, trip, floor, find40, wake, history, memory, remote, ui, bridge,
// prompts, spawn; spawn needs -tags 'bench agents', as make bench builds).
//
// Timing is reported, never asserted: only the results (the pane found, the answer returned) are
// checked, so a wrong answer cannot pass for a fast one. Helpers come from stress_test.go (sx).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// bxBench is one benchmark run.
type bxBench struct {
	t       *testing.T
	s       *sxServer
	scale   float64
	refDir  string
	refRoot string
	params  []string
	// fileCosts is newFileCost before each section, for the run's parameters.
	fileCosts []string
	rows      []bxRow
	seq       int
	wakeSeq   int
	screens   *paneops.Client // the ui section's captures, through a client kept open
}

// bxRow is one line of the table. Kind says how the figures read: "time" (lower is better,
// ratio = reference / wcomm), "rate" (higher is better, ratio = wcomm / reference), "mem".
type bxRow struct {
	op     string
	kind   string
	wcomm  float64 // seconds, per second, or KiB; NaN: none
	ref    float64
	detail string
	// floor is what the row is held against (the goal): measured in the same run where it
	// is an operation (three tmux calls, cat of every file), else a bound (3 × the message, the
	// reference's 50 ms poll, 50 round trips a second). floorWhat names it. NaN: none.
	floor     float64
	floorWhat string
	// ratio, when not 0, is wcomm / floor measured round by round: the median of the rounds'
	// ratios, as the outside harness reports it. The ratio of the two medians can fall below every
	// round's own when the route and its floor were slow in different rounds.
	ratio float64
}

func TestBenchTable(t *testing.T) {
	b := &bxBench{t: t, s: sxNew(t), scale: bxScale(t)}
	var err error
	b.refDir, err = filepath.Abs(referenceDir)
	require.NoError(t, err)
	b.refRoot = filepath.Join(b.s.work, "ref-root")
	require.NoError(t, os.MkdirAll(b.refRoot, 0o700))
	b.machine()
	start := time.Now()
	load := bxLoad()
	for _, sec := range []struct {
		name string
		run  func()
	}{
		{"find", b.benchFind}, {"send", b.benchSend}, {"trip", b.benchRoundTrip}, {"floor", b.benchFloor}, {"find40", b.benchFind40},
		{"wake", b.benchWake}, {"history", b.benchHistory}, {"memory", b.benchMemory}, {"remote", b.benchRemote},
		{"ui", b.benchUI}, {"web", b.benchWeb}, {"bridge", b.benchBridge}, {"prompts", b.benchPrompts}, {"spawn", b.benchSpawn},
		{"idle", b.benchIdle},
	} {
		if only := os.Getenv("WCOMM_BENCH_ONLY"); only != "" && !slices.Contains(strings.Split(only, ","), sec.name) {
			continue
		}
		b.settle(sec.name)
		sec.run()
	}
	b.params = append(b.params, fmt.Sprintf("run time: %s; load average (1 min) %s at the start, %s at the end",
		time.Since(start).Round(time.Second), load, bxLoad()),
		"a new file's create beside the roots before each section (the median of 64; about 30 µs on a disk where nothing was removed for minutes, up to a millisecond after many files were removed nearby): "+
			strings.Join(b.fileCosts, ", "))
	b.print()
}

// settle waits, before a section, until what the sections before it started has ended: no more
// runnable tasks than cores, three looks in a row, for up to two minutes. The find rows end 5,000
// processes, which this machine's init reaps slowly; the history rows that followed them once ran
// at 0.53 of cat instead of 0.17 on a quiet machine. (The process count is no sign: the sections'
// panes stay, and init leaves zombies.) What it waited is written with the run's parameters, and
// so is the disk's state it finds (newFileCost).
func (b *bxBench) settle(section string) {
	start := time.Now()
	// What the sections before wrote goes to the disk first, not during this one's fsyncs.
	syscall.Sync()
	deadline := start.Add(2 * time.Minute)
	quiet := 0
	for time.Now().Before(deadline) && quiet < 3 {
		if bxRunnable() <= runtime.NumCPU() {
			quiet++
		} else {
			quiet = 0
		}
		time.Sleep(200 * time.Millisecond) // polling the machine's state, no race to win
	}
	if waited := time.Since(start); waited > 2*time.Second {
		b.params = append(b.params, fmt.Sprintf("before the %s rows the run waited %s for the machine to settle (load %s)",
			section, waited.Round(100*time.Millisecond), bxLoad()))
	}
	b.fileCosts = append(b.fileCosts, fmt.Sprintf("%s %.0f µs", section, b.newFileCost()*1e6))
}

// newFileCost is the time in seconds a new file takes to create beside the sections' roots, the
// median of 64 made in a folder of their own (kept: removing them would make the next files
// dearer). On a filesystem without a journal (this machine's), ext4 skips at each new inode
// every inode of its group freed in the last one to six minutes (docs/internals.md, "Files
// kept"): after 20,000 files were removed nearby, a new one took 1.4 ms of CPU instead of about
// 30 µs, still 0.1-0.4 ms six minutes later (measured). Every side of a round trip that makes
// files pays it, the floor on its path and wcomm in its spares, so the rows that follow are read
// with it.
func (b *bxBench) newFileCost() float64 {
	b.seq++
	dir := filepath.Join(b.s.work, fmt.Sprintf("bx-%d-newfiles", b.seq))
	require.NoError(b.t, os.Mkdir(dir, 0o700))
	d := make([]time.Duration, 64)
	for i := range d {
		t0 := time.Now()
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(i)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		require.NoError(b.t, err)
		require.NoError(b.t, f.Close())
		d[i] = time.Since(t0)
	}
	return bxMedian(d)
}

// bxRunnable is the number of tasks runnable now (the fourth field of /proc/loadavg, before
// the slash); a large number when it cannot be read.
func bxRunnable() int {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 1 << 20
	}
	f := strings.Fields(string(data))
	if len(f) < 4 {
		return 1 << 20
	}
	run, _, _ := strings.Cut(f[3], "/")
	n, err := strconv.Atoi(run)
	if err != nil {
		return 1 << 20
	}
	return n - 1 // this process, reading
}

// bxLoad is the 1-minute load average: other work on the machine slows both sides.
func bxLoad() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(data))[0]
}

func bxScale(t *testing.T) float64 { return envScale(t, "WCOMM_BENCH_SCALE", 1, 10) }

// n scales a repetition count.
func (b *bxBench) n(full, lo int) int { return sxN(full, b.scale, lo) }

func (b *bxBench) file(name string, data []byte) string {
	b.seq++
	p := filepath.Join(b.s.work, fmt.Sprintf("bx-%d-%s", b.seq, name))
	require.NoError(b.t, os.WriteFile(p, data, 0o600))
	return p
}

// machine records what the figures were measured on.
func (b *bxBench) machine() {
	var u syscall.Utsname
	kernel := "?"
	if syscall.Uname(&u) == nil {
		kernel = bxUtsString(u.Sysname[:]) + " " + bxUtsString(u.Release[:]) + " " + bxUtsString(u.Machine[:])
	}
	cpu := "?"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := "?"
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		f := strings.Fields(string(data))
		if len(f) > 1 {
			if kb, err := strconv.Atoi(f[1]); err == nil {
				mem = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
			}
		}
	}
	tmuxV, _ := exec.Command("tmux", "-V").Output()
	bashV, _ := exec.Command("bash", "-c", "echo $BASH_VERSION").Output()
	b.params = append(b.params,
		fmt.Sprintf("machine: %d CPUs (%s), %s RAM, %s", runtime.NumCPU(), cpu, mem, kernel),
		fmt.Sprintf("software: %s, %s, bash %s", strings.TrimSpace(string(tmuxV)), runtime.Version(), strings.TrimSpace(string(bashV))),
		fmt.Sprintf("scale: WCOMM_BENCH_SCALE=%g", b.scale),
		fmt.Sprintf("processes on the machine before the run: %d", bxProcs()),
	)
}

func bxUtsString(a []int8) string {
	var sb strings.Builder
	for _, c := range a {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

// bxProcs counts the processes on the machine.
func bxProcs() int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return -1
	}
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			n++
		}
	}
	return n
}

// ---------------------------------------------------------------------------------------------
// Statistics and the table

func bxMedian(ds []time.Duration) float64 { return bxPct(ds, 0.5) }

// bxPct is the nearest-rank percentile, in seconds.
func bxPct(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return math.NaN()
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)].Seconds()
}

func (b *bxBench) row(op, kind string, wc, ref float64, detail string) {
	b.rowFloor(op, kind, wc, ref, math.NaN(), "", detail)
}

// rowFloor is row with the floor the row is held against.
func (b *bxBench) rowFloor(op, kind string, wc, ref, floor float64, floorWhat, detail string) {
	b.rows = append(b.rows, bxRow{op: op, kind: kind, wcomm: wc, ref: ref, detail: detail, floor: floor, floorWhat: floorWhat})
	b.t.Logf("%-58s wcomm %-12s floor %-12s reference %-12s %s", op, bxFmt(kind, wc), bxFmt(kind, floor), bxFmt(kind, ref), detail)
}

// bxGoals are the bounds the speed issue sets on wcomm / floor, by the start of a row's name; a
// row whose floor is a goal or a bound ("goal", "the bound", the reference / N) is held
// at 1.
var bxGoals = []struct {
	prefix string
	bound  float64
}{
	{"round trip 1 KiB, sequential, MCP tools: time per trip", 3},
	{"round trip 1 KiB, sequential, MCP tools: CPU per trip", 4},
	{"round trip 1 KiB, sequential, commands (send --wait, notify): time per trip", 1.3},
	{"round trip 1 KiB, 8 pairs, MCP tools: trips a second", 4},
	{"send 1 KiB, Enter delay 0", 0.7},
	{"history --json, 10,000 exchanges, no index", 1},
	{"history --json, 10,000 exchanges", 0.3},
	{"find of nothing", 2},
}

// bxGoalMark is the row's goal and whether it was met: "≤ 3: met", or "—" for a row without one.
func bxGoalMark(r bxRow) string {
	bound := math.NaN()
	for _, g := range bxGoals {
		if strings.HasPrefix(r.op, g.prefix) && !strings.Contains(r.op, "against the goal") {
			bound = g.bound
			break
		}
	}
	if math.IsNaN(bound) {
		switch {
		case r.floorWhat == "goal", r.floorWhat == "the issue's bound", strings.HasPrefix(r.floorWhat, "the reference /"):
			bound = 1
		default:
			return "—"
		}
	}
	x, err := strconv.ParseFloat(bxOfFloor(r), 64)
	if err != nil {
		return fmt.Sprintf("≤ %g", bound)
	}
	if x <= bound {
		return fmt.Sprintf("≤ %g: met", bound)
	}
	return fmt.Sprintf("≤ %g: not met", bound)
}

// bxOfFloor is wcomm against its floor: wcomm / floor for times and memory (at most 1.5 or 1
// or 3 is the goal, as the row says), floor / wcomm for throughput.
func bxOfFloor(r bxRow) string {
	// An idle daemon's CPU or wake-ups may be none at all: 0 of its bound.
	if math.IsNaN(r.wcomm) || math.IsNaN(r.floor) || (r.wcomm == 0 && r.kind == "rate") || r.floor == 0 {
		return "—"
	}
	x := r.wcomm / r.floor
	if r.kind == "rate" {
		x = r.floor / r.wcomm
	}
	if r.ratio != 0 {
		x = r.ratio
	}
	return fmt.Sprintf("%.2f", x)
}

func bxFmt(kind string, v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	switch kind {
	case "rate":
		return fmt.Sprintf("%.1f /s", v)
	case "mem":
		return fmt.Sprintf("%.1f MiB", v/1024)
	case "cpu":
		return fmt.Sprintf("%.2f %% of a core", v)
	case "wakes":
		return fmt.Sprintf("%.1f wake-ups/s", v)
	}
	switch {
	case v >= 10:
		return fmt.Sprintf("%.1f s", v)
	case v >= 1:
		return fmt.Sprintf("%.2f s", v)
	case v >= 0.01:
		return fmt.Sprintf("%.1f ms", v*1e3)
	default:
		return fmt.Sprintf("%.2f ms", v*1e3)
	}
}

func bxRatio(r bxRow) string {
	if math.IsNaN(r.wcomm) || math.IsNaN(r.ref) || r.wcomm == 0 || r.ref == 0 {
		return "—"
	}
	x := r.ref / r.wcomm
	if r.kind == "rate" {
		x = r.wcomm / r.ref
	}
	if x >= 10 {
		return fmt.Sprintf("%.0f×", x)
	}
	return fmt.Sprintf("%.1f×", x)
}

func (b *bxBench) print() {
	var sb strings.Builder
	sb.WriteString("| operation | wcomm | floor | wcomm / floor | goal | reference | ratio | repetitions |\n|---|---:|---:|---:|---|---:|---:|---|\n")
	for _, r := range b.rows {
		floor := bxFmt(r.kind, r.floor)
		if r.floorWhat != "" {
			floor += " (" + r.floorWhat + ")"
		}
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.op, bxFmt(r.kind, r.wcomm), floor, bxOfFloor(r),
			bxGoalMark(r), bxFmt(r.kind, r.ref), bxRatio(r), r.detail)
	}
	sb.WriteString("\nwcomm / floor: wcomm over its floor for times and memory, the floor over wcomm for throughput; 1 or less meets the floor.\n" +
		"Goal: the bound the speed issue sets on wcomm / floor, and whether this run met it (a row whose floor is itself the goal is met at 1 or less).\n" +
		"Ratio: reference / wcomm for times and memory, wcomm / reference for throughput; above 1 means wcomm is faster or smaller.\n\n")
	for _, p := range b.params {
		sb.WriteString("- " + p + "\n")
	}
	fmt.Print("\n" + sb.String())
	if p := os.Getenv("WCOMM_BENCH_OUT"); p != "" {
		require.NoError(b.t, os.WriteFile(p, bxSplice(p, sb.String()), 0o644))
	}
}

// The markers between which WCOMM_BENCH_OUT receives the table when the file has them
// (BENCHMARKS.md: `make bench` rewrites its table, the prose around it stays).
const (
	bxBegin = "<!-- bench table: written by make bench -->\n"
	bxEnd   = "<!-- end of bench table -->\n"
)

// bxSplice returns the file at path with the table between its markers, or the table alone.
func bxSplice(path, table string) []byte {
	old, err := os.ReadFile(path)
	if err != nil {
		return []byte(table)
	}
	before, rest, ok := strings.Cut(string(old), bxBegin)
	_, after, ok2 := strings.Cut(rest, bxEnd)
	if !ok || !ok2 {
		return []byte(table)
	}
	return []byte(before + bxBegin + "\n" + table + "\n" + bxEnd + after)
}

// measure runs fn once to warm up, then up to reps times within budget (at least once), and
// returns the timings. A first run that alone exceeds the budget is kept as the only sample: a
// run of many seconds needs no warm-up, and repeating it would not fit the time of a bench run.
func measure(reps int, budget time.Duration, fn func() time.Duration) []time.Duration {
	warm := fn()
	if budget > 0 {
		if warm >= budget {
			return []time.Duration{warm}
		}
		reps = min(reps, max(1, int(budget/warm)))
	}
	out := make([]time.Duration, 0, reps)
	for len(out) < reps {
		out = append(out, fn())
	}
	return out
}

// ---------------------------------------------------------------------------------------------
// Running the two implementations

// refEnv is the environment of the reference scripts for orchestrator pane orch.
func (b *bxBench) refEnv(orch, delay string) []string {
	return append(cleanEnv(), "REF_ROOT="+b.refRoot, "REF_ORCHESTRATOR="+orch,
		"REF_TMUX_SOCKET="+b.s.sock, "REF_ENTER_DELAY="+delay)
}

func (b *bxBench) ref(env []string, stdin []byte, script string, args ...string) sxOut {
	return sxExec(5*time.Minute, env, stdin, append([]string{"bash", filepath.Join(b.refDir, script)}, args...)...)
}

// refSession holds the session folder send.sh made for a pair, as an orchestrator following the
// seed keeps COMM_DIR between requests.
type refSession struct {
	orch, worker, delay, dir string
}

// send runs send.sh and returns the response file it names.
func (b *bxBench) refSend(rs *refSession, msg string) (string, sxOut) {
	args := []string{rs.worker, msg}
	if rs.dir != "" {
		args = append([]string{"--session-dir", rs.dir}, args...)
	}
	out := b.ref(b.refEnv(rs.orch, rs.delay), nil, "send.sh", args...)
	resp := ""
	for _, l := range strings.Split(out.Stdout, "\n") {
		if v, ok := strings.CutPrefix(l, "session_dir="); ok {
			rs.dir = v
		}
		if v, ok := strings.CutPrefix(l, "response_file="); ok {
			resp = v
		}
	}
	return resp, out
}

func (b *bxBench) must(out sxOut) sxOut {
	b.t.Helper()
	require.Equal(b.t, 0, out.Code, "%s", out)
	return out
}

func (b *bxBench) session(name string, argv ...string) string {
	b.t.Helper()
	out := b.s.tmux(append([]string{"new-session", "-d", "-P", "-F", "#{pane_id}", "-s", name, "-x", "200", "-y", "50", "--"}, argv...)...)
	return strings.TrimSpace(out)
}

// ---------------------------------------------------------------------------------------------
// find

// benchFind locates one agent among P panes while N extra processes run. The agent sits in the
// middle pane (the seed's loop stops at the first match; wcomm looks at every pane, to report
// ambiguity). The extra processes are sleeps spawned in panes of another session.
func (b *bxBench) benchFind() {
	ps := []int{10, 50, 200}
	ns := []int{500, 2000, 5000}
	type target struct{ agent, pane, orch, session string }
	targets := map[int]target{}
	for _, p := range ps {
		sess := fmt.Sprintf("find%d", p)
		first := b.session(sess, "sleep", "86400")
		tg := target{agent: fmt.Sprintf("bxagent-p%d-", p), orch: first, session: sess}
		for i := 1; i < p; i++ {
			if i == p/2 {
				tg.pane = b.s.helper(sess, []string{"SX_AGENT=" + tg.agent}, "agent", filepath.Join(b.s.work, fmt.Sprintf("agentpane-%d", p)))
				continue
			}
			b.s.window(sess, nil, "sleep", "86400")
		}
		targets[p] = tg
	}
	b.session("load", "sleep", "86400")
	var spawners []int
	defer func() {
		for _, pid := range spawners {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}()
	base := bxProcs()
	spawned := 0
	reps := b.n(20, 3)
	for _, n := range ns {
		log := filepath.Join(b.s.work, fmt.Sprintf("spawn-%d", n))
		pane := b.s.helper("load", nil, "spawn", log, strconv.Itoa(n-spawned))
		spawners = append(spawners, b.s.panePID(pane))
		spawned = n
		total := bxProcs()
		for _, p := range ps {
			tg := targets[p]
			wc := measure(reps, b.budget(5*time.Second), func() time.Duration {
				out := b.must(b.s.wcomm(nil, "find", "--session", tg.session, tg.agent))
				require.Equal(b.t, tg.pane, strings.TrimSpace(out.Stdout), "wcomm find")
				return out.Took
			})
			env := append(cleanEnv(), "REF_TMUX_SOCKET="+b.s.sock, "TMUX_PANE="+tg.orch, "REF_FIND_AGENT="+tg.agent)
			script, err := filepath.Abs(filepath.Join("..", "..", "testdata", "bench", "ref-find.sh"))
			require.NoError(b.t, err)
			rf := measure(reps, b.budget(10*time.Second), func() time.Duration {
				out := b.must(sxExec(5*time.Minute, env, nil, "bash", script))
				require.Equal(b.t, tg.pane, strings.TrimSpace(out.Stdout), "the seed's find_agent_pane")
				return out.Took
			})
			op, detail := fmt.Sprintf("find, %d panes, %d processes", p, total), fmt.Sprintf("%d / %d", len(wc), len(rf))
			if p == ps[len(ps)-1] && n == ns[len(ns)-1] {
				// The goal of the largest: a thousandth of the seed's procedure, measured beside it.
				b.rowFloor(op, "time", bxMedian(wc), bxMedian(rf), bxMedian(rf)/1000, "the reference / 1,000", detail)
				continue
			}
			b.row(op, "time", bxMedian(wc), bxMedian(rf), detail)
		}
		if n == ns[len(ns)-1] {
			// await checks a response that did not arrive by rename against every process's open
			// files, so its wake-up after notify's link grows with the process count too.
			b.wake(fmt.Sprintf(", %d processes", total), b.n(30, 5), "link", "foreign")
		}
	}
	for _, pid := range spawners {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	spawners = nil
	// Its sessions go too: the rows after it run in the same tmux server, whose loop looks at every
	// pane's terminal at each turn. Left there, these 260 panes made the floor's own round trip a
	// quarter slower, and wcomm's, which turn the loop more often, more (one run each way), and
	// each of the three tmux calls send is held against twice as slow.
	for _, p := range ps {
		b.s.tmux("kill-session", "-t", targets[p].session)
	}
	b.s.tmux("kill-session", "-t", "load")
	deadline := time.Now().Add(time.Minute)
	for bxProcs() > base-ps[len(ps)-1] && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // the polling interval while the killed processes go
	}
	b.params = append(b.params, fmt.Sprintf("find: the agent is a direct child of the middle pane's process; the extra processes are `sleep`s in panes of another session (%d to %d processes in all)", base, base+ns[len(ns)-1]))
}

// budget scales a per-cell time budget.
func (b *bxBench) budget(d time.Duration) time.Duration {
	return time.Duration(float64(d) * max(b.scale, 0.2))
}

// ---------------------------------------------------------------------------------------------
// send

func bxBody(size int, tag string) []byte {
	line := "the quick brown fox jumps over the lazy dog 0123456789 abcdefghij\n"
	body := []byte(tag + "\n")
	for len(body) < size {
		body = append(body, line...)
	}
	return body[:size]
}

// benchSend delivers one request into a pane that runs cat: Enter delay 0 on both sides (the
// transport alone), and the default delay (what a user gets).
func (b *bxBench) benchSend() {
	sess := "send"
	orch := b.session(sess, "cat")
	worker := b.s.window(sess, nil, "cat")
	for _, c := range []struct {
		name     string
		size     int
		wcDelay  string
		refDelay string
		reps     int
	}{
		{"send 1 KiB, Enter delay 0", 1 << 10, "0", "0", b.n(200, 10)},
		{"send 60 KiB, Enter delay 0", 60 << 10, "0", "0", b.n(100, 10)},
		{"send 1 KiB, default Enter delay (200 ms)", 1 << 10, "200ms", "0.2", b.n(50, 5)},
	} {
		body := bxBody(c.size, c.name)
		msg := b.file("send.md", body)
		delay, err := time.ParseDuration(c.wcDelay + map[bool]string{true: "s", false: ""}[c.wcDelay == "0"])
		require.NoError(b.t, err)
		// wcomm, wcomm without its resident tmux client and the floor take turns, so all see
		// the same machine.
		var wc, off, fl []time.Duration
		measure(c.reps, 0, func() time.Duration {
			out := b.must(b.s.wcommEnv(bxResident, nil, "send", "--to", worker, "--from", orch, "--enter-delay", c.wcDelay, "--file", msg))
			wc = append(wc, out.Took)
			o := b.must(b.s.wcommEnv(bxNoResident, nil, "send", "--to", worker, "--from", orch, "--enter-delay", c.wcDelay, "--file", msg))
			off = append(off, o.Took)
			fl = append(fl, b.threeCalls(worker, body, delay))
			return out.Took
		})
		wc, off, fl = wc[1:], off[1:], fl[1:] // the warm-up
		rs := &refSession{orch: orch, worker: worker, delay: c.refDelay}
		rf := measure(c.reps, 0, func() time.Duration {
			_, out := b.refSend(rs, msg)
			b.must(out)
			return out.Took
		})
		b.rowFloor(c.name, "time", bxMedian(wc), bxMedian(rf), bxMedian(fl), "3 tmux calls", fmt.Sprintf("%d / %d", len(wc), len(rf)))
		b.rowFloor(c.name+", without the resident client", "time", bxMedian(off), bxMedian(rf), bxMedian(fl), "3 tmux calls", fmt.Sprintf("%d / %d", len(off), len(rf)))
	}
	b.params = append(b.params, "send's floor: the three tmux client calls a send cannot avoid, run the same way as wcomm in turn with it: "+
		"look up the pane (display-message), load and paste the text (load-buffer ; paste-buffer), Enter (send-keys), with the Enter delay between the last two")
}

// wcommEnv is wcomm with more environment.
func (s *sxServer) wcommEnv(env []string, stdin []byte, cmd string, args ...string) sxOut {
	return sxExec(2*time.Minute, append(cleanEnv(), env...), stdin, s.wcommArgv(cmd, args...)...)
}

// bxResident is wcomm's resident tmux client on, as it is by default; bxNoResident turns it off,
// and every tmux call is then a process of its own.
var (
	bxResident   = []string{"WCOMM_TMUXD=1"}
	bxNoResident = []string{"WCOMM_TMUXD=0"}
)

// threeCalls is the floor of a send: the three tmux client calls, each a process, one after the
// other, as a script that knows the pane would run them.
func (b *bxBench) threeCalls(pane string, text []byte, delay time.Duration) time.Duration {
	start := time.Now()
	b.must(sxExec(time.Minute, cleanEnv(), nil, "tmux", "-S", b.s.sock, "display-message", "-p", "-t", pane, "#{pane_id} #{pane_pid}"))
	buf := fmt.Sprintf("floor-%d", time.Now().UnixNano())
	b.must(sxExec(time.Minute, cleanEnv(), text, "tmux", "-S", b.s.sock, "load-buffer", "-b", buf, "-", ";", "paste-buffer", "-d", "-b", buf, "-t", pane))
	time.Sleep(delay)
	b.must(sxExec(time.Minute, cleanEnv(), nil, "tmux", "-S", b.s.sock, "send-keys", "-t", pane, "Enter"))
	return time.Since(start)
}

// ---------------------------------------------------------------------------------------------
// round trip

// bxPair is an orchestrator pane (cat) and a worker pane that answers by itself.
type bxPair struct {
	orch, worker string
	env          []string           // of the sender and the worker: bxResident or bxNoResident
	rs           *refSession        // the reference's session folder, for reference pairs
	mcp          *mcp.ClientSession // the orchestrator's `wcomm mcp`, for pairs of mode "mcp"
}

func (b *bxBench) pairs(sess string, n int, mode, delay string, env ...string) []bxPair {
	b.session(sess, "sleep", "86400")
	out := make([]bxPair, n)
	for i := range out {
		out[i].orch = b.s.window(sess, nil, "cat")
		out[i].worker, _ = b.s.workerInEnv(sess, mode, delay, env)
		out[i].env = env
		out[i].rs = &refSession{orch: out[i].orch, worker: out[i].worker, delay: delay}
		if mode == "mcp" {
			out[i].mcp = b.mcpSession(out[i].orch, env)
		}
	}
	return out
}

// mcpSession starts `wcomm mcp` as the orchestrator's pane would, with Enter delay 0, and
// connects to it; it is closed at the end of the run.
func (b *bxBench) mcpSession(orch string, env []string) *mcp.ClientSession {
	cmd := exec.Command(b.s.bin, "mcp", "-S", b.s.sock, "--root", b.s.root)
	cmd.Env = append(append(cleanEnv(), fmt.Sprintf("TMUX=%s,%d,0", b.s.sock, b.s.pid), "TMUX_PANE="+orch,
		"WCOMM_ENTER_DELAY=0"), env...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "wcomm-bench", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(b.t, err, "connect to wcomm mcp")
	b.t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// mcpTrip is one exchange through the MCP tools: the orchestrator's send then await, answered by
// the worker's notify tool; no process is started for any of them.
func (b *bxBench) mcpTrip(p bxPair, body string) time.Duration {
	start := time.Now()
	call := func(name string, args map[string]any) map[string]any {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		res, err := p.mcp.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			panic(fmt.Sprintf("mcp %s failed: %v %+v", name, err, res))
		}
		m, _ := res.StructuredContent.(map[string]any)
		return m
	}
	sent := call("send", map[string]any{"to": p.worker, "message": body})
	id, _ := sent["id"].(string)
	got := call("await", map[string]any{"id": id, "timeout_seconds": 60})
	if resp, _ := got["response"].(string); got["status"] != "answered" || !strings.HasPrefix(resp, "ack "+id) {
		panic(fmt.Sprintf("mcp round trip %s: %v", id, got))
	}
	return time.Since(start)
}

// wcommTrip is one exchange with wcomm: send --wait, answered by the worker's wcomm notify.
func (b *bxBench) wcommTrip(p bxPair, msg, delay string) time.Duration {
	out := b.s.wcommEnv(p.env, nil, "send", "--to", p.worker, "--from", p.orch, "--enter-delay", delay, "--wait", "--timeout", "60s", "--file", msg)
	if out.Code != 0 || !strings.HasPrefix(out.Stdout, "ack ") {
		panic(fmt.Sprintf("wcomm round trip failed: %s", out))
	}
	return out.Took
}

// refTrip is one exchange with the reference: send.sh, answered by the worker's respond.sh,
// then await.sh until the response file is there.
func (b *bxBench) refTrip(p bxPair, msg string) time.Duration {
	start := time.Now()
	resp, out := b.refSend(p.rs, msg)
	if out.Code != 0 || resp == "" {
		panic(fmt.Sprintf("send.sh failed: %s", out))
	}
	out = b.ref(append(cleanEnv(), "REF_TMUX_SOCKET="+b.s.sock), nil, "await.sh", resp, "60")
	if out.Code != 0 || !strings.Contains(out.Stdout, "\nack ") {
		panic(fmt.Sprintf("await.sh failed: %s", out))
	}
	return time.Since(start)
}

// trips runs total exchanges over the pairs (one goroutine per pair) and returns each latency and
// the wall time.
func trips(pairs []bxPair, total int, one func(p bxPair) time.Duration) ([]time.Duration, time.Duration) {
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	var failure any
	start := time.Now()
	for i, p := range pairs {
		n := total / len(pairs)
		if i < total%len(pairs) {
			n++
		}
		wg.Add(1)
		go func(p bxPair, n int) {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					mu.Lock()
					failure = r
					mu.Unlock()
				}
			}()
			for k := 0; k < n; k++ {
				d := one(p)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}(p, n)
	}
	wg.Wait()
	if failure != nil {
		panic(failure)
	}
	return lat, time.Since(start)
}

func (b *bxBench) benchRoundTrip() {
	msg := b.file("trip.md", bxBody(1<<10, "round trip: answer with ack"))
	seqN := b.n(1000, 20)
	wc1 := b.pairs("tripw", 1, "wcomm", "0s", bxResident...)
	rf1 := b.pairs("tripr", 1, "ref", "0")
	// Warm up both (first folder, page cache).
	b.wcommTrip(wc1[0], msg, "0")
	b.refTrip(rf1[0], msg)

	run := func(name string, pw, pr []bxPair, total int, wdelay string) {
		wl, ww := trips(pw, total, func(p bxPair) time.Duration { return b.wcommTrip(p, msg, wdelay) })
		rl, rw := trips(pr, total, func(p bxPair) time.Duration { return b.refTrip(p, msg) })
		reps := fmt.Sprintf("%d / %d", len(wl), len(rl))
		b.row(name+": median", "time", bxMedian(wl), bxMedian(rl), reps)
		b.row(name+": p99", "time", bxPct(wl, 0.99), bxPct(rl, 0.99), reps)
		goal := 100.0
		if !strings.Contains(name, "sequential") {
			goal = 200
		}
		b.rowFloor(name+": throughput", "rate", float64(len(wl))/ww.Seconds(), float64(len(rl))/rw.Seconds(), goal, "goal", reps)
	}
	run(fmt.Sprintf("round trip, %d sequential, Enter delay 0", seqN), wc1, rf1, seqN, "0")
	b.breakdown(wc1[0])
	b.processFloor(b.n(200, 20))
	// The same without the resident tmux client (sender, worker and their helpers), in this run.
	wo1 := b.pairs("tripwo", 1, "wcomm", "0s", bxNoResident...)
	b.wcommTrip(wo1[0], msg, "0")
	run(fmt.Sprintf("round trip, %d sequential, Enter delay 0, without the resident client", seqN), wo1, rf1, seqN, "0")

	wc8 := b.pairs("tripw8", 8, "wcomm", "0s", bxResident...)
	rf8 := b.pairs("tripr8", 8, "ref", "0")
	run(fmt.Sprintf("round trip, %d over 8 concurrent pairs, Enter delay 0", seqN), wc8, rf8, seqN, "0")
	wo8 := b.pairs("tripwo8", 8, "wcomm", "0s", bxNoResident...)
	run(fmt.Sprintf("round trip, %d over 8 concurrent pairs, Enter delay 0, without the resident client", seqN), wo8, rf8, seqN, "0")

	// Through the MCP tools: each side holds its own `wcomm mcp`, so no step starts a process;
	// what is left is the work of the exchange itself. No reference: the seed has no such route.
	mcpRun := func(name string, pairs []bxPair, total int) {
		body := string(bxBody(1<<10, "round trip: answer with ack"))
		b.mcpTrip(pairs[0], body) // warm-up: the servers' first engine, the folder
		lat, wall := trips(pairs, total, func(p bxPair) time.Duration { return b.mcpTrip(p, body) })
		reps := strconv.Itoa(len(lat))
		b.row(name+": median", "time", bxMedian(lat), math.NaN(), reps)
		goal := 100.0
		if !strings.Contains(name, "sequential") {
			goal = 200
		}
		b.rowFloor(name+": throughput", "rate", float64(len(lat))/wall.Seconds(), math.NaN(), goal, "goal", reps)
	}
	m1, m8 := b.pairs("tripm", 1, "mcp", "0s", bxResident...), b.pairs("tripm8", 8, "mcp", "0s", bxResident...)
	mcpRun(fmt.Sprintf("round trip through the MCP tools (send, await; the worker's notify), %d sequential, Enter delay 0", seqN), m1, seqN)
	mcpRun(fmt.Sprintf("round trip through the MCP tools, %d over 8 concurrent pairs, Enter delay 0", seqN), m8, seqN)

	wcd := b.pairs("tripwd", 1, "wcomm", "200ms")
	rfd := b.pairs("triprd", 1, "ref", "0.2")
	n := b.n(50, 5)
	wl, _ := trips(wcd, n, func(p bxPair) time.Duration { return b.wcommTrip(p, msg, "200ms") })
	rl, _ := trips(rfd, n, func(p bxPair) time.Duration { return b.refTrip(p, msg) })
	b.row(fmt.Sprintf("round trip, %d sequential, default Enter delay: median", n), "time", bxMedian(wl), bxMedian(rl), fmt.Sprintf("%d / %d", len(wl), len(rl)))
	// The section's panes, their workers and its MCP servers end with it, not with the run: about
	// 90 panes and 18 servers otherwise stayed for the sections after it.
	for _, p := range append(m1, m8...) {
		_ = p.mcp.Close()
	}
	// In one tmux command, with the resident's control client moved to a session that stays
	// rather than detached: a resident whose client went starts another at its next call, and
	// tmux 3.3a's server crashed (once, killing the run) when it told its control clients of a
	// session's end while one was being made one (docs/internals.md).
	b.s.tmux("set-option", "-g", "detach-on-destroy", "off")
	var kill []string
	for _, sess := range []string{"tripw", "tripr", "tripwo", "tripw8", "tripr8", "tripwo8", "tripm", "tripm8", "tripwd", "triprd"} {
		kill = append(kill, "kill-session", "-t", sess, ";")
	}
	b.s.tmux(kill[:len(kill)-1]...)
	b.s.tmux("set-option", "-g", "detach-on-destroy", "on")
	b.params = append(b.params, "round trip: wcomm is `send --wait` (the worker runs `wcomm notify`); the reference is `send.sh` then `await.sh` (the worker runs `respond.sh`); messages of 1 KiB; the worker is a scripted program in its pane")
}

// processFloor measures what no design of a round trip made of commands can go below: the sender
// and the worker's notify are each a wcomm process, so a round trip holds two process starts of
// wcomm one after the other (measured as `wcomm version` twice), and their CPU time bounds how many
// round trips the machine's cores can carry at once.
func (b *bxBench) processFloor(n int) {
	var two, cpu []time.Duration
	for range n {
		var took, used time.Duration
		for range 2 {
			out := b.s.wcomm(nil, "version")
			if out.Code != 0 {
				panic(fmt.Sprintf("wcomm version failed: %s", out))
			}
			took, used = took+out.Took, used+out.CPU
		}
		two, cpu = append(two, took), append(cpu, used)
	}
	reps := strconv.Itoa(n)
	b.row("two wcomm process starts, one after the other (`wcomm version` twice): median", "time", bxMedian(two), math.NaN(), reps)
	b.row("two wcomm process starts: CPU time (user and system)", "time", bxMedian(cpu), math.NaN(), reps)
	b.rowFloor("round trips a second that two process starts leave room for, sequential (1 / their time)", "rate",
		1/bxMedian(two), math.NaN(), 100, "goal", reps)
	b.rowFloor(fmt.Sprintf("round trips a second that two process starts leave room for, all %d cores busy (cores / their CPU)", runtime.NumCPU()), "rate",
		float64(runtime.NumCPU())/bxMedian(cpu), math.NaN(), 200, "goal", reps)
}

// breakdown reads the delivery logs of a wcomm pair's exchanges and reports the median time
// between their states: where a round trip spends its time.
func (b *bxBench) breakdown(p bxPair) {
	on, _ := messages.ParsePaneID(p.orch)
	wn, _ := messages.ParsePaneID(p.worker)
	logs, err := filepath.Glob(filepath.Join(b.s.root, fmt.Sprintf("*-o%d-w%d", on.Num(), wn.Num()), "*-delivery.jsonl"))
	require.NoError(b.t, err)
	steps := []struct{ from, to, what string }{
		{exchange.StateWritten, exchange.StatePasted, "request written → pasted"},
		{exchange.StatePasted, exchange.StateSubmitted, "pasted → Enter sent"},
		{exchange.StateSubmitted, exchange.StateAnswered, "Enter → response written by the worker's notify"},
		{exchange.StateAnswered, exchange.StateAwaitWoken, "response written → notify found the await waiting"},
	}
	spans := make([][]time.Duration, len(steps))
	for _, l := range logs {
		data, err := os.ReadFile(l)
		require.NoError(b.t, err)
		at := map[string]time.Time{}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var ev exchange.Event
			if json.Unmarshal([]byte(line), &ev) == nil {
				at[ev.State] = ev.At
			}
		}
		for i, st := range steps {
			from, ok1 := at[st.from]
			to, ok2 := at[st.to]
			if ok1 && ok2 {
				spans[i] = append(spans[i], to.Sub(from))
			}
		}
	}
	var parts []string
	for i, st := range steps {
		parts = append(parts, fmt.Sprintf("%s %s (%d)", st.what, bxFmt("time", bxMedian(spans[i])), len(spans[i])))
	}
	b.params = append(b.params, "wcomm round trip, medians between the states of the delivery logs: "+strings.Join(parts, "; "))
}

// ---------------------------------------------------------------------------------------------
// await wake-up

// benchWake measures the time from the response file's appearance to await's exit. The waiting
// process is started first and the clock starts only once it is really waiting: for wcomm, when
// it holds the exchange's await lock and has its inotify descriptor open; for the reference, when
// await.sh has started its first `sleep` between polls. The file is made whole in a temp file and
// then renamed into place (as an atomic writer does) or linked (as wcomm notify does).
func (b *bxBench) benchWake() {
	b.wake("", b.n(100, 10), "rename", "link", "foreign")
	b.params = append(b.params, fmt.Sprintf("await wake-up: from the rename (or link) of the response file, or the close of a foreign writer's file, to the waiting process's exit, as seen by its parent; %d processes on the machine", bxProcs()))
}

// wake measures await wake-ups reps times, by rename and by link (or only by link), in a fresh
// session folder; suffix ends the rows' names.
func (b *bxBench) wake(suffix string, reps int, modes ...string) {
	b.wakeSeq++
	name := fmt.Sprintf("20260101-000000-o%d-w%d", 900+2*b.wakeSeq, 901+2*b.wakeSeq)
	dir := filepath.Join(b.s.root, name)
	require.NoError(b.t, os.MkdirAll(dir, 0o700))
	refDir := filepath.Join(b.refRoot, name)
	require.NoError(b.t, os.MkdirAll(refDir, 0o700))
	sn, err := messages.ParseSessionName(name)
	require.NoError(b.t, err)
	sess := sn
	seq := 1

	// newExchange writes request seq into dir and returns its id and response path.
	newExchange := func(dir string) (string, string) {
		id := fmt.Sprintf("20260101-000000-%04x", seq)
		resp := filepath.Join(dir, messages.SeqFileName(seq+1, messages.KindResponse))
		req := messages.Request{
			Header: messages.RequestHeader{Capability: messages.ReadOnly, ID: id, StartedAt: sess.StartedAt,
				Orchestrator: sess.Orchestrator, Worker: sess.Worker, Bytes: -1},
			Body:         "wake me up",
			Instructions: messages.Instructions{ResponsePath: resp, Fallback: messages.FallbackCommand(sess, resp)},
		}
		require.NoError(b.t, os.WriteFile(filepath.Join(dir, messages.SeqFileName(seq, messages.KindRequest)), []byte(messages.FormatRequest(req)), 0o600))
		seq += 2
		return id, resp
	}
	publish := func(id, resp, mode string, pause bool) time.Time {
		data := messages.FormatResponse(messages.Response{Header: messages.ResponseHeader{ID: id, StartedAt: sess.StartedAt,
			Orchestrator: sess.Orchestrator, Worker: sess.Worker, RequestBytes: -1}, Body: "awake\n"})
		if mode == "foreign" {
			// A foreign writer, as `cat > file` is: the file exists, grows, and is whole only
			// when the writer closes it. The clock starts at the close.
			f, err := os.OpenFile(resp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			require.NoError(b.t, err)
			half := len(data) / 2
			_, err = f.WriteString(data[:half])
			require.NoError(b.t, err)
			if pause {
				// The writer is still writing: a reader must not take half a file. (Not for the
				// reference, whose await.sh takes any non-empty file: it would print half.)
				time.Sleep(5 * time.Millisecond)
			}
			_, err = f.WriteString(data[half:])
			require.NoError(b.t, err)
			t0 := time.Now()
			require.NoError(b.t, f.Close())
			return t0
		}
		tmp := filepath.Join(filepath.Dir(resp), ".tmp-bench")
		require.NoError(b.t, os.WriteFile(tmp, []byte(data), 0o600))
		t0 := time.Now()
		if mode == "link" {
			require.NoError(b.t, os.Link(tmp, resp))
			require.NoError(b.t, os.Remove(tmp))
		} else {
			require.NoError(b.t, os.Rename(tmp, resp))
		}
		return t0
	}
	wake := func(argv []string, env []string, ready func(pid int) bool, id, resp, mode string, pause bool) time.Duration {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		require.NoError(b.t, cmd.Start())
		waitFor(b.t, 20*time.Second, func() bool { return ready(cmd.Process.Pid) }, "the waiter to wait")
		t0 := publish(id, resp, mode, pause)
		err := cmd.Wait()
		d := time.Since(t0)
		require.NoError(b.t, err)
		require.Contains(b.t, stdout.String(), "awake")
		return d
	}
	for _, mode := range modes {
		how := map[string]string{"rename": "rename, as wcomm notify publishes", "link": "link(2), the publish fallback without renameat2",
			"foreign": "a foreign writer's `cat > file`"}[mode]
		wc := measure(reps, 0, func() time.Duration {
			id, resp := newExchange(dir)
			x := &exchange.Exchange{Dir: dir, Seq: seq - 2}
			lock := awaitLockIn(x.Dir, x.Seq)
			return wake(b.s.wcommArgv("await", resp, "--timeout", "60s"), cleanEnv(), func(pid int) bool {
				// Holding the lock, it is waiting: it polls for the first seconds, then watches.
				return flocked(lock)
			}, id, resp, mode, true)
		})
		rf := measure(reps, 0, func() time.Duration {
			id, resp := newExchange(refDir)
			return wake([]string{"bash", filepath.Join(b.refDir, "await.sh"), resp, "60"}, append(cleanEnv(), "REF_TMUX_SOCKET="+b.s.sock),
				bxSleeping, id, resp, mode, false)
		})
		b.rowFloor("await wake-up ("+how+")"+suffix, "time", bxMedian(wc), bxMedian(rf), 0.050, "the reference's poll period", fmt.Sprintf("%d / %d", len(wc), len(rf)))
	}
}

// bxSleeping reports whether process pid has a `sleep` child: await.sh between two polls (its
// other children, command substitutions, run before the loop).
func bxSleeping(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return false
	}
	for _, c := range strings.Fields(string(data)) {
		comm, err := os.ReadFile("/proc/" + c + "/comm")
		if err == nil && strings.TrimSpace(string(comm)) == "sleep" {
			return true
		}
	}
	return false
}

// ---------------------------------------------------------------------------------------------
// history

// benchHistory lists a root of 10,000 exchanges (100 session folders of 100 answered exchanges,
// with their delivery logs), generated directly on disk.
func (b *bxBench) benchHistory() {
	root := b.historyRoot()
	const sessions, per = bxHistorySessions, bxHistoryPer
	at := bxHistoryAt
	// The floor: every file under the root read once, by cat, in the same run; not the history's
	// index (.history), which only wcomm reads.
	catAll := func() time.Duration {
		return b.must(sxExec(5*time.Minute, cleanEnv(), nil, "sh", "-c", `find "$1" -name .history -prune -o -type f -exec cat {} + >/dev/null`, "sh", root)).Took
	}
	var size int
	var wc, fl []time.Duration
	// The two rows held to a bound take at least 6 and 4 turns at any scale (3 and 2 before: a
	// full run at scale 0.3 measured the first at 0.32, and 10 turns alone right after at 0.17).
	measure(b.n(10, 6), 0, func() time.Duration {
		out := b.must(sxExec(5*time.Minute, cleanEnv(), nil, b.s.bin, "history", "--root", root, "--json"))
		size = len(out.Stdout)
		require.Equal(b.t, sessions*per, strings.Count(out.Stdout, `"status": "answered"`), "every exchange listed as answered")
		wc = append(wc, out.Took)
		fl = append(fl, catAll())
		return out.Took
	})
	b.rowFloor("history --json, 10,000 exchanges", "time", bxMedian(wc[1:]), math.NaN(), bxMedian(fl[1:]), "cat of every file", fmt.Sprintf("%d / —", len(wc)-1))
	// The first history after the index is lost reads every file and writes the index again.
	wc, fl = nil, nil
	measure(b.n(3, 3), 0, func() time.Duration {
		require.NoError(b.t, os.RemoveAll(filepath.Join(root, ".history")))
		out := b.must(sxExec(5*time.Minute, cleanEnv(), nil, b.s.bin, "history", "--root", root, "--json"))
		require.Equal(b.t, size, len(out.Stdout), "the same listing without the index")
		wc = append(wc, out.Took)
		fl = append(fl, catAll())
		return out.Took
	})
	b.rowFloor("history --json, 10,000 exchanges, no index (rebuilt)", "time", bxMedian(wc), math.NaN(), bxMedian(fl), "cat of every file", fmt.Sprintf("%d / —", len(wc)))

	wc, fl = nil, nil
	measure(b.n(10, 3), 0, func() time.Duration {
		out := b.must(sxExec(5*time.Minute, cleanEnv(), nil, b.s.bin, "history", "--root", root))
		require.Equal(b.t, sessions*per, strings.Count(out.Stdout, "  answered  "), "every exchange listed as answered")
		wc = append(wc, out.Took)
		fl = append(fl, catAll())
		return out.Took
	})
	b.rowFloor("history, 10,000 exchanges", "time", bxMedian(wc[1:]), math.NaN(), bxMedian(fl[1:]), "cat of every file", fmt.Sprintf("%d / —", len(wc)-1))

	// One session and one id, among 100 sessions and alone: the floor is the same command in a
	// root that holds only that session. The newest exchange of the oldest session is the worst
	// case of a scan by time stamp: every other session started before its id.
	alone := filepath.Join(b.s.work, "history-alone")
	first := messages.Session{StartedAt: at.Format(messages.StampLayout), Orchestrator: "%0", Worker: "%1000"}
	require.NoError(b.t, os.MkdirAll(alone, 0o700))
	b.genHistorySession(alone, 0)
	newest := fmt.Sprintf("%s-%04x", first.StartedAt, per-1)
	late := at.Add(time.Duration(sessions) * time.Minute).Format(messages.StampLayout)
	// Its id is dated after every session's start, as a long-lived session's late request is.
	for _, r := range []string{root, alone} {
		b.redate(filepath.Join(r, first.Name()), 2*per-1, newest, late+"-ffff")
		require.NoError(b.t, exchange.RecordID(r, late+"-ffff", first.Name(), 2*per-1))
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"history SESSION, 1 of 100 sessions", []string{"history", first.Name(), "--json"}, first.Name()},
		{"show ID, newest exchange of the oldest of 100 sessions", []string{"show", "--json", late + "-ffff"}, late + "-ffff"},
	} {
		wc, fl = nil, nil
		measure(b.n(20, 5), 0, func() time.Duration {
			argv := func(r string) []string { return append(append([]string{b.s.bin}, c.args...), "--root", r) }
			out := b.must(sxExec(time.Minute, cleanEnv(), nil, argv(root)...))
			require.Contains(b.t, out.Stdout, c.want)
			fa := b.must(sxExec(time.Minute, cleanEnv(), nil, argv(alone)...))
			require.Contains(b.t, fa.Stdout, c.want)
			require.Equal(b.t, strings.Count(out.Stdout, `"seq"`), strings.Count(fa.Stdout, `"seq"`), "the same exchanges either way")
			wc, fl = append(wc, out.Took), append(fl, fa.Took)
			return out.Took
		})
		b.rowFloor(c.name, "time", bxMedian(wc[1:]), math.NaN(), bxMedian(fl[1:]), "the same, 1 session in all", fmt.Sprintf("%d / —", len(wc)-1))
	}
	b.params = append(b.params, fmt.Sprintf("history: %d session folders × %d answered exchanges, each with its delivery log; %.1f MiB of JSON printed; cat reads the same %d files through find -exec (not the index); the first listing of each row is not counted (it writes the index, which the rebuilt row measures)", sessions, per, float64(size)/(1<<20), sessions*(3*per+1)))
}

// The history root: 100 session folders of 100 answered exchanges each, with their delivery logs.
const bxHistorySessions, bxHistoryPer = 100, 100

var bxHistoryAt = time.Date(2026, 1, 17, 12, 0, 0, 0, time.UTC)

// historyRoot generates the history root on disk once and returns it (the history rows and the
// console's first screen read the same root).
func (b *bxBench) historyRoot() string {
	root := filepath.Join(b.s.work, "history-root")
	if _, err := os.Stat(root); err == nil {
		return root
	}
	require.NoError(b.t, os.MkdirAll(root, 0o700))
	for i := 0; i < bxHistorySessions; i++ {
		b.genHistorySession(root, i)
	}
	return root
}

func (b *bxBench) genHistorySession(root string, i int) {
	const per = bxHistoryPer
	at := bxHistoryAt
	s := messages.Session{StartedAt: at.Add(time.Duration(i) * time.Minute).Format(messages.StampLayout),
		Orchestrator: messages.PaneID(fmt.Sprintf("%%%d", i)), Worker: messages.PaneID(fmt.Sprintf("%%%d", i+1000))}
	dir := filepath.Join(root, s.Name())
	require.NoError(b.t, os.Mkdir(dir, 0o700))
	meta, _ := json.Marshal(exchange.SessionMeta{Server: "1-1", Orchestrator: s.Orchestrator, Worker: s.Worker, StartedAt: s.StartedAt, Created: at})
	require.NoError(b.t, os.WriteFile(filepath.Join(dir, ".wcomm-session.json"), meta, 0o600))
	for k := 0; k < per; k++ {
		n := 2*k + 1
		id := fmt.Sprintf("%s-%04x", s.StartedAt, k)
		body := fmt.Sprintf("request %d of session %d: review the change in pkg/%d and list what breaks\nmore detail on a second line\n", k, i, k)
		size, sum := messages.BodySum([]byte(body))
		resp := filepath.Join(dir, messages.SeqFileName(n+1, messages.KindResponse))
		req := messages.Request{Header: messages.RequestHeader{Capability: messages.ReadOnly, ID: id, StartedAt: s.StartedAt,
			Orchestrator: s.Orchestrator, Worker: s.Worker, Bytes: size, Sum: sum}, Body: body,
			Instructions: messages.Instructions{ResponsePath: resp, Notify: "wcomm notify --response " + resp + " --file ANSWER.md", Fallback: messages.FallbackCommand(s, resp)}}
		require.NoError(b.t, os.WriteFile(filepath.Join(dir, messages.SeqFileName(n, messages.KindRequest)), []byte(messages.FormatRequest(req)), 0o600))
		answer := messages.Response{Header: messages.ResponseHeader{ID: id, StartedAt: s.StartedAt, Orchestrator: s.Orchestrator,
			Worker: s.Worker, RequestBytes: size, RequestSum: sum}, Body: fmt.Sprintf("All good for request %d.\nDELTA:\n  changes: [pkg/%d]\n  risks: []\n  alternatives: []\n  needs_consult: no\n", k, k)}
		require.NoError(b.t, os.WriteFile(resp, []byte(messages.FormatResponse(answer)), 0o600))
		var log bytes.Buffer
		for j, st := range []string{exchange.StateWritten, exchange.StatePasted, exchange.StateSubmitted, exchange.StateAnswered, exchange.StateAwaitWoken} {
			ev, _ := json.Marshal(exchange.Event{State: st, At: at.Add(time.Duration(j) * time.Millisecond), Detail: map[string]string{"pane": string(s.Worker)}})
			log.Write(append(ev, '\n'))
		}
		require.NoError(b.t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%03d-delivery.jsonl", n)), log.Bytes(), 0o600))
		// Where send records each id (a hint show checks against the request's header).
		require.NoError(b.t, exchange.RecordID(root, id, s.Name(), n))
	}
}

// redate rewrites request n of a session folder under another id, as if it had been sent later.
func (b *bxBench) redate(dir string, n int, from, to string) {
	path := filepath.Join(dir, messages.SeqFileName(n, messages.KindRequest))
	data, err := os.ReadFile(path)
	require.NoError(b.t, err)
	require.NoError(b.t, os.WriteFile(path, []byte(strings.Replace(string(data), "id="+from+" ", "id="+to+" ", 1)), 0o600))
	resp := filepath.Join(dir, messages.SeqFileName(n+1, messages.KindResponse))
	data, err = os.ReadFile(resp)
	require.NoError(b.t, err)
	require.NoError(b.t, os.WriteFile(resp, []byte(strings.Replace(string(data), "id="+from+" ", "id="+to+" ", 1)), 0o600))
}

// ---------------------------------------------------------------------------------------------
// memory

// benchMemory reports the peak resident set (getrusage's ru_maxrss of the process and the
// children it waited for) of one send, one answer and one await of a 10 MB message.
func (b *bxBench) benchMemory() {
	sess := "mem"
	orch := b.session(sess, "cat")
	sink := b.s.window(sess, nil, "cat")
	big := bxBody(10<<20, "a 10 MB message")
	msg := b.file("big.md", big)
	const reps = 3
	rss := func(outs []sxOut) float64 {
		kib := make([]int64, len(outs))
		for i, o := range outs {
			kib[i] = o.RSSKiB
		}
		sort.Slice(kib, func(i, j int) bool { return kib[i] < kib[j] })
		return float64(kib[(len(kib)-1)/2])
	}
	timeBin, err := exec.LookPath("time")
	if err != nil {
		b.params = append(b.params, "memory: not measured: GNU time (/usr/bin/time) is not installed")
		return
	}
	// The child's own ru_maxrss is no good here: a child forked from this (large) test process
	// inherits its high-water mark at exec. GNU time forks from a small process and reports its
	// child's ru_maxrss, which covers the command and every child it waited for.
	peak := func(env []string, argv ...string) sxOut {
		f := filepath.Join(b.s.work, "maxrss")
		out := b.must(sxExec(5*time.Minute, env, nil, append([]string{timeBin, "-f", "%M", "-o", f}, argv...)...))
		data, err := os.ReadFile(f)
		require.NoError(b.t, err)
		lines := strings.Fields(string(data))
		require.NotEmpty(b.t, lines)
		out.RSSKiB, err = strconv.ParseInt(lines[len(lines)-1], 10, 64)
		require.NoError(b.t, err)
		return out
	}
	var wsend, wnotify, wawait, rsend, rrespond, rawait []sxOut
	for i := 0; i < reps; i++ {
		out := peak(cleanEnv(), b.s.wcommArgv("send", "--to", sink, "--from", orch, "--enter-delay", "0", "--json", "--file", msg)...)
		wsend = append(wsend, out)
		var x exchange.Exchange
		require.NoError(b.t, json.Unmarshal([]byte(out.Stdout), &x))
		require.Equal(b.t, "pointer", x.Form)
		wnotify = append(wnotify, peak(cleanEnv(), b.s.wcommArgv("notify", "--response", x.ResponsePath, "--enter-delay", "0", "--file", msg)...))
		out = peak(cleanEnv(), b.s.wcommArgv("await", x.ID, "--timeout", "60s")...)
		require.Equal(b.t, len(sxTrimNL(string(big))), len(sxTrimNL(out.Stdout)))
		wawait = append(wawait, out)
	}
	// The reference pastes all 10 MB into the pane; one of each is enough.
	out := peak(b.refEnv(orch, "0"), "bash", filepath.Join(b.refDir, "send.sh"), sink, msg)
	rsend = append(rsend, out)
	resp := ""
	for _, l := range strings.Split(out.Stdout, "\n") {
		if v, ok := strings.CutPrefix(l, "response_file="); ok {
			resp = v
		}
	}
	require.NotEmpty(b.t, resp)
	rrespond = append(rrespond, peak(b.refEnv(orch, "0"), "bash", filepath.Join(b.refDir, "respond.sh"), sxRequestFor(resp), msg))
	rawait = append(rawait, peak(append(cleanEnv(), "REF_TMUX_SOCKET="+b.s.sock), "bash", filepath.Join(b.refDir, "await.sh"), resp, "60"))
	three := 3 * float64(len(big)) / 1024
	b.rowFloor("peak RSS: send 10 MB", "mem", rss(wsend), rss(rsend), three, "3 × the message", fmt.Sprintf("%d / %d", len(wsend), len(rsend)))
	b.rowFloor("peak RSS: answer 10 MB (notify / respond.sh)", "mem", rss(wnotify), rss(rrespond), three, "3 × the message", fmt.Sprintf("%d / %d", len(wnotify), len(rrespond)))
	b.rowFloor("peak RSS: await 10 MB", "mem", rss(wawait), rss(rawait), three, "3 × the message", fmt.Sprintf("%d / %d", len(wawait), len(rawait)))
	b.params = append(b.params, "memory: GNU time's maximum resident set of the command and every child it waited for (for the scripts: the largest of bash, tmux, cat, ...); wcomm delivers a 10 MB request as a one-line pointer to its file, the reference pastes it whole")
}
