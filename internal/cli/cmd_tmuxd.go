package cli

// The resident tmux client (internal/resident): the hidden '__tmuxd', and the wiring that hands a
// command's tmux calls and its guard to it.

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/wcomm/wcomm/internal/resident"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/tmuxd"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
	"github.com/wcomm/wcomm/tmuxcomm/store"
	"golang.org/x/sys/unix"
)

// residentCommands start a resident when none answers: the ones that deliver or answer, and the
// long-lived MCP server. The others use one that runs, and start none, except residentAfter.
var residentCommands = map[string]bool{
	"send": true, "notify": true, "ask": true, "answer": true, "__deliver": true, "mcp": true,
}

// residentAfter start a resident once they have succeeded, when none answered them: find and
// panes, which an orchestrator runs again and again and whose list of panes is otherwise a tmux
// client of its own (6 ms of a 30 ms find among 200 panes, measured). Not before: with no tmux
// server on the socket, the resident's control client would start one (attach-session does),
// and the root would be made for a command that failed.
var residentAfter = map[string]bool{"find": true, "panes": true}

// residentState holds the calling side of the resident, made once per invocation (and shared by
// the copies of an invocation's cli).
type residentState struct {
	once sync.Once
	r    *tmuxd.Resident
}

// where names the resident of this invocation's root and tmux server.
func (c *cli) where() resident.Where {
	return resident.Where{Root: c.rootDir(), Server: paneops.Server{Socket: c.socketPath, Name: c.socketName}, Getenv: c.getenv}
}

// resident is the calling side of the resident of this invocation's root and tmux server, made
// once; nil when it is off.
func (c *cli) resident() *tmuxd.Resident {
	if c.res == nil || c.call != nil { // a handed command's calls go through the resident's own client
		return nil
	}
	c.res.once.Do(func() {
		if !resident.On(c.getenv) || c.command == "__tmuxd" {
			return
		}
		c.res.r, _ = resident.Caller(c.where(), residentCommands[c.command] || residentAfter[c.command])
		if c.res.r != nil && residentAfter[c.command] {
			c.res.r.StartLater()
		}
	})
	return c.res.r
}

// residentAfterSuccess starts the resident for a command of residentAfter that succeeded, when
// none answered it.
func (c *cli) residentAfterSuccess() {
	if residentAfter[c.command] && c.res != nil && c.res.r != nil {
		c.res.r.Start()
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
			idle := fs.Duration("idle-exit", resident.Idle, "end after this long without a call")
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("__tmuxd takes no arguments")
				}
				if v := c.getenv("WCOMM_TMUXD_IDLE"); v != "" {
					if d, err := settings.ParseDuration(v); err == nil && d > 0 {
						*idle = d
					}
				}
				return resident.Serve(c.ctx, c.where(), *idle, func(tmux func() *paneops.Client) resident.ServeGuard {
					return func(ctx context.Context, server, socket string, pane messages.PaneID, pid int, wait func(context.Context) error) error {
						// The guard's own calls go through this resident's control client, in the
						// process; a delivery it finishes starts no guard (it is the guard).
						return c.engine().RunHelper(ctx, tmuxcomm.HelperJob{Kind: tmuxcomm.HelperGuard, Server: server, Pane: pane,
							PID: pid, Wait: wait, Tmux: tmux()})
					}
				}, c.runFor)
			}
		},
	})
}

// handing is what tells whether a command is handed to the resident, and how: read from its
// flag set (handingOf) or from a scan of its words before any flag set is made (scanHanding).
type handing struct {
	file   string   // --file
	dash   bool     // "-", the message on stdin, is the only positional
	to     []string // --to, each time given
	resend string   // --resend
}

// handingOf reads a handing from a command's parsed flag set and positionals.
func handingOf(fs *flag.FlagSet, pos []string) handing {
	h := handing{dash: len(pos) == 1 && pos[0] == "-"}
	if f := fs.Lookup("file"); f != nil {
		h.file = f.Value.String()
	}
	if f := fs.Lookup("to"); f != nil && f.Value.String() != "" {
		h.to = []string{f.Value.String()}
	}
	if f := fs.Lookup("resend"); f != nil {
		h.resend = f.Value.String()
	}
	return h
}

// hand hands this command to the root's resident when one runs (resident.Hand), and prints what
// it prints on stdout and stderr, the streams beneath this face's sanitisers (the resident's copy
// sanitises). handed false: this process does the work itself. It is tried once per invocation.
func (c *cli) hand(h handing, stdout, stderr io.Writer) (handed bool, err error) {
	if c.call != nil || c.res == nil || c.handTried || !resident.Handed[c.command] || !resident.HandsOff(c.getenv) || h.reachesHost() || !plainFile(h.file) {
		return false, nil
	}
	c.handTried = true
	// The Ctrl-C watch (runWatched) is set up while the call goes out: it is waited for before
	// this process waits for anything (its stdin, when a read would wait; the resident's answer),
	// so a signal that finds the command waiting is always watched. One that comes sooner ends
	// the process as one during its start does, and the resident takes the closed connection for
	// the call's cancel. Waiting for it first cost the call about 0.28 ms (measured).
	var stdin []byte
	if c.command != "await" && (h.file == "-" || h.dash) {
		if !readsAtOnce(c.stdin) {
			c.watching()
		}
		if stdin, err = store.ReadBounded(c.ctx, c.stdin, maxMessage, "the message on stdin"); err != nil {
			return true, err
		}
		c.stdinRead = stdin // read once: should the resident not take it, this process sends it
	}
	code, handed, err := resident.Hand(c.ctx, c.where(), append([]string{c.command}, c.args...), stdin, c.watching, stdout, stderr)
	if !handed || err != nil || code == exitOK {
		return handed, err
	}
	return true, &exitErr{code: code, err: errSilent}
}

// readsAtOnce reports whether a read of r returns without waiting: a file whose bytes, or whose
// end, are there already (a message piped in by a program that wrote it and closed the pipe).
func readsAtOnce(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	raw, err := f.SyscallConn() // not Fd, which would make the file blocking
	if err != nil {
		return false
	}
	ready := false
	_ = raw.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		ready = err == nil && n == 1 && fds[0].Revents&(unix.POLLIN|unix.POLLHUP) != 0
	})
	return ready
}

// handBools are the boolean flags of the commands handed whole (resident.Handed), besides the
// global --json: a scan of their words needs them to tell a flag's value from a positional.
// TestScanHandingKnowsTheFlags checks them against the commands' flag sets.
var handBools = map[string]map[string]bool{
	"send":   {"json": true, "wait": true, "first": true, "all": true, "raw": true, "no-queue": true},
	"notify": {"json": true, "raw": true, "no-queue": true},
	"await":  {"json": true, "raw": true},
}

// scanHanding reads a handed command's words (args, the global flags among them) as
// parseInterleaved and the flag package would, for what hand needs and the tmux server and root
// flags, without the command's flag set: making that set is most of the 0.1 ms a send spent
// before it connected (measured). ok false leaves the words to the flag set: help, or a word the
// flag package would refuse. A flag this scan does not know is read as one that takes a value:
// the flag set the resident makes refuses it, so nothing runs on what the scan made of it.
func scanHanding(name string, args []string) (h handing, socketName, socketPath, root string, ok bool) {
	bools := handBools[name]
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			pos = append(pos, a)
			continue
		}
		flagName, value, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		if flagName == "" || flagName[0] == '-' || flagName[0] == '=' || flagName == "help" || flagName == "h" {
			return handing{}, "", "", "", false
		}
		if bools[flagName] {
			if _, err := strconv.ParseBool(value); hasValue && err != nil {
				return handing{}, "", "", "", false
			}
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return handing{}, "", "", "", false
			}
			i++
			value = args[i]
		}
		switch flagName {
		case "L":
			socketName = value
		case "S":
			socketPath = value
		case "root":
			root = value
		case "file":
			h.file = value
		case "to":
			h.to = append(h.to, value)
		case "resend":
			h.resend = value
		}
	}
	h.dash = len(pos) == 1 && pos[0] == "-"
	return h, socketName, socketPath, root, true
}

// handScanned hands a command of resident.Handed from a scan of its words (scanHanding), before
// its flag set is made; hand decides whether it is handed. handed false: the command goes on as
// any other, parsed by its flag set (which sets the flags this set again).
func (c *cli) handScanned(cmd *command, args []string) (handed bool, err error) {
	if !resident.Handed[cmd.Name] {
		return false, nil
	}
	h, socketName, socketPath, root, ok := scanHanding(cmd.Name, args)
	if !ok {
		return false, nil
	}
	c.command, c.args = cmd.Name, args
	c.socketName, c.socketPath, c.root = socketName, socketPath, root
	return c.hand(h, c.stdout, c.stderr)
}

// reachesHost reports whether a send may go to another host (a target with a ':', HOST:TARGET,
// or a kept request sent again): its ssh takes the environment of the process that runs it,
// which must stay this one's, not the resident's.
func (h handing) reachesHost() bool {
	for _, t := range h.to {
		if strings.Contains(t, ":") {
			return true
		}
	}
	return h.resend != ""
}

// plainFile reports whether file, when given as a path, names a regular file: another
// (/dev/stdin, /proc/self/fd/0, a FIFO) is this process's own to read.
func plainFile(file string) bool {
	if file == "" || file == "-" {
		return true
	}
	abs, err := filepath.Abs(file)
	if err != nil || strings.HasPrefix(abs, "/proc/") || strings.HasPrefix(abs, "/dev/") {
		return false
	}
	st, err := os.Stat(abs)
	return err == nil && st.Mode().IsRegular()
}

// runFor runs a command a caller handed to this resident (tmuxd.ExecFunc): a cli of the
// caller's environment, folder and pid, whose tmux calls go through the resident's own client.
func (c *cli) runFor(ctx context.Context, call tmuxd.ExecCall, stdout, stderr io.Writer) int {
	env := make(map[string]string, len(call.Env))
	for _, kv := range call.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	h := &cli{ctx: ctx, stdin: strings.NewReader(""), stdinRead: call.Stdin, stdout: stdout, stderr: stderr,
		getenv: func(k string) string { return env[k] }, comp: c.comp, res: &residentState{}, call: &call}
	return h.run(call.Args)
}

// path is p as the caller named it: relative to the caller's folder for a handed command.
func (c *cli) path(p string) string {
	if c.call == nil || p == "" || p == "-" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.call.Dir, p)
}

// absolute makes the paths of a handed command's flags the caller's (path): the resident runs in
// a folder of its own. An exchange's path (await's, notify's --response) is taken only absolute,
// by the engine, so it is left as given.
func (c *cli) absolute(fs *flag.FlagSet) {
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "root", "S", "file":
			_ = f.Value.Set(c.path(f.Value.String()))
		}
	})
}
