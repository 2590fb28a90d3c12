//go:build bench

package cli

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/remote"
	"github.com/wcomm/wcomm/internal/sshtest"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

// benchRemote: a round trip with a worker on an sshd host (send, the worker's notify there, await
// here, the response pulled back) beside a local round trip with the same worker program and the
// ssh floor, `ssh HOST true` over the shared connection. The goal: within 2 × (local round trip +
// one ssh round trip).
func (b *bxBench) benchRemote() {
	t := b.t
	if why := sshtest.Available(); why != "" {
		t.Logf("remote rows skipped: %s", why)
		return
	}
	rw := remoteWorldOn(t, b.s.world, 1, nil)
	h := rw.bed.Hosts[0]
	remoteW := rw.remoteWorker(h, false)
	sess := "remote"
	b.session(sess, "sleep", "86400")
	orch := b.s.window(sess, nil, "cat")
	script, err := filepath.Abs(filepath.Join(fixtures, "worker.py"))
	require.NoError(t, err)
	localW := b.s.window(sess, []string{"WCOMM_BIN=" + b.s.bin, "WCOMM_ENTER_DELAY=50ms"}, "python3", script, b.s.file("local-worker")+".jsonl")
	b.s.waitScreen(localW, "WORKER READY")
	msg := b.file("remote-trip.md", bxBody(1<<10, "remote round trip"))
	env := append(append(cleanEnv(), rw.env...), fmt.Sprintf("TMUX=%s,%d,0", b.s.sock, b.s.pid), "TMUX_PANE="+orch)
	trip := func(to string) time.Duration {
		out := sxExec(2*time.Minute, env, nil, b.s.wcommArgv("send", "--to", to, "--wait", "--timeout", "60s", "--file", msg)...)
		if out.Code != 0 || !strings.HasPrefix(out.Stdout, "answer to ") {
			panic(fmt.Sprintf("round trip to %s failed: %s", to, out))
		}
		return out.Took
	}
	control := strings.TrimPrefix(rw.env[1], "WCOMM_SSH_CONTROL_DIR=")
	sock := remote.ControlSocket(control, settings.HostDef{Via: []string{"ssh", "-F", rw.bed.Config, h.Name}})
	floor := func() time.Duration {
		return b.must(sxExec(time.Minute, cleanEnv(), nil, "ssh", "-F", rw.bed.Config, "-o", "ControlMaster=no", "-o", "ControlPath="+sock, h.Name, "true")).Took
	}
	// Warm up: the first remote call opens the shared connection.
	trip("h1:" + remoteW)
	trip(localW)
	reps := b.n(100, 10)
	budget := b.budget(5 * time.Minute)
	sshT := measure(reps, budget, floor)
	localT := measure(reps, budget, func() time.Duration { return trip(localW) })
	remoteT := measure(reps, budget, func() time.Duration { return trip("h1:" + remoteW) })
	ssh, local := bxMedian(sshT), bxMedian(localT)
	b.rowFloor("ssh HOST true over the shared connection: median", "time", ssh, math.NaN(), math.NaN(), "", fmt.Sprintf("%d", len(sshT)))
	b.rowFloor("round trip, local worker (worker.py), default Enter delay: median", "time", local, math.NaN(), math.NaN(), "", fmt.Sprintf("%d", len(localT)))
	b.rowFloor("round trip, worker on an sshd host (send, notify there, await here): median", "time", bxMedian(remoteT), math.NaN(),
		2*(local+ssh), "2 × (local round trip + ssh round trip)", fmt.Sprintf("%d; ssh floor %s", len(remoteT), bxFmt("time", ssh)))
	b.rowFloor("round trip, worker on an sshd host: p99", "time", bxPct(remoteT, 0.99), math.NaN(), 2*(bxPct(localT, 0.99)+bxPct(sshT, 0.99)),
		"2 × (local p99 + ssh p99)", fmt.Sprintf("%d", len(remoteT)))
}
