package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// pollWait is how long one poll waits on its host for a first response: short enough that a
// request relayed meanwhile is asked about soon, long enough that an idle wait costs one call
// every few seconds.
const pollWait = 2 * time.Second

// Pull is the root's puller: it relays queued sends whose time has come, pulls the responses of
// relayed requests and writes each into its mirror by an ordinary notify (which wakes an await,
// or hands the RESPONSE line to the orchestrator's pane), and ends when nothing is left. One runs
// per root: a second returns at once. Diagnostics go to log.
func Pull(ctx context.Context, e *tmuxcomm.Engine, root, controlDir string, log io.Writer) error {
	unlock, ok, err := lockPuller(root)
	if err != nil || !ok {
		return err
	}
	defer unlock()
	logf := func(format string, a ...any) {
		fmt.Fprintf(log, "%s %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, a...))
	}
	for ctx.Err() == nil {
		queued := readRecords(root, store.RemoteQueueDir)
		pending := readRecords(root, store.RemotePendingDir)
		if len(queued) == 0 && len(pending) == 0 {
			return nil
		}
		next := time.Now().Add(pollWait)
		for _, r := range queued {
			retryQueued(ctx, e, root, controlDir, r, logf)
			if r.NextTry.Before(next) {
				next = r.NextTry
			}
		}
		if len(pending) == 0 {
			sleepUntil(ctx, next)
			continue
		}
		byHost := map[string][]*Record{}
		for _, r := range pending {
			if time.Now().After(r.Expires) {
				logf("%s: no response from host %s before %s; stopped pulling it", r.ID, r.Host.Name, r.Expires.Format(time.RFC3339))
				removeRecord(root, store.RemotePendingDir, r.ID)
				continue
			}
			byHost[r.Host.Name] = append(byHost[r.Host.Name], r)
		}
		var wg sync.WaitGroup
		for _, rs := range byHost {
			wg.Add(1)
			go func(rs []*Record) {
				defer wg.Done()
				pullHost(ctx, e, root, controlDir, rs, logf)
			}(rs)
		}
		wg.Wait()
	}
	return ctx.Err()
}

func sleepUntil(ctx context.Context, t time.Time) {
	select {
	case <-ctx.Done():
	case <-time.After(max(time.Until(t), 50*time.Millisecond)):
	}
}

// retryQueued relays a queued send whose time has come, or dead-letters it past its TTL.
func retryQueued(ctx context.Context, e *tmuxcomm.Engine, root, controlDir string, r *Record, logf func(string, ...any)) {
	now := time.Now().UTC()
	if now.After(r.Expires) {
		r.State = "dead"
		logf("%s: host %s was not reached before %s (%d attempts; last: %s); dead-lettered", r.ID, r.Host.Name, r.Expires.Format(time.RFC3339), r.Attempts, r.LastError)
		endQueued(root, r)
		return
	}
	if now.Before(r.NextTry) {
		return
	}
	_, err := relay(ctx, e, &Client{Host: r.Host, ControlDir: controlDir}, root, r, false)
	if err == nil {
		logf("%s: relayed to host %s after %d attempts", r.ID, r.Host.Name, r.Attempts+1)
		removeRecord(root, store.RemoteQueueDir, r.ID)
		return
	}
	r.Attempts++
	r.LastError = err.Error()
	if errors.Is(err, ErrUnreachable) || errors.Is(err, tmuxcomm.ErrTimeout) {
		// Unreachable, or a first relay of the same id still under way there.
		r.NextTry = now.Add(backoff(r.Attempts))
		_ = writeRecord(root, store.RemoteQueueDir, r)
		return
	}
	r.State = "failed"
	logf("%s: host %s: %v; not retried", r.ID, r.Host.Name, err)
	endQueued(root, r)
}

// endQueued moves a queued send to done, its body kept for a person to send again.
func endQueued(root string, r *Record) {
	if err := writeRecord(root, store.RemoteDoneDir, r); err == nil {
		removeRecord(root, store.RemoteQueueDir, r.ID)
	}
}

// pullHost asks one host for the responses of its pending records and writes those that came.
func pullHost(ctx context.Context, e *tmuxcomm.Engine, root, controlDir string, rs []*Record, logf func(string, ...any)) {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	c := &Client{Host: rs[0].Host, ControlDir: controlDir, Timeout: pollWait + 30*time.Second}
	reply, err := c.Call(ctx, messages.WireRequest{Op: messages.WirePoll, IDs: ids, WaitMS: int(pollWait / time.Millisecond)})
	if err != nil {
		logf("poll host %s: %v", c.Host.Name, err)
		sleepUntil(ctx, time.Now().Add(time.Second))
		return
	}
	byID := map[string]*Record{}
	for _, r := range rs {
		byID[r.ID] = r
	}
	for _, resp := range reply.Responses {
		r := byID[resp.ID]
		if r == nil {
			continue // not asked for: nothing from the remote side names a local file
		}
		_, err := e.Notify(ctx, tmuxcomm.NotifyOptions{Ref: r.Response, Body: resp.Body, Pulled: true})
		switch {
		case err == nil, errors.Is(err, tmuxcomm.ErrAnswered), errors.Is(err, tmuxcomm.ErrOrchestratorGone):
			if err != nil {
				logf("%s: %v", r.ID, err)
			}
			removeRecord(root, store.RemotePendingDir, r.ID)
		default:
			logf("%s: writing the response from host %s failed: %v", r.ID, c.Host.Name, err)
		}
	}
}

// HasWork reports whether the root holds queued sends or responses still to pull.
func HasWork(root string) bool {
	for _, kind := range []string{store.RemoteQueueDir, store.RemotePendingDir} {
		ents, _ := os.ReadDir(filepath.Join(root, store.RemoteDir, kind))
		if len(ents) > 0 {
			return true
		}
	}
	return false
}

// LogPath is the puller's log file of a root.
func LogPath(root string) string { return filepath.Join(root, store.RemoteDir, store.PullerLogName) }
