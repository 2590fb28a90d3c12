package relay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// RelayedHere reports whether the session folder dir holds requests relayed from another host.
func RelayedHere(dir string) bool {
	m, err := exchange.ReadMeta(dir)
	return err == nil && m.Relayed
}

// NewID claims a new exchange id under the root, as send does.
func (s *Station) NewID() (string, error) {
	root, err := s.RootDir(true)
	if err != nil {
		return "", err
	}
	return s.ClaimID(root)
}

// RelaySend sends a request relayed from another host under its own id (o.ID, required). A relay
// repeated after a broken connection finds the exchange of the first one and returns it with
// repeated set: nothing is delivered twice.
func (s *Station) RelaySend(ctx context.Context, o core.SendOptions) (x *exchange.Exchange, repeated bool, err error) {
	if !s.Relayed {
		return nil, false, fmt.Errorf("RelaySend needs a relayed engine")
	}
	if err := messages.ValidID(o.ID); err != nil {
		return nil, false, err
	}
	root, err := s.RootDir(true)
	if err != nil {
		return nil, false, err
	}
	// One lock per relayed id, so two relays of one id never both deliver.
	dir := filepath.Join(root, store.RelayDir)
	if err := store.EnsureDir(dir, true); err != nil {
		return nil, false, err
	}
	unlock, err := lock.File(filepath.Join(dir, o.ID+".lock"), syscall.LOCK_EX, s.LockTimeout)
	if err != nil {
		return nil, false, store.Kindf(store.ErrTimeout, "another relay of %s is under way (%v); try again", o.ID, err)
	}
	defer unlock()
	// The id's hint, written right after the request file, finds a first relay without reading
	// the root's other exchanges (a new id would otherwise cost a scan of them all).
	if prev := exchange.IDWhere(root, o.ID); prev != nil && RelayedHere(prev.Dir) {
		return prev, true, nil
	}
	x, err = s.Send(ctx, o)
	return x, false, err
}

// RelayedResponse returns the response body of relayed exchange id, ok false while none came.
func (s *Station) RelayedResponse(id string) (body string, ok bool, err error) {
	// The id comes from another host: one that is no id would name a path (the id's hint is a
	// file named by it), and a short one panics the lookup by id.
	if err := messages.ValidID(id); err != nil {
		return "", false, err
	}
	root, found, err := s.ReadRoot()
	if err != nil {
		return "", false, err
	}
	if !found {
		return "", false, store.Kindf(store.ErrNotFound, "no exchanges yet (no root %s)", root)
	}
	x, err := s.ByID(root, id)
	if err != nil {
		return "", false, err
	}
	if !RelayedHere(x.Dir) {
		return "", false, store.Kindf(store.ErrNotFound, "%s was not relayed from another host", id)
	}
	if x.Status != exchange.StatusAnswered {
		return "", false, nil
	}
	full := exchange.LoadExchangeBodies(x.Dir, x.Seq, false, true)
	return full.ResponseBody, full.Status == exchange.StatusAnswered, nil
}

// MirrorOptions describe a request relayed to a worker on a declared host.
type MirrorOptions struct {
	Host string
	ID   string
	// From is the orchestrator's pane here ("": the engine's own, Self).
	From       messages.PaneID
	Worker     messages.PaneID // the worker's pane there
	Capability messages.Capability
	Body       []byte
	// State and Detail are what the remote reported of the delivery (submitted, queued ...).
	State  string
	Detail map[string]string
}

// MirrorRequest writes the local copy of a relayed request: a session folder of the orchestrator's
// pane (o.From) and the remote worker's pane, marked with the host, holding the request under its id. Its response file
// is written when the response is pulled (by Notify, from outside any pane).
func (s *Station) MirrorRequest(ctx context.Context, o MirrorOptions) (*exchange.Exchange, error) {
	if err := messages.ValidHostName(o.Host); err != nil {
		return nil, err
	}
	if err := messages.ValidID(o.ID); err != nil {
		return nil, err
	}
	if _, err := messages.ParsePaneID(string(o.Worker)); err != nil {
		return nil, fmt.Errorf("worker pane on %s: %w", o.Host, err)
	}
	orch := o.From
	if orch == "" {
		orch = s.Self
	}
	if _, err := messages.ParsePaneID(string(orch)); err != nil {
		// Written into the request's header and its folder's name, it would make neither read back.
		return nil, fmt.Errorf("orchestrator pane of %s: %w", o.ID, err)
	}
	root, err := s.RootDir(true)
	if err != nil {
		return nil, err
	}
	if prev := exchange.IDWhere(root, o.ID); prev != nil {
		if m, err := exchange.ReadMeta(prev.Dir); err == nil && m.Host == o.Host {
			return prev, nil
		}
	}
	srv, err := s.Tmux.ServerInfo(ctx)
	if err != nil {
		return nil, err
	}
	dir, sess, err := s.OpenMirror(root, o.Host, orch, o.Worker, srv.Key(), srv.Socket)
	if err != nil {
		return nil, err
	}
	size, sum := messages.BodySum(o.Body)
	header := messages.RequestHeader{Capability: o.Capability, ID: o.ID, StartedAt: sess.StartedAt,
		Orchestrator: orch, Worker: o.Worker, Bytes: size, Sum: sum}
	n, reqPath, _, err := s.WriteRequest(dir, sess, header, o.Body, nil)
	if err != nil {
		return nil, err
	}
	if err := exchange.LogEvent(dir, n, exchange.StateWritten, map[string]string{"id": o.ID, "bytes": strconv.Itoa(size), "sha256": sum, "host": o.Host}, s.Now()); err != nil {
		os.Remove(reqPath)
		return nil, fmt.Errorf("record the mirror of %s in %s: %w", o.ID, dir, err)
	}
	if o.State != "" {
		d := map[string]string{"host": o.Host}
		for k, v := range o.Detail {
			d[k] = v
		}
		_ = exchange.LogEvent(dir, n, o.State, d, s.Now())
	}
	_ = exchange.RecordID(root, o.ID, filepath.Base(dir), n)
	return exchange.LoadExchange(dir, n, false), nil
}
