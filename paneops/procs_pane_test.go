package paneops

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/proc"
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
	tb, err := proc.ScanPaneDir(root, 100, 401)
	require.NoError(t, err)
	var got []int
	for pid := range tb.Procs {
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
	tb, err := proc.ScanPaneDir(root, 100)
	require.NoError(t, err)
	assert.Len(t, tb.Procs, 4, "the whole table")
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
	var part, full *proc.Table
	require.Eventually(t, func() bool {
		var err error
		part, err = proc.ScanPane(cmd.Process.Pid, os.Getpid())
		require.NoError(t, err)
		return len(part.Descendants(cmd.Process.Pid)) == 3
	}, 10*time.Second, 10*time.Millisecond, "the tree of three is seen")
	full, err := proc.Scan()
	require.NoError(t, err)
	assert.Equal(t, pids(full.Descendants(cmd.Process.Pid)), pids(part.Descendants(cmd.Process.Pid)))
	assert.Equal(t, full.Ancestors(os.Getpid()), part.Ancestors(os.Getpid()))
	assert.Less(t, len(part.Procs), len(full.Procs))
}

// panesFixture is a fake /proc of two tmux panes and what surrounds them:
//
//	1 init ─ 40 subreaper ─ 50 tmux ─┬ 100 bash (pane) ─ 101 node (3 threads) ─ 102 sh ─ 103 deep-agent
//	                                 ├ 200 bash (pane) ─ 201 make
//	                                 └ 300 bash (a pane not searched) ─ 301 far-agent
//	1 ─ 110 orphan-agent (sid 100) ─ 111 its child   (adopted by init)
//	40 ─ 210 sleep (sid 200)                         (adopted by the subreaper above tmux)
//	1 ─ 500 sshd (sid 500) ─ 501 x                   (outside every pane)
//	1 ─ 600 sh ─ 601 wcomm (the caller)
func panesFixture(t *testing.T, children bool) string {
	root := t.TempDir()
	writeFakeProc(t, root, map[string]string{
		"1":   "1 (init) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
		"40":  "40 (subreaper) S 1 40 40 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
		"50":  "50 (tmux: server) S 40 50 50 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
		"100": "100 (bash) S 50 100 100 34816 101 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
		"101": "101 (node) S 100 101 100 34816 101 0 0 0 0 0 0 0 0 0 20 0 3 0\n",
		"102": "102 (sh) S 101 101 100 34816 101 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
		"103": "103 (sleep) S 102 101 100 34816 101 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
		"110": "110 (sleep) S 1 110 100 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
		"111": "111 (sleep) S 110 110 100 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
		"200": "200 (bash) S 50 200 200 34817 200 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
		"201": "201 (make) S 200 201 200 34817 200 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
		"210": "210 (sleep) S 40 210 200 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
		"300": "300 (bash) S 50 300 300 34818 300 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
		"301": "301 (sleep) S 300 301 300 34818 300 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
		"500": "500 (sshd) S 1 500 500 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
		"501": "501 (x) S 500 500 500 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
		"600": "600 (sh) S 1 600 600 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
		"601": "601 (wcomm) S 600 600 600 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
	}, map[string]string{
		"101": "node\x00/usr/bin/codex\x00",
		"103": "deep-agent\x00300\x00",
		"110": "orphan-agent\x00300\x00",
		"210": "sleep\x00late-agent\x00",
		"301": "far-agent\x00",
		"601": "wcomm\x00find\x00deep-agent\x00",
	})
	if children {
		// 101 has three threads; its child 102 was forked by the third.
		writeChildren(t, root, map[string][]string{
			"1": {"40 110 500 600 "}, "40": {"50 210 "}, "50": {"100 200 300 "}, "100": {"101 "},
			"101": {"", "", "102 "}, "102": {"103 "}, "110": {"111 "}, "200": {"201 "}, "300": {"301 "},
			"500": {"501 "}, "600": {"601 "},
		})
	}
	return root
}

func TestScanPanesReadsThePanesTreesAndTheirOrphans(t *testing.T) {
	root := panesFixture(t, true)
	tb, err := proc.ScanPanesDir(root, []int{100, 200}, 601)
	require.NoError(t, err)
	full, err := proc.ScanProcDir(root)
	require.NoError(t, err)
	for _, pane := range []int{100, 200} {
		assert.Equal(t, pids(full.Descendants(pane)), pids(tb.Descendants(pane)), "pane %d's tree as the whole table has it", pane)
	}
	assert.Equal(t, []int{101, 102, 103, 110, 111}, pids(tb.Descendants(100)), "four levels deep, and the orphan init adopted")
	assert.Equal(t, []int{201, 210}, pids(tb.Descendants(200)), "and the orphan the subreaper above tmux adopted")
	assert.Equal(t, full.Ancestors(601), tb.Ancestors(601))
	for _, pid := range []int{301, 501} {
		_, ok := tb.Procs[pid]
		assert.False(t, ok, "process %d lies below no searched pane and no pane's ancestor: not read", pid)
	}

	panes := []Pane{{ID: "%1", PID: 100}, {ID: "%2", PID: 200}}
	ex := Exclude{PIDs: tb.Ancestors(601)}
	for agent, want := range map[string]messages.PaneID{"deep-agent": "%1", "codex": "%1", "orphan-agent": "%1", "late-agent": "%2"} {
		m := Find(panes, tb, agent, ex)
		if assert.Len(t, m, 1, agent) {
			assert.Equal(t, want, m[0].Pane.ID, agent)
			assert.Equal(t, Find(panes, full, agent, ex), m, agent)
		}
	}
	assert.Empty(t, Find(panes, tb, "far-agent", ex), "a pane not searched")
}

// Told the server's other panes, a find does not read their processes to learn whether they are
// orphans of a searched pane's session (each leads a session of its own), and still finds every
// orphan.
func TestScanPanesBesideSkipsTheServersOtherPanes(t *testing.T) {
	root := panesFixture(t, true)
	before, err := proc.ScanPanesDir(root, []int{100, 200}, 601)
	require.NoError(t, err)
	_, read := before.Procs[300]
	require.True(t, read, "without the server's panes, pane 300 is read as a child of tmux")

	tb, err := proc.ScanPanesBesideDir(root, []int{100, 200}, []int{100, 200, 300}, 601)
	require.NoError(t, err)
	_, read = tb.Procs[300]
	assert.False(t, read, "another pane of the server is not read")
	assert.Equal(t, []int{101, 102, 103, 110, 111}, pids(tb.Descendants(100)), "the orphan init adopted")
	assert.Equal(t, []int{201, 210}, pids(tb.Descendants(200)), "the orphan the subreaper above tmux adopted")
	assert.Equal(t, before.Ancestors(601), tb.Ancestors(601))
}

// An orphan goes to the first living thread of its reaper, its leader while it lives: above the
// panes a find reads only the leader's children (init may run a dozen threads), and every
// thread's when the leader has exited.
func TestScanPanesReadsTheReapersLeaderThread(t *testing.T) {
	for _, c := range []struct {
		name, state string
		threads     []string // init's threads' children lists
		readOther   bool
	}{
		{"leader living", "S", []string{"40 110 500 600 ", "", "700 "}, false},
		{"leader exited", "Z", []string{"40 500 600 ", "", "110 700 "}, true},
	} {
		root := panesFixture(t, true)
		// init runs three threads; its third forked 700, a service of its own session.
		writeFakeProc(t, root, map[string]string{
			"1":   "1 (init) " + c.state + " 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 3 0\n",
			"700": "700 (svc) S 1 700 700 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
		}, map[string]string{"700": "svc\x00deep-agent\x00"})
		writeChildren(t, root, map[string][]string{"1": c.threads})
		tb, err := proc.ScanPanesDir(root, []int{100, 200}, 601)
		require.NoError(t, err, c.name)
		full, err := proc.ScanProcDir(root)
		require.NoError(t, err, c.name)
		assert.Equal(t, []int{101, 102, 103, 110, 111}, pids(tb.Descendants(100)), "%s: the orphan init adopted", c.name)
		assert.Equal(t, pids(full.Descendants(100)), pids(tb.Descendants(100)), c.name)
		_, read := tb.Procs[700]
		assert.Equal(t, c.readOther, read, "%s: the child of init's third thread read", c.name)
		panes := []Pane{{ID: "%1", PID: 100}, {ID: "%2", PID: 200}}
		ex := Exclude{PIDs: tb.Ancestors(601)}
		assert.Equal(t, Find(panes, full, "deep-agent", ex), Find(panes, tb, "deep-agent", ex), c.name)
	}
}

func TestScanPanesReadsTheWholeTableWithoutChildrenFiles(t *testing.T) {
	root := panesFixture(t, false)
	tb, err := proc.ScanPanesDir(root, []int{100, 200}, 601)
	require.NoError(t, err)
	assert.Len(t, tb.Procs, 18, "the whole table")
	assert.Equal(t, []int{101, 102, 103, 110, 111}, pids(tb.Descendants(100)))
	m := Find([]Pane{{ID: "%1", PID: 100}, {ID: "%2", PID: 200}}, tb, "late-agent", Exclude{})
	require.Len(t, m, 1)
	assert.Equal(t, messages.PaneID("%2"), m[0].Pane.ID)
}

func TestScanPanesFindsARealAgentAtDepth(t *testing.T) {
	// A session leader (a pane's process, as tmux starts it) with an agent four levels below it,
	// and an orphan of its session: a background job of a subshell that exits at once. The names
	// come from the environment, so only the two agents' command lines hold them.
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	level := filepath.Join(t.TempDir(), "level.sh")
	require.NoError(t, os.WriteFile(level, []byte(`if [ "$1" -gt 0 ]; then bash "$0" $(($1 - 1)); true; else exec -a "$DEEP" sleep 60; fi`+"\n"), 0o600))
	marker := fmt.Sprintf("walk-agent-%d", os.Getpid())
	cmd := exec.Command(bash, "-c", `bash "$0" 2 & (exec -a "$ORPHAN" sleep 60 &); wait`, level)
	cmd.Env = append(os.Environ(), "DEEP="+marker+"-deep", "ORPHAN="+marker+"-orphan")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	pane := Pane{ID: "%9", PID: cmd.Process.Pid}
	find := func(tb *proc.Table, agent string) []proc.Process {
		m := Find([]Pane{pane}, tb, agent, Exclude{PIDs: tb.Ancestors(os.Getpid())})
		if len(m) != 1 {
			return nil
		}
		return m[0].Procs
	}
	var tb *proc.Table
	require.Eventually(t, func() bool {
		var err error
		tb, err = proc.ScanPanes([]int{pane.PID}, os.Getpid())
		require.NoError(t, err)
		// comm is read with the tree and the command line later: until both are of after the
		// exec, the agent may show as the bash it was.
		deep, orphan := find(tb, marker+"-deep"), find(tb, marker+"-orphan")
		return len(deep) == 1 && deep[0].Comm == "sleep" && len(orphan) == 1 && orphan[0].Comm == "sleep"
	}, 10*time.Second, 10*time.Millisecond, "the agent and the orphan are found")
	agent, orphan := find(tb, marker+"-deep")[0], find(tb, marker+"-orphan")[0]
	t.Cleanup(func() { _ = syscall.Kill(orphan.PID, syscall.SIGKILL) })
	full, err := proc.Scan()
	require.NoError(t, err)
	anc := full.Ancestors(agent.PID)
	require.GreaterOrEqual(t, len(anc), 4)
	assert.Equal(t, pane.PID, anc[3], "the agent runs three levels below the pane's process")
	assert.NotEqual(t, pane.PID, orphan.PPID, "the orphan was adopted outside the tree")
	assert.Equal(t, pane.PID, orphan.SID)
	assert.Equal(t, pids(full.Descendants(pane.PID)), pids(tb.Descendants(pane.PID)), "the same tree as the whole table's")
	assert.Less(t, len(tb.Procs), len(full.Procs))
}

// TestScanPanesManyPanesAsTheWholeTable: with enough panes that their trees are read by several
// workers at once, and trees that meet (one pane's process below another's), the panes' trees,
// the command lines and the matches are those of the whole table.
func TestScanPanesManyPanesAsTheWholeTable(t *testing.T) {
	root := t.TempDir()
	stat, cmdline, children := map[string]string{}, map[string]string{}, map[string][]string{}
	add := func(pid, ppid, sid int, comm, argv string) {
		p := strconv.Itoa(pid)
		stat[p] = fmt.Sprintf("%d (%s) S %d %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0\n", pid, comm, ppid, pid, sid)
		cmdline[p] = argv
		children[strconv.Itoa(ppid)] = []string{strings.TrimSpace(strings.Join(children[strconv.Itoa(ppid)], "")+" "+p) + " "}
	}
	add(50, 1, 50, "tmux", "tmux\x00")
	var panes []Pane
	var pidsOf []int
	for i := range 120 {
		pane := 1000 + 10*i
		add(pane, 50, pane, "bash", "bash\x00")
		add(pane+1, pane, pane, "node", fmt.Sprintf("node\x00/usr/bin/agent-%d\x00", i))
		add(pane+2, pane+1, pane, "sleep", "sleep\x0060\x00")
		panes = append(panes, Pane{ID: messages.PaneID(fmt.Sprintf("%%%d", i)), PID: pane})
		pidsOf = append(pidsOf, pane)
	}
	// Pane 119's process lies below pane 0's tree as well: the trees meet.
	add(5000, 1002, 1000, "sleep", "sleep\x00agent-119-twin\x00")
	writeFakeProc(t, root, stat, cmdline)
	writeChildren(t, root, children)

	tb, err := proc.ScanPanesDir(root, pidsOf)
	require.NoError(t, err)
	full, err := proc.ScanProcDir(root)
	require.NoError(t, err)
	for _, pid := range pidsOf {
		require.Equal(t, pids(full.Descendants(pid)), pids(tb.Descendants(pid)), "pane %d's tree", pid)
	}
	for _, agent := range []string{"agent-7", "agent-119", "agent-119-twin", "sleep", "nobody"} {
		assert.Equal(t, Find(panes, full, agent, Exclude{}), Find(panes, tb, agent, Exclude{}), agent)
	}
	m := Find(panes, tb, "agent-119", Exclude{})
	require.Len(t, m, 2, "pane 119, and pane 0 through the twin below it")
	assert.Equal(t, messages.PaneID("%0"), m[0].Pane.ID)
	assert.Equal(t, messages.PaneID("%119"), m[1].Pane.ID)
}
