package paneops

import (
	"os"
	"strconv"
)

// ScanPane reads the part of the process table that deciding how to type into one pane looks at,
// instead of every process: the pane's process and everything below it, the leader of its
// terminal's foreground group and everything below that, and the ancestors of each pid in also
// (the caller, whose own tree is excluded from detection). Children come from
// /proc/PID/task/TID/children, so the cost grows with the pane's tree, not with the machine: a
// deliverer looks at a busy pane five times a second, and the whole table of 5,000 processes
// costs about 100 ms to read.
//
// It reads the whole table (ScanProcs) when the kernel has no children files, or when the
// foreground group's leader has exited: its members may then have been reparented out of the
// pane's tree, and only a full scan finds them by their group. One case stays unseen: a member of
// a living leader's group whose own parent exited; detection then decides from the rest of the
// group, as it would for a process that left the group.
func ScanPane(panePID int, also ...int) (*ProcTable, error) {
	return scanPaneDir("/proc", panePID, also...)
}

func scanPaneDir(root string, panePID int, also ...int) (*ProcTable, error) {
	full := func() (*ProcTable, error) {
		if root == "/proc" {
			return ScanProcs()
		}
		return scanProcDir(root)
	}
	if _, err := os.Stat(root + "/" + strconv.Itoa(os.Getpid()) + "/task/" + strconv.Itoa(os.Getpid()) + "/children"); err != nil && root == "/proc" {
		return full()
	}
	s := &paneScan{root: root, seen: map[int]*Process{}}
	pane := s.stat(panePID)
	if pane == nil {
		return full() // gone, or not a pid this table can read: let the full scan say what it finds
	}
	s.below(panePID)
	if pane.TPGID > 0 {
		if s.stat(pane.TPGID) == nil {
			return full()
		}
		s.below(pane.TPGID)
	}
	for _, pid := range also {
		for p := s.stat(pid); p != nil && p.PPID > 0 && s.seen[p.PPID] == nil; {
			p = s.stat(p.PPID)
		}
	}
	procs := make([]*Process, 0, len(s.seen))
	for _, p := range s.seen {
		procs = append(procs, p)
	}
	return newProcTable(procs, func(pid int) []string {
		data, err := os.ReadFile(root + "/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			return nil
		}
		return splitCmdline(data)
	}), nil
}

// paneScan collects the processes read so far.
type paneScan struct {
	root string
	seen map[int]*Process
	buf  []byte
}

// stat reads one process once; nil when it is gone or unreadable.
func (s *paneScan) stat(pid int) *Process {
	if p, ok := s.seen[pid]; ok {
		return p
	}
	var err error
	s.buf, err = readInto(s.buf, s.root+"/"+strconv.Itoa(pid)+"/stat")
	if err != nil {
		return nil
	}
	p, err := parseStat(s.buf)
	if err != nil || p.PID != pid {
		return nil
	}
	s.seen[pid] = p
	return p
}

// below reads every process under pid, breadth-first, through the children files of each of a
// process's threads (a child belongs to the thread that forked it).
func (s *paneScan) below(pid int) {
	queue := []int{pid}
	done := map[int]bool{}
	for len(queue) > 0 {
		pid, queue = queue[0], queue[1:]
		if done[pid] {
			continue
		}
		done[pid] = true
		dir := s.root + "/" + strconv.Itoa(pid) + "/task"
		tasks, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, task := range tasks {
			var err error
			s.buf, err = readInto(s.buf, dir+"/"+task.Name()+"/children")
			if err != nil {
				continue // empty (no children) reads as an error too
			}
			for _, f := range splitFields(s.buf) {
				if c, err := strconv.Atoi(f); err == nil && s.stat(c) != nil {
					queue = append(queue, c)
				}
			}
		}
	}
}

// splitFields splits on spaces and newlines without allocating a copy of the text per field.
func splitFields(b []byte) []string {
	var out []string
	start := -1
	for i, c := range b {
		if c == ' ' || c == '\n' {
			if start >= 0 {
				out = append(out, string(b[start:i]))
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, string(b[start:]))
	}
	return out
}
