// Package resident starts, reaches and runs the resident tmux client of a root and tmux server
// (package paneops/tmuxd): the hidden 'wcomm __tmuxd' that a delivering command starts
// detached when none answers, the calling side a command hands its tmux calls and its guard to,
// and the resident's own loop. It is on unless WCOMM_TMUXD=0. It imports paneops and
// paneops/tmuxd, the store room, messages and the launcher; the command line wires it, and runs
// the engine's guard for it.
package resident

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/internal/launch"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/timerslack"
	"github.com/wcomm/wcomm/paneops/tmuxd"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// Idle is how long a resident waits without a call before it ends: long enough for an exchange's
// round trip and the next send of a busy pair, short enough that nothing stays behind for long
// once the agents are quiet.
const Idle = 30 * time.Second

// logName is the resident's diagnostics file in the root's .tmuxd folder.
const logName = "tmuxd.log"

// Where names the resident of one root and tmux server.
type Where struct {
	Root   string
	Server paneops.Server
	// Getenv reads $TMUX and $TMUX_TMPDIR, which name the default server.
	Getenv func(string) string
}

// On reports whether the resident is used: unless getenv turns it off ("0", "off", "false",
// "no"), when every tmux call starts a client of its own, as before the resident existed. It is on
// since it was measured to beat the client per call (a 1 KiB send 19.8 ms against 25.1 ms, make
// bench) and every test passed with it.
func On(getenv func(string) string) bool {
	switch getenv("WCOMM_TMUXD") {
	case "0", "off", "false", "no":
		return false
	}
	return true
}

// key names the resident of w's server.
func (w Where) key() string {
	return tmuxd.ResidentKey(w.Server, w.Getenv("TMUX"), w.Getenv("TMUX_TMPDIR"))
}

// Caller is the calling side of w's resident; start, when set, starts one when none answers.
func Caller(w Where, start bool) (*tmuxd.Resident, error) {
	root, err := filepath.Abs(w.Root)
	if err != nil {
		return nil, err
	}
	var spawn func() error
	if start {
		spawn = func() error { return Spawn(Where{Root: root, Server: w.Server, Getenv: w.Getenv}) }
	}
	return tmuxd.NewResident(filepath.Join(root, store.ResidentDir), tmuxd.ResidentSocket(w.key()), spawn), nil
}

// Spawn starts 'wcomm __tmuxd' for w, detached.
func Spawn(w Where) error {
	if _, err := store.EnsureRoot(w.Root, true); err != nil {
		return err
	}
	if _, err := store.Dir(w.Root, store.ResidentDir, true); err != nil {
		return err
	}
	args := []string{"__tmuxd", "--root", w.Root}
	if w.Server.Socket != "" {
		args = append(args, "-S", w.Server.Socket)
	}
	if w.Server.Name != "" {
		args = append(args, "-L", w.Server.Name)
	}
	// No log for its stderr: the resident writes its lines itself, each by an open of the log
	// that it closes again, so it holds no file of the root open for writing (Serve). It runs
	// with a server's timer slack, whoever starts it (a command, an MCP server).
	return timerslack.Start(timerslack.Server, func() error {
		return launch.Start(launch.Helper{Path: program(), Args: args})
	})
}

// program is the program a resident runs: wcomm itself, also when a companion program (an MCP
// server, wcomm-mcp) starts it, so that the commands of wcomm, which hand their work only to a
// resident of their own program, find one (""; this program when no wcomm is beside it).
func program() string {
	exe, err := os.Executable()
	if err != nil || filepath.Base(exe) == "wcomm" {
		return ""
	}
	return launch.Beside("wcomm")
}

// GuardFunc starts a guard of a command's deliveries (core.Helpers.Guard).
type GuardFunc func(server, socket string, pane messages.PaneID, pid int) error

// Guard hands this process's guard to the resident r, and only when r does not take it (or ends
// before this process) to spawn, a process of its own.
func Guard(ctx context.Context, r *tmuxd.Resident, spawn GuardFunc) GuardFunc {
	return func(server, socket string, pane messages.PaneID, pid int) error {
		if r == nil || pid != os.Getpid() {
			return spawn(server, socket, pane, pid)
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		lost := func() { _ = spawn(server, socket, pane, pid) }
		if err := r.Guard(ctx, server, socket, pane, lost); err != nil {
			return spawn(server, socket, pane, pid)
		}
		return nil
	}
}

// ServeGuard guards the deliveries of process pid into pane until wait returns (see
// tmuxd.ResidentServer.Guard).
type ServeGuard = func(ctx context.Context, server, socket string, pane messages.PaneID, pid int, wait func(context.Context) error) error

// Serve runs w's resident until it is idle for idle; guard runs a guard handed to it, with the
// resident's own tmux client (tmux, once the resident serves); exec runs a command a caller
// handed to it (Hand).
func Serve(ctx context.Context, w Where, idle time.Duration, guard func(tmux func() *paneops.Client) ServeGuard, exec tmuxd.ExecFunc) error {
	oneP(w.Getenv)
	root, err := store.EnsureRoot(w.Root, false)
	if err != nil {
		return err
	}
	// The sends and notifies handed to it write into the same sessions again and again: the
	// files of the next are made while it waits (store.KeepSpares).
	defer store.KeepSpares()()
	dir, err := store.Dir(root, store.ResidentDir, false)
	if err != nil {
		return err
	}
	srv := &tmuxd.ResidentServer{
		Dir: dir, Key: w.key(), Tmux: &paneops.Client{Server: w.Server},
		Idle: idle,
		Logf: func(format string, a ...any) {
			f, err := os.OpenFile(filepath.Join(dir, logName), os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, store.FileMode)
			if err != nil {
				return
			}
			defer f.Close()
			fmt.Fprintf(f, "%s wcomm __tmuxd %d: %s\n", time.Now().Format(time.RFC3339), os.Getpid(), messages.SanitizeField(fmt.Sprintf(format, a...)))
		},
	}
	srv.Guard = guard(srv.Client)
	srv.Exec = exec
	srv.Busy = store.Busy
	err = srv.Serve(ctx)
	if err == tmuxd.ErrResidentRunning {
		return nil
	}
	return err
}

// oneP runs the resident with one P (GOMAXPROCS 1) unless getenv names a GOMAXPROCS. Its work
// is a few commands and tmux calls at a time, each mostly waiting on a file, tmux or its
// caller; with a second P every goroutine it woke (a frame read, an fsync done in the
// background, tmux's answer) woke a thread of its own and the runtime's monitor spun: a handed
// send took about a quarter less of the resident's CPU with one P, in the same time, measured.
// A system call that blocks still gives the P to another thread, as the runtime does. Measured
// with a handed command's stack grown at once (tmuxd's growStack): with one P and the stack
// grown by doubling, a send took more of the resident's CPU than with two.
func oneP(getenv func(string) string) {
	if getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// Handed names the commands a caller hands to its resident whole (Hand): the ones an agent runs
// for every exchange, whose start and own tmux work are most of their cost.
var Handed = map[string]bool{"send": true, "notify": true, "await": true}

// HandsOff reports whether commands are handed to the resident: unless WCOMM_TMUXD_COMMANDS
// turns it off ("0", "off", "false", "no"), when a command does its work itself and hands the
// resident its tmux calls only.
func HandsOff(getenv func(string) string) bool {
	switch getenv("WCOMM_TMUXD_COMMANDS") {
	case "0", "off", "false", "no":
		return false
	}
	return On(getenv)
}

// Hand hands a command (args, after the program's name) to w's resident when one runs for the
// same program: the command's stdout and stderr are the resident's copy's, its exit code is
// code. handed false: no resident took it and nothing of it ran, so the caller runs it itself
// (and starts none: the tmux calls of that run start it, as they always did). stdin is the
// message the command reads from its stdin, nil when it reads none. sent runs once the call is
// written, before the wait for the resident's answer (tmuxd.ExecCall.Sent).
func Hand(ctx context.Context, w Where, args []string, stdin []byte, sent func(), stdout, stderr io.Writer) (code int, handed bool, err error) {
	r, err := Caller(w, false)
	if err != nil {
		return 0, false, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return 0, false, nil
	}
	code, handed, err = r.Exec(ctx, tmuxd.ExecCall{Args: args, Dir: dir, Env: os.Environ(), Stdin: stdin, Sent: sent}, stdout, stderr)
	if errors.Is(err, tmuxd.ErrExecLost) {
		err = fmt.Errorf("%w, before it said how the command ended; the command was not run again, so no message "+
			"arrives twice: 'wcomm history' shows whether it went (send it again only if it did not); an await can be run again", err)
	}
	return code, handed, err
}
