package relay_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/relay"
)

func mirror(id string) relay.MirrorOptions {
	return relay.MirrorOptions{Host: "box", ID: id, Worker: "%7", Capability: messages.ReadOnly, Body: []byte("the relayed task"),
		State: exchange.StateQueued, Detail: map[string]string{"reason": "the pane is busy"}}
}

// The orchestrator's host keeps a copy of a request relayed to another host, in a session folder
// marked with the host, so history, show and await see it as any other; mirrored again (a retry),
// it is the same copy.
func TestMirrorRequest(t *testing.T) {
	w := newWorld(t, false)
	id, err := w.station.NewID()
	require.NoError(t, err)
	x, err := w.station.MirrorRequest(context.Background(), mirror(id))
	require.NoError(t, err)
	assert.Equal(t, id, x.ID)
	assert.Equal(t, "box", exchange.MirrorHost(x))
	assert.Equal(t, messages.PaneID("%0"), x.Orchestrator)
	assert.Equal(t, messages.PaneID("%7"), x.Worker, "the worker's pane there")
	assert.Equal(t, exchange.StateQueued, x.State, "what the remote reported")
	assert.Equal(t, exchange.StatusPending, x.Status)
	require.NotNil(t, x.Request())
	assert.Equal(t, "the relayed task", string(bodyOf(t, x)))
	assert.False(t, relay.RelayedHere(x.Dir), "a mirror is not a relayed request")
	var hosts []string
	for _, ev := range x.Events {
		hosts = append(hosts, ev.Detail["host"])
	}
	assert.Equal(t, []string{"box", "box"}, hosts, "each event names the host")

	again, err := w.station.MirrorRequest(context.Background(), mirror(id))
	require.NoError(t, err)
	assert.Equal(t, x.RequestPath, again.RequestPath, "one copy")

	found, err := w.station.ByID(w.root(), id)
	require.NoError(t, err)
	assert.Equal(t, x.RequestPath, found.RequestPath, "found by its id")
	shown, err := w.station.Show(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, x.RequestPath, shown.RequestPath)
}

// A mirror and a local send to the same pane number never share a session folder, either way round.
func TestMirrorAndLocalSessionsStayApart(t *testing.T) {
	w := newWorld(t, false)
	local, err := w.send.Send(context.Background(), core.SendOptions{ID: "20260101-000000-aaaa", To: "%7", Body: []byte("local")})
	require.NoError(t, err)
	id, err := w.station.NewID()
	require.NoError(t, err)
	m, err := w.station.MirrorRequest(context.Background(), mirror(id))
	require.NoError(t, err)
	assert.NotEqual(t, local.Dir, m.Dir)
	after, err := w.send.Send(context.Background(), core.SendOptions{ID: "20260101-000000-bbbb", To: "%7", Body: []byte("local again")})
	require.NoError(t, err)
	assert.Equal(t, local.Dir, after.Dir, "a local send after a mirror goes to the local folder")
	assert.Empty(t, exchange.MirrorHost(after))
	id2, err := w.station.NewID()
	require.NoError(t, err)
	m2, err := w.station.MirrorRequest(context.Background(), mirror(id2))
	require.NoError(t, err)
	assert.Equal(t, m.Dir, m2.Dir, "the host's mirrors share theirs")
	assert.Greater(t, m2.Seq, m.Seq)
}

// What another host reports cannot name a path here: a host, id or pane that is not one is
// refused, and nothing is written.
func TestMirrorRequestRefusesHostileNames(t *testing.T) {
	w := newWorld(t, false)
	var cases []relay.MirrorOptions
	for _, host := range []string{"", "../x", "a/b", "-rf", "box\n", "x y"} {
		o := mirror("20260101-000000-abcd")
		o.Host = host
		cases = append(cases, o)
	}
	for _, id := range hostile {
		cases = append(cases, mirror(id))
	}
	for _, pane := range []messages.PaneID{"", "7", "%x", "%7/../..", "../%7"} {
		o := mirror("20260101-000000-abcd")
		o.Worker = pane
		cases = append(cases, o)
	}
	for _, o := range cases {
		_, err := w.station.MirrorRequest(context.Background(), o)
		assert.Error(t, err, "host %q id %q worker %q", o.Host, o.ID, o.Worker)
	}
	_, err := os.Stat(w.cfg.Root)
	assert.True(t, os.IsNotExist(err), "nothing written, not even the root")
	entries, _ := os.ReadDir(filepath.Dir(w.cfg.Root))
	assert.Empty(t, entries)
}

func bodyOf(t *testing.T, x *exchange.Exchange) []byte {
	t.Helper()
	full := exchange.LoadExchangeBodies(x.Dir, x.Seq, true, false)
	return []byte(full.RequestBody)
}

// A mirror made for another pane of this host (the caller a relayed send names) is that pane's.
func TestMirrorRequestForAnotherOrchestratorPane(t *testing.T) {
	w := newWorld(t, false)
	id, err := w.station.NewID()
	require.NoError(t, err)
	o := mirror(id)
	o.From = "%3"
	x, err := w.station.MirrorRequest(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, messages.PaneID("%3"), x.Orchestrator)
	assert.Regexp(t, `-o3-w7$`, x.Session)
	require.NotNil(t, x.Request(), "the request reads back: %v", x.Problems)

	for _, from := range []messages.PaneID{"3", "%x", "%3/../..", "../%3"} {
		id, err := w.station.NewID()
		require.NoError(t, err)
		o := mirror(id)
		o.From = from
		_, err = w.station.MirrorRequest(context.Background(), o)
		assert.Error(t, err, "from %q", from)
	}
	w.cfg.Self = ""
	_, err = w.station.MirrorRequest(context.Background(), mirror("20260101-000000-abcd"))
	assert.Error(t, err, "no orchestrator pane: from outside tmux, with none named")
	sessions, _, err := w.station.History(context.Background(), exchange.HistoryOptions{})
	require.NoError(t, err)
	require.Len(t, sessions, 1, "no folder for a pane that is none")
}

// Mirrors for several hosts at once each land in their own host's folder.
func TestMirrorsOfSeveralHostsAtOnce(t *testing.T) {
	w := newWorld(t, false)
	hosts := []string{"box", "cube", "dome", "east"}
	xs := make([]*exchange.Exchange, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := w.station.NewID()
			if !assert.NoError(t, err) {
				return
			}
			o := mirror(id)
			o.Host = h
			x, err := w.station.MirrorRequest(context.Background(), o)
			if assert.NoError(t, err) {
				xs[i] = x
			}
		}()
	}
	wg.Wait()
	dirs := map[string]bool{}
	for i, x := range xs {
		require.NotNil(t, x)
		assert.Equal(t, hosts[i], exchange.MirrorHost(x))
		dirs[x.Dir] = true
	}
	assert.Len(t, dirs, len(hosts), "a folder per host")
}
