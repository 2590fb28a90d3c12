package proc

import (
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
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
func ScanPane(panePID int, also ...int) (*Table, error) {
	return ScanPaneDir("/proc", panePID, also...)
}

func ScanPaneDir(root string, panePID int, also ...int) (*Table, error) {
	full := func() (*Table, error) { return fullScan(root) }
	if root == "/proc" && !hasChildrenFiles(root, 0) {
		return full()
	}
	// The stamp is read before the scan, so a process made while it runs makes the next one
	// read the tree again (see reusePaneScan).
	key, at := paneMemoKey(root, panePID, also), time.Now()
	s := newPaneScan(root)
	stamp, last := pidStamp(root, s.buf)
	if t := reusePaneScan(root, key, stamp, last, at); t != nil {
		return t, nil
	}
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
	s.ancestors(also)
	keepPaneScan(key, stamp, last, at, s)
	return s.table(), nil
}

// ScanPanes reads the part of the process table that finding an agent among panes looks at:
// each pane's process and everything below it, the processes of each pane's session that were
// reparented out of its tree, and the ancestors of each pid in also (the caller, which never
// matches). A find among 200 panes reads a few hundred processes this way, where the whole table
// of a busy machine is thousands (about 130 ms at 5,400 processes).
//
// An orphan is found where the kernel put it: a process whose parent exits is adopted by the
// nearest ancestor that made itself a child subreaper, else by init (prctl(2),
// PR_SET_CHILD_SUBREAPER). Those ancestors lie either in the pane's tree, which is read whole, or
// above the pane's process (the tmux server and its ancestors), whose children lists are read for
// processes of a pane's session. So the panes' trees come out as ScanProcs's would: only a
// process that called setsid escapes, as it does there. It reads the whole table when the kernel
// has no children files (CONFIG_PROC_CHILDREN).
func ScanPanes(panePIDs []int, also ...int) (*Table, error) {
	return ScanPanesDir("/proc", panePIDs, also...)
}

// ScanPanesBeside is ScanPanes told the pids of the server's other panes (leaders): the tmux
// server's children are its panes' processes, each the leader of a session of its own, so they
// are not read to learn whether they are orphans of a pane's session. Among 40 panes of a server
// of 240, they were four fifths of the files a find read.
func ScanPanesBeside(panePIDs, leaders []int, also ...int) (*Table, error) {
	return scanPanes("/proc", panePIDs, leaders, also)
}

func ScanPanesDir(root string, panePIDs []int, also ...int) (*Table, error) {
	return scanPanes(root, panePIDs, nil, also)
}

// ScanPanesBesideDir is ScanPanesBeside in a /proc-like folder (a fake one in tests).
func ScanPanesBesideDir(root string, panePIDs, leaders []int, also ...int) (*Table, error) {
	return scanPanes(root, panePIDs, leaders, also)
}

func scanPanes(root string, panePIDs, leaders []int, also []int) (*Table, error) {
	probe := 0
	if len(panePIDs) > 0 {
		probe = panePIDs[0]
	}
	if !hasChildrenFiles(root, probe) {
		return fullScan(root)
	}
	s := newPaneScan(root)
	panes := map[int]bool{}
	// Each pane's tree, read by a few workers with a scan each (see fanOut), then merged. Trees
	// that meet are read by both workers, which costs a read and changes nothing.
	scans := make([]*paneScan, workersOf(len(panePIDs)))
	for k := range scans {
		scans[k] = newPaneScan(root)
	}
	found := make([]bool, len(panePIDs))
	fanOut(len(panePIDs), func(k, i int) {
		if pid := panePIDs[i]; pid > 0 && scans[k].stat(pid) != nil {
			found[i] = true
			scans[k].below(pid)
		}
	})
	for _, ps := range scans {
		for pid, p := range ps.seen {
			s.seen[pid] = p
		}
		for pid := range ps.walked {
			s.walked[pid] = true
		}
	}
	for i, pid := range panePIDs {
		if found[i] {
			panes[pid] = true
		}
	}
	// The ancestors above the panes, each once (the panes of one server share them all).
	above := map[int]bool{}
	for _, pid := range panePIDs {
		p := s.seen[pid]
		for p != nil && p.PPID > 0 && !above[p.PPID] && !s.walked[p.PPID] {
			above[p.PPID] = true
			p = s.stat(p.PPID)
		}
	}
	// A pane's process is the leader of its own session (tmux starts it with setsid), so it is no
	// orphan of another pane's session.
	leader := make(map[int]bool, len(leaders))
	for _, pid := range leaders {
		leader[pid] = true
	}
	for a := range above {
		for _, c := range s.adopted(a) {
			if leader[c] && s.seen[c] == nil {
				continue
			}
			if p := s.stat(c); p != nil && panes[p.SID] && !s.walked[c] {
				s.below(c) // an orphan of a pane's session, and what runs below it
			}
		}
	}
	s.ancestors(also)
	return s.table(), nil
}

// fullScan reads the whole table of root: ScanProcs for the real /proc, a fake one in tests.
func fullScan(root string) (*Table, error) {
	if root == "/proc" {
		return Scan()
	}
	return ScanProcDir(root)
}

// hasChildrenFiles reports whether root's processes have children files: the kernel writes them
// only with CONFIG_PROC_CHILDREN. It looks at this process in the real /proc (always there), at
// probe in a fake one.
func hasChildrenFiles(root string, probe int) bool {
	if root == "/proc" {
		// The kernel's build does not change while this process runs: looked at once.
		procChildren.once.Do(func() { procChildren.has = hasChildrenFilesAt(root, SelfPID()) })
		return procChildren.has
	}
	return hasChildrenFilesAt(root, probe)
}

// procChildren is hasChildrenFiles of the real /proc, told once.
var procChildren struct {
	once sync.Once
	has  bool
}

func hasChildrenFilesAt(root string, probe int) bool {
	p := strconv.Itoa(probe)
	_, err := os.Stat(root + "/" + p + "/task/" + p + "/children")
	return err == nil
}

// paneScan collects the processes read so far.
type paneScan struct {
	root string
	seen map[int]*Process
	// walked holds the processes whose children have been read, so trees that meet (a pane's and
	// its foreground group's, an orphan's) are read once.
	walked map[int]bool
	buf    []byte
}

func newPaneScan(root string) *paneScan {
	return &paneScan{root: root, seen: map[int]*Process{}, walked: map[int]bool{}}
}

// table is what was read, with command lines read when asked for.
func (s *paneScan) table() *Table {
	procs := make([]*Process, 0, len(s.seen))
	for _, p := range s.seen {
		procs = append(procs, p)
	}
	root := s.root
	return newProcTable(procs, func(pid int) []string {
		// readInto, not os.ReadFile: a find reads hundreds of these, and os.File's bookkeeping
		// (a stat, a try at the poller) is more system calls than the read itself.
		data, err := readInto(nil, root+"/"+strconv.Itoa(pid)+"/cmdline")
		if err != nil {
			return nil
		}
		return splitCmdline(data)
	})
}

// ancestors reads each pid in pids and its ancestors, up to one already read.
func (s *paneScan) ancestors(pids []int) {
	for _, pid := range pids {
		for p := s.stat(pid); p != nil && p.PPID > 0 && s.seen[p.PPID] == nil; {
			p = s.stat(p.PPID)
		}
	}
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

// below reads every process under pid, breadth-first.
func (s *paneScan) below(pid int) {
	queue := []int{pid}
	for len(queue) > 0 {
		pid, queue = queue[0], queue[1:]
		if s.walked[pid] {
			continue
		}
		s.walked[pid] = true
		for _, c := range s.children(pid) {
			if s.stat(c) != nil {
				queue = append(queue, c)
			}
		}
	}
}

// children lists pid's children from the children files of each of its threads (a child belongs
// to the thread that forked it). A process of one thread has one such file, read without listing
// its task folder.
func (s *paneScan) children(pid int) []int {
	dir := s.root + "/" + strconv.Itoa(pid) + "/task"
	var tasks []string
	if p := s.seen[pid]; p != nil && p.threads == 1 {
		tasks = []string{strconv.Itoa(pid)}
	} else {
		var err error
		if tasks, err = readNames(dir, s.buf); err != nil {
			return nil
		}
	}
	return s.childrenOf(dir, tasks)
}

// childrenOf lists the children in the children files of tasks in the task folder dir.
func (s *paneScan) childrenOf(dir string, tasks []string) []int {
	var out []int
	for _, task := range tasks {
		var err error
		s.buf, err = readInto(s.buf, dir+"/"+task+"/children")
		if err != nil {
			continue // empty (no children) reads as an error too
		}
		for _, f := range splitFields(s.buf) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// adopted lists the children of pid, a process above the panes, among which its orphans of a
// pane's session are: the kernel gives an orphan to the first thread of its new parent that is
// not exiting (find_new_reaper in kernel/exit.c), which is the leader while the leader lives, so
// only the leader's children file is read, not one per thread: init may run a dozen threads. The
// children its other threads forked themselves are of its own session, no pane's: a pane's
// process leads a session of its own, and its session's processes descend from it. A leader
// that has exited (a zombie whose other threads run) has its every thread's file read.
func (s *paneScan) adopted(pid int) []int {
	if p := s.seen[pid]; p == nil || p.state == 0 || p.state == 'Z' || p.state == 'X' {
		return s.children(pid)
	}
	return s.childrenOf(s.root+"/"+strconv.Itoa(pid)+"/task", []string{strconv.Itoa(pid)})
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

// readNames lists dir's names with raw system calls into buf's space: os.Open's bookkeeping (flag
// calls, a try at the poller) was more system calls than the listing of a task folder.
func readNames(dir string, buf []byte) ([]string, error) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	if cap(buf) < 4096 {
		buf = make([]byte, 4096)
	}
	buf = buf[:cap(buf)]
	var names []string
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = syscall.ParseDirent(buf[:n], -1, names)
	}
}
