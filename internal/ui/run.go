package ui

import (
	"context"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// Terminal is where the console runs.
type Terminal struct {
	In  io.Reader
	Out io.Writer
	Env []string
}

// Watcher runs the live feed until ctx ends, handing each event to emit: the engine's Watch.
type Watcher func(ctx context.Context, since time.Duration, emit func(watch.WatchEvent)) error

// fps is the renderer's frames a second (see Run).
const fps = 20

// Run shows the console on t until the person quits (nil) or ctx ends. The live feed starts once
// ready is closed (nil: at once); it replays what happened on disk since Run started, so nothing
// between the first screen and the feed's start is missed.
func Run(ctx context.Context, src Source, feed Watcher, ready <-chan struct{}, o Options, t Terminal) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	m := New(ctx, src, o, start)
	// Bubble Tea's renderer writes only at its frames, and wakes at every frame, changed or not
	// (v2.1.1; a renderer that wakes only for a new view is proposed upstream, not released). The
	// rate weighs the two: the first frame comes 1/FPS after the start at the earliest, and each
	// wake-up costs. Measured with the ui bench (10,000 exchanges, 6 panes, 2 cores), first screen
	// and idle CPU: 15 frames a second 81 ms and 0.30 %, 20: 65 ms and 0.40-0.45 %, 30: 51 ms
	// and 0.55 %, with one P once the first screen is drawn (see cmd/wcomm-ui). 20 keeps both
	// rows under half of their bounds (150 ms, 1 %).
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(t.In), tea.WithOutput(t.Out), tea.WithEnvironment(t.Env), tea.WithFPS(fps),
		tea.WithColorProfile(colorProfile(o.Color, t.Env)), tea.WithFilter(sameSize)}
	// Idle, the frames stop too (frames.go).
	m.frames = &frames{every: time.Second / fps}
	p := tea.NewProgram(m, opts...)
	m.frames.p = p
	if feed != nil {
		go func() {
			if ready != nil {
				select {
				case <-ready:
				case <-ctx.Done():
					return
				}
				// Then a frame more, so the first screen is on the terminal before the feed's
				// first look (every delivery log under the root) takes the CPU.
				select {
				case <-time.After(time.Second / fps):
				case <-ctx.Done():
					return
				}
			}
			err := feed(ctx, time.Since(start)+2*time.Second, func(ev watch.WatchEvent) { p.Send(FeedMsg(ev)) })
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

// colorProfile is the console's colours from the environment alone. Bubble Tea's own detection
// also asks 'tmux info' inside tmux (a process start, some 40 ms before the first screen) to
// learn whether the terminal takes 24-bit colour, which the console's 16 colours never use.
func colorProfile(color bool, env []string) colorprofile.Profile {
	if !color {
		return colorprofile.Ascii
	}
	return colorprofile.Env(env)
}

// sameSize drops a window size that is the one the model has: Bubble Tea clears and redraws the
// whole screen on every size message, and the console asks its size on every tick.
func sameSize(m tea.Model, msg tea.Msg) tea.Msg {
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		if mm, ok := m.(Model); ok && mm.width == ws.Width && mm.height == ws.Height {
			return nil
		}
	}
	return msg
}
