package broadcast_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/broadcast"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

func TestHistoryGroupsBroadcasts(t *testing.T) {
	w := newWorld(t)
	res, err := w.caster.Broadcast(context.Background(), opts("%3,%2"))
	require.NoError(t, err)
	target, err := w.tmux.Pane(context.Background(), "%2")
	require.NoError(t, err)
	srv, _ := w.tmux.ServerInfo(context.Background())
	_, err = w.send.Send(context.Background(), core.SendOptions{To: "%2", Body: []byte("alone"), Target: &core.Target{Pane: target, Server: srv}})
	require.NoError(t, err)
	sessions, _, err := w.caster.Book.History(context.Background(), exchange.HistoryOptions{})
	require.NoError(t, err)
	var g broadcast.Groups
	assert.Empty(t, g.Lines())
	for _, s := range sessions {
		g.Add(s)
	}
	lines := g.Lines()
	require.Len(t, lines, 3, "%q", lines)
	assert.Equal(t, res.ID+"  2 panes, 0 answered: review the diff", lines[0])
	assert.Regexp(t, `^  %2 +`+res.Members[1].Exchange.ID+`  pending$`, lines[1], "by pane, not by the order sent")
	assert.Regexp(t, `^  %3 +`+res.Members[0].Exchange.ID+`  pending$`, lines[2])
}

// Lines lists broadcasts oldest first, %2 before %10, a host's label whole, and counts the answered.
func TestGroupsLines(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	x := func(bc, worker, host, id, status string) *exchange.Exchange {
		return &exchange.Exchange{Broadcast: bc, Worker: messages.PaneID("%" + worker), Host: host, ID: id, Status: status, Summary: "the task", SentAt: at}
	}
	var g broadcast.Groups
	g.Add(exchange.SessionSummary{Exchanges: []*exchange.Exchange{
		x("bc-20260101-120001-00000002", "10", "", "20260101-120001-aaaa", exchange.StatusAnswered),
		x("", "3", "", "20260101-120000-cccc", exchange.StatusPending),
	}})
	g.Add(exchange.SessionSummary{Exchanges: []*exchange.Exchange{
		x("bc-20260101-120001-00000002", "2", "", "20260101-120001-bbbb", exchange.StatusPending),
		x("bc-20260101-120000-00000001", "5", "box", "20260101-120000-dddd", exchange.StatusAnswered),
	}})
	assert.Equal(t, []string{
		"bc-20260101-120000-00000001  1 pane, 1 answered: the task",
		"  box:%5   20260101-120000-dddd  answered",
		"bc-20260101-120001-00000002  2 panes, 1 answered: the task",
		"  %2       20260101-120001-bbbb  pending",
		"  %10      20260101-120001-aaaa  answered",
	}, g.Lines())
}

func TestLabel(t *testing.T) {
	assert.Equal(t, "%2", broadcast.Label(&exchange.Exchange{Worker: "%2"}))
	assert.Equal(t, "box:%2", broadcast.Label(&exchange.Exchange{Worker: "%2", Host: "box"}))
}
