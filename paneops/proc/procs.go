package proc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	ps "github.com/mitchellh/go-ps"
)

// Process is one process of the process table.
type Process struct {
	PID  int `json:"pid"`
	PPID int `json:"ppid"`
	SID  int `json:"sid"`
	// PGRP is the process group; TPGID the foreground process group of its controlling terminal
	// (-1 or 0 without one). Both are 0 where the table has no such data (go-ps).
	PGRP  int `json:"pgrp,omitempty"`
	TPGID int `json:"tpgid,omitempty"`
	// TTY is the device number of its controlling terminal (tty_nr in proc(5)), 0 without one:
	// the kernel sets it, and a process can only drop it (setsid), never take another's.
	TTY  int      `json:"tty,omitempty"`
	Comm string   `json:"comm"`
	Args []string `json:"args"` // from /proc/PID/cmdline; empty for kernel threads or when unreadable

	// threads is the number of threads /proc/PID/stat counted (0: unknown), so a walk through the
	// children files reads one thread's list, not the task folder, for a process of one thread.
	threads int
	// state is the state letter of /proc/PID/stat (0: unknown): 'Z' for a leader that has exited,
	// whose other threads may still run.
	state byte
}

// CommandLine returns Args joined by spaces, or Comm when Args is empty.
func (p Process) CommandLine() string {
	if len(p.Args) == 0 {
		return p.Comm
	}
	return strings.Join(p.Args, " ")
}

// ProcTable is a snapshot of the process table.
type Table struct {
	Procs    map[int]*Process
	Children map[int][]int
	BySID    map[int][]int

	// readArgs reads one process's argv; nil when Args were filled at scan time (go-ps, tests).
	// Reading every cmdline doubles the cost of a scan (measured), so it is done only for
	// the processes a caller asks about, once each.
	readArgs func(pid int) []string
	mu       sync.Mutex
	argsRead map[int]bool
}

// newProcTable indexes processes by pid, parent and session.
func newProcTable(procs []*Process, readArgs func(int) []string) *Table {
	t := &Table{
		Procs:    make(map[int]*Process, len(procs)),
		Children: make(map[int][]int),
		BySID:    make(map[int][]int),
		readArgs: readArgs,
		argsRead: make(map[int]bool),
	}
	for _, p := range procs {
		t.Procs[p.PID] = p
	}
	// Children and session members in pid order, so every walk is deterministic.
	pids := make([]int, 0, len(procs))
	for pid := range t.Procs {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	for _, pid := range pids {
		p := t.Procs[pid]
		if p.PPID != pid {
			t.Children[p.PPID] = append(t.Children[p.PPID], pid)
		}
		if p.SID > 0 {
			t.BySID[p.SID] = append(t.BySID[p.SID], pid)
		}
	}
	return t
}

// NewProcTable builds a table from processes already known (with their Args): for tests, and for
// callers with another source of the process table.
func NewProcTable(procs []Process) *Table {
	ptrs := make([]*Process, len(procs))
	for i := range procs {
		p := procs[i]
		ptrs[i] = &p
	}
	return newProcTable(ptrs, nil)
}

// ScanProcs reads the process table once: on Linux every /proc/PID/stat (split at the last ")")
// for ppid, sid and comm, and cmdline only lazily when a match needs it; elsewhere go-ps.
func Scan() (*Table, error) {
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		return ScanProcDir("/proc")
	}
	return scanGoPS()
}

// scanProcDir scans a /proc-like folder (a fake one in tests).
func ScanProcDir(root string) (*Table, error) {
	d, err := os.Open(root)
	if err != nil {
		return nil, fmt.Errorf("read the process table: %w", err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("read the process table in %s: %w", root, err)
	}
	procs := make([]*Process, 0, len(names))
	buf := make([]byte, 0, 1024)
	for _, name := range names {
		if name == "" || name[0] < '0' || name[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		buf, err = readInto(buf, root+"/"+name+"/stat")
		if err != nil {
			continue // the process exited since Readdirnames: it is simply not in the snapshot
		}
		p, err := parseStat(buf)
		if err != nil || p.PID != pid {
			continue
		}
		procs = append(procs, p)
	}
	if len(procs) == 0 {
		return nil, fmt.Errorf("read the process table: no readable process in %s", root)
	}
	readArgs := func(pid int) []string {
		data, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "cmdline"))
		if err != nil {
			return nil
		}
		return splitCmdline(data)
	}
	return newProcTable(procs, readArgs), nil
}

// readInto reads a whole (small) file into buf, reusing its memory. It uses plain syscalls: a
// scan reads thousands of stat files, and os.Open adds an allocation and a failed poller
// registration (one more syscall) to each.
func readInto(buf []byte, path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return buf, err
	}
	defer syscall.Close(fd)
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, max(cap(buf), 512))
		}
		asked := cap(buf) - len(buf)
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return buf, fmt.Errorf("read %s: %w", path, err)
		}
		if n == 0 {
			if len(buf) == 0 {
				return buf, fmt.Errorf("read %s: empty", path)
			}
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if n < asked && len(buf) < shortReadWhole {
			return buf, nil
		}
	}
}

// shortReadWhole is the size under which a short read of a /proc file is the whole file, so the
// read of nothing that would confirm it is skipped (a third of a find's system calls). A stat or
// children file is a seq_file, whose read fills the caller's buffer unless its records end or its
// own page-sized buffer is full; cmdline stops short only at its end. Under half a page, neither
// can have stopped on a full buffer.
const shortReadWhole = 2048

// parseStat parses /proc/PID/stat: "PID (COMM) STATE PPID PGRP SESSION TTY_NR TPGID ...". comm may
// hold spaces, parentheses and even newlines, so it runs from the first "(" to the LAST ")"
// (proc(5)). TPGID is read when present (-1 otherwise).
func parseStat(data []byte) (*Process, error) {
	open := bytes.IndexByte(data, '(')
	closing := bytes.LastIndexByte(data, ')')
	if open < 1 || closing < open {
		return nil, fmt.Errorf("malformed stat line %q", data)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(data[:open])))
	if err != nil {
		return nil, fmt.Errorf("malformed stat line %q: pid: %w", data, err)
	}
	// After ") ": state ppid pgrp session ...
	rest := bytes.Fields(data[closing+1:])
	if len(rest) < 4 {
		return nil, fmt.Errorf("malformed stat line %q: too few fields", data)
	}
	ppid, err1 := strconv.Atoi(string(rest[1]))
	pgrp, err2 := strconv.Atoi(string(rest[2]))
	sid, err3 := strconv.Atoi(string(rest[3]))
	if err1 != nil || err2 != nil || err3 != nil {
		return nil, fmt.Errorf("malformed stat line %q: ppid, process group or session is not a number", data)
	}
	tty := 0
	if len(rest) > 4 {
		if n, err := strconv.Atoi(string(rest[4])); err == nil {
			tty = n
		}
	}
	tpgid := -1
	if len(rest) > 5 {
		if n, err := strconv.Atoi(string(rest[5])); err == nil {
			tpgid = n
		}
	}
	threads := 0
	if len(rest) > 17 {
		if n, err := strconv.Atoi(string(rest[17])); err == nil && n > 0 {
			threads = n // field 20, num_threads (proc(5))
		}
	}
	state := byte(0)
	if len(rest[0]) == 1 {
		state = rest[0][0]
	}
	return &Process{PID: pid, PPID: ppid, PGRP: pgrp, SID: sid, TPGID: tpgid, TTY: tty, Comm: string(data[open+1 : closing]), threads: threads, state: state}, nil
}

// splitCmdline splits /proc/PID/cmdline: NUL-terminated arguments. A process that rewrote its
// argv into one space-separated string (setproctitle) comes back as one argument, which is fine
// for substring matching.
func splitCmdline(data []byte) []string {
	data = bytes.TrimRight(data, "\x00")
	if len(data) == 0 {
		return nil
	}
	return strings.Split(string(data), "\x00")
}

// scanGoPS is the portable fallback: go-ps gives pid, ppid and the executable name, but no
// session id and no arguments, so orphans are not found and matching uses the name only.
func scanGoPS() (*Table, error) {
	list, err := ps.Processes()
	if err != nil {
		return nil, fmt.Errorf("read the process table: %w", err)
	}
	procs := make([]*Process, 0, len(list))
	for _, p := range list {
		procs = append(procs, &Process{PID: p.Pid(), PPID: p.PPid(), Comm: p.Executable()})
	}
	return newProcTable(procs, nil), nil
}

// proc returns a copy of one process with its Args loaded, and whether it exists.
func (t *Table) Proc(pid int) (Process, bool) {
	p, ok := t.Procs[pid]
	if !ok {
		return Process{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.readArgs != nil && !t.argsRead[pid] {
		t.argsRead[pid] = true
		p.Args = t.readArgs(pid)
	}
	return *p, true
}

// DescendantPIDs returns the pids below pid: a breadth-first walk over children, started from pid
// and from every other member of pid's session. The session part finds processes whose parent
// exited and that were reparented to init or a subreaper (a pane's first process is a session
// leader, so its sid is the pane pid, as measured); only processes that called setsid escape.
func (t *Table) DescendantPIDs(pid int) []int {
	out := t.walk(append([]int{pid}, t.BySID[pid]...))[1:]
	slices.Sort(out)
	return out
}

// walk returns the seeds (first one first, duplicates dropped) and then, breadth-first, every
// process below them, each once.
func (t *Table) walk(seeds []int) []int {
	seen := map[int]bool{}
	var queue []int
	for _, s := range seeds {
		if !seen[s] {
			seen[s] = true
			queue = append(queue, s)
		}
	}
	for i := 0; i < len(queue); i++ {
		for _, c := range t.Children[queue[i]] {
			if !seen[c] {
				seen[c] = true
				queue = append(queue, c)
			}
		}
	}
	return queue
}

// Descendants returns every process below pid at any depth (by ppid), plus processes of the pane's
// session (sid == pid) that were orphaned and reparented, in pid order, excluding pid itself.
func (t *Table) Descendants(pid int) []Process {
	pids := t.DescendantPIDs(pid)
	out := make([]Process, 0, len(pids))
	for _, d := range pids {
		if p, ok := t.Proc(d); ok {
			out = append(out, p)
		}
	}
	return out
}

// Ancestors returns pid and its ancestors up to pid 1.
func (t *Table) Ancestors(pid int) []int {
	out := []int{pid}
	seen := map[int]bool{pid: true}
	for {
		p, ok := t.Procs[pid]
		if !ok || p.PPID <= 0 || seen[p.PPID] {
			return out
		}
		pid = p.PPID
		seen[pid] = true
		out = append(out, pid)
	}
}

// Foreground returns the leader of the foreground process group of pid's terminal (the group
// that reads the keyboard: what a paste and an Enter reach) and that group's processes with
// everything below them, shallowest first. The group comes from pid's TPGID in /proc; ok is false
// when it is unknown (go-ps, or pid has no terminal). A leader that has exited is replaced by the
// group's lowest pid.
func (t *Table) Foreground(pid int) (leader Process, group []Process, ok bool) {
	root, found := t.Procs[pid]
	if !found || root.TPGID <= 0 {
		return Process{}, nil, false
	}
	fg := root.TPGID
	var members []int
	for _, m := range t.BySID[root.SID] {
		if p := t.Procs[m]; p.PGRP == fg {
			members = append(members, m)
		}
	}
	if len(members) == 0 {
		return Process{}, nil, false
	}
	lead := members[0]
	if slices.Contains(members, fg) {
		lead = fg
	}
	// Breadth-first from the leader and the other members, so the shallowest match wins in Detect
	// (an agent, not the wcomm it runs in a tool call).
	for _, q := range t.walk(append([]int{lead}, members...)) {
		if p, ok := t.Proc(q); ok {
			group = append(group, p)
		}
	}
	return group[0], group, true
}

// Depths maps pid and every process of its tree (as in DescendantPIDs) to its depth below pid; an
// orphan of the session counts as a child of pid, since its real parent has gone.
func (t *Table) Depths(pid int) map[int]int {
	depth := map[int]int{}
	if _, ok := t.Procs[pid]; ok {
		depth[pid] = 0
	}
	queue := []int{pid}
	walk := func() {
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, c := range t.Children[cur] {
				if _, ok := depth[c]; !ok {
					depth[c] = depth[cur] + 1
					queue = append(queue, c)
				}
			}
		}
	}
	walk()
	for _, m := range t.BySID[pid] {
		if _, ok := depth[m]; !ok && m != pid {
			depth[m] = 1
			queue = append(queue, m)
			walk()
		}
	}
	return depth
}
