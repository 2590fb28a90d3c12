package paneops

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeChildren writes the children files of a fake /proc: pid -> its threads' children lists.
func writeChildren(t *testing.T, root string, children map[string][]string) {
	t.Helper()
	for pid, lists := range children {
		for i, list := range lists {
			dir := filepath.Join(root, pid, "task", pid)
			if i > 0 {
				dir = filepath.Join(root, pid, "task", pid+"0"+strconv.Itoa(i))
			}
			require.NoError(t, os.MkdirAll(dir, 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "children"), []byte(list), 0o600))
		}
	}
}

func TestScanPaneReadsOnlyThePanesTree(t *testing.T) {
	root := t.TempDir()
	//   1 init ─ 50 tmux ─ 100 bash (pane, terminal's foreground group 200)
	//                         ├ 101 make ─ 102 cc   (a child of bash's second thread)
	//                         └ 200 agent (group leader) ─ 201 node
	//   1 ─ 300 other-pane-bash ─ 301 sleep          (not read)
	//   1 ─ 400 sh ─ 401 wcomm (the caller)
	writeFakeProc(t, root, map[string]string{
		"1":   "1 (init) S 0 1 1 0 0 -1\n",
		"50":  "50 (tmux) S 1 50 50 0 0 -1\n",
		"100": "100 (bash) S 50 100 100 34816 200 200\n",
		"101": "101 (make) S 100 101 100 34816 200 200\n",
		"102": "102 (cc) S 101 101 100 34816 200 200\n",
		"200": "200 (agent) S 100 200 100 34816 200 200\n",
		"201": "201 (node) S 200 200 100 34816 200 200\n",
		"300": "300 (bash) S 1 300 300 0 0 -1\n",
		"301": "301 (sleep) S 300 300 300 0 0 -1\n",
		"400": "400 (sh) S 1 400 400 0 0 -1\n",
		"401": "401 (wcomm) S 400 400 400 0 0 -1\n",
	}, map[string]string{"200": "agent\x00--flag\x00"})
	writeChildren(t, root, map[string][]string{
		"100": {"200 ", "101 "}, "101": {"102 "}, "200": {"201 "}, "300": {"301 "}, "400": {"401 "},
	})
	tb, err := scanPaneDir(root, 100, 401)
	require.NoError(t, err)
	var got []int
	for pid := range tb.procs {
		got = append(got, pid)
	}
	assert.ElementsMatch(t, []int{1, 100, 101, 102, 200, 201, 400, 401}, got, "the pane's tree, the caller's ancestors, nothing else")
	assert.Equal(t, []int{101, 102, 200, 201}, pids(tb.Descendants(100)))
	leader, group, ok := tb.Foreground(100)
	require.True(t, ok)
	assert.Equal(t, 200, leader.PID)
	assert.Equal(t, []int{200, 201}, pids(group))
	assert.Equal(t, []string{"agent", "--flag"}, leader.Args)
	assert.Equal(t, []int{401, 400, 1}, tb.Ancestors(401))
}

func TestScanPaneReadsEverythingWhenTheForegroundLeaderIsGone(t *testing.T) {
	root := t.TempDir()
	// The foreground group 200 lost its leader; its member 201 was reparented to init, out of
	// the pane's tree: only the whole table finds it by its group.
	writeFakeProc(t, root, map[string]string{
		"1":   "1 (init) S 0 1 1 0 0 -1\n",
		"100": "100 (bash) S 1 100 100 34816 200 200\n",
		"201": "201 (node) S 1 200 100 34816 200 200\n",
		"300": "300 (bash) S 1 300 300 0 0 -1\n",
	}, nil)
	writeChildren(t, root, map[string][]string{"1": {"100 201 300 "}})
	tb, err := scanPaneDir(root, 100)
	require.NoError(t, err)
	assert.Len(t, tb.procs, 4, "the whole table")
	leader, _, ok := tb.Foreground(100)
	require.True(t, ok)
	assert.Equal(t, 201, leader.PID)
}

func TestScanPaneMatchesTheFullScan(t *testing.T) {
	// A real tree: a shell with a child and a grandchild. Both scans see the same descendants.
	cmd := exec.Command("sh", "-c", "sleep 60 & sh -c 'sleep 61 & wait' & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	var part, full *ProcTable
	require.Eventually(t, func() bool {
		var err error
		part, err = ScanPane(cmd.Process.Pid, os.Getpid())
		require.NoError(t, err)
		return len(part.Descendants(cmd.Process.Pid)) == 3
	}, 10*time.Second, 10*time.Millisecond, "the tree of three is seen")
	full, err := ScanProcs()
	require.NoError(t, err)
	assert.Equal(t, pids(full.Descendants(cmd.Process.Pid)), pids(part.Descendants(cmd.Process.Pid)))
	assert.Equal(t, full.Ancestors(os.Getpid()), part.Ancestors(os.Getpid()))
	assert.Less(t, len(part.procs), len(full.procs))
}
