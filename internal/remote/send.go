package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

// The local side's files are under ROOT/.remote (store.RemoteDir): queue/ID.json is a send
// waiting for its host, pending/ID.json a relayed request whose response is still to be pulled,
// done/ID.json what became of a queued send that ended without reaching its host (dead-lettered).

// Record is one relayed or queued send.
type Record struct {
	ID         string              `json:"id"`
	Host       settings.HostDef    `json:"host"`
	To         string              `json:"to"`
	From       messages.PaneID     `json:"from"`
	Capability messages.Capability `json:"capability"`
	Agent      string              `json:"agent,omitempty"`
	Body       []byte              `json:"body,omitempty"`
	QueuedAt   time.Time           `json:"queued_at"`
	Expires    time.Time           `json:"expires"`
	Attempts   int                 `json:"attempts"`
	NextTry    time.Time           `json:"next_try"`
	LastError  string              `json:"last_error,omitempty"`
	// Response is the mirror's response file (pending records).
	Response string `json:"response,omitempty"`
	// State is how a done record ended: "dead" (its time to live passed) or "failed".
	State string `json:"state,omitempty"`
}

// Sent is what a remote send did: relayed (Exchange is the local mirror) or queued.
type Sent struct {
	ID       string
	Exchange *exchange.Exchange
	Queued   bool
	Reason   string
	Repeated bool
}

// Send relays o's request to its worker on o.Host under o.ID, the id the front door claimed. An
// unreachable host queues it (unless o.NoQueue): the puller retries with backoff until the TTL
// passes. The front door has checked the request (a target, a message, the caller's pane) and
// set its capability. spawn starts the puller of the root (detached); nil: none is started.
func Send(ctx context.Context, e *tmuxcomm.Engine, c *Client, o tmuxcomm.Outbound, spawnPuller func(root string) error) (*Sent, error) {
	root := o.Root
	now := time.Now().UTC()
	ttl := o.TTL
	if ttl <= 0 {
		ttl = settings.DefaultMailTTL
	}
	r := &Record{ID: o.ID, Host: c.Host, To: o.Send.To, From: o.From, Capability: o.Send.Capability, Agent: o.Send.Agent, Body: o.Send.Body,
		QueuedAt: now, Expires: now.Add(ttl), NextTry: now}
	s, err := relay(ctx, e, c, root, r, o.NoQueue)
	if err == nil {
		spawn(spawnPuller, root)
		return s, nil
	}
	if !errors.Is(err, ErrUnreachable) || o.NoQueue {
		return nil, err
	}
	r.Attempts, r.LastError, r.NextTry = 1, err.Error(), now.Add(backoff(1))
	if werr := writeRecord(root, store.RemoteQueueDir, r); werr != nil {
		return nil, fmt.Errorf("%w; and queuing it failed: %v", err, werr)
	}
	spawn(spawnPuller, root)
	return &Sent{ID: o.ID, Queued: true, Reason: err.Error()}, nil
}

func spawn(f func(string) error, root string) {
	if f != nil {
		_ = f(root) // a puller already running is as good
	}
}

// relay sends r to its host and mirrors the exchange here; the pending record makes the puller
// fetch its response.
func relay(ctx context.Context, e *tmuxcomm.Engine, c *Client, root string, r *Record, noQueue bool) (*Sent, error) {
	reply, err := c.Call(ctx, messages.WireRequest{Op: messages.WireSend, ID: r.ID, To: r.To, From: r.From,
		Capability: r.Capability, Agent: r.Agent, Body: r.Body, NoQueue: noQueue})
	if err != nil && (reply == nil || reply.Exchange == nil) {
		return nil, err
	}
	rx := reply.Exchange
	if rx.ID != r.ID {
		return nil, fmt.Errorf("host %s answered for exchange %q, not %s", c.Host.Name, messages.SanitizeField(rx.ID), r.ID)
	}
	state := rx.State
	if err != nil {
		state = exchange.StateUndelivered
	}
	x, merr := e.Mirror(ctx, tmuxcomm.MirrorOptions{Host: c.Host.Name, ID: r.ID, From: r.From, Worker: rx.Worker, Capability: r.Capability,
		Body: r.Body, State: state, Detail: map[string]string{"remote_request": messages.SanitizeField(rx.RequestPath),
			"evidence": messages.SanitizeField(rx.Evidence)}})
	if merr != nil {
		return nil, fmt.Errorf("relayed %s to host %s, but mirroring it here failed: %w", r.ID, c.Host.Name, merr)
	}
	if err != nil {
		return &Sent{ID: r.ID, Exchange: x}, err
	}
	p := *r
	p.Body, p.Response = nil, x.ResponsePath
	if err := writeRecord(root, store.RemotePendingDir, &p); err != nil {
		return nil, fmt.Errorf("relayed %s to host %s, but recording it for the response failed: %w", r.ID, c.Host.Name, err)
	}
	return &Sent{ID: r.ID, Exchange: x, Queued: rx.State == exchange.StateQueued, Reason: messages.SanitizeField(rx.Evidence), Repeated: rx.Repeated}, nil
}

// backoff is the wait before attempt n+1: 1 s doubling to at most a minute.
func backoff(n int) time.Duration {
	d := time.Second << min(n-1, 6)
	return min(d, time.Minute)
}

func recordDir(root, kind string) (string, error) {
	for _, d := range []string{filepath.Join(root, store.RemoteDir), filepath.Join(root, store.RemoteDir, kind)} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		if st, err := os.Lstat(d); err != nil || !st.IsDir() {
			return "", fmt.Errorf("%s is not a folder", d)
		}
	}
	return filepath.Join(root, store.RemoteDir, kind), nil
}

func writeRecord(root, kind string, r *Record) error {
	dir, err := recordDir(root, kind)
	if err != nil {
		return err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return store.WriteFile(filepath.Join(dir, r.ID+".json"), b, 0o600)
}

// readRecords lists the records of one kind, oldest id first; damaged ones are skipped.
func readRecords(root, kind string) []*Record {
	dir := filepath.Join(root, store.RemoteDir, kind)
	ents, _ := os.ReadDir(dir)
	var out []*Record
	for _, ent := range ents {
		name := ent.Name()
		id, ok := strings.CutSuffix(name, ".json")
		if !ok || messages.ValidID(id) != nil || !ent.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		var r Record
		if json.Unmarshal(b, &r) != nil || r.ID != id || settings.CheckHost(r.Host) != nil {
			continue
		}
		out = append(out, &r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func removeRecord(root, kind, id string) {
	os.Remove(filepath.Join(root, store.RemoteDir, kind, id+".json"))
}

// QueuedRecord returns the queued or dead-lettered send of id, or nil: await and show use it
// while no mirror exists yet.
func QueuedRecord(root, id string) *Record {
	for _, kind := range []string{store.RemoteQueueDir, store.RemoteDoneDir} {
		for _, r := range readRecords(root, kind) {
			if r.ID == id {
				if kind == store.RemoteDoneDir && r.State == "" {
					r.State = "dead"
				}
				return r
			}
		}
	}
	return nil
}

// lockPuller takes the root's puller lock without waiting; ok false when another puller holds it.
func lockPuller(root string) (unlock func(), ok bool, err error) {
	dir, err := recordDir(root, store.RemotePendingDir)
	if err != nil {
		return nil, false, err
	}
	unlock, err = lock.File(filepath.Join(filepath.Dir(dir), store.PullerLockName), syscall.LOCK_EX, 0)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return unlock, true, nil
}

// Nudge brings the next attempt of a queued send forward to now: someone awaits it. A puller
// writing the record at the same moment wins; it retries soon enough either way.
func Nudge(root, id string) {
	for _, r := range readRecords(root, store.RemoteQueueDir) {
		if r.ID == id && time.Until(r.NextTry) > time.Second {
			r.NextTry = time.Now().UTC()
			_ = writeRecord(root, store.RemoteQueueDir, r)
		}
	}
}
