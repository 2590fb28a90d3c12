package proc

import (
	"bytes"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// A pane's scan taken again without its children lists. A send reads its pane's tree at every
// delivery: for a pane whose program runs a dozen threads that is a children file per thread,
// most of a send's reads of /proc. The tree can gain a process only by a fork (or clone), and
// every fork takes a pid: the kernel hands pids out in turn, and /proc/loadavg names the last one
// handed out in this pid namespace and how many tasks exist (its fourth and fifth fields). While
// both read as they did before the last scan, no process has been made since (a fork in a
// nested namespace takes a pid in this one too), so the tree holds at most the processes that
// scan found. When a few pids were handed out since (other programs of a busy machine), each is
// looked at: one whose parent is in the tree (or a thread of a process whose parent is) makes it
// a full scan, as does any other change. The processes found are read again, each by its stat:
// one that has exited or changed its parent, group, session, terminal or name (an exec) makes it
// a full scan again. Command lines are read afresh whenever detection asks, as they always are,
// so an exec that keeps its name is seen.
//
// A look stands on the one before it for a second at most: pids come round again only after the
// whole pid space (/proc/sys/kernel/pid_max, 32,768 at least) was handed out, far more forks than
// a machine makes in a second, and landing then on the same last pid besides. A pid given by its
// number (clone3's set_tid) takes no turn, but only a checkpoint restorer with its capability in
// this namespace may ask that.

// paneMemoFor bounds how long a scan's stamp is trusted.
const paneMemoFor = time.Second

// paneMemoMax bounds how many panes' scans are kept (a process that sends into many panes).
const paneMemoMax = 64

// paneMemoNewPIDs bounds how many pids handed out since the last look are looked at, rather than
// the tree read again.
const paneMemoNewPIDs = 32

// paneMemo holds the last scan of each pane, by root, pane and callers' pids.
var paneMemo = struct {
	mu sync.Mutex
	m  map[string]*paneSnap
}{m: map[string]*paneSnap{}}

// paneSnap is what one scan found, as its stat lines said, and the stamp read before the last
// look that found the tree unchanged (the scan, or a reuse since).
type paneSnap struct {
	stamp string
	last  int // the last pid handed out, of stamp
	at    time.Time
	procs []Process // by pid; Args unread
}

func paneMemoKey(root string, panePID int, also []int) string {
	k := root + "\x00" + strconv.Itoa(panePID)
	for _, pid := range also {
		k += "," + strconv.Itoa(pid)
	}
	return k
}

// pidStamp reads the count of tasks and the last pid handed out from root's loadavg ("" when it
// cannot be read: nothing is reused then).
func pidStamp(root string, buf []byte) (string, int) {
	buf, err := readInto(buf, root+"/loadavg")
	if err != nil {
		return "", 0
	}
	f := bytes.Fields(buf)
	if len(f) < 5 {
		return "", 0
	}
	_, total, ok := bytes.Cut(f[3], []byte("/"))
	last, err := strconv.Atoi(string(f[4]))
	if !ok || len(total) == 0 || err != nil {
		return "", 0
	}
	return string(total) + " " + string(f[4]), last
}

// reusePaneScan returns the table of the pane's last scan, its processes read again by their
// stat, when the stamp says no process was made since that is in the tree, and none of them
// changed; nil otherwise. at is when the stamp was read.
func reusePaneScan(root, key, stamp string, last int, at time.Time) *Table {
	if stamp == "" {
		return nil
	}
	paneMemo.mu.Lock()
	snap := paneMemo.m[key]
	paneMemo.mu.Unlock()
	if snap == nil || at.Sub(snap.at) > paneMemoFor {
		return nil
	}
	s := newPaneScan(root)
	if stamp != snap.stamp {
		// Pids handed out since: a few are looked at, each a child of the tree or not.
		if last < snap.last || last-snap.last > paneMemoNewPIDs {
			return nil
		}
		in := make(map[int]bool, len(snap.procs))
		for i := range snap.procs {
			in[snap.procs[i].PID] = true
		}
		var many *Process // the last one read with threads of its own
		for pid := snap.last + 1; pid <= last; pid++ {
			if many != nil && isThreadOf(s.root, many.PID, pid) {
				continue // its parent is the process's, read already
			}
			var err error
			s.buf, err = readInto(s.buf, s.root+"/"+strconv.Itoa(pid)+"/stat")
			if err != nil {
				continue // gone already: no process of the tree
			}
			p, err := parseStat(s.buf)
			if err != nil || in[p.PPID] {
				return nil
			}
			if p.threads > 1 {
				many = p
			}
		}
	}
	for i := range snap.procs {
		was := &snap.procs[i]
		p := s.stat(was.PID)
		if p == nil || !sameShape(was, p) {
			return nil
		}
	}
	paneMemo.mu.Lock()
	if paneMemo.m[key] == snap {
		paneMemo.m[key] = &paneSnap{stamp: stamp, last: last, at: at, procs: snap.procs}
	}
	paneMemo.mu.Unlock()
	return s.table()
}

// isThreadOf reports whether tid is a thread of pid's process: the kernel has an entry for tid in
// pid's task folder only then. Most pids handed out between two sends are the threads of the
// processes started meanwhile (a Go program makes five or six, the sending command among them),
// and a thread's parent is its process's: one path lookup stands for the open, read and close of
// its stat. Measured on the commands round trip (a send's look at about a dozen new pids): the
// paste reached the worker 0.05 ms sooner.
func isThreadOf(root string, pid, tid int) bool {
	return syscall.Access(root+"/"+strconv.Itoa(pid)+"/task/"+strconv.Itoa(tid), 0) == nil
}

// sameShape reports whether p, read again, sits where was did in the process tree and runs the
// same program name: its state and threads may differ, its being a zombie may not.
func sameShape(was, p *Process) bool {
	return was.PID == p.PID && was.PPID == p.PPID && was.PGRP == p.PGRP && was.SID == p.SID &&
		was.TPGID == p.TPGID && was.TTY == p.TTY && was.Comm == p.Comm && exited(was) == exited(p)
}

func exited(p *Process) bool { return p.state == 'Z' || p.state == 'X' }

// keepPaneScan records what a scan found under the stamp read before it began.
func keepPaneScan(key, stamp string, last int, at time.Time, s *paneScan) {
	if stamp == "" {
		return
	}
	procs := make([]Process, 0, len(s.seen))
	for _, p := range s.seen {
		procs = append(procs, *p)
	}
	slices.SortFunc(procs, func(a, b Process) int { return a.PID - b.PID })
	paneMemo.mu.Lock()
	defer paneMemo.mu.Unlock()
	if _, ok := paneMemo.m[key]; !ok && len(paneMemo.m) >= paneMemoMax {
		for k, v := range paneMemo.m {
			if time.Since(v.at) > paneMemoFor {
				delete(paneMemo.m, k)
			}
		}
		if len(paneMemo.m) >= paneMemoMax {
			return
		}
	}
	paneMemo.m[key] = &paneSnap{stamp: stamp, last: last, at: at, procs: procs}
}

// forgetPaneScans drops every scan kept (tests).
func forgetPaneScans() {
	paneMemo.mu.Lock()
	clear(paneMemo.m)
	paneMemo.mu.Unlock()
}
