package proc

import (
	"runtime"
	"sync"
)

// Reading the process table is one open, read and close of a /proc file per process, each a
// system call with no wait in it, so the reads scale with the cores: a find among 200 panes
// reads about 600 such files, at 20 to 40 µs each on the small virtual machines measured here.
// Below parallelMin files one goroutine does them all: starting workers costs more than it saves.
const parallelMin = 32

// parallelCores is the fewest CPUs on which the reads are shared out. On fewer, a second reader
// only competes with the process's own threads and the machine's other work for the same cores:
// measured on 2 cores among 200 panes and 5,000 processes, the workers took as long as one reader
// and more CPU, their idle threads spinning and sleeping between hand-offs.
const parallelCores = 4

// fanOut runs do(i) for i in [0, n) on a few goroutines, each taking a contiguous share, and
// returns once all are done. do(worker, i) gets its worker's number for per-worker state.
func fanOut(n int, do func(worker, i int)) {
	w := workersOf(n)
	if w == 1 {
		for i := range n {
			do(0, i)
		}
		return
	}
	var wg sync.WaitGroup
	for k := range w {
		lo, hi := k*n/w, (k+1)*n/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				do(k, i)
			}
		}()
	}
	wg.Wait()
}

// workersOf is how many workers fanOut uses for n items, so callers can size per-worker state.
func workersOf(n int) int {
	cores := runtime.GOMAXPROCS(0)
	w := min(cores, 8, n/(parallelMin/2))
	if n < parallelMin || w < 2 || cores < parallelCores {
		return 1
	}
	return w
}

// ReadArgs reads the command lines of pids that are in the table and not read yet, several at a
// time; Proc then returns them without a read of its own. A find looks at the command line of
// every process in the panes' trees.
func (t *Table) ReadArgs(pids []int) {
	if t.readArgs == nil {
		return
	}
	t.mu.Lock() // held throughout: a Proc meanwhile waits, then finds its process read
	defer t.mu.Unlock()
	var todo []int
	for _, pid := range pids {
		if _, ok := t.Procs[pid]; ok && !t.argsRead[pid] {
			t.argsRead[pid] = true
			todo = append(todo, pid)
		}
	}
	args := make([][]string, len(todo))
	fanOut(len(todo), func(_, i int) { args[i] = t.readArgs(todo[i]) })
	for i, pid := range todo {
		t.Procs[pid].Args = args[i]
	}
}
