package cli

// The mailbox under stress (part of `make stress`): rounds of many workers notifying one busy
// orchestrator, and deliverers killed at random moments of a delivery. Every RESPONSE line must
// arrive exactly once.

import (
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestStressMailboxBusyOrchestrator: rounds in which every worker notifies while the orchestrator's
// shell runs a job; after the job each RESPONSE line is on its screen exactly once.
func TestStressMailboxBusyOrchestrator(t *testing.T) {
	t.Parallel()
	scale := sxScale(t)
	workers, rounds := sxN(16, scale, 4), sxN(6, scale, 2)
	w := newWorld(t)
	orch := w.bashPane("")
	panes := make([]string, workers)
	for i := range panes {
		panes[i] = w.catPane()
	}
	seen := map[string]int{}
	var all []string
	for round := range rounds {
		exchanges := make([]sent, workers)
		for i, p := range panes {
			exchanges[i] = w.send(orch, p, "round "+strconv.Itoa(round)+" task "+strconv.Itoa(i))
			all = append(all, exchanges[i].Response)
		}
		w.startJob(orch, "sleep 2; echo round-"+strconv.Itoa(round)+"-done", "sleep")
		var wg sync.WaitGroup
		codes := make([]result, workers)
		for i := range panes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[i] = w.in(panes[i], "notify", "--response", exchanges[i].Response, "--", "answer")
			}()
		}
		wg.Wait()
		for _, r := range codes {
			requireCode(t, 0, r)
		}
		var screen string
		waitFor(t, 60*time.Second, func() bool {
			screen = w.capture(orch)
			for _, x := range exchanges {
				if !strings.Contains(screen, x.Response) {
					return false
				}
			}
			return true
		}, "round %d's lines; screen:\n%s", round, &screen)
		waitNoDeliverer(t, w.root)
		for _, m := range responseComment.FindAllStringSubmatch(w.capture(orch), -1) {
			seen[m[1]]++
		}
		// A clear screen for the next round (and its scrollback, so no line is counted twice).
		w.tmux("send-keys", "-t", orch, "clear", "Enter")
		w.tmux("clear-history", "-t", orch)
	}
	lost, dup := 0, 0
	for _, r := range all {
		switch n := seen[r]; {
		case n == 0:
			lost++
		case n > 1:
			dup += n - 1
		}
	}
	sxCount(len(all), lost, dup, 0, 0)
	assert.Zero(t, lost, "lost")
	assert.Zero(t, dup, "duplicated")
}

// TestStressMailboxKilledDeliverers: a deliverer is killed with SIGKILL at a random moment of its
// delivery (before, during or after the paste or the Enter); a new one finishes the job. The
// orchestrator (a recorder of bracketed pastes) must get each line exactly once, with its Enter.
func TestStressMailboxKilledDeliverers(t *testing.T) {
	t.Parallel()
	rounds := sxN(20, sxScale(t), 3)
	w := newWorld(t)
	rec, recLog := w.recorderPane()
	worker := w.catPane()
	var want []string
	for round := range rounds {
		s := w.send(rec, worker, "task "+strconv.Itoa(round))
		want = append(want, s.Response)
		w.tmux("copy-mode", "-t", rec)
		r := w.run(call{pane: worker, env: []string{"WCOMM_ENTER_DELAY=300ms"}}, "notify", "--response", s.Response, "--", "answer")
		requireCode(t, 0, r)
		locks := filepath.Join(w.root, ".outbox", "*", "deliverer.lock")
		w.tmux("send-keys", "-t", rec, "-X", "cancel")
		// The moment of the kill is the thing under test.
		time.Sleep(time.Duration(mrand.IntN(600)) * time.Millisecond)
		killDeliverers(t, locks)
		sxFault(t, func() {
			requireCode(t, 0, w.in(rec, "inbox", "--peek"))
			var state string
			waitFor(t, 30*time.Second, func() bool {
				if len(jsonLines(t, recLog)) >= round+1 {
					return true
				}
				state = outboxState(w)
				return false
			}, "round %d's line; %s", round, &state)
			waitNoDeliverer(t, w.root)
		})
	}
	entries := jsonLines(t, recLog)
	got := map[string]int{}
	for _, e := range entries {
		assert.Equal(t, true, e["enter"], "every paste submitted: %v", e)
		for _, r := range want {
			if strings.Contains(e["paste"].(string), r) {
				got[r]++
			}
		}
	}
	lost, dup := 0, 0
	for _, r := range want {
		switch n := got[r]; {
		case n == 0:
			lost++
		case n > 1:
			dup += n - 1
		}
	}
	sxCount(len(want), lost, dup, 0, 0)
	assert.Zero(t, lost, "lost: %v", entries)
	assert.Zero(t, dup, "duplicated: %v", entries)
	assert.Len(t, entries, rounds, "one paste per line, each with its Enter")
}

// killDeliverers SIGKILLs the deliverers that hold the outbox locks matching glob, if any run
// (each writes its pid into its lock file).
func killDeliverers(t *testing.T, glob string) {
	t.Helper()
	locks, _ := filepath.Glob(glob)
	for _, l := range locks {
		data, err := os.ReadFile(l)
		if err != nil || !flocked(l) {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			// Dead, not dying: a new deliverer started before it is gone finds the lock held.
			waitFor(t, 10*time.Second, func() bool { return syscall.Kill(pid, 0) != nil || isZombie(pid) }, "deliverer %d to die", pid)
		}
	}
}

// outboxState describes the outboxes under the world's root, for a failure message.
func outboxState(w *world) string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(w.root, ".outbox", "*", "*"))
	more, _ := filepath.Glob(filepath.Join(w.root, ".outbox", "*", "*", "*"))
	for _, f := range append(files, more...) {
		data, _ := os.ReadFile(f)
		b.WriteString("\n" + f + ": " + strings.TrimSpace(string(data)))
	}
	marks, _ := w.tmuxErr("show-environment", "-g", "-h")
	b.WriteString("\nmarks:\n" + marks)
	return b.String()
}
