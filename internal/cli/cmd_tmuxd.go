package cli

// The resident tmux client (internal/resident): the hidden '__tmuxd', and the wiring that hands a
// command's tmux calls and its guard to it.

import (
	"context"
	"flag"
	"sync"

	"github.com/wcomm/wcomm/internal/resident"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/tmuxd"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
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
	if c.res == nil {
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
				})
			}
		},
	})
}
