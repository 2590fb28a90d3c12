package questions

import (
	"context"
	"errors"
	"fmt"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// liveness is one look at the tmux server: which panes exist.
type liveness struct {
	srv   paneops.ServerInfo
	err   error
	panes map[messages.PaneID]bool // pane id -> dead
}

func (d *Desk) liveness(ctx context.Context) *liveness {
	l := &liveness{}
	if d.Tmux == nil {
		l.err = errors.New("no tmux")
		return l
	}
	l.srv, l.err = d.Tmux.ServerInfo(ctx)
	if l.err != nil {
		return l
	}
	panes, err := d.Tmux.Panes(ctx, paneops.Scope{All: true})
	if err != nil {
		l.err = err
		return l
	}
	l.panes = map[messages.PaneID]bool{}
	for _, p := range panes {
		l.panes[p.ID] = p.Dead
	}
	return l
}

// workerGone says whether the question's worker pane is known to be gone. When the server we
// reach is not the question's, and not on its socket either, nothing is known.
func (l *liveness) workerGone(r *QuestionRecord) (bool, string) {
	if l == nil || l.err != nil {
		return false, ""
	}
	if r.Server != "" && r.Server != l.srv.Key() {
		if r.Socket != "" && r.Socket == l.srv.Socket {
			return true, fmt.Sprintf("the tmux server restarted since the question; worker pane %s is gone", r.Worker)
		}
		return false, ""
	}
	dead, ok := l.panes[r.Worker]
	switch {
	case !ok:
		return true, fmt.Sprintf("worker pane %s is gone", r.Worker)
	case dead:
		return true, fmt.Sprintf("worker pane %s is dead", r.Worker)
	}
	return false, ""
}

// judgeStale marks a pending question stale when it no longer applies: its exchange got its
// response, its worker pane is gone, or its git binding no longer holds.
func (d *Desk) judgeStale(ctx context.Context, st *QuestionStatus, live *liveness) {
	if st.State != QuestionPending {
		return
	}
	mark := func(reason string) {
		st.State, st.Reason, st.Waits = QuestionStale, reason, ""
	}
	// An approval outlives its asker: a yes given after the worker gave up is recorded, and the
	// intent's own fingerprint, not the worker's pane or request, decides whether it still holds.
	if st.Action != "" {
		return
	}
	if st.ExchangeSeq > 0 {
		if x := exchange.LoadExchange(st.Dir, st.ExchangeSeq, false); x.Status == exchange.StatusAnswered {
			mark(fmt.Sprintf("request %s was answered after the question was asked", orUnknown(st.Exchange)))
			return
		}
	}
	if gone, why := live.workerGone(&st.QuestionRecord); gone {
		mark(why)
		return
	}
	if st.Git != nil {
		now, err := gitFingerprint(ctx, st.Git.Dir)
		switch {
		case err != nil:
			mark(fmt.Sprintf("the git state it is bound to cannot be read (%v)", err))
		case now.Fingerprint != st.Git.Fingerprint:
			mark(gitChange(*st.Git, now))
		}
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown id)"
	}
	return s
}
