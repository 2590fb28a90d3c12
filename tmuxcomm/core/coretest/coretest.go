// Package coretest is the rooms' shared tmux server in memory, for their unit tests: panes by id,
// every delivery recorded, a pane that refuses, and a hook that decides what a delivery returns.
// It satisfies core.Tmux and holds no process of its own; the real server is for the end-to-end
// tests (internal/tmuxtest).
package coretest

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/tmuxcomm/core"
)

// Tmux is a tmux server in memory. Lock Mu to read or change its fields while calls may run.
type Tmux struct {
	Mu         sync.Mutex
	Server     paneops.ServerInfo
	PaneMap    map[messages.PaneID]paneops.Pane
	Deliveries []paneops.Delivery
	Refuse     map[messages.PaneID]bool
	// Result, when set, decides what a delivery returns (after it is recorded).
	Result func(d paneops.Delivery) (paneops.DeliveryResult, error)
}

// NewTmux returns a server whose panes are ids, in session "s", each running "worker".
func NewTmux(ids ...string) *Tmux {
	f := &Tmux{Server: paneops.ServerInfo{PID: 100, StartTime: 1700000000, Version: "3.3a", Socket: "/tmp/fake"},
		PaneMap: map[messages.PaneID]paneops.Pane{}, Refuse: map[messages.PaneID]bool{}}
	for i, id := range ids {
		f.PaneMap[messages.PaneID(id)] = paneops.Pane{ID: messages.PaneID(id), Session: "s", Index: i, PID: 1000 + i, Command: "worker"}
	}
	return f
}

// ServerInfo returns the server's fixed identity.
func (f *Tmux) ServerInfo(ctx context.Context) (paneops.ServerInfo, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return f.Server, nil
}

// Panes returns every pane, whatever the scope.
func (f *Tmux) Panes(ctx context.Context, scope paneops.Scope) ([]paneops.Pane, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	var out []paneops.Pane
	for _, p := range f.PaneMap {
		out = append(out, p)
	}
	return out, nil
}

// Pane returns one pane by id, or tmux's own "can't find pane" error.
func (f *Tmux) Pane(ctx context.Context, target string) (paneops.Pane, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	p, ok := f.PaneMap[messages.PaneID(target)]
	if !ok {
		return paneops.Pane{}, fmt.Errorf("can't find pane: %s: %w", target, paneops.ErrPaneNotFound)
	}
	return p, nil
}

// Deliver records d and reports it pasted (and submitted when d asks), unless the pane is gone
// or refuses.
func (f *Tmux) Deliver(ctx context.Context, d paneops.Delivery) (paneops.DeliveryResult, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if _, ok := f.PaneMap[d.Pane]; !ok {
		return paneops.DeliveryResult{}, paneops.ErrPaneNotFound
	}
	if f.Refuse[d.Pane] {
		return paneops.DeliveryResult{Buffer: "wcomm-x"}, paneops.ErrRefused
	}
	f.Deliveries = append(f.Deliveries, d)
	if f.Result != nil {
		return f.Result(d)
	}
	now := time.Now()
	return paneops.DeliveryResult{Buffer: "wcomm-x", Pasted: true, Submitted: d.Submit, PastedAt: now, EnterAt: now}, nil
}

// Resume records d and reports it finished.
func (f *Tmux) Resume(ctx context.Context, d paneops.Delivery) (paneops.DeliveryResult, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.Deliveries = append(f.Deliveries, d)
	return paneops.DeliveryResult{Pasted: true, Submitted: true}, nil
}

// Marks reports no mark on any pane.
func (f *Tmux) Marks(ctx context.Context, pane messages.PaneID, mark string) (string, string, error) {
	return "", "", nil
}

// Delivered returns a copy of the deliveries so far.
func (f *Tmux) Delivered() []paneops.Delivery {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return append([]paneops.Delivery(nil), f.Deliveries...)
}

// Config returns a room's config over f with a root in t's temp folder, the caller's pane self,
// and no process table (a unit test sees only the panes of f).
func Config(t testing.TB, f *Tmux, self string) *core.Config {
	t.Helper()
	c := core.New(filepath.Join(t.TempDir(), "root"), f)
	c.Self = messages.PaneID(self)
	c.Procs = func() (*proc.Table, error) { return nil, fmt.Errorf("no process table in unit tests") }
	c.PaneProcs = nil
	c.PanesProcs = nil
	return c
}

// PermissionRequest is a Claude Code permission prompt to run a Bash command, as its hook reads it.
func PermissionRequest(t testing.TB) messages.PermissionRequest {
	t.Helper()
	var in messages.HookInput
	if err := json.Unmarshal([]byte(`{"session_id":"s1","hook_event_name":"PermissionRequest","tool_name":"Bash",
		"tool_input":{"command":"touch k1.txt","description":"Run the requested command"}}`), &in); err != nil {
		t.Fatal(err)
	}
	p, err := messages.ParsePermissionRequest("claude", in)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
