package cli

import (
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestStressKilledSendLarge: wcomm send of a large request (40 KB, pasted whole) is killed with
// SIGKILL at a random moment, mostly around its paste, by the default route (the resident tmux
// client), one after the other. Each request reaches the worker (a recorder of bracketed pastes)
// at most once, whole: its header and its body in one paste, never its body twice. Whatever a
// kill left between paste and Enter is finished by the send's guard or the next send. The moment
// a dead sender's call still on its way in the resident runs late is tested without timing in
// paneops (TestRealLateCallsFenced).
func TestStressKilledSendLarge(t *testing.T) {
	t.Parallel()
	trials := sxN(60, sxScale(t), 12)
	w := newWorld(t)
	orch := w.catPane()
	rec, recLog := w.recorderPane()
	filler := strings.Repeat("the body of a large request, line after line of it.\n", 760)
	var nonces []string
	for i := range trials {
		n := "K" + strconv.Itoa(i) + "-" + sxNonce()
		nonces = append(nonces, n)
		body := "BEGIN-" + n + "\n" + filler + "END-" + n + "\n"
		bg := w.start(call{pane: orch, stdin: []byte(body)}, "send", "--to", rec, "--enter-delay", "100ms", "--file", "-")
		// The moment of the kill is the thing under test: mostly around the paste (from the
		// moment the send records what it is about to type), sometimes anywhere in its life.
		if i%4 != 0 {
			waitInflight(w.root, bg)
			time.Sleep(time.Duration(mrand.IntN(40000)) * time.Microsecond)
		} else {
			time.Sleep(time.Duration(mrand.IntN(500)) * time.Millisecond)
		}
		_ = bg.cmd.Process.Signal(syscall.SIGKILL)
		_ = bg.wait(t, time.Minute)
	}
	// A last request, not killed: once it has arrived, whatever came before it has too.
	w.send(orch, rec, "the last request")
	waitFor(t, 30*time.Second, func() bool { return len(pastes(t, recLog, "the last request")) > 0 }, "the last request")
	waitNoDeliverer(t, w.root)

	entries := jsonLines(t, recLog)
	var all strings.Builder
	for _, e := range entries {
		if s, ok := e["paste"].(string); ok {
			all.WriteString(s)
			if n := strings.Count(s, "BEGIN-"); n > 1 {
				t.Errorf("one paste holds %d requests' bodies", n)
			}
			if strings.Contains(s, "BEGIN-") && !strings.Contains(s, "[WORKER ") {
				t.Errorf("a body pasted without its header: %.200q", s)
			}
			for _, n := range nonces {
				if strings.Contains(s, "BEGIN-"+n) != strings.Contains(s, "END-"+n) {
					t.Errorf("request %s split across pastes: %.200q", n, s)
				}
			}
		}
		if s, ok := e["raw"].(string); ok {
			all.WriteString(s)
		}
	}
	got := all.String()
	arrived, doubled := 0, 0
	for _, n := range nonces {
		begin, end := strings.Count(got, "BEGIN-"+n), strings.Count(got, "END-"+n)
		if begin > 0 {
			arrived++
		}
		if begin > 1 || end > 1 {
			doubled++
			t.Errorf("request %s arrived %d times (its end %d times)", n, begin, end)
		}
		assert.Equal(t, begin, end, "request %s split", n)
	}
	t.Logf("%d killed sends: %d arrived, %d doubled", trials, arrived, doubled)
	sxCount(trials, 0, doubled, trials, trials-doubled)
}

// waitInflight returns once an outbox of root records a delivery about to be typed, or the run
// has ended, polling at a fine grain: the moment after it is the one a kill aims at.
func waitInflight(root string, b *bg) {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !b.exited(); {
		files, _ := filepath.Glob(filepath.Join(root, ".outbox", "*", "inflight.json"))
		for _, f := range files {
			if st, err := os.Stat(f); err == nil && st.Size() > 0 {
				return
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
}
