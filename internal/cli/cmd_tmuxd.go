package cli

// The resident tmux client of a root and tmux server (paneops' ResidentServer): the hidden
// '__tmuxd' that a delivering command starts detached when none answers, and the wiring that
// hands the commands' tmux calls and their guards to it.

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/internal/launch"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// residentIdle is how long a resident waits without a call before it ends: long enough for an
// exchange's round trip and the next send of a busy pair, short enough that nothing stays behind
// for long once the agents are quiet.
const residentIdle = 30 * time.Second

// residentLog is the resident's diagnostics file in the root's .tmuxd folder.
const residentLog = "tmuxd.log"

// residentCommands start a resident when none answers: the ones that deliver or answer, and
// the long-lived MCP server. The others use one that runs, and start none.
var residentCommands = map[string]bool{
	"send": true, "notify": true, "ask": true, "answer": true, "__deliver": true, "mcp": true,
}

// residentOff reports whether the resident is off: it is on only where WCOMM_TMUXD turns it on
// ("1", "on", "true", "yes"); otherwise every tmux call starts a client of its own, as before it
// existed. It is opt-in until it is measured on a quiet machine to beat the client per call, and
// its lingering process is known to every test that cleans up a root behind it.
func (c *cli) residentOff() bool {
	switch c.getenv("WCOMM_TMUXD") {
	case "1", "on", "true", "yes":
		return false
	}
	return true
}

// resident is the calling side of the resident of this invocation's root and tmux server, made
// once; nil when it is turned off.
func (c *cli) resident() *paneops.Resident {
	if c.res == nil {
		return nil
	}
	c.res.once.Do(func() { c.res.r = c.makeResident() })
	return c.res.r
}

// residentState holds the calling side of the resident, made once per invocation (and shared by
// the copies of an invocation's cli).
type residentState struct {
	once sync.Once
	r    *paneops.Resident
}

// makeResident makes the calling side of the resident, or nil.
func (c *cli) makeResident() *paneops.Resident {
	if c.residentOff() || c.command == "__tmuxd" {
		return nil
	}
	root, err := filepath.Abs(c.rootDir())
	if err != nil {
		return nil
	}
	key := c.residentKey()
	var start func() error
	if residentCommands[c.command] {
		start = func() error { return c.spawnResident(root) }
	}
	return paneops.NewResident(filepath.Join(root, store.ResidentDir), paneops.ResidentSocket(key), start)
}

// residentKey names the resident of the server this invocation reaches.
func (c *cli) residentKey() string {
	return paneops.ResidentKey(paneops.Server{Socket: c.socketPath, Name: c.socketName}, c.getenv("TMUX"), c.getenv("TMUX_TMPDIR"))
}

// spawnResident starts 'wcomm __tmuxd' for root and this invocation's server, detached.
func (c *cli) spawnResident(root string) error {
	if _, err := store.EnsureRoot(root, true); err != nil {
		return err
	}
	if _, err := store.Dir(root, store.ResidentDir, true); err != nil {
		return err
	}
	args := []string{"__tmuxd", "--root", root}
	if c.socketPath != "" {
		args = append(args, "-S", c.socketPath)
	}
	if c.socketName != "" {
		args = append(args, "-L", c.socketName)
	}
	// No log for its stderr: the resident writes its lines itself, each by an open of the log
	// that it closes again, so it holds no file of the root open for writing (runResident).
	return launch.Start(launch.Helper{Args: args})
}

// residentGuard is the SpawnGuard of a command: the guard goes to the resident, and only when
// the resident does not take it (or ends before this process) to a process of its own.
func (c *cli) residentGuard(root string) func(server, socket string, pane messages.PaneID, pid int) error {
	spawn := c.spawnGuard(root)
	return func(server, socket string, pane messages.PaneID, pid int) error {
		r := c.resident()
		if r == nil || pid != os.Getpid() {
			return spawn(server, socket, pane, pid)
		}
		ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
		defer cancel()
		lost := func() { _ = spawn(server, socket, pane, pid) }
		if err := r.Guard(ctx, server, socket, pane, lost); err != nil {
			return spawn(server, socket, pane, pid)
		}
		return nil
	}
}

func init() {
	register(&command{
		Name: "__tmuxd", Args: "", Role: "admin", Hidden: true,
		Summary: "keep one tmux client open for the root's commands, then exit when idle",
		Help: "Started detached by a command that delivers, when none runs for the root and tmux server; " +
			"at most one runs per root and server. It exits once idle.",
		Example: "wcomm __tmuxd --root /tmp/worker-comm",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			idle := fs.Duration("idle-exit", residentIdle, "end after this long without a call")
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("__tmuxd takes no arguments")
				}
				if v := c.getenv("WCOMM_TMUXD_IDLE"); v != "" {
					if d, err := settings.ParseDuration(v); err == nil && d > 0 {
						*idle = d
					}
				}
				return c.runResident(*idle)
			}
		},
	})
}

// runResident serves the resident of this invocation's root and server until it is idle.
func (c *cli) runResident(idle time.Duration) error {
	root, err := store.EnsureRoot(c.rootDir(), false)
	if err != nil {
		return err
	}
	dir, err := store.Dir(root, store.ResidentDir, false)
	if err != nil {
		return err
	}
	srv := &paneops.ResidentServer{
		Dir: dir, Key: c.residentKey(), Tmux: &paneops.Client{Server: paneops.Server{Socket: c.socketPath, Name: c.socketName}},
		Idle: idle,
		Logf: func(format string, a ...any) {
			f, err := os.OpenFile(filepath.Join(dir, residentLog), os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, store.FileMode)
			if err != nil {
				return
			}
			defer f.Close()
			fmt.Fprintf(f, "%s wcomm __tmuxd %d: %s\n", time.Now().Format(time.RFC3339), os.Getpid(), messages.SanitizeField(fmt.Sprintf(format, a...)))
		},
	}
	srv.Guard = func(ctx context.Context, server, socket string, pane messages.PaneID, pid int, wait func(context.Context) error) error {
		// The guard's own calls go through this resident's control client, in the process; a
		// delivery it finishes starts no guard (it is the guard) and no other resident.
		e := c.engine()
		e.Tmux = srv.Client()
		e.SpawnGuard = nil
		return e.GuardDeliveryWait(ctx, server, pane, pid, wait)
	}
	err = srv.Serve(c.ctx)
	if err == paneops.ErrResidentRunning {
		return nil
	}
	return err
}
