package mailbox

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// waitExit returns once process pid has ended (a zombie not yet reaped counts as ended), or with
// ctx's error. It sleeps on a pidfd (Linux 5.3 and later), which becomes readable when the
// process exits: a guard costs nothing while the process it guards lives. Where pidfds are
// missing it looks at /proc every guardPoll.
func waitExit(ctx context.Context, pid int) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil // already gone
		}
		return pollExit(ctx, pid)
	}
	defer unix.Close(fd)
	for {
		// A bounded wait, so that ctx (SIGTERM) is heard within a second.
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 1000)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return pollExit(ctx, pid)
		}
		if n > 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// pollExit is waitExit without a pidfd.
func pollExit(ctx context.Context, pid int) error {
	for !processGone(pid) {
		if err := sleepFor(ctx, guardPoll); err != nil {
			return err
		}
	}
	return nil
}

// guardPoll is how often a guard without a pidfd looks at the process it guards.
const guardPoll = 250 * time.Millisecond
