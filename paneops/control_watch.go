package paneops

// Hearing of the panes' changes from the control client instead of reading them again and again.
// A daemon that shows or watches the panes all day (the console, the bridge's sentry) would
// otherwise read every pane each second, a tmux call that wakes it, the client and the server
// while nothing changes. The control client subscribes (refresh-client -B, tmux 3.2) to one format
// over every pane of every session: tmux compares its value once a second inside the server, a
// few microseconds for tens of panes, and says %subscription-changed only when it differs. The
// format holds what a pane's state is read from: its process, whether it died or is in a mode,
// its window's last output (in seconds: every byte a pane's program writes moves it), its
// cursor, size and name. Windows and sessions opened or closed are said at once besides.

import (
	"context"
	"errors"
	"strings"
	"time"
)

// subscribeCheck is how long after a subscription tmux's first word of it is waited for before
// it is asked again (tmux checks once a second).
const subscribeCheck = 2500 * time.Millisecond

// changesName is the control client's subscription.
const changesName = "wcomm-panes"

// changesFormat is the subscription's format: a word per pane of every session.
const changesFormat = "#{S:#{W:#{P:#{pane_id}.#{pane_pid}.#{pane_dead}.#{pane_in_mode}.#{window_activity}." +
	"#{cursor_x}.#{cursor_y}.#{pane_width}x#{pane_height}.#{" + NameOption + "} }}}"

// panesNotice says whether a control-mode notification tells of a change in the panes.
func panesNotice(line string) bool {
	for _, p := range []string{"%subscription-changed " + changesName + " ", "%sessions-changed", "%window-add ",
		"%window-close ", "%unlinked-window-add ", "%unlinked-window-close ", "%layout-change ", "%pane-mode-changed "} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// subscribe asks tmux for the panes' changes on the running client (k.mu held).
func (k *Control) subscribe() error {
	args := []string{"refresh-client", "-B", changesName + "::" + changesFormat}
	cmds, _ := controlLines(args)
	_, err := k.exchange(context.Background(), args, cmds)
	return err
}

// Changes returns a channel that receives a value when the panes may have changed: when tmux
// says so through the control client, when a client (re)starts (what happened while none ran is
// unknown), and every poll while no client runs (it cannot start, or broke and waits to start
// again), so that a reader that waits on it alone misses nothing. Many changes between two reads
// are one value. Each call returns a channel of its own, told of every change; the channels are
// never closed. The first call starts the watch, with its ctx and poll; it ends with that ctx or
// with Close.
func (k *Control) Changes(ctx context.Context, poll time.Duration) <-chan struct{} {
	out := make(chan struct{}, 1)
	k.mu.Lock()
	k.outs = append(k.outs, out)
	first := !k.watching
	if first {
		k.watching = true
		if k.conn != nil && errors.Is(k.subscribe(), errControl) {
			k.stop() // started before Changes, and broken: the watch starts a new one
		}
	}
	k.mu.Unlock()
	if first {
		go k.watchChanges(ctx, poll)
	}
	return out
}

// tell tells every reader of Changes.
func (k *Control) tell() {
	k.mu.Lock()
	outs := k.outs
	k.mu.Unlock()
	for _, out := range outs {
		select {
		case out <- struct{}{}:
		default:
		}
	}
}

// watchChanges runs the watch of Changes until ctx ends or k is closed.
func (k *Control) watchChanges(ctx context.Context, poll time.Duration) {
	var conn *controlConn
	for {
		k.Start() // no-op while one runs, or while the last start's retry waits
		k.mu.Lock()
		now, closed := k.conn, k.closed
		k.mu.Unlock()
		if closed {
			return
		}
		if now != conn {
			conn = now
			k.tell()
		}
		var ended <-chan struct{}
		var tick <-chan time.Time
		var t *time.Timer
		switch {
		case conn != nil && !conn.heard.Load():
			// Until tmux said the subscription's first value, it is not trusted: looked at
			// again after its first check, and the readers poll meanwhile.
			t = time.NewTimer(subscribeCheck)
			tick = t.C
			ended = conn.done
		case conn != nil:
			ended = conn.done
		default:
			t = time.NewTimer(poll)
			tick = t.C
		}
		select {
		case <-ctx.Done():
		case <-k.changes:
			k.tell()
		case <-ended:
			k.mu.Lock()
			if k.conn == conn {
				// Ended by itself (its session closed, the server stopped): the next start
				// waits its retry, and the readers poll until then.
				k.stop()
				k.retry = time.Now().Add(controlRetry)
			}
			k.mu.Unlock()
		case <-tick:
			k.tell()
			if conn != nil && !conn.heard.Load() {
				k.mu.Lock()
				if k.conn == conn {
					// Seen on tmux 3.3a now and then: a subscription taken at a
					// client's start is never checked; asked again, it is.
					if errors.Is(k.subscribe(), errControl) {
						k.stop()
						k.retry = time.Now().Add(controlRetry)
					}
				}
				k.mu.Unlock()
			}
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}
