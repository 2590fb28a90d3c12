package tmuxcomm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/tmuxcomm/broadcast"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// The broadcast room's own tests are in tmuxcomm/broadcast; these are the door's side of it: the
// classes its refusals get, the settings' groups it hands the room, and its real await of several.

func bcast(targets ...string) broadcast.Options {
	return broadcast.Options{Targets: targets, Send: core.SendOptions{Body: []byte("review the diff")}}
}
func TestBroadcastRefusedWritesNothing(t *testing.T) {
	tests := []struct {
		name    string
		targets []string
		groups  map[string][]string
		want    []string
		class   Class
	}{
		{name: "unknown pane", targets: []string{"%2,%9,%3"}, want: []string{`"%9"`}, class: ClassNotFound},
		{name: "two unknown", targets: []string{"%8", "%2", "%9"}, want: []string{`"%8"`, `"%9"`}, class: ClassNotFound},
		{name: "unknown group", targets: []string{"@nobody"}, groups: map[string][]string{"reviewers": {"%2"}}, want: []string{`no group "nobody"`, "@reviewers"}, class: ClassNotFound},
		{name: "group with an unknown member", targets: []string{"@reviewers"}, groups: map[string][]string{"reviewers": {"%2", "%7"}}, want: []string{`"%7"`}, class: ClassNotFound},
		{name: "own pane", targets: []string{"%2,%1"}, want: []string{"your own pane %1"}, class: ClassFailure},
		{name: "empty in the list", targets: []string{"%2,,%3"}, want: []string{"empty target"}, class: ClassUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake("%1", "%2", "%3")
			e := newEngine(t, f, "%1")
			e.Settings.Groups = tt.groups
			res, err := e.caster.Broadcast(context.Background(), bcast(tt.targets...))
			require.Error(t, err)
			assert.Nil(t, res)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Equal(t, tt.class, ClassOf(err), "%v", err)
			assert.Empty(t, f.Delivered(), "nothing delivered")
			entries, _ := os.ReadDir(e.cfg.Root)
			for _, ent := range entries {
				assert.NotRegexp(t, `-o\d+-w\d+$|^\.broadcasts$`, ent.Name(), "nothing written: no session folder, no record")
			}
		})
	}
}

func TestBroadcastGroup(t *testing.T) {
	f := newFake("%1", "%2", "%3", "%4")
	e := newEngine(t, f, "%1")
	e.Settings.Groups = map[string][]string{"reviewers": {"%3", "%4"}}
	res, err := e.caster.Broadcast(context.Background(), bcast("@reviewers,%2"))
	require.NoError(t, err)
	var got []string
	for _, m := range res.Members {
		got = append(got, m.Label)
	}
	assert.Equal(t, []string{"%3", "%4", "%2"}, got, "a group's members in place of its name")
	assert.Len(t, f.Delivered(), 3)
}

func TestAwaitAllLabelsAndTimesOut(t *testing.T) {
	f := newFake("%1", "%2", "%3")
	e := newEngine(t, f, "%1")
	res, err := e.caster.Broadcast(context.Background(), bcast("%2", "%3"))
	require.NoError(t, err)
	_, err = e.as("%2").Notify(context.Background(), NotifyOptions{Ref: res.Members[0].Exchange.ID, Body: []byte("two says yes")})
	require.NoError(t, err)

	var seen []string
	out := func(pane string, x *exchange.Exchange) error {
		seen = append(seen, pane+"="+strings.TrimSpace(x.ResponseBody))
		return nil
	}
	got, err := e.caster.AwaitAll(context.Background(), []string{res.ID}, 300*time.Millisecond, out)
	require.Error(t, err)
	assert.Equal(t, ClassTimeout, ClassOf(err))
	assert.Contains(t, err.Error(), "1 of 2 answered (%2)")
	assert.Contains(t, err.Error(), "no response yet from %3")
	assert.Equal(t, []string{"%2=two says yes"}, seen)
	require.Len(t, got.Missing, 1)
	assert.Equal(t, "%3", got.Missing[0].Pane)
	assert.True(t, got.Missing[0].TimedOut)

	// Once %3 answers, the whole broadcast is answered; without its record too, from the
	// exchanges' own logs.
	_, err = e.as("%3").Notify(context.Background(), NotifyOptions{Ref: res.Members[1].Exchange.ID, Body: []byte("three says no")})
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(e.cfg.Root, store.BroadcastsDir, res.ID+".json")))
	seen = nil
	got, err = e.caster.AwaitAll(context.Background(), []string{res.ID}, time.Second, out)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"%2=two says yes", "%3=three says no"}, seen)
	assert.Len(t, got.Answered, 2)
	assert.Equal(t, []string{res.ID}, got.Broadcasts)

	// By the exchanges' ids, and an id that names nothing: not found, saying who answered.
	_, err = e.caster.AwaitAll(context.Background(), []string{res.Members[0].Exchange.ID, "20200101-000000-abcd"}, time.Second, out)
	require.Error(t, err)
	assert.Equal(t, ClassNotFound, ClassOf(err), "%v", err)
	assert.Contains(t, err.Error(), "1 of 2 answered (%2)")
}
