package fleet

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/tmuxcomm/core/coretest"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// A find that matches nothing says what runs where from the panes' trees it has just read, never
// from a second read of the whole process table (thousands of processes, ten times the find).
func TestFindOfNothingListsThePanesFromTheTreesItRead(t *testing.T) {
	f := coretest.NewTmux("%1", "%2")
	cfg := coretest.Config(t, f, "%1")
	whole := 0
	cfg.Procs = func() (*proc.Table, error) {
		whole++
		return nil, errors.New("the whole table is not read")
	}
	cfg.PanesProcs = func(pids, leaders []int, also ...int) (*proc.Table, error) {
		return proc.NewProcTable([]proc.Process{
			{PID: 1000, PPID: 1, SID: 1000, Comm: "bash", Args: []string{"bash"}},
			{PID: 1001, PPID: 1, SID: 1001, Comm: "bash", Args: []string{"bash"}},
			{PID: 1002, PPID: 1001, SID: 1001, Comm: "vim", Args: []string{"vim", "notes"}},
		}), nil
	}
	finder := &Finder{Config: cfg}
	_, err := finder.Find(context.Background(), "nothing-runs-this", paneops.Scope{All: true}, false)
	require.ErrorIs(t, err, store.ErrNotFound)
	var fe *FindError
	require.ErrorAs(t, err, &fe)
	assert.Zero(t, whole, "the whole process table was read again")
	programs := map[string][]string{}
	for _, p := range fe.Panes {
		programs[string(p.ID)] = p.Programs
	}
	require.Len(t, programs, 2, "every pane in scope is listed")
	assert.Contains(t, programs["%2"], "vim", "what runs in the pane, from its tree")
}
