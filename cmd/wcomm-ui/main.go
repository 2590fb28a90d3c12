// Command wcomm-ui is wcomm with its fleet console (internal/ui) and its web page (internal/web):
// 'wcomm ui' and 'wcomm web' hand over to it.
// Run without arguments it runs the console; with arguments it runs them as wcomm would. It is a
// program of its own because its terminal libraries look at the terminal when their packages
// load (Lip Gloss runs 'tmux info' whenever stdout is a terminal inside tmux), which wcomm,
// started for every send, await and notify, should not pay (see internal/cli/cmd_ui.go).
package main

import (
	"context"
	"os"
	"runtime"
	"time"

	"github.com/wcomm/wcomm/internal/cli"
	"github.com/wcomm/wcomm/internal/ui"
	"github.com/wcomm/wcomm/internal/web"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 {
		args = []string{"ui"}
	}
	os.Exit(cli.Main(cli.Companions{UI: run}, args, os.Stdin, os.Stdout, os.Stderr))
}

func run(ctx context.Context, a cli.UIArgs) error {
	src := ui.NewEngineSource(a.Engine, a.Scope, a.Getenv)
	src.ReadTmuxThrough(a.Tmux)
	if a.Control != nil {
		src.WakeOn(a.Control.Changes(ctx, time.Second))
	}
	// Once the first screen's reads are in, the console mostly sleeps: a wake-up every frame and
	// a read of tmux every second. With one P, a timer that fires wakes one thread, not a second
	// one to look for work; measured, the idle console's CPU went from 0.50-0.65 % to 0.40-0.45 %
	// of a core (20 frames a second). The first screen's reads run in parallel before that.
	go func() {
		select {
		case <-src.Ready():
			runtime.GOMAXPROCS(1)
		case <-ctx.Done():
		}
	}()
	// While the console runs, the agents' own prompts that no hook brings (Codex's approvals,
	// dialogs on screen) are questions it lists and answers with a key, like the rest. The
	// sentry reads tmux through the console's own client, when it tells of a change.
	sentry := a.Engine.Sentry(a.Tmux, time.Second, nil)
	if a.Control != nil {
		sentry.Wake = a.Control.Changes(ctx, time.Second)
	}
	defer sentry.Start(ctx, src.Ready())()
	if w := a.Web; w != nil {
		cfg := web.Config{Listen: w.Listen, Port: a.Engine.Settings.WebPort, TLSCert: w.TLSCert, TLSKey: w.TLSKey,
			InsecureHTTP: w.InsecureHTTP, ReadOnly: w.ReadOnly, Title: a.Title}
		return web.Serve(ctx, src, a.Watch, cfg, a.Out, w.Err)
	}
	o := ui.Options{Title: a.Title, Color: a.Color, Mouse: a.Mouse, Detail: a.Detail}
	return ui.Run(ctx, src, a.Watch, src.Ready(), o, ui.Terminal{In: a.In, Out: a.Out, Env: a.Env})
}
