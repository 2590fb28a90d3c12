package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/sshtest"
)

var (
	wire2Once sync.Once
	wire2Err  error
)

// wire2Bin builds, beside the test's wcomm, a wcomm that speaks wire version 2: it stands for an
// older or newer release on the other host.
func wire2Bin(t *testing.T) string {
	t.Helper()
	bin := wcommBin(t)
	out := filepath.Join(filepath.Dir(bin), "wcomm-wire2")
	wire2Once.Do(func() {
		b, err := exec.Command("go", "build", "-ldflags", "-X github.com/wcomm/wcomm/internal/remote.speak=2", "-o", out, wcommPkg).CombinedOutput()
		if err != nil {
			wire2Err = fmt.Errorf("go build: %w\n%s", err, b)
		}
	})
	require.NoError(t, wire2Err)
	return out
}

// A refused key, an unknown host key, a missing remote wcomm and a remote wcomm of another wire
// version each fail at once (exit 1) saying which and what to run, and queue nothing; panes, find
// and doctor reach the host.
func TestE2ERemoteFailures(t *testing.T) {
	t.Parallel()
	wire2Bin(t)
	rw := newRemoteWorld(t, 1, func(b *sshtest.Bed) string {
		empty := filepath.Join(b.Dir, "empty_known_hosts")
		require.NoError(t, os.WriteFile(empty, nil, 0o600))
		key := filepath.Join(b.Dir, "id_ed25519")
		return fmt.Sprintf(`  old:
    via: [ssh, -F, %q, h1]
    wcomm: %s/wcomm-wire2
  nokey:
    via: [ssh, -F, %q, h1]
    wcomm: %s/wcomm
  nohostkey:
    via: [ssh, -F, %q, h1]
    wcomm: %s/wcomm
  nowcomm:
    via: [ssh, -F, %q, h1]
    wcomm: %s/missing
`, b.Config, sshtest.BinDir, b.AltConfig(b.NewKey(), filepath.Join(b.Dir, "known_hosts")), sshtest.BinDir,
			b.AltConfig(key, empty), sshtest.BinDir, b.Config, sshtest.BinDir)
	})
	h := rw.bed.Hosts[0]
	orch := rw.bashPane("")
	worker := rw.remoteWorker(h, true)

	for _, c := range []struct{ host, want, hint string }{
		{"old", "speaks wire version 2, this wcomm speaks version 1", "install the same wcomm release on both hosts"},
		{"nokey", "host nokey refused the key", "ssh-copy-id nokey"},
		{"nohostkey", "host nohostkey's key is not known here", "'ssh nohostkey true'"},
		{"nowcomm", `no wcomm at "/tmp/bin/missing" on host nowcomm`, "set hosts.nowcomm.wcomm"},
	} {
		t.Run(c.host, func(t *testing.T) {
			r := rw.call(orch, "send", "--to", c.host+":"+worker, "never delivered")
			requireCode(t, 1, r)
			assert.Contains(t, r.stderr, c.want)
			assert.Contains(t, r.stderr, c.hint)
			assert.Empty(t, r.stdout)
			assert.NoDirExists(t, filepath.Join(rw.root, ".remote", "queue"))
		})
	}
	// The other way round: this host's wcomm is the other release.
	cmd := rw.cmd(t.Context(), call{pane: orch, env: rw.env}, "send", "--to", "h1:"+worker, "never delivered")
	cmd.Path = wire2Bin(t)
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "speaks wire version 1, this wcomm speaks version 2")
	assert.Empty(t, workerEvents(h), "nothing reached the worker")

	// A pane the host does not have: the host's own answer, with its exit code (4).
	r := rw.call(orch, "send", "--to", "h1:%99", "to nobody")
	requireCode(t, 4, r)
	assert.Contains(t, r.stderr, "on host h1: ")
	assert.Empty(t, r.stdout)

	r = rw.call("", "panes", "--host", "h1")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "h1:"+worker+"\tw:0.0\t")
	r = rw.call("", "find", "worker.py", "--host", "h1")
	requireCode(t, 0, r)
	assert.Equal(t, "h1:"+worker+"\n", r.stdout)
	r = rw.call("", "find", "no-such-agent", "--host", "h1")
	requireCode(t, 4, r)

	r = rw.call("", "doctor", "--host", "h1")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "connection: ok")
	assert.Contains(t, r.stdout, "wire version 1 (this wcomm speaks 1)")
	assert.Contains(t, r.stdout, "wcomm: "+sshtest.BinDir+"/wcomm")
	r = rw.call("", "doctor", "--host", "old")
	requireCode(t, 1, r)
	assert.Contains(t, r.stdout, "wire version 2")
	r = rw.call("", "doctor", "--host", "nowhere")
	requireCode(t, 4, r)
	assert.Contains(t, r.stderr, "host nowhere is not declared")
}

// The ssh client killed mid-send: the remote wcomm finishes the delivery, the send is queued here,
// and the puller's relay of the same id finds the first one's exchange: delivered once, answered.
func TestE2ERemoteClientKilled(t *testing.T) {
	t.Parallel()
	rw := newRemoteWorld(t, 1, nil)
	h := rw.bed.Hosts[0]
	orch := rw.bashPane("")
	worker := rw.remoteWorker(h, false)
	// A long Enter delay on the host holds the remote send open after its paste.
	require.NoError(t, os.WriteFile(filepath.Join(h.Share, "remote.yaml"), []byte("enter_delay: 8s\n"), 0o600))
	rw.bed.Run(h, "mkdir", "-p", ".config/wcomm", "&&", "cp", sshtest.ShareDir+"/remote.yaml", ".config/wcomm/config.yaml")

	b := rw.start(call{pane: orch, env: rw.env}, "send", "--to", "h1:"+worker, "count once")
	// The paste reached the worker (its Enter is 8 s away): kill the ssh client of this send.
	var id string
	waitFor(t, 30*time.Second, func() bool {
		for _, ev := range workerEvents(h) {
			if ev["event"] == "received" {
				id, _ = ev["id"].(string)
				return true
			}
		}
		return false
	}, "the paste on h1")
	killed := 0
	for _, pid := range childrenOf(b.cmd.Process.Pid) {
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) == "ssh" {
			require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
			killed++
		}
	}
	require.Equal(t, 1, killed, "the send's ssh client")
	r := b.wait(t, 30*time.Second)
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "queued")
	assert.Equal(t, id+"\n", r.stdout, "the queued send is the one the host received")

	r = rw.call(orch, "await", id, "--timeout", "60s")
	requireCode(t, 0, r)
	assert.Equal(t, answerOf(id, "count once")+"\n", r.stdout)
	n := 0
	for _, ev := range workerEvents(h) {
		if ev["event"] == "received" {
			n++
		}
	}
	assert.Equal(t, 1, n, "delivered once")
	log, _ := os.ReadFile(filepath.Join(rw.root, ".remote", "puller.log"))
	assert.Contains(t, string(log), id+": relayed to host h1")
}

// childrenOf lists the pids whose parent is pid.
func childrenOf(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _, err := readProcStat(p); err == nil && ppid == pid {
			out = append(out, p)
		}
	}
	return out
}

// TestE2ERemoteFlood: a host whose wcomm prints 400 MB, on stdout or on stderr, is refused at the
// bound with an error that says so; the call ends there, holding little memory (the whole output
// once took 1.06 GB and 1.45 GB). A host that prints a little before its reply is still read.
func TestE2ERemoteFlood(t *testing.T) {
	t.Parallel()
	scripts := map[string]string{
		// One line that starts as a reply and never ends, and lines of junk.
		"flood-out":  "#!/bin/sh\nprintf '{\"v\":1,\"x\":\"'\nhead -c 400000000 /dev/zero | tr '\\0' a\n",
		"flood-junk": "#!/bin/sh\nhead -c 400000000 /dev/zero | tr '\\0' '\\n'\n",
		"flood-err":  "#!/bin/sh\nhead -c 400000000 /dev/zero | tr '\\0' e >&2\n",
	}
	rw := newRemoteWorld(t, 1, func(b *sshtest.Bed) string {
		var cfg strings.Builder
		for name, script := range scripts {
			require.NoError(t, os.WriteFile(filepath.Join(b.Hosts[0].Share, name), []byte(script), 0o700))
			fmt.Fprintf(&cfg, "  %s:\n    via: [ssh, -F, %q, h1]\n    wcomm: %s/%s\n", name, b.Config, sshtest.ShareDir, name)
		}
		return cfg.String()
	})
	for _, c := range []struct{ host, want string }{
		{"flood-out", "host flood-out wrote more than 16 MiB on stdout"},
		{"flood-junk", "host flood-junk wrote more than 16 MiB on stdout"},
		{"flood-err", "host flood-err wrote more than 1 MiB on stderr"},
	} {
		t.Run(c.host, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := rw.cmd(ctx, call{env: rw.env}, "panes", "--host", c.host)
			rss := filepath.Join(t.TempDir(), "peak-rss")
			withPeakRSS(t, cmd, rss)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "stderr: %s", &stderr)
			assert.Equal(t, 1, ee.ExitCode(), "stderr: %s", &stderr)
			assert.Contains(t, stderr.String(), c.want)
			assert.Contains(t, stderr.String(), "hosts."+c.host+".wcomm")
			assert.Less(t, stderr.Len(), 2000, "the error holds none of the flood")
			assert.Empty(t, stdout.String())
			kib := readPeakRSS(t, rss)
			t.Logf("panes --host %s: peak resident %d MiB", c.host, kib>>10)
			assert.Less(t, kib, int64(128<<10), "peak resident memory of a call to a host that prints 400 MB")
		})
	}
	// A few lines before the reply (a login shell's start-up files) are read past.
	h := rw.bed.Hosts[0]
	rw.remoteWorker(h, false)
	r := rw.call("", "panes", "--host", "h1")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "h1:")
}
