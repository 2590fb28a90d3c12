package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// watchPoll is how often the watcher looks at its pane: one tmux call.
const watchPoll = time.Second

// Watch watches a pane spawned with the on-failure policy until the pane or its record is gone
// (wcomm stop), restarting its program each time it ends with a non-zero status; a program that
// ends with 0 finished its work, and the watcher ends with it. The restarts are Restart's, with
// its bound: once that refuses, the watcher ends and says why.
func (r *Room) Watch(ctx context.Context, server string, pane messages.PaneID) error {
	unknown := 0 // looks in a row that saw the pane dead with no status yet
	for {
		rec, err := r.load(server, pane)
		if err != nil || rec.Restart != "on-failure" {
			return watchEnd(pane, "its record is gone or asks no restart (stopped): %v", err)
		}
		// Pane ids start again at %0 on a new server: the watched pane lives only on its own.
		if srv, err := r.Tmux.ServerInfo(ctx); errors.Is(err, paneops.ErrNoServer) || (err == nil && srv.Key() != server) {
			return watchEnd(pane, "its tmux server is gone: %v", err)
		}
		dead, status, err := r.Tmux.DeadStatus(ctx, pane)
		switch {
		case err != nil && (isGone(err) || errors.Is(err, paneops.ErrNoServer)):
			return watchEnd(pane, "the pane is gone: %v", err)
		case err != nil:
			// Looked again at the next poll; the log says what went wrong.
			fmt.Fprintf(os.Stderr, "%s pane %s cannot be looked at: %v\n", time.Now().Format(time.RFC3339), pane, err)
		case err == nil && dead && status < 0 && unknown < 2:
			// Dead, its status not recorded yet: the next look has it. A status still unknown
			// after two looks is no clean end either, and is taken for a failure below.
			unknown++
			fmt.Fprintf(os.Stderr, "%s pane %s is dead, its exit status not recorded yet\n", time.Now().Format(time.RFC3339), pane)
		case err == nil && dead && status == 0:
			return watchEnd(pane, "its program ended with status 0, its work done%s", "")
		case err == nil && dead:
			unknown = 0
			// A restart whose program fails again is seen dead at a later look and tried again,
			// until the bound refuses.
			if _, err := r.Restart(ctx, RestartOptions{Target: string(pane)}); errors.Is(err, errTooMany) {
				// The person is told once: this watcher ends here.
				if terr := r.tellGaveUp(rec, status); terr != nil {
					err = fmt.Errorf("%w; and the person could not be told: %w", err, terr)
				}
				return fmt.Errorf("pane %s ended %s and is not restarted again: %w", pane, endedWith(status), err)
			} else if err != nil {
				// Tried again at the next look; the log (the watcher's stderr) says why it failed.
				fmt.Fprintf(os.Stderr, "%s pane %s ended %s; its restart failed, tried again: %v\n", time.Now().Format(time.RFC3339), pane, endedWith(status), err)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(watchPoll):
		}
	}
}

// OpenWatchLog opens (creates, 0600, appending) the diagnostics file of a pane's watcher beside
// its record: SERVERKEY-pN.log in the root's .lifecycle.
func OpenWatchLog(root, server string, pane messages.PaneID) (*os.File, error) {
	root, err := store.EnsureRoot(root, true)
	if err != nil {
		return nil, err
	}
	path, err := recordPath(root, server, pane)
	if err != nil {
		return nil, err
	}
	return os.OpenFile(strings.TrimSuffix(path, ".json")+".log", os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, store.FileMode)
}

// watchEnd ends a watch that has nothing left to watch, with a line in its log (the watcher's
// stderr) saying why.
func watchEnd(pane messages.PaneID, why string, arg any) error {
	fmt.Fprintf(os.Stderr, "%s the watch of pane %s ends: "+why+"\n", time.Now().Format(time.RFC3339), pane, arg)
	return nil
}
