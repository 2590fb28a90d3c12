package broadcast_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/tmuxcomm/broadcast"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Mode().Perm()
}

func TestBroadcastSendsOnceToEachPane(t *testing.T) {
	w := newWorld(t)
	// %2 twice, once in a list: one pane, one request.
	res, err := w.caster.Broadcast(context.Background(), opts("%2,%3", "%2"))
	require.NoError(t, err)
	require.NoError(t, messages.ValidBroadcastID(res.ID))
	require.Len(t, res.Members, 2)
	assert.Equal(t, []string{"%2", "%3"}, []string{res.Members[0].Label, res.Members[1].Label})
	sent := w.send.sends()
	require.Len(t, sent, 2)
	for _, o := range sent {
		assert.Equal(t, res.ID, o.Broadcast, "each send names the broadcast")
		require.NotNil(t, o.Target, "resolved once, by the room")
		assert.Equal(t, o.To, string(o.Target.Pane.ID))
		assert.Equal(t, "review the diff", string(o.Body))
	}
	assert.ElementsMatch(t, []string{"%2", "%3"}, []string{sent[0].To, sent[1].To})
	ids := map[string]bool{}
	for _, m := range res.Members {
		require.NotNil(t, m.Exchange)
		ids[m.Exchange.ID] = true
		assert.Equal(t, res.ID, exchange.LoadExchange(m.Exchange.Dir, m.Exchange.Seq, false).Broadcast)
	}
	assert.Len(t, ids, 2, "each target has an exchange of its own")
	assert.Len(t, res.Exchanges(), 2)

	path := filepath.Join(w.root(), store.BroadcastsDir, res.ID+".json")
	assert.Equal(t, os.FileMode(0o600), mode(t, path))
	assert.Equal(t, os.FileMode(0o700), mode(t, filepath.Dir(path)))
	rec, err := w.caster.Record(context.Background(), res.ID)
	require.NoError(t, err)
	require.Len(t, rec.Members, 2)
	assert.Equal(t, res.Members[1].Exchange.ID, rec.Members[1].Exchange)
	assert.Equal(t, res.Members[1].Exchange.Session, rec.Members[1].Session)
	assert.Equal(t, messages.PaneID("%1"), rec.From)
	assert.Contains(t, res.Say(), "broadcast "+res.ID+" to 2 panes: %2 ")
	assert.Contains(t, res.Say(), "await "+res.ID)
}

func TestBroadcastRefusedWritesNothing(t *testing.T) {
	tests := []struct {
		name    string
		targets []string
		groups  map[string][]string
		want    []string
		is      error
		usage   bool
	}{
		{name: "unknown pane", targets: []string{"%2,%9,%3"}, want: []string{`"%9"`}, is: store.ErrNotFound},
		{name: "two unknown", targets: []string{"%8", "%2", "%9"}, want: []string{`"%8"`, `"%9"`}, is: store.ErrNotFound},
		{name: "unknown group", targets: []string{"@nobody"}, groups: map[string][]string{"reviewers": {"%2"}}, want: []string{`no group "nobody"`, "@reviewers"}, is: store.ErrNotFound},
		{name: "no groups at all", targets: []string{"@nobody"}, want: []string{"none are set"}, is: store.ErrNotFound},
		{name: "group with an unknown member", targets: []string{"@reviewers"}, groups: map[string][]string{"reviewers": {"%2", "%7"}}, want: []string{`"%7"`}, is: store.ErrNotFound},
		{name: "group name that is no name", targets: []string{"@../x"}, want: []string{"group name"}, usage: true},
		{name: "own pane", targets: []string{"%2,%1"}, want: []string{"your own pane %1"}},
		{name: "empty in the list", targets: []string{"%2,,%3"}, want: []string{"empty target"}, usage: true},
		{name: "undeclared host", targets: []string{"%2", "nowhere:%3"}, want: []string{`no host "nowhere"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.groups = tt.groups
			res, err := w.caster.Broadcast(context.Background(), opts(tt.targets...))
			require.Error(t, err)
			assert.Nil(t, res)
			for _, want := range tt.want {
				assert.Contains(t, err.Error(), want)
			}
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			var usage *core.UsageError
			assert.Equal(t, tt.usage, errors.As(err, &usage), "%v", err)
			assert.Empty(t, w.send.sends(), "nothing sent")
			entries, _ := os.ReadDir(w.cfg.Root)
			for _, ent := range entries {
				assert.NotEqual(t, store.BroadcastsDir, ent.Name(), "no record")
			}
		})
	}
}

func TestBroadcastRefusesWhatItLacks(t *testing.T) {
	w := newWorld(t)
	var need *core.NeedError
	_, err := w.caster.Broadcast(context.Background(), broadcast.Options{Targets: []string{"%2"}, Send: core.SendOptions{Body: []byte(" \n")}})
	require.ErrorAs(t, err, &need)
	assert.Equal(t, core.NeedMessage, need.Need)

	_, err = w.caster.Broadcast(context.Background(), broadcast.Options{Send: core.SendOptions{Body: []byte("x")}})
	require.ErrorAs(t, err, &need)
	assert.Equal(t, core.NeedTarget, need.Need)

	_, err = w.caster.Broadcast(context.Background(), broadcast.Options{Targets: []string{"%2"}, Send: core.SendOptions{Body: []byte("x"), Agent: "no-such-agent"}})
	var usage *core.UsageError
	require.ErrorAs(t, err, &usage)

	w.cfg.Self = ""
	_, err = w.caster.Broadcast(context.Background(), opts("%2"))
	require.ErrorAs(t, err, &need)
	assert.Equal(t, core.NeedOwnPane, need.Need)
	assert.Empty(t, w.send.sends())
}

func TestBroadcastRefusesADeadPane(t *testing.T) {
	w := newWorld(t)
	w.tmux.Mu.Lock()
	p := w.tmux.PaneMap["%3"]
	p.Dead = true
	w.tmux.PaneMap["%3"] = p
	w.tmux.Mu.Unlock()
	_, err := w.caster.Broadcast(context.Background(), opts("%2,%3"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "target %3")
	assert.Contains(t, err.Error(), "nothing was sent to any target")
	assert.Empty(t, w.send.sends())
}

func TestBroadcastToAGroup(t *testing.T) {
	w := newWorld(t)
	w.groups = map[string][]string{"reviewers": {"%3", "%4"}}
	res, err := w.caster.Broadcast(context.Background(), opts("@reviewers,%2"))
	require.NoError(t, err)
	var got []string
	for _, m := range res.Members {
		got = append(got, m.Label)
	}
	assert.Equal(t, []string{"%3", "%4", "%2"}, got, "a group's members in place of its name")
	assert.Len(t, w.send.sends(), 3)
	assert.Len(t, w.tmux.Delivered(), 3)
}

// A member whose send fails does not stop the others: every member is in the result and the
// record, and the error names the failed ones, those with a kept request and those without.
func TestBroadcastWithPartialFailures(t *testing.T) {
	w := newWorld(t)
	w.send.refuse["%3"] = errors.New("tmux said no")
	w.send.fail["%4"] = store.Kindf(store.ErrUndelivered, "pane busy past its wait")
	res, err := w.caster.Broadcast(context.Background(), opts("%2,%3,%4"))
	require.Error(t, err)
	require.NotNil(t, res)
	assert.Contains(t, err.Error(), "broadcast "+res.ID+": 2 of 3 not sent")
	assert.Contains(t, err.Error(), "%3: tmux said no")
	assert.ErrorIs(t, err, store.ErrUndelivered)
	require.Len(t, res.Members, 3)
	assert.NoError(t, res.Members[0].Err)
	assert.Nil(t, res.Members[1].Exchange)
	assert.Equal(t, "tmux said no", res.Members[1].Error)
	require.NotNil(t, res.Members[2].Exchange, "its request was written: kept")
	assert.Len(t, res.Exchanges(), 2)
	say := res.Say()
	assert.Contains(t, say, "%3 not sent")
	assert.Contains(t, say, "%4 "+res.Members[2].Exchange.ID+" (not delivered, kept)")

	rec, err := w.caster.Record(context.Background(), res.ID)
	require.NoError(t, err)
	require.Len(t, rec.Members, 3)
	assert.Empty(t, rec.Members[1].Exchange)
	assert.Equal(t, "tmux said no", rec.Members[1].Error)
	assert.Equal(t, res.Members[2].Exchange.ID, rec.Members[2].Exchange)

	shown, err := w.caster.ShowBroadcast(context.Background(), res.ID)
	require.NoError(t, err)
	assert.Len(t, shown.Exchanges, 2)
	require.Len(t, shown.Problems, 1)
	assert.Equal(t, "%3: never sent: tmux said no", shown.Problems[0])
}

// Members on another host are sent through the door as given (HOST:TARGET), resolved there.
func TestBroadcastToAnotherHost(t *testing.T) {
	w := newWorld(t)
	res, err := w.caster.Broadcast(context.Background(), opts("%2,box:%3,box:%4"))
	require.NoError(t, err)
	require.Len(t, res.Members, 3)
	sent := w.send.sends()
	require.Len(t, sent, 3)
	remote := 0
	for _, o := range sent {
		if o.To == "box:%3" || o.To == "box:%4" {
			remote++
			assert.Nil(t, o.Target, "resolved on its host")
			assert.Equal(t, res.ID, o.Broadcast)
		}
	}
	assert.Equal(t, 2, remote)
	assert.Equal(t, "box:%3", res.Members[1].Label)
	rec, err := w.caster.Record(context.Background(), res.ID)
	require.NoError(t, err)
	assert.Equal(t, "box", rec.Members[1].Host)
	assert.Equal(t, "box:%3", rec.Members[1].Target)
	assert.Equal(t, res.Members[2].Exchange.ID, rec.Members[2].Exchange)
}

// Members on several hosts are sent at once: none waits for another host's answer.
func TestBroadcastSendsToSeveralHostsAtOnce(t *testing.T) {
	w := newWorld(t)
	w.send.hosts["cube"] = true
	arrived := make(chan string, 2)
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	defer open()
	w.send.hostGate = func(to string) {
		arrived <- to
		<-release
	}
	done := make(chan error, 1)
	go func() {
		_, err := w.caster.Broadcast(context.Background(), opts("box:%3,cube:%4,%2"))
		done <- err
	}()
	var got []string
	for range 2 {
		select {
		case to := <-arrived:
			got = append(got, to)
		case <-time.After(10 * time.Second):
			t.Fatalf("only %q is under way: the other host's send waits for it", got)
		}
	}
	assert.ElementsMatch(t, []string{"box:%3", "cube:%4"}, got)
	open()
	require.NoError(t, <-done)
}

// Every agent of the caller's session, the caller excepted.
func TestBroadcastToEveryAgent(t *testing.T) {
	w := newWorld(t)
	shells := proc.NewProcTable([]proc.Process{{PID: 1000, PPID: 1, Comm: "bash"}, {PID: 1001, PPID: 1, Comm: "bash"}})
	w.cfg.Procs = func() (*proc.Table, error) { return shells, nil }
	_, err := w.caster.Broadcast(context.Background(), broadcast.Options{All: true, Send: core.SendOptions{Body: []byte("x")}})
	require.ErrorIs(t, err, store.ErrNotFound, "no pane runs an agent")
	assert.Empty(t, w.send.sends())

	table := proc.NewProcTable([]proc.Process{
		{PID: 1000, PPID: 1, Comm: "bash"}, {PID: 2000, PPID: 1000, Comm: "claude"},
		{PID: 1001, PPID: 1, Comm: "bash"}, {PID: 2001, PPID: 1001, Comm: "claude"},
		{PID: 1002, PPID: 1, Comm: "bash"},
		{PID: 1003, PPID: 1, Comm: "bash"}, {PID: 2003, PPID: 1003, Comm: "codex"},
	})
	w.cfg.Procs = func() (*proc.Table, error) { return table, nil }
	res, err := w.caster.Broadcast(context.Background(), broadcast.Options{All: true, Send: core.SendOptions{Body: []byte("x")}})
	require.NoError(t, err)
	var got []string
	for _, m := range res.Members {
		got = append(got, m.Label)
	}
	assert.ElementsMatch(t, []string{"%2", "%4"}, got)
}

// Two broadcasts of one second never share an id: a taken one is drawn again, and when every
// draw is taken the broadcast is refused before anything is sent.
func TestBroadcastIDsAreClaimed(t *testing.T) {
	w := newWorld(t)
	w.cfg.Rand = zeros{}
	now := time.Now()
	w.cfg.Now = func() time.Time { return now }
	first, err := w.caster.Broadcast(context.Background(), opts("%2"))
	require.NoError(t, err)
	sent := len(w.send.sends())
	_, err = w.caster.Broadcast(context.Background(), opts("%3"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no free broadcast id this second")
	assert.Len(t, w.send.sends(), sent, "nothing sent")
	assert.NotEmpty(t, first.ID)
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestMany(t *testing.T) {
	for _, tt := range []struct {
		targets []string
		all     bool
		want    bool
	}{
		{nil, false, false},
		{nil, true, true},
		{[]string{"%2"}, false, false},
		{[]string{"%2"}, true, false},
		{[]string{"%2,%3"}, false, true},
		{[]string{"%2", "%3"}, false, true},
		{[]string{"@team"}, false, true},
		{[]string{"%2,,"}, false, true},
	} {
		assert.Equal(t, tt.want, broadcast.Many(tt.targets, tt.all), "%q all=%v", tt.targets, tt.all)
	}
	assert.False(t, broadcast.ManyRefs(nil))
	assert.False(t, broadcast.ManyRefs([]string{"20260101-000000-abcd"}))
	assert.True(t, broadcast.ManyRefs([]string{"bc-20260101-000000-0123abcd"}))
	assert.True(t, broadcast.ManyRefs([]string{"a", "b"}))
}
