package proc

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// table builds a ProcTable whose Args are already known, as a test fixture.
func table(procs ...Process) *Table {
	ptrs := make([]*Process, len(procs))
	for i := range procs {
		p := procs[i]
		ptrs[i] = &p
	}
	return newProcTable(ptrs, nil)
}

func pids(procs []Process) []int {
	out := make([]int, len(procs))
	for i, p := range procs {
		out[i] = p.PID
	}
	return out
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name    string
		stat    string
		want    Process
		wantErr bool
	}{
		{"plain", "4242 (bash) S 4241 4242 4242 34816 4242 4194560 ...\n",
			Process{PID: 4242, PPID: 4241, PGRP: 4242, SID: 4242, TTY: 34816, TPGID: 4242, Comm: "bash", state: 'S'}, false},
		{"comm with parentheses and spaces", "77 (a) (b) c) R 1 77 70 0 -1\n",
			Process{PID: 77, PPID: 1, PGRP: 77, SID: 70, TPGID: -1, Comm: "a) (b) c", state: 'R'}, false},
		{"comm with tab and newline", "5858 (ag\tb\nc) S 5857 5858 5858 34819\n",
			Process{PID: 5858, PPID: 5857, PGRP: 5858, SID: 5858, TTY: 34819, TPGID: -1, Comm: "ag\tb\nc", state: 'S'}, false},
		{"kernel thread", "2 (kthreadd) S 0 0 0 0 -1 2129984\n",
			Process{PID: 2, PPID: 0, SID: 0, TPGID: -1, Comm: "kthreadd", state: 'S'}, false},
		{"a whole line, with its threads", "4242 (node) S 4241 4242 4242 34816 4242 4194560 1 2 3 4 5 6 7 8 20 0 11 0 99\n",
			Process{PID: 4242, PPID: 4241, PGRP: 4242, SID: 4242, TTY: 34816, TPGID: 4242, Comm: "node", threads: 11, state: 'S'}, false},
		{"a leader that has exited, its threads running", "4243 (node) Z 4241 4243 4242 34816 4242 4194560 1 2 3 4 5 6 7 8 20 0 3 0 99\n",
			Process{PID: 4243, PPID: 4241, PGRP: 4243, SID: 4242, TTY: 34816, TPGID: 4242, Comm: "node", threads: 3, state: 'Z'}, false},
		{"empty comm", "9 () S 1 9 9 0\n", Process{PID: 9, PPID: 1, PGRP: 9, SID: 9, TPGID: -1, state: 'S'}, false},
		{"no parentheses", "9 bash S 1 9 9 0\n", Process{}, true},
		{"truncated", "9 (bash) S 1\n", Process{}, true},
		{"bad pid", "x9 (bash) S 1 9 9 0\n", Process{}, true},
		{"bad ppid", "9 (bash) S one 9 9 0\n", Process{}, true},
		{"empty", "", Process{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.stat))
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, *got)
		})
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("4242 (bash) S 4241 4242 4242 34816\n"))
	f.Add([]byte("77 (a) (b) c) R 1 77 70 0 -1\n"))
	f.Add([]byte("00(0000)00 \x10\x00)0 0000 0000 000000")) // a NUL inside comm, found by fuzzing
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parseStat(data)
		if err == nil {
			// comm is exactly what stands between the first '(' and the last ')', whatever it holds.
			assert.Contains(t, string(data), "("+p.Comm+")")
		}
	})
}

func TestSplitCmdline(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\x00", nil},
		{"sleep\x00300\x00", []string{"sleep", "300"}},
		{"fake-agent-x\x00300\x00", []string{"fake-agent-x", "300"}},
		{"bash\x00-c\x00\x00", []string{"bash", "-c"}}, // trailing empty argument is indistinguishable
		{"a\x00\x00b\x00", []string{"a", "", "b"}},
		{"node /x/cli.js --flag", []string{"node /x/cli.js --flag"}}, // setproctitle, no NULs
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, splitCmdline([]byte(tt.in)), "%q", tt.in)
	}
}

func TestCommandLine(t *testing.T) {
	assert.Equal(t, "sleep 300", Process{Comm: "sleep", Args: []string{"sleep", "300"}}.CommandLine())
	assert.Equal(t, "kworker/0:1", Process{Comm: "kworker/0:1"}.CommandLine())
}

// writeFakeProc writes a /proc-like folder: pid -> stat line and cmdline.
func writeFakeProc(t *testing.T, root string, stat map[string]string, cmdline map[string]string) {
	t.Helper()
	for pid, s := range stat {
		require.NoError(t, os.MkdirAll(filepath.Join(root, pid), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(root, pid, "stat"), []byte(s), 0o600))
	}
	for pid, c := range cmdline {
		require.NoError(t, os.MkdirAll(filepath.Join(root, pid), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(root, pid, "cmdline"), []byte(c), 0o600))
	}
}

func TestScanProcDir(t *testing.T) {
	root := t.TempDir()
	writeFakeProc(t, root, map[string]string{
		"1":   "1 (init) S 0 1 1 0\n",
		"100": "100 (bash) S 1 100 100 0\n",
		"101": "101 (a) (b) S 100 101 100 0\n",
		"102": "102 (sleep) S 1 102 100 0\n", // orphan of 100's session
		"103": "999 (liar) S 1 103 103 0\n",  // pid in the file differs from the folder: skipped
		"104": "garbage",
	}, map[string]string{
		"100": "bash\x00-c\x00x\x00",
		"101": "fake-agent\x00--flag\x00",
	})
	require.NoError(t, os.MkdirAll(filepath.Join(root, "self"), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "105"), 0o700)) // exited: no stat

	tb, err := ScanProcDir(root)
	require.NoError(t, err)
	assert.Len(t, tb.Procs, 4)

	// cmdline is read when asked for, not at scan time.
	writeFakeProc(t, root, nil, map[string]string{"102": "orphan-agent\x00300\x00"})
	got := tb.Descendants(100)
	require.Equal(t, []int{101, 102}, pids(got))
	assert.Equal(t, []string{"fake-agent", "--flag"}, got[0].Args)
	assert.Equal(t, "a) (b", got[0].Comm)
	assert.Equal(t, []string{"orphan-agent", "300"}, got[1].Args)

	// Read once: a later change is not seen by the same snapshot.
	writeFakeProc(t, root, nil, map[string]string{"102": "changed\x00"})
	assert.Equal(t, []string{"orphan-agent", "300"}, tb.Descendants(100)[1].Args)

	_, err = ScanProcDir(filepath.Join(root, "nonexistent"))
	assert.Error(t, err)
	_, err = ScanProcDir(t.TempDir())
	assert.Error(t, err, "an empty table is an error, not an empty snapshot")
}

func TestScanProcsSelf(t *testing.T) {
	tb, err := Scan()
	require.NoError(t, err)
	me, ok := tb.Proc(os.Getpid())
	require.True(t, ok, "own pid is in the table")
	assert.Equal(t, os.Getppid(), me.PPID)
	assert.Equal(t, os.Args, me.Args)
	// The kernel's own answer, not "positive": where the session leader lives outside this
	// pid namespace (a container entered from outside), both are 0.
	sid, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	require.Zero(t, errno)
	assert.Equal(t, int(sid), me.SID)
	assert.Equal(t, syscall.Getpgrp(), me.PGRP)
	assert.Contains(t, tb.Ancestors(os.Getpid()), os.Getppid())
}

func TestScanGoPS(t *testing.T) {
	tb, err := scanGoPS()
	require.NoError(t, err)
	me, ok := tb.Proc(os.Getpid())
	require.True(t, ok)
	assert.Equal(t, os.Getppid(), me.PPID)
	assert.NotEmpty(t, me.CommandLine())
}

func TestDescendantsAndAncestors(t *testing.T) {
	tb := table(
		Process{PID: 1, Comm: "init"},
		Process{PID: 90, PPID: 1, SID: 90, Comm: "tmux"},
		Process{PID: 100, PPID: 90, SID: 100, Comm: "bash"},
		Process{PID: 101, PPID: 100, SID: 100, Comm: "node"},
		Process{PID: 102, PPID: 101, SID: 100, Comm: "bash"},
		Process{PID: 103, PPID: 102, SID: 100, Comm: "sleep"},
		Process{PID: 99, PPID: 103, SID: 100, Comm: "reused-low-pid"},
		Process{PID: 150, PPID: 1, SID: 100, Comm: "orphan"},
		Process{PID: 151, PPID: 150, SID: 151, Comm: "orphan-child-setsid"},
		Process{PID: 160, PPID: 1, SID: 160, Comm: "daemon"},
	)
	tests := []struct {
		name string
		pid  int
		want []int
	}{
		{"deep tree plus orphan and its children, pid order", 100, []int{99, 101, 102, 103, 150, 151}},
		{"leaf", 103, []int{99}},
		{"no children", 160, []int{}},
		{"unknown pid", 12345, []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, pids(tb.Descendants(tt.pid)))
		})
	}

	assert.Equal(t, []int{103, 102, 101, 100, 90, 1}, tb.Ancestors(103))
	assert.Equal(t, []int{1}, tb.Ancestors(1))
	assert.Equal(t, []int{4321}, tb.Ancestors(4321))

	cyclic := table(Process{PID: 5, PPID: 6}, Process{PID: 6, PPID: 5})
	assert.Equal(t, []int{5, 6}, cyclic.Ancestors(5))
}

// readInto stops at a short read only while the file is under half a page; a longer file, or
// one read in pieces, still comes back whole.
func TestReadIntoReadsWholeFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{1, 511, 512, 513, shortReadWhole - 1, shortReadWhole, 5000, 70000} {
		want := bytes.Repeat([]byte("x"), n)
		path := filepath.Join(dir, strconv.Itoa(n))
		if err := os.WriteFile(path, want, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := readInto(nil, path)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: read %d, %v", n, len(got), err)
		}
	}
}

// On a machine of two cores the process table is read by one goroutine, however many files: a
// second reader there only competes for the cores (see parallelCores). With cores to spare the
// reads are shared out.
func TestWorkersOfSmallMachine(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(2)
	assert.Equal(t, 1, workersOf(5000), "2 cores")
	runtime.GOMAXPROCS(1)
	assert.Equal(t, 1, workersOf(5000), "1 core")
	runtime.GOMAXPROCS(8)
	assert.Equal(t, 8, workersOf(5000), "8 cores")
	assert.Equal(t, 1, workersOf(parallelMin-1), "a few files")
}
