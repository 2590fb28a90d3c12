// Package remote reaches workers on other hosts and in containers through a program the user
// already trusts (OpenSSH, docker exec, kubectl exec): wcomm opens no port of its own. The local
// wcomm runs `VIA... WCOMM __remote` for each call and speaks the versioned wire of
// messages/wire.go over its stdin and stdout; the remote wcomm does the guarded delivery next to
// its pane, with its guards, locks, profiles and mailbox (Serve). Responses are pulled from the
// orchestrator's side by a small puller, one per root (puller.go), so the remote host needs no
// way back. Sends to a host that cannot be reached wait in a local queue the puller retries.
// One ssh connection is shared across calls (ControlMaster, in a private 0700 folder).
package remote

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

// Failures of a call, for errors.Is. Only ErrUnreachable is worth a retry later.
var (
	ErrUnreachable   = errors.New("host unreachable")
	ErrRefusedKey    = errors.New("key refused")
	ErrUnknownHost   = errors.New("unknown host key")
	ErrNoRemoteWcomm = errors.New("no wcomm there")
	ErrWireVersion   = errors.New("wire version mismatch")
)

// speak, set at build time (-X), makes a binary speak another wire version: tests use it to stand
// for an older or newer release.
var speak string

// Version is the wire version this binary speaks.
func Version() int {
	if v, err := strconv.Atoi(speak); err == nil {
		return v
	}
	return messages.WireVersion
}

// Client calls one host.
type Client struct {
	Host settings.HostDef
	// ControlDir holds the ssh master's socket; "" uses ControlDir().
	ControlDir string
	// Timeout bounds one call (connection and reply); 0: 60 s.
	Timeout time.Duration
}

// controlPersist is how long a master outlives its last call.
const controlPersist = "600"

// ControlDir is the private folder (0700, ours, not a symlink) of the ssh masters' sockets:
// $WCOMM_SSH_CONTROL_DIR, else wcomm-ssh-UID in the temporary folder. Socket paths must stay short
// (about 100 bytes), hence not under the root.
func ControlDir(getenv func(string) string) (string, error) {
	dir := getenv("WCOMM_SSH_CONTROL_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), fmt.Sprintf("wcomm-ssh-%d", os.Getuid()))
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("create the ssh control folder %s: %w", dir, err)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || st.Mode()&fs.ModeSymlink != 0 || st.Mode().Perm()&0o077 != 0 || sys == nil || int(sys.Uid) != os.Getuid() {
		return "", fmt.Errorf("the ssh control folder %s is not a private folder of yours (0700); remove it and try again", dir)
	}
	return dir, nil
}

// argv is the command line of one call: VIA with ssh's sharing options, then WCOMM __remote.
func (c *Client) argv(control string) []string {
	via := c.Host.Via
	out := []string{via[0]}
	if control != "" {
		out = append(out, "-o", "ControlMaster=no", "-o", "ControlPath="+control, "-o", "BatchMode=yes")
	}
	out = append(out, via[1:]...)
	return append(out, c.Host.Wcomm, "__remote")
}

// control returns the master's socket for an ssh host, starting the master when none answers;
// "" for another via. A master that cannot start leaves the call to connect on its own, which
// then reports why.
func (c *Client) control(ctx context.Context) (string, error) {
	if !c.Host.ViaSSH() {
		return "", nil
	}
	dir := c.ControlDir
	if dir == "" {
		var err error
		if dir, err = ControlDir(os.Getenv); err != nil {
			return "", err
		}
	}
	sock := ControlSocket(dir, c.Host)
	if alive(sock) {
		return sock, nil
	}
	// One master per socket: a second caller waits for the first to start it, then uses it.
	held, err := lock.Open(ctx, sock+".lock", syscall.LOCK_EX)
	if err != nil {
		return "", err
	}
	defer held.Close()
	if alive(sock) {
		return sock, nil
	}
	os.Remove(sock) // a stale socket of a master that died
	// -f: the master goes to the background once connected. Its stderr is a file, not a pipe,
	// so this call does not wait for the master to end.
	errf, err := os.CreateTemp(dir, "master-*.err")
	if err != nil {
		return "", err
	}
	defer os.Remove(errf.Name())
	defer errf.Close()
	via := c.Host.Via
	args := append([]string{"-o", "ControlMaster=yes", "-o", "ControlPersist=" + controlPersist, "-o", "ControlPath=" + sock,
		"-o", "BatchMode=yes", "-f", "-N"}, via[1:]...)
	cmd := exec.CommandContext(ctx, via[0], args...)
	cmd.Stderr = errf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Run(); err != nil {
		return "", c.classify(err, tail(errf, maxStderr))
	}
	return sock, nil
}

// ControlSocket is the path of a host's ssh master socket in the control folder dir: named by
// the host's via, so two hosts that reach the same place through the same argv share it.
func ControlSocket(dir string, h settings.HostDef) string {
	sum := sha256.Sum256([]byte(strings.Join(h.Via, "\x00")))
	return filepath.Join(dir, hex.EncodeToString(sum[:8]))
}

// alive reports whether a master answers on sock.
func alive(sock string) bool {
	conn, err := net.DialTimeout("unix", sock, time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// Call runs one request on the host and returns its reply. A failed reply (OK false) is returned
// as an error too, carrying the remote's exit code class.
func (c *Client) Call(ctx context.Context, req messages.WireRequest) (*messages.WireReply, error) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	control, err := c.control(ctx)
	if err != nil {
		return nil, err
	}
	req.Version = Version()
	line, err := messages.FormatWire(req)
	if err != nil {
		return nil, err
	}
	argv := c.argv(control)
	// Past a bound, the call is cancelled with errTooMuch as its cause: the program ends, and
	// its output is read no further.
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(line)
	// An ssh that shares a master hands its output to the master, which a kill of this ssh does
	// not end at once: Wait gives up on the pipes after this.
	cmd.WaitDelay = 5 * time.Second
	bound := int64(maxReply)
	if req.Op == messages.WirePoll {
		bound = maxPollReply
	}
	stdout := &replyWriter{max: bound, over: func() { stop(errTooMuch) }}
	stderr := &boundedBuffer{max: maxStderr, over: func() { stop(errTooMuch) }}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	runErr := cmd.Run()
	switch {
	case stdout.n > stdout.max:
		return nil, c.tooMuch("stdout", bound, stderr.String())
	case stderr.done:
		return nil, c.tooMuch("stderr", maxStderr, "")
	case ctx.Err() != nil:
		return nil, fmt.Errorf("host %s: no answer within %s: %w", c.Host.Name, timeout, ErrUnreachable)
	}
	first := stdout.reply()
	if first == nil {
		if runErr == nil {
			runErr = errors.New("exit status 0")
		}
		return nil, c.classify(runErr, stderr.String())
	}
	reply, err := messages.ParseWireReply(first)
	if err != nil {
		return nil, fmt.Errorf("host %s: %w", c.Host.Name, err)
	}
	if reply.Version != Version() {
		return nil, fmt.Errorf("the wcomm on host %s (%s) speaks wire version %d, this wcomm speaks version %d: install the same wcomm release on both hosts: %w",
			c.Host.Name, messages.SanitizeField(c.Host.Wcomm), reply.Version, Version(), ErrWireVersion)
	}
	if !reply.OK {
		return reply, &ReplyError{Host: c.Host.Name, Msg: messages.SanitizeField(reply.Error), Code: reply.Code}
	}
	return reply, nil
}

// tail is the end of f, at most limit bytes: the master's stderr may hold the host's banner, of
// any length.
func tail(f *os.File, limit int64) string {
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(0, st.Size()-limit)
	b := make([]byte, st.Size()-off)
	n, _ := f.ReadAt(b, off)
	return string(b[:n])
}

// ReplyError is a failure the remote wcomm reported.
type ReplyError struct {
	Host string
	Msg  string
	Code int
}

func (e *ReplyError) Error() string { return "on host " + e.Host + ": " + e.Msg }

// Unwrap maps the remote's exit code class to the engine's sentinels, so the exit code is the same.
func (e *ReplyError) Unwrap() error {
	switch tmuxcomm.Class(e.Code) {
	case tmuxcomm.ClassTimeout:
		return tmuxcomm.ErrTimeout
	case tmuxcomm.ClassNotFound:
		return tmuxcomm.ErrNotFound
	}
	return nil
}

// classify turns a failed run of VIA into an error that says which failure it was and what to
// run. ssh exits 255 for its own failures; the remote shell 127 for a missing program.
func (c *Client) classify(err error, stderr string) error {
	name := c.Host.Name
	msg := lastLines(messages.SanitizeField(strings.TrimSpace(stderr)))
	code := -1
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	switch {
	case strings.Contains(stderr, "Permission denied"):
		return fmt.Errorf("host %s refused the key (%s): add your public key to its authorized_keys (ssh-copy-id %s), then run 'wcomm doctor --host %s': %w", name, msg, name, name, ErrRefusedKey)
	case strings.Contains(stderr, "Host key verification failed"), strings.Contains(stderr, "host key is known"), strings.Contains(stderr, "REMOTE HOST IDENTIFICATION HAS CHANGED"):
		return fmt.Errorf("host %s's key is not known here (%s): check it and accept it once with 'ssh %s true', then run 'wcomm doctor --host %s': %w", name, msg, name, name, ErrUnknownHost)
	case code == 127 || code == 126 || strings.Contains(stderr, "command not found") || (strings.Contains(stderr, "No such file") && code != 255):
		return fmt.Errorf("no wcomm at %q on host %s (%s): install wcomm there, or set hosts.%s.wcomm to its path: %w", c.Host.Wcomm, name, msg, name, ErrNoRemoteWcomm)
	case code == 255 || (c.Host.ViaSSH() && code < 0):
		return fmt.Errorf("host %s is unreachable (%s): %w", name, msg, ErrUnreachable)
	case code < 0:
		return fmt.Errorf("host %s: %s %v (%s): %w", name, c.Host.Via[0], err, msg, ErrUnreachable)
	case code == 2:
		return fmt.Errorf("the wcomm at %q on host %s does not know the remote wire (%s): install this wcomm release there: %w", c.Host.Wcomm, name, msg, ErrWireVersion)
	}
	return fmt.Errorf("host %s: %s exited %d (%s)", name, c.Host.Via[0], code, msg)
}

// lastLines keeps the end of a long stderr.
func lastLines(s string) string {
	if s == "" {
		return "no message"
	}
	sc := bufio.NewScanner(strings.NewReader(s))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, "; ")
}
