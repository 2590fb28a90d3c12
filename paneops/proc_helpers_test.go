package paneops

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/paneops/proc"
)

// ptable is a process table of procs, for the finds and detections these tests make.
func ptable(procs ...proc.Process) *proc.Table { return proc.NewProcTable(procs) }

// pids are the pids of procs, in order.
func pids(procs []proc.Process) []int {
	out := make([]int, len(procs))
	for i, p := range procs {
		out[i] = p.PID
	}
	return out
}

// writeFakeProc writes a fake /proc under root: stat and cmdline files by pid.
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
