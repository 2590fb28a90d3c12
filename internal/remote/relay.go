package remote

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// Relay is the engine's tmuxcomm.Relay: what a send to HOST:TARGET and an await of its exchange
// need of the hosts, for every face. A face builds it and passes it in through the Door.
type Relay struct {
	// Getenv reads the environment (the ssh control folder); nil: os.Getenv.
	Getenv func(string) string
	// Spawn starts the puller of a root, detached (one already running makes it exit at once);
	// nil: none is started.
	Spawn func(root string) error
}

var _ tmuxcomm.Relay = (*Relay)(nil)

// Client is the client of host h, with the shared ssh control folder.
func (r *Relay) Client(h settings.HostDef) (*Client, error) {
	cl := &Client{Host: h}
	if h.ViaSSH() {
		getenv := r.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		dir, err := ControlDir(getenv)
		if err != nil {
			return nil, err
		}
		cl.ControlDir = dir
	}
	return cl, nil
}

// Send implements tmuxcomm.Relay: the request goes to its host under the id the door claimed, mirrored here in the
// state the host recorded; a host that cannot be reached queues it here (unless the engine does
// not queue), and the puller relays it later.
func (r *Relay) Send(ctx context.Context, e *tmuxcomm.Engine, o tmuxcomm.Outbound) (*exchange.Exchange, error) {
	h := o.Host
	cl, err := r.Client(h)
	if err != nil {
		return nil, err
	}
	s, err := Send(ctx, e, cl, o, r.Spawn)
	if s == nil {
		return nil, err
	}
	x := s.Exchange
	if x == nil {
		// Queued here: nothing is mirrored until the host is reached.
		return &exchange.Exchange{ID: s.ID, Host: h.Name, State: exchange.StateQueued, Evidence: s.Reason}, err
	}
	x.Host = h.Name
	return x, err
}

// Ready implements tmuxcomm.Relay: a puller runs while responses from hosts are still to come,
// so an await on a relayed exchange wakes when its response is pulled; and while exchange ref is
// a send queued for a host not reached yet (it has no mirror to await until the puller relays
// it), Ready waits for it within timeout.
func (r *Relay) Ready(ctx context.Context, root, ref string, timeout time.Duration) error {
	if HasWork(root) && r.Spawn != nil {
		_ = r.Spawn(root)
	}
	if messages.ValidID(ref) != nil {
		return nil
	}
	deadline := time.Now().Add(timeout)
	for {
		q := QueuedRecord(root, ref)
		if q == nil {
			return nil
		}
		if q.State != "" {
			return fmt.Errorf("%s never reached host %s (%s after %d attempts: %s); send it anew", ref, q.Host.Name, q.State, q.Attempts, messages.SanitizeField(q.LastError))
		}
		Nudge(root, ref)
		if timeout > 0 && time.Now().After(deadline) {
			return store.Kindf(store.ErrTimeout, "%s still waits for host %s (%s)", ref, q.Host.Name, messages.SanitizeField(q.LastError))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond): // the puller relays it; a file's absence is polled
		}
	}
}
