package cli

// Remote hosts (package remote): send --to HOST:TARGET, and the two hidden commands, __remote (the
// remote end of the wire) and __remote-pull (the local puller, started detached on demand).

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/wcomm/wcomm/internal/launch"
	"github.com/wcomm/wcomm/internal/remote"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

func init() {
	register(&command{
		Name: "__remote", Role: "admin", Hidden: true,
		Summary: "answer one request of another host's wcomm on stdin and stdout, then exit",
		Help:    "Run by another host's wcomm through ssh (or docker/kubectl exec): reads one wire request line, writes one reply line.",
		Example: "ssh gpu1 wcomm __remote",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("__remote takes no arguments")
				}
				v, _ := buildVersion()
				return remote.Serve(c.ctx, c.engine(), c.rootDir(), c.stdin, c.stdout, v)
			}
		},
	})
	register(&command{
		Name: "__remote-pull", Role: "admin", Hidden: true,
		Summary: "relay queued sends to their hosts and pull the responses of relayed requests, then exit",
		Help:    "Started detached by a remote send or an await; at most one runs per root. It exits when nothing is left to relay or pull.",
		Example: "wcomm __remote-pull",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			return func(args []string) error {
				root, err := store.EnsureRoot(c.rootDir(), true)
				if err != nil {
					return err
				}
				dir, err := remote.ControlDir(c.getenv)
				if err != nil {
					return err
				}
				return remote.Pull(c.ctx, c.engine(), root, dir, c.stderr)
			}
		},
	})
}

// host returns a declared host by name.
func (c *cli) host(name string) (settings.HostDef, error) {
	if err := messages.ValidHostName(name); err != nil {
		return settings.HostDef{}, usagef("--host: %v", err)
	}
	s, err := c.settings()
	if err != nil {
		return settings.HostDef{}, err
	}
	h, ok := s.Hosts[name]
	if !ok {
		note := ""
		if s.IgnoredNote() != "" {
			note = "; " + s.IgnoredNote()
		}
		return h, store.Kindf(store.ErrNotFound, "host %s is not declared: add it under hosts: in %s (only declared hosts are reachable)%s", name, settingsHint(s), note)
	}
	return h, nil
}

func settingsHint(s settings.Values) string {
	if s.Source != "" {
		return s.Source
	}
	return "~/.config/wcomm/config.yaml"
}

// relay is this invocation's way to the declared hosts, which the door hands to the engine.
func (c *cli) relay() *remote.Relay { return &remote.Relay{Getenv: c.getenv, Spawn: c.spawnPuller} }

// reportRelayed prints what a send to HOST:TARGET did: the state is the mirror's as recorded, the
// host's word for the delivery (queued there included), or queued here while the host cannot be
// reached.
func (c *cli) reportRelayed(x *exchange.Exchange, err error, wait bool, timeout time.Duration) error {
	if err != nil {
		if !tmuxcomm.QueuedHere(x) && !c.json {
			fmt.Fprintf(c.stderr, "wcomm send: %s reached host %s but was not delivered there (kept here at %s); send it anew once the pane is ready\n", x.ID, x.Host, x.RequestPath)
		}
		return err
	}
	if tmuxcomm.QueuedHere(x) {
		fmt.Fprintf(c.stderr, "wcomm send: queued: %s; the request is relayed when host %s answers ('wcomm await %s' waits for it)\n", x.Evidence, x.Host, x.ID)
		if c.json {
			return c.printJSON(map[string]any{"id": x.ID, "state": x.State, "host": x.Host, "reason": x.Evidence})
		}
		fmt.Fprintln(c.stdout, x.ID)
		return nil
	}
	if x.State == exchange.StateQueued {
		fmt.Fprintf(c.stderr, "wcomm send: queued on host %s: pane %s is not ready there (%s)\n", x.Host, x.Worker, x.Evidence)
	}
	// The note above, not reportSent's, says why it waits.
	return c.reportOut(x, wait, timeout)
}

// spawnPuller starts 'wcomm __remote-pull' for root, detached as the deliverer is
// (internal/launch); one already running makes it exit at once.
func (c *cli) spawnPuller(root string) error {
	abs, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	args := append([]string{"__remote-pull", "--root", abs}, c.serverArgs()...)
	return launch.Start(launch.Helper{Args: args, Log: remote.LogPath(abs)})
}

// remotePanes is panes --host: the panes of the host's tmux server, as HOST:%N.
func (c *cli) remotePanes(name string) error {
	reply, err := c.callHost(name, messages.WireRequest{Op: messages.WirePanes})
	if err != nil {
		return err
	}
	panes := reply.Panes
	for i := range panes {
		sanitizeWirePane(name, &panes[i])
	}
	if c.json {
		if panes == nil {
			panes = []messages.WirePane{}
		}
		return c.printJSON(panes)
	}
	for _, p := range panes {
		fmt.Fprintf(c.stdout, "%s\t%s\t%s\n", p.ID, p.Target, p.Command)
	}
	return nil
}

// remoteFind is find --host: prints HOST:%N, which send --to takes as it is.
func (c *cli) remoteFind(name, agent string, first bool) error {
	reply, err := c.callHost(name, messages.WireRequest{Op: messages.WireFind, To: agent, All: true, First: first})
	if err != nil {
		return err
	}
	if len(reply.Panes) != 1 {
		return store.Kindf(store.ErrNotFound, "host %s answered %d panes for %q", name, len(reply.Panes), messages.SanitizeField(agent))
	}
	p := reply.Panes[0]
	sanitizeWirePane(name, &p)
	if c.json {
		return c.printJSON(p)
	}
	fmt.Fprintln(c.stdout, p.ID)
	return nil
}

// sanitizeWirePane checks a pane the host named and names it HOST:%N: nothing from the remote
// side reaches the terminal raw.
func sanitizeWirePane(host string, p *messages.WirePane) {
	if _, err := messages.ParsePaneID(string(p.ID)); err != nil {
		p.ID = messages.PaneID(host + ":?")
	} else {
		p.ID = messages.PaneID(host + ":" + string(p.ID))
	}
	p.Target = messages.SanitizeField(p.Target)
	p.Command = messages.SanitizeField(p.Command)
	p.Agent = messages.SanitizeField(p.Agent)
}

// callHost runs one wire request on a declared host.
func (c *cli) callHost(name string, req messages.WireRequest) (*messages.WireReply, error) {
	h, err := c.host(name)
	if err != nil {
		return nil, err
	}
	cl, err := c.relay().Client(h)
	if err != nil {
		return nil, err
	}
	return cl.Call(c.ctx, req)
}

// hostReport is what doctor --host found.
type hostReport struct {
	Host     string   `json:"host"`
	Via      []string `json:"via"`
	Connect  string   `json:"connection"`
	Binary   string   `json:"binary,omitempty"`
	Release  string   `json:"release,omitempty"`
	Wire     int      `json:"wire_version,omitempty"`
	Root     string   `json:"root,omitempty"`
	Problems []string `json:"problems"`
}

// doctorHost is doctor --host: the connection, the wcomm there and its version, its root.
func (c *cli) doctorHost(name string) error {
	h, err := c.host(name)
	if err != nil {
		return err
	}
	cl, err := c.relay().Client(h)
	if err != nil {
		return err
	}
	r := hostReport{Host: name, Via: h.Via, Problems: []string{}}
	start := time.Now()
	reply, err := cl.Call(c.ctx, messages.WireRequest{Op: messages.WireHello})
	if err != nil {
		r.Connect = "failed"
		r.Problems = append(r.Problems, err.Error())
	} else {
		r.Connect = fmt.Sprintf("ok (%s)", time.Since(start).Round(time.Millisecond))
		r.Binary, r.Release, r.Wire = messages.SanitizeField(reply.Binary), messages.SanitizeField(reply.Release), reply.Version
		r.Root = messages.SanitizeField(reply.Root)
		if reply.Error != "" {
			r.Problems = append(r.Problems, "root there: "+messages.SanitizeField(reply.Error))
		}
	}
	if c.json {
		if err := c.printJSON(r); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(c.stdout, "host %s via %s\n", name, strings.Join(h.Via, " "))
		fmt.Fprintf(c.stdout, "  connection: %s\n", r.Connect)
		if r.Binary != "" {
			fmt.Fprintf(c.stdout, "  wcomm: %s, release %s, wire version %d (this wcomm speaks %d)\n", r.Binary, r.Release, r.Wire, remote.Version())
			root := r.Root
			if root == "" {
				root = "not created yet (the first relayed send creates it)"
			}
			fmt.Fprintf(c.stdout, "  root: %s\n", root)
		}
		for _, p := range r.Problems {
			fmt.Fprintf(c.stdout, "  problem: %s\n", p)
		}
	}
	if len(r.Problems) > 0 {
		return &exitErr{code: exitFailure, err: errSilent}
	}
	return nil
}
