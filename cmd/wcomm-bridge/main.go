// Command wcomm-bridge is wcomm with its answer channels (internal/bridge): 'wcomm bridge' hands
// over to it, an ask starts it, and doctor asks it to check the channels. Run without arguments
// it runs the bridge; with arguments it runs them as wcomm would. It is a program of its own so
// that wcomm, started for every send, await and notify, does not pay for the chat clients'
// packages (net/http, TLS) at each start (see internal/cli/cmd_bridge.go).
package main

import (
	"context"
	"os"
	"time"

	"github.com/wcomm/wcomm/internal/bridge"
	"github.com/wcomm/wcomm/internal/cli"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 {
		args = []string{"bridge"}
	}
	os.Exit(cli.Main(cli.Companions{Bridge: cli.Bridge{Run: run, Check: check}}, args, os.Stdin, os.Stdout, os.Stderr))
}

func hub(env cli.BridgeEnv) *bridge.Hub {
	return &bridge.Hub{Engine: bridge.Door(env.Engine), Root: env.Root, Channels: env.Channels, Unrecorded: env.Unrecorded,
		Logf: env.Logf, IdleExit: env.IdleExit}
}

func run(ctx context.Context, env cli.BridgeEnv) error {
	h := hub(env)
	if err := h.Open(); err != nil {
		return err
	}
	chans, err := bridge.Open(env.Settings.Channels, h, env.Getenv)
	if err != nil {
		return err
	}
	names := ""
	for i, c := range chans {
		if i > 0 {
			names += ", "
		}
		names += c.Name()
	}
	env.Logf("pid %d runs %s for %s (the questions asked where channels %s apply)", os.Getpid(), names, env.Root, env.Channels)
	// While the bridge runs, the agents' own prompts that no hook brings (Codex's approvals,
	// dialogs on screen) are questions too, posted like the rest. A bridge runs all day beside
	// idle agents: the panes are read through one tmux client kept open, and only when it tells
	// of a change in them (a pane's output, a pane opened, closed or dead), so that the bridge,
	// the client and the tmux server sleep while nothing changes. The same news tells the hub
	// when to judge a waiting question's pane gone.
	ctl := env.Tmux.Control("")
	defer ctl.Close()
	sentry := env.Engine.Sentry(ctl.Client(), time.Second, env.Logf)
	sentry.Wake = ctl.Changes(ctx, time.Second)
	h.PanesChanged = ctl.Changes(ctx, time.Second)
	defer sentry.Start(ctx, nil)()
	return h.Run(ctx, chans)
}

func check(ctx context.Context, env cli.BridgeEnv) ([]cli.ChannelCheck, error) {
	chans, err := bridge.Open(env.Settings.Channels, hub(env), env.Getenv)
	if err != nil {
		return nil, err
	}
	var out []cli.ChannelCheck
	for _, c := range chans {
		for _, k := range c.Check(ctx) {
			out = append(out, cli.ChannelCheck(k))
		}
	}
	for _, k := range bridge.Refusals(ctx, bridge.Door(env.Engine), env.Root, env.Channels) {
		out = append(out, cli.ChannelCheck(k))
	}
	return out, nil
}
