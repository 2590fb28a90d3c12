package paneops

// The fence of a delivery's two calls that change the pane, the paste and the Enter, when they
// go through a client kept open (route.go). Such a client can break after it took a call and
// before it answered (kill -9 of the resident, a server that stalls): tmux may have run the call,
// or may still run it a moment later, from what the broken client had already written. Running
// it again could paste twice; not running it could lose the message. So each such call carries
// a token: its changing branch records the token (in the pane's record, see recordName), and its
// guard also refuses when the token is fenced (pane option @wcomm-x-TOKEN set). When the route
// breaks, a client of its own settles it: it fences the token, so the call can never run late,
// then reads the records: the token recorded means the call ran (the record is made in the same
// command list as the change, with nothing between them); otherwise it never runs, and it is run
// again, with a new token, by a client of its own. Exactly once either way. The tokens are generated ids
// ([a-z0-9-]), as the command strings need.
//
// A sender can also die while its call is still on its way: handed to the resident, which runs
// it whenever it gets to it, while the sender's guard, or the next deliverer, already reads the
// pane's marks to learn how far the dead sender got. Before the resident each call was a tmux
// client of the sender's own, which died with it (job_linux.go); a resident's call outlives
// it, and a paste found missing, delivered again, and then run late arrived twice. So a marked
// delivery's paste and Enters also carry the time they were made, and refuse to run once the
// pane holds a later fence time for their mark (@wcomm-xp-MARK, @wcomm-xe-MARK). Marks, asked
// for a mark, sets those fences in the call that reads the marks, for what the pane does not
// record yet: whatever of that delivery is still on its way never runs, and what recovery does
// next is made after the fence, so it runs.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/wcomm/wcomm/messages"
)

// The record of an unmarked fenced call, and the pane options that fence a call.
const (
	fenceDone   = "WCOMM_OP_" // a record (recordName), not a pane option
	fencePrefix = "@wcomm-x-"
)

// fenced is args (a guarded paste or Enter: an if-shell -F -t PANE COND REFUSE DO among its
// commands) with the token: COND also holds when the token is fenced, and DO records it. A DO
// that records a mark records the token with it ("MARK.TOKEN", see markOf), in the same
// record, so a paste sets one, not two. A DO without a mark records the token in its own
// record (fenceDone).
func fenced(args []string, pane messages.PaneID, token string) []string {
	out := append([]string(nil), args...)
	for i := 0; i+6 < len(out); i++ {
		if out[i] == "if-shell" && out[i+1] == "-F" && out[i+2] == "-t" {
			out[i+4] = "#{||:" + out[i+4] + ",#{" + fencePrefix + token + "}}"
			do := out[i+6]
			for _, kind := range []string{markEntered, markPasted} {
				opt := recordName(kind, pane)
				if j := strings.LastIndex(do, " "+opt+" "); j >= 0 {
					at := j + len(opt) + 2
					end := strings.IndexByte(do[at:], ' ')
					if end < 0 {
						end = len(do) - at
					}
					out[i+6] = do[:at+end] + "." + token + do[at+end:]
					return out
				}
			}
			out[i+6] += " ; " + setRecord(fenceDone, pane, token)
			return out
		}
	}
	return out
}

// The pane options that fence a marked delivery's late calls: a time in microseconds.
const (
	fencePaste = "@wcomm-xp-"
	fenceEnter = "@wcomm-xe-"
)

// markFenced is args (a guarded paste or Enter) refusing also once the pane's option fence+mark
// holds a time at or after at: the call was made before recovery looked, by a sender now gone.
func markFenced(args []string, mark, fence string, at time.Time) []string {
	if mark == "" {
		return args
	}
	out := append([]string(nil), args...)
	for i := 0; i+6 < len(out); i++ {
		if out[i] == "if-shell" && out[i+1] == "-F" && out[i+2] == "-t" {
			out[i+4] = "#{||:" + out[i+4] + ",#{e|>=:#{" + fence + mark + "}," + strconv.FormatInt(at.UnixMicro(), 10) + "}}"
			return out
		}
	}
	return out
}

// runFenced runs the call that build makes for a token, starting with token. Through a route,
// the call is fenced; when the route breaks mid-call, settle decides whether it ran, and if not
// it runs again, with token+"r", by a client of its own. It returns tmux's output and the token
// of the call that counts.
func (c *Client) runFenced(ctx context.Context, pane messages.PaneID, stdin []byte, token string, build func(token string) []string) (string, string, error) {
	if !c.routed() {
		out, err := c.Run(ctx, reader(stdin), build(token)...)
		return out, token, err
	}
	out, err := c.Run(ctx, reader(stdin), fenced(build(token), pane, token)...)
	if !errors.Is(err, ErrRouteLost) {
		return out, token, err
	}
	ran, ferr := c.settle(ctx, pane, token)
	switch {
	case ferr != nil:
		return "", token, fmt.Errorf("%w; settling it: %w", err, ferr)
	case ran:
		return "", token, nil // it ran, and did its work: the guard's refusals print, and were not printed
	}
	token += "r"
	out, err = c.Direct().Run(ctx, reader(stdin), build(token)...)
	return out, token, err
}

// settle decides whether the fenced call of token ran, by a client of its own: it fences the
// token first, so the call never runs after that, then reads the pane's records: ran when one
// holds the token. A call that ran before the fence recorded it in the same command as its
// change, with nothing between them.
func (c *Client) settle(ctx context.Context, pane messages.PaneID, token string) (ran bool, err error) {
	d := c.Direct()
	if _, err := d.Run(ctx, nil, "set-option", "-p", "-t", string(pane), fencePrefix+token, "1"); err != nil {
		return false, err
	}
	for _, kind := range []string{fenceDone, markPasted, markEntered} {
		v, err := d.readRecord(ctx, kind, pane)
		if err != nil {
			return false, err
		}
		if v == token || strings.HasSuffix(v, "."+token) {
			return true, nil
		}
	}
	return false, nil
}

func reader(b []byte) io.Reader {
	if b == nil {
		return nil
	}
	return bytes.NewReader(b)
}

// enterToken is the token of a delivery's Enter number n: its buffer's name (Resume, which has
// none, names it by the delivery's mark and a random word), then "-e" and n.
func enterToken(buffer, mark string, n int) string {
	if buffer == "" {
		buffer = strings.TrimPrefix(newBufferName(), "wcomm-")
		if mark != "" {
			buffer = mark + "-" + buffer
		}
	}
	return buffer + "-e" + strconv.Itoa(n)
}
