package broadcast

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// Groups gathers a history's exchanges by broadcast, session by session as a history streams
// them, so that a listing can show each broadcast's exchanges together after the sessions.
type Groups struct {
	by map[string][]*exchange.Exchange
}

// Add takes the broadcasts' exchanges of one session.
func (g *Groups) Add(s exchange.SessionSummary) {
	for _, x := range s.Exchanges {
		if x.Broadcast == "" {
			continue
		}
		if g.by == nil {
			g.by = map[string][]*exchange.Exchange{}
		}
		g.by[x.Broadcast] = append(g.by[x.Broadcast], x)
	}
}

// Lines are the broadcasts, oldest first (an id starts with its time): for each, a line with its
// id, how many of its panes answered and its request's first line, then one line per exchange
// with its pane, id and status, in the panes' order. None when no exchange was part of a broadcast.
func (g *Groups) Lines() []string {
	ids := make([]string, 0, len(g.by))
	for id := range g.by {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []string
	for _, id := range ids {
		xs := g.by[id]
		// By pane: the members are sent side by side, so the order they were sent in is chance.
		// A shorter label first, so %2 comes before %10.
		slices.SortStableFunc(xs, func(a, b *exchange.Exchange) int {
			la, lb := Label(a), Label(b)
			if c := len(la) - len(lb); c != 0 {
				return c
			}
			if c := strings.Compare(la, lb); c != 0 {
				return c
			}
			return a.SentAt.Compare(b.SentAt)
		})
		answered := 0
		for _, x := range xs {
			if x.Status == exchange.StatusAnswered {
				answered++
			}
		}
		out = append(out, fmt.Sprintf("%s  %s, %d answered: %s", id, messages.Plural(len(xs), "pane"), answered, xs[0].Summary))
		for _, x := range xs {
			out = append(out, fmt.Sprintf("  %-8s %s  %s", Label(x), x.ID, x.Status))
		}
	}
	return out
}
