// Package sshtest runs real OpenSSH servers for end-to-end tests of remote hosts: each sshd listens
// on its own loopback address (127.0.0.2, 127.0.0.3, ...) inside its own mount namespace, where /tmp
// and the user's home are private tmpfs mounts, so each "host" has its own tmux server, wcomm root
// and HOME, and nothing touches the real ones. Keys (the host's and the client's) are generated per
// bed; the client's ssh_config names the key, the known_hosts file and the port, so the user's
// ~/.ssh is never read. Everything is stopped when the test ends.
//
// A supervisor process per host holds the namespace: it is the test binary itself, started under
// `unshare --mount` (a package's TestMain calls Supervise first). It mounts the private folders,
// then starts and stops sshd on the commands it reads from stdin, and cleans up at EOF.
package sshtest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Inside the namespace, the host's share folder (the bed's files for it) and the folder of the
// wcomm binary are mounted here.
const (
	ShareDir = "/tmp/share"
	BinDir   = "/tmp/bin"
)

// supervisorEnv marks the test binary started as a supervisor; its value is the share folder.
const supervisorEnv = "WCOMM_SSHTEST_SUPERVISE"

// Host is one sshd of a bed.
type Host struct {
	Name string // the Host alias in the bed's ssh_config
	Addr string // its loopback address
	Port int
	// Share is the host's folder on the test's side, seen inside as ShareDir: logs and files the
	// test and the host both read.
	Share string
	sup   *exec.Cmd
	in    *os.File
	out   *bufio.Reader
}

// Bed is a set of hosts and the client files that reach them.
type Bed struct {
	t testing.TB
	// Dir holds the client's key, known_hosts and ssh_config.
	Dir string
	// Config is the ssh_config file to pass with ssh -F.
	Config   string
	Hosts    []*Host
	hostsCfg string
	alt      int
	sshd     sshd
}

// AltConfig writes another ssh_config for the bed's hosts with another key and known_hosts file
// (a refused key, an unknown host key) and returns its path.
func (b *Bed) AltConfig(identity, knownHosts string) string {
	b.alt++
	path := filepath.Join(b.Dir, fmt.Sprintf("ssh_config%d", b.alt))
	// Options for every host: only this key and known_hosts, never a prompt or an agent.
	cfg := b.hostsCfg + fmt.Sprintf("Host *\n  IdentityFile %s\n  IdentitiesOnly yes\n  IdentityAgent none\n  UserKnownHostsFile %s\n  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  BatchMode yes\n  LogLevel ERROR\n  ConnectTimeout 15\n",
		identity, knownHosts)
	must(b.t, os.WriteFile(path, []byte(cfg), 0o600))
	return path
}

// NewKey generates a client key the hosts do not know and returns its path.
func (b *Bed) NewKey() string {
	b.alt++
	path := filepath.Join(b.Dir, fmt.Sprintf("stranger%d", b.alt))
	keygen(b.t, path)
	return path
}

// Available reports why real sshd tests cannot run here ("" when they can): they need root (to
// mount in a private namespace), sshd, ssh, ssh-keygen and unshare.
func Available() string {
	if os.Geteuid() != 0 {
		return "not root: the sshd hosts mount private folders in their own mount namespace"
	}
	if _, err := findSSHD(); err != nil {
		return err.Error()
	}
	for _, c := range []string{"ssh", "ssh-keygen", "unshare"} {
		if _, err := exec.LookPath(c); err != nil {
			return c + " is missing: run make deps"
		}
	}
	return ""
}

// Require skips the test when Available says no, unless REQUIRE_TMUX=1 (CI), where it fails.
func Require(t testing.TB) {
	t.Helper()
	if why := Available(); why != "" {
		if os.Getenv("REQUIRE_TMUX") == "1" {
			t.Fatalf("real sshd tests cannot run and REQUIRE_TMUX=1: %s", why)
		}
		t.Skip(why)
	}
}

// Start starts n hosts named h1..hn on 127.0.0.2.. with binDir (a folder holding the wcomm binary)
// mounted at BinDir inside each.
func Start(t testing.TB, binDir string, n int) *Bed {
	t.Helper()
	Require(t)
	d, err := findSSHD()
	must(t, err)
	dir := t.TempDir()
	b := &Bed{t: t, Dir: dir, Config: filepath.Join(dir, "ssh_config"), sshd: d}
	key := filepath.Join(dir, "id_ed25519")
	keygen(t, key)
	pub, err := os.ReadFile(key + ".pub")
	must(t, err)
	var cfg, known bytes.Buffer
	for i := 1; i <= n; i++ {
		h := &Host{Name: fmt.Sprintf("h%d", i), Addr: fmt.Sprintf("127.0.0.%d", i+1), Share: filepath.Join(dir, fmt.Sprintf("h%d", i))}
		must(t, os.Mkdir(h.Share, 0o700))
		h.Port = freePort(t, h.Addr)
		hostKey := filepath.Join(h.Share, "host_ed25519")
		keygen(t, hostKey)
		hpub, err := os.ReadFile(hostKey + ".pub")
		must(t, err)
		must(t, os.WriteFile(filepath.Join(h.Share, "authorized_keys"), pub, 0o600))
		must(t, os.WriteFile(filepath.Join(h.Share, "sshd_config"), []byte(sshdConfig(h)+d.configLines()), 0o600))
		fmt.Fprintf(&cfg, "Host %s\n  HostName %s\n  Port %d\n  User root\n  HostKeyAlias %s\n", h.Name, h.Addr, h.Port, h.Name)
		fmt.Fprintf(&known, "%s %s", h.Name, hpub)
		b.Hosts = append(b.Hosts, h)
	}
	b.hostsCfg = cfg.String()
	must(t, os.WriteFile(filepath.Join(dir, "known_hosts"), known.Bytes(), 0o600))
	b.Config = b.AltConfig(key, filepath.Join(dir, "known_hosts"))
	for _, h := range b.Hosts {
		b.supervise(h, binDir)
		h.Start(t)
	}
	t.Cleanup(func() {
		for _, h := range b.Hosts {
			h.in.Close() // EOF: the supervisor stops sshd and the host's tmux server, and exits
			done := make(chan struct{})
			go func() { h.sup.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				h.sup.Process.Kill()
				<-done
			}
		}
	})
	return b
}

// sshdConfig allows only the bed's key for root (the tests run as root), on the host's address.
func sshdConfig(h *Host) string {
	return fmt.Sprintf(`ListenAddress %s
Port %d
HostKey %s/host_ed25519
AuthorizedKeysFile %s/authorized_keys
PidFile none
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
X11Forwarding no
AllowTcpForwarding no
PrintMotd no
MaxSessions 50
MaxStartups 50:30:100
`, h.Addr, h.Port, ShareDir, ShareDir)
}

func (b *Bed) supervise(h *Host, binDir string) {
	t := b.t
	exe, err := os.Executable()
	must(t, err)
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "--", exe)
	cmd.Env = append(os.Environ(), supervisorEnv+"="+h.Share, "WCOMM_SSHTEST_BIN="+binDir,
		"WCOMM_SSHTEST_SSHD="+b.sshd.Path, "WCOMM_SSHTEST_SSHD_ROOT="+b.sshd.Root)
	in, w, err := os.Pipe()
	must(t, err)
	r, out, err := os.Pipe()
	must(t, err)
	cmd.Stdin, cmd.Stdout = in, out
	logf, err := os.OpenFile(filepath.Join(h.Share, "supervisor.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	must(t, err)
	cmd.Stderr = logf
	must(t, cmd.Start())
	in.Close()
	out.Close()
	logf.Close()
	h.sup, h.in, h.out = cmd, w, bufio.NewReader(r)
}

// do sends a command to the host's supervisor and returns its answer.
func (h *Host) do(t testing.TB, cmd string) {
	t.Helper()
	_, err := fmt.Fprintln(h.in, cmd)
	must(t, err)
	line, err := h.out.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ok" {
		log, _ := os.ReadFile(filepath.Join(h.Share, "supervisor.log"))
		slog, _ := os.ReadFile(filepath.Join(h.Share, "sshd.log"))
		t.Fatalf("sshd %s: %s: %q %v\nsupervisor log:\n%s\nsshd log:\n%s", h.Name, cmd, line, err, log, slog)
	}
}

// Start starts the host's sshd (again) and returns once it accepts connections.
func (h *Host) Start(t testing.TB) { t.Helper(); h.do(t, "start") }

// Stop stops the host's sshd and ends every connection to it (the ssh masters' too).
func (h *Host) Stop(t testing.TB) { t.Helper(); h.do(t, "stop") }

// SSH returns the argv prefix that runs a command on host (ssh -F CONFIG NAME).
func (b *Bed) SSH(h *Host) []string { return []string{"ssh", "-F", b.Config, h.Name} }

// Run runs argv on host through ssh (argv is joined by ssh for the remote shell: keep it to plain
// words) and returns stdout, failing the test on an error.
func (b *Bed) Run(h *Host, argv ...string) string {
	b.t.Helper()
	out, err := b.RunErr(h, argv...)
	if err != nil {
		b.t.Fatalf("on %s: %s: %v", h.Name, strings.Join(argv, " "), err)
	}
	return out
}

// RunErr is Run returning the error, with ssh's stderr in it.
func (b *Bed) RunErr(h *Host, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append(b.SSH(h)[1:], argv...)
	cmd := exec.CommandContext(ctx, "ssh", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%w: %s", err, stderr.String())
	}
	return stdout.String(), nil
}

func keygen(t testing.TB, path string) {
	t.Helper()
	out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "wcomm-test", "-f", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
}

// freePort asks the kernel for a free port on addr. The port is free again when sshd takes it;
// another process could take it in between, which the start's readiness check would show.
func freePort(t testing.TB, addr string) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	must(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Ready polls addr:port until it accepts a connection or the deadline passes.
func Ready(addr string, port int, deadline time.Time) error {
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(addr, strconv.Itoa(port)), time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond) // the polling interval, to the deadline
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
