//go:build bench

package cli

// The floor of a round trip, measured beside wcomm in the same run (WCOMM_BENCH_ONLY=floor).
//
// The floor does the durable work of one exchange and nothing else: the orchestrator writes the
// request (a temp file, fsync, rename), sends one line to a tmux control client it keeps open (load
// the file into a buffer; if the pane is dead, has input off, is in a mode or runs another process,
// drop it; else paste and press Enter), and waits for the response's rename with inotify. The
// worker, a small program in the pane reading its terminal, writes the response the same way and
// pastes a RESPONSE line back into the orchestrator's pane through its own control client. Every
// guarantee a wcomm exchange keeps on the wire is kept; what wcomm does beyond it (its logs, its
// outbox, its profiles, its process starts) is what the ratios show.
//
// The floor, the MCP route and the commands route take turns, block by block, so each round's
// ratio compares figures from the same phase of the machine.

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func init() { sxMoreHelpers["floor"] = bfWorkerMain }

// bfGuard is the server-side guard of a paste: true when the pane must not receive it.
const bfGuard = "#{||:#{pane_dead},#{||:#{pane_input_off},#{||:#{pane_in_mode},#{!=:#{pane_pid},%d}}}}"

// bfPasteLine is the one control line of a guarded delivery: load (a command that fills buffer
// buf), then the guard, then paste and Enter; a refusal prints "refused".
func bfPasteLine(load, buf, pane string, panePID int) string {
	guard := fmt.Sprintf(bfGuard, panePID)
	return fmt.Sprintf("%s ; if-shell -F -t %s '%s' 'delete-buffer -b %s ; display -p refused' 'paste-buffer -d -p -b %s -t %s ; send-keys -t %s Enter'",
		load, pane, guard, buf, buf, pane, pane)
}

// bfPublish writes data to path as a durable writer does: a temp file, fsync, rename.
func bfPublish(path string, data []byte) error {
	tmp := path + ".part"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// bfControl is a tmux control-mode client kept open for the whole run.
type bfControl struct {
	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	n   int
}

func bfAttach(sock, sess string) (*bfControl, error) {
	cmd := exec.Command("tmux", "-S", sock, "-C", "attach-session", "-f", "ignore-size,no-output", "-t", sess)
	cmd.Env = cleanEnv()
	in, out, err := startPiped(cmd)
	if err != nil {
		return nil, err
	}
	c := &bfControl{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}
	if _, err := c.run("display -p hello"); err != nil {
		return nil, err
	}
	return c, nil
}

// run sends line and a marker, and returns what the line's commands printed, read up to the
// marker's block.
func (c *bfControl) run(line string) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	mark := "bf-mark-" + strconv.Itoa(c.n)
	if _, err := io.WriteString(c.in, line+" ; display -p "+mark+"\n"); err != nil {
		return nil, err
	}
	var printed []string
	inBlock, done := false, false
	for {
		l, err := c.out.ReadString('\n')
		if err != nil {
			return printed, fmt.Errorf("control client: %w", err)
		}
		l = strings.TrimSuffix(l, "\n")
		switch {
		case strings.HasPrefix(l, "%begin "):
			inBlock = true
		case strings.HasPrefix(l, "%end ") || strings.HasPrefix(l, "%error "):
			if done {
				return printed, nil
			}
			inBlock = false
		case !inBlock:
		case l == mark:
			done = true
		default:
			printed = append(printed, l)
		}
	}
}

func (c *bfControl) close() {
	_ = c.in.Close()
	_ = c.cmd.Wait()
}

// bfInotify waits for names renamed into one folder.
type bfInotify struct{ fd int }

func bfWatch(dir string) (*bfInotify, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if _, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_MOVED_TO); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return &bfInotify{fd: fd}, nil
}

// wait returns once name has been renamed into the folder, or fails after a minute (a floor that
// lost a message must fail the run, not hang it).
func (w *bfInotify) wait(name string) error {
	var buf [4096]byte
	deadline := time.Now().Add(time.Minute)
	for {
		fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("floor: no %s within a minute", name)
		}
		if _, err := unix.Poll(fds, int(left.Milliseconds())+1); err != nil && err != unix.EINTR {
			return err
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			continue
		}
		n, err := syscall.Read(w.fd, buf[:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			raw := buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
			off += syscall.SizeofInotifyEvent + int(ev.Len)
			if strings.TrimRight(string(raw), "\x00") == name {
				return nil
			}
		}
	}
}

// bfPair is one orchestrator of the floor and the worker pane it talks to.
type bfPair struct {
	ctl       *bfControl
	ino       *bfInotify
	dir, tag  string
	worker    string
	workerPID int
	seq       int
	body      []byte
}

func (p *bfPair) trip() time.Duration {
	start := time.Now()
	p.seq++
	id := fmt.Sprintf("%s-%d", p.tag, p.seq)
	respName := fmt.Sprintf("%06d-response.md", p.seq)
	resp := filepath.Join(p.dir, respName)
	req := filepath.Join(p.dir, fmt.Sprintf("%06d-request.md", p.seq))
	data := append([]byte("FLOOR-BEGIN "+id+" "+resp+"\n"), p.body...)
	if !strings.HasSuffix(string(p.body), "\n") {
		data = append(data, '\n')
	}
	data = append(data, "FLOOR-END "+id+"\n"...)
	if err := bfPublish(req, data); err != nil {
		panic(err)
	}
	buf := "bfq-" + id
	out, err := p.ctl.run(bfPasteLine("load-buffer -b "+buf+" "+req, buf, p.worker, p.workerPID))
	if err != nil || len(out) > 0 {
		panic(fmt.Sprintf("floor paste: %v %v", err, out))
	}
	if err := p.ino.wait(respName); err != nil {
		panic(err)
	}
	got, err := os.ReadFile(resp)
	if err != nil || !strings.HasPrefix(string(got), "ack "+id+"\n") {
		panic(fmt.Sprintf("floor response %s: %v %.60q", id, err, got))
	}
	return time.Since(start)
}

// bfWorkerMain is the floor's worker, a helper in a pane: SOCKET SESSION ORCH-PANE ORCH-PID.
func bfWorkerMain(args []string, ready func()) int {
	if len(args) < 4 {
		return 2
	}
	orchPID, _ := strconv.Atoi(args[3])
	ctl, err := bfAttach(args[0], args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ready()
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var id, resp string
	var body []byte
	for n := 0; sc.Scan(); {
		line := strings.TrimRight(sc.Text(), "\r")
		if i := strings.Index(line, "FLOOR-BEGIN "); i >= 0 {
			if f := strings.Fields(line[i:]); len(f) == 3 {
				id, resp, body = f[1], f[2], body[:0]
			}
			continue
		}
		if id == "" {
			continue
		}
		if line != "FLOOR-END "+id {
			body = append(append(body, line...), '\n')
			continue
		}
		if err := bfPublish(resp, append([]byte("ack "+id+"\n"), body...)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		n++
		buf := fmt.Sprintf("bfr-%d-%d", os.Getpid(), n)
		if _, err := ctl.run(bfPasteLine("set-buffer -b "+buf+" 'RESPONSE "+id+"'", buf, args[2], orchPID)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		id = ""
	}
	return 0
}

// floorPairs opens n floor pairs, each in a session of its own with a `cat` as the orchestrator's
// pane (it receives the RESPONSE lines) and the worker helper.
func (b *bxBench) floorPairs(name string, n int, body []byte) []*bfPair {
	var out []*bfPair
	for k := range n {
		sess := fmt.Sprintf("%s%d", name, k)
		b.session(sess, "sleep", "86400")
		orch := b.s.window(sess, nil, "cat")
		orchPID := b.s.panePID(orch)
		log := b.s.file("floor")
		worker := b.s.helper(sess, nil, "floor", log, b.s.sock, sess, orch, strconv.Itoa(orchPID))
		dir := filepath.Join(b.s.work, "floor", sess)
		require.NoError(b.t, os.MkdirAll(dir, 0o700))
		ctl, err := bfAttach(b.s.sock, sess)
		require.NoError(b.t, err)
		b.t.Cleanup(ctl.close)
		ino, err := bfWatch(dir)
		require.NoError(b.t, err)
		b.t.Cleanup(func() { syscall.Close(ino.fd) })
		out = append(out, &bfPair{ctl: ctl, ino: ino, dir: dir, tag: sess, worker: worker, workerPID: b.s.panePID(worker), body: body})
	}
	return out
}

// ---------------------------------------------------------------------------------------------
// CPU per trip

// bfCPU counts the CPU time of everything a round trip runs: this process (the driver, and the
// floor's orchestrator), its children (the MCP servers, the commands), the tmux server and every
// process in its panes. With a cpuacct cgroup (v1) it is the cgroup's counter, in nanoseconds;
// without one, the clock ticks of /proc/PID/stat over those processes' trees, with their reaped
// children's times, which the kernel adds to the parent that waits for them.
type bfCPU struct {
	cgroup string // the cgroup's folder, "" when none could be made
	roots  []int
	how    string
}

func (b *bxBench) cpuMeter() *bfCPU {
	m := &bfCPU{roots: []int{os.Getpid(), b.s.pid}}
	const base = "/sys/fs/cgroup/cpuacct"
	dir := filepath.Join(base, fmt.Sprintf("wcomm-bench-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o700); err == nil {
		moved := true
		for _, pid := range m.roots {
			if os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o600) != nil {
				moved = false
			}
		}
		b.t.Cleanup(func() {
			// Everything in it goes back to the root cgroup, so the folder can go.
			data, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			for _, pid := range strings.Fields(string(data)) {
				_ = os.WriteFile(filepath.Join(base, "cgroup.procs"), []byte(pid), 0o600)
			}
			_ = os.Remove(dir)
		})
		if moved {
			m.cgroup = dir
			m.how = "a cpuacct cgroup (v1) holding this driver, the tmux server and every process they start (cpuacct.usage)"
			return m
		}
	}
	m.how = "no cpuacct cgroup could be made: the clock ticks (10 ms) of /proc/PID/stat of the driver, the tmux server and their descendants, with their reaped children's times"
	return m
}

// bfTicks is a snapshot of the trees' processes: pid → user+system time, own and reaped children's.
type bfTicks map[int]float64

func (m *bfCPU) snapshot() (bfTicks, float64) {
	if m.cgroup != "" {
		data, _ := os.ReadFile(filepath.Join(m.cgroup, "cpuacct.usage"))
		ns, _ := strconv.ParseFloat(strings.TrimSpace(string(data)), 64)
		return nil, ns / 1e9
	}
	ents, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	ticks := bfTicks{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(f) < 15 {
			continue
		}
		parent[pid], _ = strconv.Atoi(f[1])
		var t float64
		for _, i := range []int{11, 12, 13, 14} { // utime stime cutime cstime
			v, _ := strconv.ParseFloat(f[i], 64)
			t += v
		}
		ticks[pid] = t
	}
	in := bfTicks{}
	for pid, t := range ticks {
		for p, hops := pid, 0; p > 1 && hops < 64; p, hops = parent[p], hops+1 {
			if p == m.roots[0] || p == m.roots[1] {
				in[pid] = t
				break
			}
		}
	}
	return in, 0
}

// used is the CPU seconds between two snapshots: what live processes gained, less what the
// processes gone since had at the first (their whole time is now in their parent's).
func (m *bfCPU) used(t0 bfTicks, s0 float64, t1 bfTicks, s1 float64) float64 {
	if m.cgroup != "" {
		return s1 - s0
	}
	var d float64
	for pid, t := range t1 {
		d += t - t0[pid]
	}
	for pid, t := range t0 {
		if _, ok := t1[pid]; !ok {
			d -= t
		}
	}
	return d / 100
}

// ---------------------------------------------------------------------------------------------
// The rows

// bfBlock is one block of trips of one route: its time per trip (wall / trips), CPU per trip.
type bfBlock struct{ perTrip, cpu float64 }

func (b *bxBench) benchFloor() {
	// A private server and root of the section's own, as the outside harness runs the floor and
	// wcomm's routes: the bench's server still holds what the sections before left (the find
	// rows' 260 panes, the trip rows' pairs and servers), which is not what the bounds are
	// measured in. And the root's resident starts inside the CPU meter's cgroup: in the shared
	// root it had been started by a section before, outside it, and the CPU rows left out its
	// work (for the commands route, the engine's whole work, about 3.5 ms a trip).
	shared := b.s
	b.s = sxNew(b.t)
	defer func() {
		b.s.killServer(false)
		b.s = shared
	}()
	body := bxBody(1<<10, "round trip: answer with ack")
	msg := b.file("floor-trip.md", body)
	meter := b.cpuMeter()
	// At least 5 rounds of 100 whatever the scale: the rows' ratios are medians of the rounds', and
	// at 0.3 (3 rounds of 60) a run's ratio moved by a fifth from one run to the next, its rounds
	// by a third (one round 2.02 among 1.29 and 1.41).
	n := max(b.n(200, 20), 100)
	// A block of 8 pairs takes at least 400 trips, 50 a pair, whatever the scale: at 60 trips the
	// floor's block lasted about 60 ms, most of it its pairs' start and the slowest one's last
	// trips, and its rate moved by a fifth between runs.
	n8 := max(n, 400)
	rounds := max(5, int(math.Round(5*b.scale)))

	floor1 := b.floorPairs("floor", 1, body)
	floor8 := b.floorPairs("floor8-", 8, body)
	mcp1, mc1 := b.mcpPairs("fmcp", 1)
	mcp8, mc8 := b.mcpPairs("fmcp8", 8)
	cmd1 := b.pairs("fcmd", 1, "wcomm", "0s", bxResident...)
	mcpBody := string(body)

	floorTrip := func(ps []*bfPair, total int) func() ([]time.Duration, time.Duration) {
		return func() ([]time.Duration, time.Duration) {
			var mu sync.Mutex
			var lat []time.Duration
			var wg sync.WaitGroup
			start := time.Now()
			for i, p := range ps {
				k := total / len(ps)
				if i < total%len(ps) {
					k++
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range k {
						d := p.trip()
						mu.Lock()
						lat = append(lat, d)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			return lat, time.Since(start)
		}
	}
	routes := []struct {
		name  string
		trips int // in a block
		run   func() ([]time.Duration, time.Duration)
	}{
		{"floor", n, floorTrip(floor1, n)},
		{"mcp", n, func() ([]time.Duration, time.Duration) {
			return trips(mcp1, n, func(p bxPair) time.Duration { return mc1[p.orch].trip(p, mcpBody) })
		}},
		{"cmd", n, func() ([]time.Duration, time.Duration) {
			return trips(cmd1, n, func(p bxPair) time.Duration { return b.wcommTrip(p, msg, "0") })
		}},
		{"starts", n, func() ([]time.Duration, time.Duration) {
			// two `wcomm version` one after the other, as many times as the other blocks' trips
			var lat []time.Duration
			start := time.Now()
			for range n {
				t0 := time.Now()
				for range 2 {
					if out := b.s.wcomm(nil, "version"); out.Code != 0 {
						panic(fmt.Sprintf("wcomm version failed: %s", out))
					}
				}
				lat = append(lat, time.Since(t0))
			}
			return lat, time.Since(start)
		}},
		{"floor8", n8, floorTrip(floor8, n8)},
		{"mcp8", n8, func() ([]time.Duration, time.Duration) {
			return trips(mcp8, n8, func(p bxPair) time.Duration { return mc8[p.orch].trip(p, mcpBody) })
		}},
	}
	// Warm-up: each route's first folder, page cache, the servers' first engine.
	floorTrip(floor1, n)()
	for _, p := range mcp8 {
		mc8[p.orch].trip(p, mcpBody)
	}
	mc1[mcp1[0].orch].trip(mcp1[0], mcpBody)
	b.wcommTrip(cmd1[0], msg, "0")

	blocks := map[string][]bfBlock{}
	for r := range rounds {
		for i := range routes {
			rt := routes[(i+r)%len(routes)] // each round starts with another route
			t0, s0 := meter.snapshot()
			_, wall := rt.run()
			t1, s1 := meter.snapshot()
			k := float64(rt.trips)
			blocks[rt.name] = append(blocks[rt.name], bfBlock{perTrip: wall.Seconds() / k, cpu: meter.used(t0, s0, t1, s1) / k})
		}
	}
	med := func(name string, f func(bfBlock) float64) float64 {
		var v []float64
		for _, bl := range blocks[name] {
			v = append(v, f(bl))
		}
		sort.Float64s(v)
		return v[len(v)/2]
	}
	// perRound is a route's ratio to its floor in each round, sorted: its median is the row's
	// ratio, its range the row's "per round", so one round's noise shows.
	perRound := func(name string, floor func(r int) float64, f func(bfBlock) float64) []float64 {
		var v []float64
		for r, bl := range blocks[name] {
			v = append(v, f(bl)/floor(r))
		}
		sort.Float64s(v)
		return v
	}
	spread := func(v []float64) string { return fmt.Sprintf("%.2f-%.2f", v[0], v[len(v)-1]) }
	tm := func(bl bfBlock) float64 { return bl.perTrip }
	cp := func(bl bfBlock) float64 { return bl.cpu }
	of := func(name string, f func(bfBlock) float64) func(int) float64 {
		return func(r int) float64 { return f(blocks[name][r]) }
	}
	plusStarts := func(f func(bfBlock) float64) func(int) float64 {
		return func(r int) float64 { return f(blocks["floor"][r]) + f(blocks["starts"][r]) }
	}
	reps := fmt.Sprintf("%d rounds of %d", rounds, n)
	reps8 := fmt.Sprintf("%d rounds of %d", rounds, n8)
	// row gives the medians of the route and of its floor, and as their ratio the median of the
	// rounds' ratios (bxRow.ratio).
	row := func(op, kind string, wc, floor float64, what, name, count, each string, fl func(int) float64, f func(bfBlock) float64) {
		v := perRound(name, fl, f)
		b.rowFloor(op, kind, wc, math.NaN(), floor, what, fmt.Sprintf("%s; %s %s", count, each, spread(v)))
		b.rows[len(b.rows)-1].ratio = v[len(v)/2]
	}
	fl, st := med("floor", tm), med("starts", tm)
	flc, stc := med("floor", cp), med("starts", cp)
	row("round trip 1 KiB, sequential, MCP tools: time per trip", "time", med("mcp", tm), fl, "the floor", "mcp", reps, "per round", of("floor", tm), tm)
	row("round trip 1 KiB, sequential, MCP tools: CPU per trip", "time", med("mcp", cp), flc, "the floor", "mcp", reps, "per round", of("floor", cp), cp)
	row("round trip 1 KiB, sequential, commands (send --wait, notify): time per trip", "time", med("cmd", tm), fl+st,
		"the floor + two `wcomm version`", "cmd", reps, "per round", plusStarts(tm), tm)
	row("round trip 1 KiB, sequential, commands: CPU per trip", "time", med("cmd", cp), flc+stc,
		"the floor + two `wcomm version`", "cmd", reps, "per round", plusStarts(cp), cp)
	rate := func(name string) float64 { return 1 / med(name, tm) }
	row("round trip 1 KiB, 8 pairs, MCP tools: trips a second", "rate", rate("mcp8"), rate("floor8"), "the floor's 8 pairs", "mcp8", reps8, "time per round", of("floor8", tm), tm)
	b.rowFloor("round trip 1 KiB, 8 pairs, MCP tools: trips a second, against the goal", "rate", rate("mcp8"), math.NaN(), 200, "goal", reps8)
	row("round trip 1 KiB, 8 pairs, MCP tools: CPU per trip", "time", med("mcp8", cp), med("floor8", cp), "the floor's 8 pairs", "mcp8", reps8, "per round", of("floor8", cp), cp)
	b.params = append(b.params,
		fmt.Sprintf("the floor: the durable work of one round trip and nothing else (request written and synced, one line to a kept-open tmux control client that loads, guards and pastes with Enter, the worker's synced response and its RESPONSE line pasted back the same way, the inotify wake-up); sequentially %.2f ms and %.2f ms of CPU a trip, two `wcomm version` %.2f ms and %.2f ms of CPU", fl*1e3, flc*1e3, st*1e3, stc*1e3),
		"CPU per trip: "+meter.how,
		"floor rows: the floor, the MCP route, the commands route and two process starts take turns block by block in each round; a row's figures are the medians over the rounds, its wcomm / floor the median of the rounds' ratios, \"per round\" their range; a block of 8 pairs is at least 400 trips")
}

// ---------------------------------------------------------------------------------------------
// The MCP route's pairs (mcpMin, mcpmin_test.go)

// mcpPairs opens n pairs whose orchestrator speaks to its own `wcomm mcp` through mcpMin, with
// Enter delay 0 and the resident on; the worker answers with the notify tool of its own.
func (b *bxBench) mcpPairs(sess string, n int) ([]bxPair, map[string]*mcpMin) {
	b.session(sess, "sleep", "86400")
	pairs := make([]bxPair, n)
	clients := map[string]*mcpMin{}
	for i := range pairs {
		orch := b.s.window(sess, nil, "cat")
		worker, _ := b.s.workerInEnv(sess, "mcp", "0s", bxResident)
		pairs[i] = bxPair{orch: orch, worker: worker, env: bxResident}
		cmd := exec.Command(b.s.bin, "mcp", "-S", b.s.sock, "--root", b.s.root)
		cmd.Env = append(append(cleanEnv(), fmt.Sprintf("TMUX=%s,%d,0", b.s.sock, b.s.pid), "TMUX_PANE="+orch,
			"WCOMM_ENTER_DELAY=0"), bxResident...)
		c, err := startMCPMin(cmd, "wcomm-bench-floor")
		require.NoError(b.t, err)
		b.t.Cleanup(c.close)
		clients[orch] = c
	}
	return pairs, clients
}

// trip is one exchange through the tools, as mcpTrip: send, then await; the worker's notify tool
// answers.
func (c *mcpMin) trip(p bxPair, body string) time.Duration {
	start := time.Now()
	var sent struct {
		ID string `json:"id"`
	}
	if err := c.tool("send", map[string]any{"to": p.worker, "message": body}, &sent); err != nil {
		panic(err)
	}
	var got struct {
		Status   string `json:"status"`
		Response string `json:"response"`
	}
	if err := c.tool("await", map[string]any{"id": sent.ID, "timeout_seconds": 60}, &got); err != nil {
		panic(err)
	}
	if got.Status != "answered" || !strings.HasPrefix(got.Response, "ack "+sent.ID) {
		panic(fmt.Sprintf("mcp round trip %s: %+v", sent.ID, got))
	}
	return time.Since(start)
}

// ---------------------------------------------------------------------------------------------
// find among 40 panes and 1,500 processes

// benchFind40 is the find of the speed goal: an agent named by its argv[0], a direct child of
// the middle one of 40 panes, with the machine holding at least 1,500 processes (sleeps in a
// session of their own make up the difference), against the seed's procedure in turn with it.
// The goal is 150 times faster than the procedure, so the floor column is its time / 150.
func (b *bxBench) benchFind40() {
	const panes, procs = 40, 1500
	// A private server of the section's own holding the 40 panes, as the bar measures:
	// the bench's server still holds the panes of the sections before (the find rows' 260, their
	// processes, and more). Run after them in that server, both finds of wcomm and the minimal
	// find each took 1.4 to 2.3 times as long as when the section ran alone (measured).
	shared := b.s
	b.s = sxNew(b.t)
	defer func() {
		b.s.killServer(false)
		b.s = shared
	}()
	sess := "find40"
	orch := b.session(sess, "sleep", "86400")
	agent := "bxagent40-"
	var target string
	for i := 1; i < panes; i++ {
		if i == panes/2 {
			target = b.s.helper(sess, []string{"SX_AGENT=" + agent}, "agent", filepath.Join(b.s.work, "agentpane-40"))
			continue
		}
		b.s.window(sess, nil, "sleep", "86400")
	}
	if extra := procs - bxProcs(); extra > 0 {
		b.session("load40", "sleep", "86400")
		pane := b.s.helper("load40", nil, "spawn", filepath.Join(b.s.work, "spawn-40"), strconv.Itoa(extra))
		pid := b.s.panePID(pane)
		defer func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }()
	}
	total := bxProcs()
	script, err := filepath.Abs(filepath.Join("..", "..", "testdata", "bench", "ref-find.sh"))
	require.NoError(b.t, err)
	env := append(cleanEnv(), "REF_TMUX_SOCKET="+b.s.sock, "TMUX_PANE="+orch, "REF_FIND_AGENT="+agent)
	reps := b.n(20, 3)
	var wc, rf []time.Duration
	for range reps { // in turn, so both see the same phase of the machine
		out := b.must(b.s.wcomm(nil, "find", "--session", sess, agent))
		require.Equal(b.t, target, strings.TrimSpace(out.Stdout), "wcomm find")
		wc = append(wc, out.Took)
		out = b.must(sxExec(5*time.Minute, env, nil, "bash", script))
		require.Equal(b.t, target, strings.TrimSpace(out.Stdout), "the seed's find_agent_pane")
		rf = append(rf, out.Took)
	}
	b.rowFloor(fmt.Sprintf("find an agent by its argv[0], %d panes, %d processes", panes, total), "time",
		bxMedian(wc), bxMedian(rf), bxMedian(rf)/150, "the reference / 150", fmt.Sprintf("%d / %d, in turn", len(wc), len(rf)))

	// A find of nothing reads every pane's tree and says what runs where; its floor is a minimal
	// program that lists the panes with one tmux call and reads the same trees (goal: within 2x).
	floorBin := filepath.Join(b.s.work, "findfloor")
	build := exec.Command("go", "build", "-o", floorBin, filepath.Join("..", "..", "testdata", "bench", "findfloor"))
	out, err := build.CombinedOutput()
	require.NoError(b.t, err, "%s", out)
	var none, fl []time.Duration
	for range reps {
		out := b.s.wcomm(nil, "find", "--session", sess, "bxnobody40-")
		require.Equal(b.t, 4, out.Code, "wcomm find of nothing: %s", out)
		none = append(none, out.Took)
		out = sxExec(time.Minute, cleanEnv(), nil, floorBin, b.s.sock, sess, "bxnobody40-")
		require.Equal(b.t, 4, out.Code, "the floor's find of nothing: %s", out)
		fl = append(fl, out.Took)
	}
	b.rowFloor(fmt.Sprintf("find of nothing, %d panes, %d processes", panes, total), "time",
		bxMedian(none), math.NaN(), bxMedian(fl), "a minimal find", fmt.Sprintf("%d / —, in turn", len(none)))
}
