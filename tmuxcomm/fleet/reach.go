package fleet

import (
	"context"
	"errors"
	"fmt"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// Unreachable says why a pane can no longer be reached: each is final for the message or the
// exchange at hand (a later look will not bring the pane back).
type Unreachable int

// Why a pane cannot be reached.
const (
	// ServerStopped: no tmux server answers on the socket.
	ServerStopped Unreachable = iota + 1
	// ServerRestarted: a server answers, but not the one the pane was found on; pane ids start
	// again at %0 on a new server, so the pane of that id now belongs to someone else.
	ServerRestarted
	// PaneMissing: the server has no pane of that id (it was closed).
	PaneMissing
	// PaneDead: the pane exists but its program has exited (remain-on-exit).
	PaneDead
)

// UnreachableError is a pane that reachPane found gone, with one wording for every caller: the
// caller adds what it was doing ("response saved at ..., but ...").
type UnreachableError struct {
	Pane messages.PaneID
	// Role names the pane's part in the exchange ("orchestrator", "worker"); "" words it as a pane.
	Role string
	Why  Unreachable
}

func (e *UnreachableError) Error() string {
	name := "pane " + string(e.Pane)
	if e.Role != "" {
		name = e.Role + " " + name
	}
	switch e.Why {
	case ServerStopped:
		return "the tmux server of " + name + " has stopped"
	case ServerRestarted:
		return "the tmux server of " + name + " has restarted (pane ids start again at %0)"
	case PaneMissing:
		return name + " no longer exists"
	case PaneDead:
		return name + " is dead"
	}
	return name + " cannot be reached"
}

// Unwrap lets errors.Is see the paneops sentinel of each reason, so a caller that tells a gone
// pane from a refused paste keeps doing so.
func (e *UnreachableError) Unwrap() error {
	switch e.Why {
	case ServerStopped:
		return paneops.ErrNoServer
	case PaneMissing:
		return paneops.ErrPaneNotFound
	case PaneDead:
		return paneops.ErrRefused
	}
	return nil
}

// Reach finds pane on the tmux server, checks that the server is the one whose key is server
// (when server is not ""), and that the pane lives. It is the one way the engine reaches a pane it
// already knows by id: send again, notify, the question relay and the deliverer all go through
// it. With card, a pane card that still holds (panecard.go) spares the tmux call, and a pane found
// by tmux gets its card written. A pane that cannot be reached is an *UnreachableError; any other
// error is tmux failing to answer now (a look later may succeed).
func (f *Finder) Reach(ctx context.Context, root string, pane messages.PaneID, server, role string, card bool) (paneops.Pane, paneops.ServerInfo, error) {
	gone := func(why Unreachable) error { return &UnreachableError{Pane: pane, Role: role, Why: why} }
	if card {
		if p, srv, ok := f.CachedPane(root, string(pane)); ok && (server == "" || srv.Key() == server) {
			return p, srv, nil
		}
	}
	var (
		p   paneops.Pane
		srv paneops.ServerInfo
		err error
	)
	ps, oneCall := f.Tmux.(paneServer)
	if oneCall {
		// One tmux call for both: the pane and the server that names it.
		p, srv, err = ps.PaneServer(ctx, string(pane))
	}
	if !oneCall || err != nil {
		// The rare cases are told apart with a call each: is there a server, is it the same one.
		var serr error
		if srv, serr = f.Tmux.ServerInfo(ctx); serr != nil {
			if errors.Is(serr, paneops.ErrNoServer) {
				return p, srv, gone(ServerStopped)
			}
			return p, srv, serr
		}
		if server != "" && srv.Key() != server {
			return p, srv, gone(ServerRestarted)
		}
		if !oneCall || !IsNotFound(err) {
			p, err = f.Tmux.Pane(ctx, string(pane))
		}
		if err != nil {
			if IsNotFound(err) {
				return p, srv, gone(PaneMissing)
			}
			return p, srv, err
		}
	}
	if server != "" && srv.Key() != server {
		return p, srv, gone(ServerRestarted)
	}
	if p.Dead && !f.Restartable(srv, p.ID) {
		return p, srv, gone(PaneDead)
	}
	if card {
		f.RecordPane(root, p, srv)
	}
	return p, srv, nil
}

// Restartable reports whether pane on srv was started by a spawn that recorded it, so that a
// restart can bring it back: while it is dead it is not gone, and mail for it waits in its outbox.
func (f *Finder) Restartable(srv paneops.ServerInfo, pane messages.PaneID) bool {
	return f.Root != "" && srv.PID > 0 && store.Restartable(f.Root, srv.Key(), pane.Num())
}

// IsUnreachable reports whether err says a pane can never be reached again.
func IsUnreachable(err error) bool {
	var ue *UnreachableError
	return errors.As(err, &ue)
}

// DeadPane is the error of a pane found dead by a lookup made elsewhere (a send's target).
func DeadPane(p paneops.Pane) error {
	return fmt.Errorf("%w (%s)", &UnreachableError{Pane: p.ID, Why: PaneDead}, p.Target())
}
