package loops

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

func TestDecide(t *testing.T) {
	l := settings.Loops{Rate: 3, Per: 10 * time.Minute, ChainDepth: 4}
	tests := []struct {
		name          string
		depth, recent int
		want          Action
		key           string
	}{
		{name: "a chain's first request is never held", depth: 1, recent: 99, want: Accept},
		{name: "within both caps", depth: 4, recent: 2, want: Accept},
		{name: "past the chain's depth", depth: 5, want: Hold, key: "chain-20260117-120000-a1b2"},
		{name: "at the pair's rate", depth: 2, recent: 3, want: Hold, key: "pair-p6-p7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Decide(l, "%6", "%7", "20260117-120000-a1b2", tt.depth, tt.recent)
			assert.Equal(t, tt.want, v.Action)
			assert.Equal(t, tt.key, v.Key)
			if tt.want == Hold {
				assert.Contains(t, v.Why, "loop")
			}
		})
	}
	assert.Equal(t, Accept, Decide(settings.Loops{}, "%6", "%7", "c", 1000, 1000).Action, "no caps: nothing held")
}

func TestPolicy(t *testing.T) {
	l := settings.Loops{Inbound: []settings.InboundRule{
		{From: "%9", Policy: settings.PolicyAccept},
		{From: "codex", Policy: settings.PolicyRefuse},
		{From: "gem*", Policy: settings.PolicyHold},
	}}
	assert.Equal(t, Accept, Policy(l, "%1", "%7", "%1", "claude").Action, "no rule matches: accept")
	assert.Equal(t, Accept, Policy(l, "%9", "%7", "%9", "codex").Action, "the first rule that matches applies")
	v := Policy(l, "%2", "%7", "%2", "codex")
	assert.Equal(t, Refuse, v.Action)
	assert.Contains(t, v.Why, `from "codex", policy refuse`)
	v = Policy(l, "%3", "%7", "%3", "gemini")
	assert.Equal(t, Hold, v.Action)
	assert.Equal(t, "source-p3-p7", v.Key)
	assert.Equal(t, Refuse, Policy(settings.Loops{Inbound: []settings.InboundRule{{From: "*", Policy: settings.PolicyRefuse}}}, "%3", "%7", "%3").Action,
		"a pattern matches the pane id when the agent is not known")
}

// writeRequest writes request n of a session folder with a chain (or none) and a delivery log
// state, its file dated at.
func writeRequest(t *testing.T, dir string, n int, chain string, depth int, state string, at time.Time) {
	t.Helper()
	s, err := messages.ParseSessionName(filepath.Base(dir))
	require.NoError(t, err)
	id := fmt.Sprintf("20260117-120000-%04x", n)
	h := messages.RequestHeader{Capability: messages.ReadOnly, ID: id, StartedAt: s.StartedAt, Orchestrator: s.Orchestrator,
		Worker: s.Worker, Bytes: -1, Chain: chain, Depth: depth}
	p := filepath.Join(dir, messages.SeqFileName(n, messages.KindRequest))
	require.NoError(t, os.WriteFile(p, []byte(h.String()+"\nbody\n"), 0o600))
	require.NoError(t, os.Chtimes(p, at, at))
	if state != "" {
		require.NoError(t, exchange.LogEvent(dir, n, state, nil, at))
	}
}

func TestRecentCountsChainedRequestsOfTheWindow(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "20260117-120000-o6-w7")
	require.NoError(t, os.Mkdir(dir, 0o700))
	now := time.Now()
	writeRequest(t, dir, 1, "20260117-110000-c0de", 2, "", now.Add(-time.Hour)) // before the window
	writeRequest(t, dir, 3, "20260117-110000-c0de", 3, "", now.Add(-time.Minute))
	writeRequest(t, dir, 5, "", 0, "", now.Add(-time.Minute)) // a chain's first: not counted
	writeRequest(t, dir, 7, "20260117-110000-c0de", 5, "", now)
	assert.Equal(t, 2, Recent(dir, now.Add(-10*time.Minute)))
}

func TestParentAndChild(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	in := filepath.Join(root, "20260117-120000-o6-w7") // %6 sends to %7
	require.NoError(t, os.Mkdir(in, 0o700))
	assert.Nil(t, Parent(root, "%7", "", now.Add(-time.Minute)), "no request addressed to %7")

	writeRequest(t, in, 1, "", 0, exchange.StateHeld, now)
	assert.Nil(t, Parent(root, "%7", "", now.Add(-time.Minute)), "a request held has not reached %7")

	writeRequest(t, in, 3, "20260117-110000-c0de", 4, exchange.StateSubmitted, now)
	x := Parent(root, "%7", "", now.Add(-time.Minute))
	require.NotNil(t, x)
	chain, depth := Child(x)
	assert.Equal(t, "20260117-110000-c0de", chain)
	assert.Equal(t, 5, depth)
	assert.Nil(t, Parent(root, "%6", "", now.Add(-time.Minute)), "%6 sent it: it handles nothing")

	// Answered: it still counts within the window, not after.
	resp := messages.ResponseHeader{ID: x.ID, StartedAt: x.StartedAt, Orchestrator: "%6", Worker: "%7", RequestBytes: -1}
	require.NoError(t, os.WriteFile(x.ResponsePath, []byte(resp.String()+"\ndone\n"), 0o600))
	assert.NotNil(t, Parent(root, "%7", "", now.Add(-time.Minute)))
	assert.Nil(t, Parent(root, "%7", "", now.Add(time.Minute)), "answered before the window")

	chain, depth = Child(nil)
	assert.Equal(t, "", chain)
	assert.Equal(t, 0, depth)
}

// An old request left open behind one answered long ago is not what the pane handles now.
func TestParentStopsAtAnAnsweredOne(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	in := filepath.Join(root, "20260117-120000-o6-w7")
	require.NoError(t, os.Mkdir(in, 0o700))
	writeRequest(t, in, 1, "", 0, exchange.StateSubmitted, now.Add(-time.Hour)) // left open
	writeRequest(t, in, 3, "", 0, exchange.StateSubmitted, now.Add(-time.Hour))
	x := exchange.LoadExchange(in, 3, false)
	resp := messages.ResponseHeader{ID: x.ID, StartedAt: x.StartedAt, Orchestrator: "%6", Worker: "%7", RequestBytes: -1}
	require.NoError(t, os.WriteFile(x.ResponsePath, []byte(resp.String()+"\ndone\n"), 0o600))
	old := now.Add(-time.Hour)
	require.NoError(t, os.Chtimes(x.ResponsePath, old, old))
	assert.Nil(t, Parent(root, "%7", "", now.Add(-10*time.Minute)))
}

// A root that has not changed for a while is not listed again at each send, and a folder made
// in it since (a new orchestrator's requests to the pane) is still found at the next look.
func TestParentSeesAFolderMadeAfterTheRootSettled(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	old := now.Add(-time.Minute)
	require.NoError(t, os.Chtimes(root, old, old))
	assert.Nil(t, Parent(root, "%7", "", now.Add(-time.Minute)), "nothing addressed to %7")
	assert.Nil(t, Parent(root, "%7", "", now.Add(-time.Minute)), "nothing addressed to %7, as remembered")

	in := filepath.Join(root, "20260117-120000-o6-w7")
	require.NoError(t, os.Mkdir(in, 0o700))
	writeRequest(t, in, 1, "20260117-110000-c0de", 2, exchange.StateSubmitted, now)
	x := Parent(root, "%7", "", now.Add(-time.Minute))
	require.NotNil(t, x, "the folder made since the root was listed")
	assert.Equal(t, 1, x.Seq)
}
