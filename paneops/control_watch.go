package paneops

// Hearing of the panes' changes from the control client and the kernel instead of reading them
// again and again. A daemon that shows or watches the panes all day (the console, the bridge's
// sentry) would otherwise read every pane each second, a tmux call that wakes it, the client and
// the server while nothing changes. Windows and sessions opened or closed, a pane's mode and its
// window's layout are said by the control client at once. A pane's output and its process's end
// are heard from its terminal (control_ttys_linux.go), and the terminals listed again when one is
// made or removed: nothing runs while nothing changes, in the daemon or in the tmux server.
//
// Where the terminals cannot be watched, the control client subscribes (refresh-client -B, tmux
// 3.2) to one format over every pane of every session instead: tmux compares its value once a
// second inside the server and says %subscription-changed only when it differs. The format holds
// what a pane's state is read from: its process, whether it died or is in a mode, its window's
// last output (in seconds: every byte a pane's program writes moves it), its cursor, size and
// name. That costs the server a wake-up and the format's expansion over every pane each second,
// for each client: with 220 panes about 0.4 % of a core per client on tmux 3.3a.

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
)

// subscribeCheck is how long after a subscription tmux's first word of it is waited for before
// it is asked again (tmux checks once a second).
const subscribeCheck = 2500 * time.Millisecond

// outputGap is the least time between two tells of the panes' output: a pane that writes all the
// time makes its readers read once a gap, as tmux's check of the subscription did. A tell is
// followed by one more a gap later, which sees what tmux had not yet read of the pane's output
// (or of its process's end) when the first was told.
const outputGap = time.Second

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
		if w, err := newTTYWatch(); err == nil {
			k.ttys = w
		}
		if k.ttys == nil && k.conn != nil && errors.Is(k.subscribe(), errControl) {
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
	tw := k.ttys // set before the watch starts, never changed
	var output, made <-chan struct{}
	if tw != nil {
		defer tw.Close()
		output, made = tw.output, tw.made
	}
	listed := false // the terminals watched are those of the panes the running client listed
	pace := time.NewTimer(outputGap)
	pace.Stop()
	defer pace.Stop()
	var paced <-chan time.Time // pace runs
	due := false               // a tell is due when pace fires
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
			listed = false
			k.tell()
		}
		if tw != nil && conn != nil && !listed {
			listed = k.watchTTYs(ctx, tw)
		}
		var ended <-chan struct{}
		var tick <-chan time.Time
		var t *time.Timer
		switch {
		case conn != nil && !listed && (tw != nil || !conn.heard.Load()):
			// Until the terminals are watched, or tmux said the subscription's first value,
			// the client is not trusted: looked at again a while later, and the readers poll
			// meanwhile.
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
			listed = false // a window or a session opened or closed: its terminals listed again
		case <-made:
			k.tell()
			listed = false
		case <-output:
			due = true
			if paced == nil {
				k.tell() // and once more a gap later (due)
				pace.Reset(outputGap)
				paced = pace.C
			}
		case <-paced:
			paced = nil
			if due {
				due = false
				k.tell()
				pace.Reset(outputGap)
				paced = pace.C
			}
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
			if conn != nil && tw == nil && !conn.heard.Load() {
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

// watchTTYs watches the terminals of the panes the control client lists, and reports whether it
// could.
func (k *Control) watchTTYs(ctx context.Context, tw *ttyWatch) bool {
	out, st, err := k.Route(ctx, []string{"list-panes", "-a", "-F", "#{pid} #{pane_tty}"})
	if st != RouteDone || err != nil {
		return false
	}
	server := 0
	var ttys []string
	for _, line := range strings.Split(out, "\n") {
		pid, tty, ok := strings.Cut(line, " ")
		if ok {
			server, _ = strconv.Atoi(pid)
			ttys = append(ttys, tty)
		}
	}
	return tw.set(server, ttys) == nil
}
