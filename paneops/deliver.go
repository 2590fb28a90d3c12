package paneops

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wcomm/wcomm/messages"
)

// Delivery is one paste into a pane.
type Delivery struct {
	Pane    messages.PaneID
	Content []byte // already sanitized; must not be empty
	// Submit presses Enter in a separate tmux call EnterDelay after the paste.
	Submit     bool
	EnterDelay time.Duration
	// LockDir holds the per-pane lock files; LockKey names the server (ServerInfo.Key()).
	LockDir     string
	LockKey     string
	LockTimeout time.Duration
}

// DeliveryResult says what happened, with the evidence.
type DeliveryResult struct {
	Buffer    string        `json:"buffer"`
	Pasted    bool          `json:"pasted"`
	Submitted bool          `json:"submitted"` // Enter was sent (issue 5 adds verification)
	LockWait  time.Duration `json:"lock_wait_ns"`
	PastedAt  time.Time     `json:"pasted_at"`
	EnterAt   time.Time     `json:"enter_at"`
}

// defaultLockTimeout applies when Delivery.LockTimeout is 0, so a hung holder cannot block a
// sender whose context has no deadline forever.
const defaultLockTimeout = 30 * time.Second

// cleanupTimeout bounds the delete-buffer call that runs after a failure, even when the caller's
// context has already been cancelled.
const cleanupTimeout = 5 * time.Second

// guardCondition is true for the panes a paste must never reach: a dead pane (paste-buffer into it
// crashes tmux 3.3a, tmux-facts §0.1) and one whose input is off (the paste would be dropped
// silently). tmux evaluates it server-side, in the same call as the paste.
const guardCondition = "#{||:#{pane_dead},#{pane_input_off}}"

// bufferSeq makes buffer names unique within the process; the pid and random part make them
// unique across processes. Sharing a name between senders sent messages to the wrong pane
// (tmux-facts §1.5).
var bufferSeq atomic.Uint64

// newBufferName returns "wcomm-PID-COUNTER-RANDHEX"; only [A-Za-z0-9-], because the name is also
// spliced into the command strings of guardArgs.
func newBufferName() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+); the counter keeps names unique anyway
	return "wcomm-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(bufferSeq.Add(1), 10) + "-" + hex.EncodeToString(b[:])
}

// refusedMark is what the guarded call prints when it refuses. It names the unique buffer, so it
// cannot be mistaken for anything else: nothing a pane prints reaches the client's stdout, and the
// other commands of the call print nothing.
func refusedMark(buffer string) string { return "wcomm-refused-" + buffer }

// guardArgs is the one tmux call of a delivery (see Deliver). pane and buffer must be generated
// ids (%N, newBufferName): the two command strings go through tmux's command parser.
func guardArgs(pane messages.PaneID, buffer string) []string {
	p := string(pane)
	return []string{
		"load-buffer", "-b", buffer, "-", ";",
		"if-shell", "-F", "-t", p, guardCondition,
		"delete-buffer -b " + buffer + " ; display -p " + refusedMark(buffer),
		// copy-mode -q leaves copy mode first: a pane in a mode drops the paste brackets and
		// swallows keys (tmux-facts §5.4).
		"copy-mode -q -t " + p + " ; paste-buffer -d -p -b " + buffer + " -t " + p,
	}
}

// enterArgs presses Enter in the pane, a call of its own (tmux-facts §3).
func enterArgs(pane messages.PaneID) []string {
	return []string{"send-keys", "-t", string(pane), "Enter"}
}

// Deliver pastes Content into the pane and optionally submits it. Under the pane's lock it runs ONE
// tmux call: load-buffer -b UNIQUE - (content on stdin) ; if-shell -F -t PANE
// '#{||:#{pane_dead},#{pane_input_off}}' 'delete-buffer -b UNIQUE ; display -p REFUSED-MARK'
// 'copy-mode -q -t PANE ; paste-buffer -d -p -b UNIQUE -t PANE' (tmux 3.3a crashes when pasting into
// a dead pane, so the check must be server-side, in the same call). A refused paste is ErrRefused;
// a failed call deletes the buffer if it is still there. Then, if Submit, it waits EnterDelay and
// sends "send-keys -t PANE Enter" as a separate call, still under the lock, so concurrent senders
// never merge. The unique buffer name is "wcomm-PID-COUNTER-RANDHEX".
//
// An empty LockKey is filled in from ServerInfo (one more tmux call); a zero LockTimeout means 30s.
func (c *Client) Deliver(ctx context.Context, d Delivery) (DeliveryResult, error) {
	var res DeliveryResult
	if _, err := paneNum(d.Pane); err != nil {
		return res, fmt.Errorf("deliver: %w", err)
	}
	if len(d.Content) == 0 {
		// tmux would create no buffer for empty input and then fail the paste (tmux-facts §1.1).
		return res, fmt.Errorf("deliver to pane %s: the content is empty: pass some text", d.Pane)
	}
	key := d.LockKey
	if key == "" {
		si, err := c.ServerInfo(ctx)
		if err != nil {
			return res, fmt.Errorf("deliver to pane %s: identify the tmux server: %w", d.Pane, err)
		}
		key = si.Key()
	}
	timeout := d.LockTimeout
	if timeout == 0 {
		timeout = defaultLockTimeout
	}
	start := time.Now()
	unlock, err := LockPane(ctx, d.LockDir, key, d.Pane, timeout)
	if err != nil {
		return res, fmt.Errorf("deliver to pane %s: %w", d.Pane, err)
	}
	defer unlock()
	res.LockWait = time.Since(start)

	res.Buffer = newBufferName()
	out, err := c.Run(ctx, bytes.NewReader(d.Content), guardArgs(d.Pane, res.Buffer)...)
	if err != nil {
		return res, c.dropBuffer(ctx, res.Buffer, fmt.Errorf("deliver to pane %s: %w", d.Pane, err))
	}
	switch strings.TrimSpace(out) {
	case "":
	case refusedMark(res.Buffer):
		// The refusing branch deleted the buffer itself, in the same call.
		return res, fmt.Errorf("deliver to pane %s: %w: the pane is dead or its input is off "+
			"(respawn the pane, or turn input on with 'tmux select-pane -e -t %s')", d.Pane, ErrRefused, d.Pane)
	default:
		return res, c.dropBuffer(ctx, res.Buffer,
			fmt.Errorf("deliver to pane %s: unexpected output %q from tmux; check the pane before retrying", d.Pane, out))
	}
	res.Pasted = true
	res.PastedAt = time.Now()
	if !d.Submit {
		return res, nil
	}

	// The delay is the product's behaviour, not a test sleep: some apps ignore an Enter that
	// arrives with or right after a paste (tmux-facts §3.2).
	if d.EnterDelay > 0 {
		timer := time.NewTimer(d.EnterDelay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return res, fmt.Errorf("pasted into pane %s but not submitted: %w", d.Pane, ctx.Err())
		case <-timer.C:
		}
	}
	if _, err := c.Run(ctx, nil, enterArgs(d.Pane)...); err != nil {
		return res, fmt.Errorf("pasted into pane %s but Enter failed: %w", d.Pane, err)
	}
	res.Submitted = true
	res.EnterAt = time.Now()
	return res, nil
}

// dropBuffer deletes a delivery's buffer after a failure, so no message text stays in the server
// (named buffers are never evicted, and a bare paste-buffer pastes the newest one, tmux-facts
// §1.1). A missing buffer or server is fine; another failure is added to cause.
func (c *Client) dropBuffer(ctx context.Context, buffer string, cause error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	_, err := c.Run(ctx, nil, "delete-buffer", "-b", buffer)
	if err == nil || errors.Is(err, ErrNoBuffer) || errors.Is(err, ErrNoServer) {
		return cause
	}
	return errors.Join(cause, fmt.Errorf("delete the leftover buffer %s: %w", buffer, err))
}
