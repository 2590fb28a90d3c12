package proc

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakePaneTree writes a fake /proc of one pane: 100 bash (foreground group 200) with 200 agent,
// and the stamp of /proc/loadavg.
func fakePaneTree(t *testing.T, root string) {
	t.Helper()
	writeFakeProc(t, root, map[string]string{
		"1":   "1 (init) S 0 1 1 0 0 -1\n",
		"100": "100 (bash) S 1 100 100 34816 200 200\n",
		"200": "200 (agent) S 100 200 100 34816 200 200\n",
	}, map[string]string{"200": "agent\x00"})
	writeChildFiles(t, root, map[string]string{"100": "200 ", "200": ""})
	writeStamp(t, root, "1/120 200")
}

func writeChildFiles(t *testing.T, root string, children map[string]string) {
	t.Helper()
	for pid, list := range children {
		dir := filepath.Join(root, pid, "task", pid)
		require.NoError(t, os.MkdirAll(dir, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "children"), []byte(list), 0o600))
	}
}

func writeStamp(t *testing.T, root, tasks string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(root, "loadavg"), []byte("0.10 0.20 0.30 "+tasks+"\n"), 0o600))
}

func tablePIDs(tb *Table) []int {
	var out []int
	for pid := range tb.Procs {
		out = append(out, pid)
	}
	slices.Sort(out)
	return out
}

func TestScanPaneTakesItsLastTreeWhileNoPidWasHandedOut(t *testing.T) {
	t.Cleanup(forgetPaneScans)
	root := t.TempDir()
	fakePaneTree(t, root) // pids up to 200 handed out
	tb, err := ScanPaneDir(root, 100)
	require.NoError(t, err)
	require.Equal(t, []int{100, 200}, tablePIDs(tb))

	// A child appears in the children files while the stamp stays: no fork can have made it,
	// so the tree is not listed again (a fake /proc can say what the kernel never would).
	child := func(pid, parent string) {
		writeFakeProc(t, root, map[string]string{pid: pid + " (node) S " + parent + " 200 100 34816 200 200\n"}, nil)
		list, _ := os.ReadFile(filepath.Join(root, parent, "task", parent, "children"))
		writeChildFiles(t, root, map[string]string{parent: string(list) + pid + " "})
	}
	child("150", "200")
	tb, err = ScanPaneDir(root, 100)
	require.NoError(t, err)
	assert.Equal(t, []int{100, 200}, tablePIDs(tb), "the tree is taken from the last scan")

	// A pid handed out since, to a child of the tree: the tree is read again.
	child("201", "200")
	writeStamp(t, root, "1/121 201")
	tb, err = ScanPaneDir(root, 100)
	require.NoError(t, err)
	assert.Equal(t, []int{100, 150, 200, 201}, tablePIDs(tb))

	// Pids handed out since to processes elsewhere (one gone already): the tree stands.
	writeFakeProc(t, root, map[string]string{"203": "203 (make) S 1 203 203 0 -1\n"}, nil)
	child("160", "201")
	writeStamp(t, root, "1/122 204")
	tb, err = ScanPaneDir(root, 100)
	require.NoError(t, err)
	assert.Equal(t, []int{100, 150, 200, 201}, tablePIDs(tb), "taken again: nothing new is the tree's")

	// Too many handed out to look at each, or the pids came round: read again.
	writeStamp(t, root, "1/122 300")
	tb, err = ScanPaneDir(root, 100)
	require.NoError(t, err)
	assert.Equal(t, []int{100, 150, 160, 200, 201}, tablePIDs(tb))
	child("170", "201")
	writeStamp(t, root, "1/122 7")
	tb, err = ScanPaneDir(root, 100)
	require.NoError(t, err)
	assert.Contains(t, tablePIDs(tb), 170)

	// The task count alone changed (a process exited elsewhere): the tree stands.
	child("180", "201")
	writeStamp(t, root, "1/100 7")
	tb, err = ScanPaneDir(root, 100)
	require.NoError(t, err)
	assert.NotContains(t, tablePIDs(tb), 180)
}

// The threads of a process started elsewhere since the last look are not read: each is known by
// its entry in the process's task folder, and has the process's parent. A pid outside that folder
// is read as before.
func TestScanPaneSkipsTheThreadsOfAProcessElsewhere(t *testing.T) {
	t.Cleanup(forgetPaneScans)
	root := t.TempDir()
	fakePaneTree(t, root)
	tb, err := ScanPaneDir(root, 100)
	require.NoError(t, err)
	require.Equal(t, []int{100, 200}, tablePIDs(tb))
	// A child listed while no pid was handed out: seen only when the tree is read again.
	writeFakeProc(t, root, map[string]string{"150": "150 (node) S 200 200 100 34816 200 200\n"}, nil)
	writeChildFiles(t, root, map[string]string{"200": "150 "})

	// 201 elsewhere, with three threads (num_threads is stat's field 20): 201, 202 and 203. The
	// stat files of 202 and 203 name a parent in the tree, which the kernel never would: read,
	// they would make the tree be read again.
	writeFakeProc(t, root, map[string]string{
		"201": "201 (node) S 1 201 201 0 -1 0 0 0 0 0 0 0 0 0 20 0 3\n",
		"202": "202 (node) S 200 201 201 0 -1 0 0 0 0 0 0 0 0 0 20 0 3\n",
		"203": "203 (node) S 200 201 201 0 -1 0 0 0 0 0 0 0 0 0 20 0 3\n",
	}, nil)
	for _, tid := range []string{"201", "202", "203"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, "201", "task", tid), 0o700))
	}
	writeStamp(t, root, "1/123 203")
	tb, err = ScanPaneDir(root, 100)
	require.NoError(t, err)
	assert.Equal(t, []int{100, 200}, tablePIDs(tb), "the threads of 201 were not read: the tree stands")

	// 204 is no thread of 201: read, its parent is the tree's, and the tree is read again.
	writeFakeProc(t, root, map[string]string{"204": "204 (node) S 200 201 201 0 -1 0 0 0 0 0 0 0 0 0 20 0 3\n"}, nil)
	writeStamp(t, root, "1/124 204")
	tb, err = ScanPaneDir(root, 100)
	require.NoError(t, err)
	assert.Contains(t, tablePIDs(tb), 150, "the tree was read again")
}

func TestScanPaneReadsTheTreeAgainWhenAProcessOfItChanged(t *testing.T) {
	for _, tc := range []struct {
		name string
		stat string // 200's stat line, changed
	}{
		{"exec under another name", "200 (claude) S 100 200 100 34816 200 200\n"},
		{"another parent", "200 (agent) S 1 200 100 34816 200 200\n"},
		{"another group", "200 (agent) S 100 300 100 34816 200 200\n"},
		{"another foreground", "200 (agent) S 100 200 100 34816 100 200\n"},
		{"exited", "200 (agent) Z 100 200 100 34816 200 200\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(forgetPaneScans)
			root := t.TempDir()
			fakePaneTree(t, root)
			_, err := ScanPaneDir(root, 100)
			require.NoError(t, err)
			// The same change to the children files as in the test above, which a reused tree
			// does not see: seen here, the tree was read again.
			writeFakeProc(t, root, map[string]string{"201": "201 (node) S 200 200 100 34816 200 200\n", "200": tc.stat}, nil)
			writeChildFiles(t, root, map[string]string{"200": "201 "})
			tb, err := ScanPaneDir(root, 100)
			require.NoError(t, err)
			assert.Equal(t, []int{100, 200, 201}, tablePIDs(tb))
		})
	}
	t.Run("gone", func(t *testing.T) {
		t.Cleanup(forgetPaneScans)
		root := t.TempDir()
		fakePaneTree(t, root)
		_, err := ScanPaneDir(root, 100)
		require.NoError(t, err)
		require.NoError(t, os.Remove(filepath.Join(root, "200", "stat")))
		writeChildFiles(t, root, map[string]string{"100": ""})
		tb, err := ScanPaneDir(root, 100)
		require.NoError(t, err)
		assert.NotContains(t, tablePIDs(tb), 200)
	})
	t.Run("state and threads alone", func(t *testing.T) {
		t.Cleanup(forgetPaneScans)
		root := t.TempDir()
		fakePaneTree(t, root)
		_, err := ScanPaneDir(root, 100)
		require.NoError(t, err)
		writeFakeProc(t, root, map[string]string{"201": "201 (node) S 200 200 100 34816 200 200\n",
			"200": "200 (agent) R 100 200 100 34816 200 200\n"}, map[string]string{"200": "agent\x00--resumed\x00"})
		writeChildFiles(t, root, map[string]string{"200": "201 "})
		tb, err := ScanPaneDir(root, 100)
		require.NoError(t, err)
		assert.Equal(t, []int{100, 200}, tablePIDs(tb), "running is no change of the tree")
		p, ok := tb.Proc(200)
		require.True(t, ok)
		assert.Equal(t, []string{"agent", "--resumed"}, p.Args, "command lines are read afresh")
	})
}

// The real /proc: what a pane's program does between two sends is seen by the next one's scan.
func TestScanPaneSeesForkAndExecOfTheRealTree(t *testing.T) {
	t.Cleanup(forgetPaneScans)
	sh := exec.Command("sh")
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its group ends with it, the sleep too
	in, err := sh.StdinPipe()
	require.NoError(t, err)
	out, err := sh.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, sh.Start())
	t.Cleanup(func() { in.Close(); _ = syscall.Kill(-sh.Process.Pid, syscall.SIGKILL); _ = sh.Wait() })
	lines := bufio.NewReader(out)
	run := func(cmd string) {
		t.Helper()
		_, err := io.WriteString(in, cmd+"\necho done\n")
		require.NoError(t, err)
		line, err := lines.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "done\n", line)
	}
	pid := sh.Process.Pid
	scan := func() *Table {
		t.Helper()
		tb, err := ScanPane(pid)
		require.NoError(t, err)
		return tb
	}
	tb := scan()
	require.Empty(t, tb.Descendants(pid))
	tb = scan() // taken again, as a second send takes it
	require.Empty(t, tb.Descendants(pid))

	run("sleep 300 >/dev/null &")
	kids := scan().Descendants(pid)
	require.Len(t, kids, 1, "a child forked since the last scan is in the tree")
	// The child runs sh's fork until its exec of sleep: each scan after sees which.
	deadline := time.Now().Add(10 * time.Second)
	for kids[0].Comm != "sleep" {
		require.True(t, time.Now().Before(deadline), "the child's exec is never seen: %+v", kids[0])
		time.Sleep(10 * time.Millisecond)
		kids = scan().Descendants(pid)
		require.Len(t, kids, 1)
	}

	// exec keeps the pid and start time: the next scan names the new program and its arguments.
	_, err = io.WriteString(in, "exec sleep 301\n")
	require.NoError(t, err)
	deadline = time.Now().Add(10 * time.Second)
	for {
		p, ok := scan().Proc(pid)
		require.True(t, ok)
		if p.Comm == "sleep" {
			assert.Equal(t, []string{"sleep", "301"}, p.Args)
			break
		}
		require.True(t, time.Now().Before(deadline), "the exec is never seen: %+v", p)
		time.Sleep(10 * time.Millisecond)
	}
}
