package ui

import (
	"context"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/wcomm/wcomm/tmuxcomm"
)

// Terminal is where the console runs.
type Terminal struct {
	In  io.Reader
	Out io.Writer
	Env []string
}

// Watcher runs the live feed until ctx ends, handing each event to emit: the engine's Watch.
type Watcher func(ctx context.Context, since time.Duration, emit func(tmuxcomm.WatchEvent)) error

// Run shows the console on t until the person quits (nil) or ctx ends. The live feed starts once
// ready is closed (nil: at once); it replays what happened on disk since Run started, so nothing
// between the first screen and the feed's start is missed.
func Run(ctx context.Context, src Source, watch Watcher, ready <-chan struct{}, o Options, t Terminal) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	m := New(ctx, src, o, start)
	// 20 frames a second is smooth for a list and costs a third of the default 60 while idle.
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(t.In), tea.WithOutput(t.Out), tea.WithEnvironment(t.Env), tea.WithFPS(20)}
	if !o.Color {
		opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
	}
	p := tea.NewProgram(m, opts...)
	if watch != nil {
		go func() {
			if ready != nil {
				select {
				case <-ready:
				case <-ctx.Done():
					return
				}
			}
			err := watch(ctx, time.Since(start)+2*time.Second, func(ev tmuxcomm.WatchEvent) { p.Send(FeedMsg(ev)) })
			if err != nil && ctx.Err() == nil {
				p.Send(doneMsg{"the live feed stopped: " + err.Error()})
			}
		}()
	}
	_, err := p.Run()
	if err == tea.ErrProgramKilled && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
