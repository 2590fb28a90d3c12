package tmuxd

// The resident client, the serving side: one process per root and tmux server ('wcomm __tmuxd'),
// holding one control-mode client (paneops.Control) and answering the calls of every wcomm
// process of the root on a unix socket. It ends on its own once no call came for its idle time
// and no delivery it guards is under way, when its tmux server stops, or when its socket is
// removed or replaced (its root deleted).
//
// A call with stdin (load-buffer -b NAME -, the text of a message) never puts the text on a
// process's command line. A text of up to 64 KiB goes on the control client's own line, as
// set-buffer -b NAME TEXT (withSetBuffer): tmux parses it from the client's input, which no
// other process reads. A larger one, or one with a byte tmux's parser cannot take, goes by a
// file: the resident writes the bytes to a file of mode 0600 in its private folder, runs
// load-buffer -b NAME FILE and empties the file for the next call (see slots). tmux reads such a
// file itself, in the server, when the client that asks is attached (file_read in tmux's
// file.c; a control client is attached), so the file is opened by the server's own user: the
// resident checks once that the server runs as this user before it takes such a text, and
// leaves it to a client of the caller's own otherwise.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/callstack"
	"github.com/wcomm/wcomm/paneops/lock"
)

// ResidentServer serves the resident client of one root and tmux server.
type ResidentServer struct {
	Dir  string // the folder of the socket, lock and private files: this user's, 0700
	Key  string // ResidentKey: the names of its files in Dir
	Tmux *paneops.Client
	// Idle is how long without a call the resident waits before it ends.
	Idle time.Duration
	// Guard guards the deliveries of process pid into pane: it returns once wait returns (pid
	// ended) and what pid left between paste and Enter is finished. nil: guards are refused.
	Guard func(ctx context.Context, server, socket string, pane messages.PaneID, pid int, wait func(context.Context) error) error
	// Exec runs a whole command for a caller (resident_exec.go); nil: commands are refused.
	Exec ExecFunc
	// Logf writes a diagnostic line.
	Logf func(format string, a ...any)
	// Busy, when set, marks each handed command from its start to its exit code written, and
	// returns the release (the process makes the files its commands take ahead only between
	// them, store.Busy).
	Busy func() (release func())

	ctl      *paneops.Control
	last     atomic.Int64 // unix nanoseconds of the latest call
	guards   atomic.Int64 // guards under way
	ownerOK  atomic.Int32 // 0 unknown, 1 the server runs as this user, -1 not
	seq      atomic.Uint64
	servers  atomic.Int32 // serving goroutines, busy or kept (serving)
	started  atomic.Int64 // serving goroutines started
	private  string
	slots    slots
	listener *net.UnixListener
}

// ResidentSocket, ResidentLock and ResidentPrivate are the names of a resident's files in its
// folder: the socket, the lock that makes it one per root and server, and the private folder of
// the files it loads buffers from.
func ResidentSocket(key string) string  { return key + ".sock" }
func ResidentLock(key string) string    { return key + ".lock" }
func ResidentPrivate(key string) string { return key + ".d" }

// ErrResidentRunning: another resident serves this root and server.
var ErrResidentRunning = errors.New("a resident tmux client already runs for this root and server")

func (s *ResidentServer) logf(format string, a ...any) {
	if s.Logf != nil {
		s.Logf(format, a...)
	}
}

// Serve runs the resident until it is idle, its server stops, its socket goes or ctx ends.
func (s *ResidentServer) Serve(ctx context.Context) error {
	if err := ownedBy(s.Dir, true); err != nil {
		return err
	}
	// The lock is held on a handle open for reading only, and the pid written by one that is
	// closed at once: a resident keeps no file of the root open for writing, so the root's file
	// system can still be remounted read-only under it.
	lockPath := filepath.Join(s.Dir, ResidentLock(s.Key))
	held, err := os.OpenFile(lockPath, os.O_RDONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	defer held.Close()
	once, stop := context.WithCancel(ctx) // ended: one try, no wait
	stop()
	if err := lock.Flock(once, held, syscall.LOCK_EX, nil); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return ErrResidentRunning
		}
		return err
	}
	if f, err := os.OpenFile(lockPath, os.O_WRONLY|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600); err == nil {
		_, _ = f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
		f.Close()
	}

	// The private folder: made anew, so that nothing a killed resident left (a message's
	// bytes) stays behind, and nothing planted in it is used.
	s.private = filepath.Join(s.Dir, ResidentPrivate(s.Key))
	if err := os.RemoveAll(s.private); err != nil {
		return err
	}
	if err := os.Mkdir(s.private, 0o700); err != nil {
		return err
	}
	// Its mark: a name no other resident's folder holds. The folder's inode cannot tell it, since
	// a folder made anew at this path after this one was removed may get the same number back.
	var tok [8]byte
	_, _ = rand.Read(tok[:])
	mark := filepath.Join(s.private, ".owner-"+hex.EncodeToString(tok[:]))
	if f, err := os.OpenFile(mark, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600); err != nil {
		return err
	} else {
		f.Close()
	}
	defer s.slots.close()
	defer func() {
		// Removed only while it is still this resident's own: when its root was removed and
		// made anew, the folder at this path is the next resident's, whose every message would
		// otherwise go by a client of the sender's own.
		if _, err := os.Lstat(mark); err == nil {
			_ = os.RemoveAll(s.private)
		}
	}()

	sock := filepath.Join(s.Dir, ResidentSocket(s.Key))
	// A socket left by a killed resident: no other resident runs, as this one holds the lock.
	if st, err := os.Lstat(sock); err == nil && st.Mode()&os.ModeSocket != 0 {
		_ = os.Remove(sock)
	}
	err = withShortPath(sock, func(p string) error {
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
		s.listener = ln
		return err
	})
	if err != nil {
		return fmt.Errorf("listen on %s: %w", sock, err)
	}
	s.listener.SetUnlinkOnClose(false)
	// The socket is made 0600 by a chmod, not by the process's umask: a umask set around the
	// bind is the whole process's, and two residents of one process (the tests run several at
	// once) restored each other's, leaving a socket 0755 (seen in CI). Until the chmod the socket
	// lies in this folder, which no one else can enter (0700, checked by every caller).
	if err := os.Chmod(sock, 0o600); err != nil {
		s.listener.Close()
		return fmt.Errorf("listen on %s: %w", sock, err)
	}
	sockSt, err := os.Lstat(sock)
	if err != nil {
		s.listener.Close()
		return err
	}
	s.ctl = s.Tmux.ControlTyping("")
	defer s.ctl.Close()
	s.ctl.Start()
	s.last.Store(time.Now().UnixNano())

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.watch(ctx, sock, sockSt, cancel)
	unlistened := make(chan struct{})
	defer func() { cancel(); <-unlistened }() // the socket is gone before Serve returns
	go func() {
		defer close(unlistened)
		<-ctx.Done()
		// The socket is removed while it is still this resident's own, and before the listener
		// closes: an open listener holds the socket's inode, so a file at the path with its number
		// is this one. Once closed, the number is free, and the next resident's socket bound at the
		// same path may get it back (it did 500 times in 500 on this disk), which a look after the
		// close then took for this one's and removed: the next resident went on serving on a
		// socket that was gone.
		if st, err := os.Lstat(sock); err == nil && os.SameFile(st, sockSt) {
			_ = os.Remove(sock)
		}
		s.listener.Close()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	conns := make(chan *net.UnixConn) // to a serving goroutine that waits for one
	var waiting atomic.Int32
	for {
		c, err := s.listener.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		select {
		case conns <- c:
			continue
		default:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.serving(ctx, c, conns, &waiting)
		}()
	}
}

// keptServers bounds the serving goroutines kept waiting for the next connection.
const keptServers = 4

// serving serves c, then the connections handed to it on conns while it is one of the
// keptServers waiting. A goroutine kept keeps its stack, grown once to what a handed command
// needs (callstack): growing a new goroutine's stack for each handed command was about 1.7 % of
// the resident's CPU on the commands round trip (a profile). The round trip, both builds taking
// turns, both orders, new roots, eight runs each: 10.49 -> 10.01 ms, faster in 7 of the 8 pairs
// of runs (two smaller comparisons before: 8.48 -> 8.09 and 8.03 -> 7.98 ms).
func (s *ResidentServer) serving(ctx context.Context, c *net.UnixConn, conns chan *net.UnixConn, waiting *atomic.Int32) {
	s.started.Add(1)
	s.servers.Add(1)
	defer s.servers.Add(-1)
	callstack.Grow()
	for {
		s.serveConn(ctx, c)
		if waiting.Add(1) > keptServers {
			waiting.Add(-1)
			return
		}
		select {
		case c = <-conns:
			waiting.Add(-1)
		case <-ctx.Done():
			waiting.Add(-1)
			return
		}
	}
}

// Client is a paneops.Client whose calls without stdin go through the resident's own control
// client, in this process (a guard's delivery); valid once Serve runs.
func (s *ResidentServer) Client() *paneops.Client { return s.ctl.Client() }

// serverUp asks the server, with a client of its own, whether it runs.
func (s *ResidentServer) serverUp(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := s.Tmux.Direct().Run(ctx, nil, "display-message", "-p", "#{pid}")
	return err == nil || !errors.Is(err, paneops.ErrNoServer)
}

// serveConn answers the calls of one connection, after checking that its peer is this user.
func (s *ResidentServer) serveConn(ctx context.Context, c *net.UnixConn) {
	defer c.Close()
	// Ending, the resident closes the connections it holds: a caller then goes on by clients of
	// its own, and one whose guard this was starts a guard of another kind.
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	cred, err := peerCred(c)
	if err != nil || int(cred.Uid) != os.Getuid() {
		if err == nil {
			err = fmt.Errorf("the peer runs as uid %d, not as you (uid %d)", cred.Uid, os.Getuid())
		}
		s.logf("refused a connection: %v", err)
		return
	}
	for {
		var req residentReq
		if err := readFrame(c, &req); err != nil {
			return
		}
		var body []byte
		if req.Stdin > 0 {
			if req.Stdin > residentMaxStdin && (req.Op != "exec" || req.Stdin > execMaxCall) {
				return
			}
			body = make([]byte, req.Stdin)
			if _, err := io.ReadFull(c, body); err != nil {
				return // a frame cut short: nothing of it runs
			}
		}
		s.last.Store(time.Now().UnixNano())
		switch req.Op {
		case "run":
			resp := s.run(ctx, req.Args, body)
			s.last.Store(time.Now().UnixNano())
			if err := writeFrame(c, resp, nil); err != nil {
				return
			}
		case "guard":
			s.guard(ctx, c, req, int(cred.Pid))
			return
		case "exec":
			s.serveExec(ctx, c, req, body, int(cred.Pid))
			return
		default:
			_ = writeFrame(c, residentResp{State: "notrun", Err: "unknown operation"}, nil)
			return
		}
	}
}

// run runs one call through the control client.
func (s *ResidentServer) run(ctx context.Context, args []string, body []byte) residentResp {
	if len(args) == 0 {
		return residentResp{State: "notrun"}
	}
	if body != nil {
		if set, ok := withSetBuffer(args, body); ok {
			resp, _ := s.runCtl(ctx, set)
			return resp
		}
		if !loadsStdin(args) || !s.serverIsOurs(ctx) {
			return residentResp{State: "notrun"}
		}
		sl, err := s.writePrivate(body)
		if err != nil {
			s.logf("write a buffer's file: %v", err)
			return residentResp{State: "notrun"}
		}
		args = withLoadPath(args, sl.path)
		resp, answered := s.runCtl(ctx, args)
		s.slots.put(sl, answered)
		return resp
	}
	resp, _ := s.runCtl(ctx, args)
	return resp
}

// runCtl runs args through the control client. answered: tmux answered the call, so it has
// read whatever file the call named and will not read it again.
func (s *ResidentServer) runCtl(parent context.Context, args []string) (resp residentResp, answered bool) {
	ctx, cancel := context.WithTimeout(parent, paneops.ControlTimeout)
	defer cancel()
	out, st, err := s.ctl.Route(ctx, args)
	switch st {
	case paneops.RouteNotRun:
		return residentResp{State: "notrun"}, false
	case paneops.RouteLost:
		return residentResp{State: "lost"}, false
	}
	if err == nil {
		return residentResp{State: "done", Out: out}, true
	}
	var te *paneops.Error
	if errors.As(err, &te) && te.ExitCode > 0 {
		return residentResp{State: "done", Out: out, Code: te.ExitCode, Stderr: te.Stderr}, true
	}
	if parent.Err() != nil {
		// The resident is ending (its server gone, or it was stopped), not the call: the route
		// is lost, as when the resident dies, and the caller runs a call that is safe to run
		// again by a client of its own, or settles one that is not. Answered "done" with the
		// resident's "context canceled", a caller's `wcomm panes` of a server just gone said
		// that, not that no server runs.
		return residentResp{State: "lost"}, false
	}
	// Given up waiting (the timeout): the commands were written and may still run.
	return residentResp{State: "done", Out: out, Code: -1, Err: err.Error()}, false
}

// setBufferMax bounds the text the resident hands tmux in the command line itself (set-buffer)
// rather than through a file: 64 KiB went through tmux 3.3a's parser byte for byte.
const setBufferMax = 64 << 10

// withSetBuffer is args with its first command, "load-buffer -b NAME -", made "set-buffer -b
// NAME TEXT": the text goes on the control client's line (escaped by paneops' quoting, never on
// any process's command line), so no file is written, read by the server and emptied for each
// message, and tmux runs the whole list at once instead of waiting for the file's read. ok is
// false for another shape, a larger text, or a text with a byte tmux's parser cannot take: 0xff
// (read as the end of its input, a parse error) or NUL; those go by a file as before.
func withSetBuffer(args []string, body []byte) ([]string, bool) {
	if len(args) < 4 || args[0] != "load-buffer" || args[1] != "-b" || args[3] != "-" || (len(args) > 4 && args[4] != ";") {
		return nil, false
	}
	if len(body) == 0 || len(body) > setBufferMax || bytes.IndexByte(body, 0) >= 0 || bytes.IndexByte(body, 0xff) >= 0 {
		return nil, false
	}
	out := make([]string, 0, len(args))
	out = append(out, "set-buffer", "-b", args[2], string(body))
	return append(out, args[4:]...), true
}

// withLoadPath is args with the "-" of its first command (load-buffer ... -) replaced by path.
func withLoadPath(args []string, path string) []string {
	out := append([]string(nil), args...)
	end := len(out)
	for i, a := range out {
		if a == ";" {
			end = i
			break
		}
	}
	out[end-1] = path
	return out
}

// writePrivate writes body to a file of mode 0600 in the private folder: a slot no other call
// holds (see slots), else a new one.
func (s *ResidentServer) writePrivate(body []byte) (*slot, error) {
	sl := s.slots.take()
	if sl == nil {
		var b [6]byte
		_, _ = rand.Read(b[:])
		path := filepath.Join(s.private, strconv.FormatUint(s.seq.Add(1), 10)+"-"+hex.EncodeToString(b[:]))
		// A new file of this process's own folder, made anew at its start; never through a link.
		fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		sl = &slot{path: path, fd: fd}
	}
	for off := 0; off < len(body); {
		n, err := unix.Pwrite(sl.fd, body[off:], int64(off))
		if err != nil && !errors.Is(err, unix.EINTR) {
			sl.drop()
			return nil, &os.PathError{Op: "write", Path: sl.path, Err: err}
		}
		off += max(n, 0)
	}
	return sl, nil
}

// slots are the private files the resident loads buffers from, kept (open) and reused rather
// than removed after each call. On ext4 without a journal (the disks of the small virtual
// machines measured here), every file created afterwards skips the inodes freed in the last one
// to six minutes (recently_deleted in ext4's ialloc.c), reading their inode table blocks one by
// one: at a few deletions per message, creating a file in the root grew from about 30 µs to over
// 200 µs, and inode allocation became the largest part of a round trip's CPU. Kept open, a slot
// also costs no open, close and path lookup per message, which were about half of the
// resident's own work for a paste. A slot is emptied once tmux has read it, so a message's bytes
// do not stay on disk after its paste; one whose call did not end cleanly (tmux may still read
// it) is removed instead, never reused.
type slots struct {
	mu   sync.Mutex
	free []*slot
}

// slot is one private file, open for reading and writing.
type slot struct {
	path string
	fd   int
}

// drop closes and removes the slot's file.
func (sl *slot) drop() {
	unix.Close(sl.fd)
	os.Remove(sl.path)
}

// take returns a free slot, nil when none is free.
func (p *slots) take() *slot {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		sl := p.free[n-1]
		p.free = p.free[:n-1]
		return sl
	}
	return nil
}

// put empties the slot and frees it for the next call; a slot whose call tmux did not answer is
// removed.
func (p *slots) put(sl *slot, answered bool) {
	if !answered {
		sl.drop()
		return
	}
	if err := unix.Ftruncate(sl.fd, 0); err != nil {
		sl.drop()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, sl)
}

// close closes the free slots' files (their folder is removed with them).
func (p *slots) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, sl := range p.free {
		unix.Close(sl.fd)
	}
	p.free = nil
}

// serverIsOurs reports whether the tmux server runs as this user, asked once: a server that
// does not would read the buffers' files as another user, or fail to.
func (s *ResidentServer) serverIsOurs(ctx context.Context) bool {
	switch s.ownerOK.Load() {
	case 1:
		return true
	case -1:
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, paneops.ControlTimeout)
	defer cancel()
	out, st, err := s.ctl.Route(ctx, []string{"display-message", "-p", "#{pid}"})
	if st != paneops.RouteDone || err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || pid <= 0 {
		return false
	}
	var fst syscall.Stat_t
	if err := syscall.Stat("/proc/"+strconv.Itoa(pid), &fst); err != nil {
		return false
	}
	if int(fst.Uid) != os.Getuid() {
		s.ownerOK.Store(-1)
		s.logf("the tmux server (pid %d) runs as uid %d, not as you: messages go by a client of their own", pid, fst.Uid)
		return false
	}
	s.ownerOK.Store(1)
	return true
}

// guard takes the guard of the deliveries of the peer (pid, from SO_PEERCRED, never from the
// request) into a pane: a pidfd is opened before the answer, so the pid cannot be another
// process's by the time it is waited on. The connection stays open while the guard lives: its
// end tells the peer that its guard is gone.
func (s *ResidentServer) guard(ctx context.Context, c *net.UnixConn, req residentReq, pid int) {
	pane, err := messages.ParsePaneID(req.Pane)
	if s.Guard == nil || err != nil || pid <= 0 {
		_ = writeFrame(c, residentResp{State: "notrun", Err: "guard not taken"}, nil)
		return
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		_ = writeFrame(c, residentResp{State: "notrun", Err: "pidfd: " + err.Error()}, nil)
		return
	}
	s.guards.Add(1)
	defer func() {
		s.guards.Add(-1)
		s.last.Store(time.Now().UnixNano())
	}()
	if err := writeFrame(c, residentResp{State: "done"}, nil); err != nil {
		unix.Close(fd)
		return
	}
	wait := func(ctx context.Context) error {
		defer unix.Close(fd)
		return waitPidfd(ctx, fd)
	}
	if err := s.Guard(ctx, req.Server, req.Socket, pane, pid, wait); err != nil {
		s.logf("guard of pid %d in pane %s: %v", pid, pane, err)
	}
}
