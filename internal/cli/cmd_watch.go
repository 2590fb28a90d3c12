package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/store"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

func init() {
	register(&command{
		Name: "watch", Args: "[--session S] [--since D] [--count N] [--timeout D]", Role: "admin",
		Summary: "follow requests, deliveries, answers and questions as they happen, one line each",
		Help: `Prints one line per event under the root as it happens: a new session folder, a request written,
pasted, submitted, refused or undelivered, answered, the orchestrator notified (or its waiting await
woken); a question asked, answered, auto-answered, over its cap, stale or resolved, and refused or
late answer attempts. Columns: time, session folder, request number and id (or question id), event,
detail. Coloured when stdout is a terminal (NO_COLOR turns that off); --json prints one JSON object
per line instead. Runs until interrupted; --count N stops after N events, --timeout D after D (exit
3 when --count was not reached). --since D first replays the events of the last D found on disk.`,
		Example: "wcomm watch\nwcomm watch --session 20260117-120000-o6-w7 --json\nwcomm watch --since 10m --count 20 --timeout 1m",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			session := fs.String("session", "", "only this session folder (e.g. 20260117-120000-o6-w7)")
			count := fs.Int("count", 0, "stop after this many events (0: no limit)")
			var timeout, since time.Duration
			durationVar(fs, &timeout, "timeout", 0, "stop after this long (0: run until interrupted)")
			durationVar(fs, &since, "since", 0, "first replay the events of this last span found on disk")
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("watch takes no arguments (the session goes with --session)")
				}
				if *count < 0 {
					return usagef("--count must be 0 or more")
				}
				if *session != "" {
					if _, err := messages.ParseSessionName(*session); err != nil {
						return usagef("--session: %v", err)
					}
				}
				ctx := c.ctx
				if timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, timeout)
					defer cancel()
				}
				out := &watchPrinter{w: c.stdout, json: c.json, color: wantColor(c.stdout, c.getenv)}
				n := 0
				err := c.engine().Watch(ctx, watch.WatchOptions{Session: *session, Since: since}, func(ev watch.WatchEvent) error {
					if err := out.print(ev); err != nil {
						return err
					}
					n++
					if *count > 0 && n >= *count {
						return watch.ErrStopWatch
					}
					return nil
				})
				switch {
				case err == nil, errors.Is(err, context.Canceled):
					return nil
				case errors.Is(err, context.DeadlineExceeded):
					if *count > 0 {
						return &exitErr{code: exitTimeout, err: store.Kindf(store.ErrTimeout, "%d of %d events after %s", n, *count, messages.DurationText(timeout))}
					}
					return nil
				}
				return err
			}
		},
	})
}

// wantColor reports whether to colour: stdout is a terminal and NO_COLOR (no-color.org) is unset.
func wantColor(w io.Writer, getenv func(string) string) bool {
	f, ok := w.(*os.File)
	if !ok || getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

type watchPrinter struct {
	w     io.Writer
	json  bool
	color bool
}

// ANSI colours of the event column: what went well, what went wrong, what asks for attention.
const (
	ansiReset   = "\x1b[0m"
	ansiDim     = "\x1b[2m"
	ansiBold    = "\x1b[1m"
	ansiRed     = "\x1b[31m"
	ansiGreen   = "\x1b[32m"
	ansiYellow  = "\x1b[33m"
	ansiBlue    = "\x1b[34m"
	ansiMagenta = "\x1b[35m"
	ansiCyan    = "\x1b[36m"
)

func eventColor(ev watch.WatchEvent) string {
	switch ev.Event {
	case watch.EventSession:
		return ansiBold
	case watch.EventRequest:
		return ansiCyan
	case exchange.StatePasted, exchange.StateSubmitted:
		return ansiBlue
	case exchange.StateRefused, exchange.StateUndelivered, exchange.StateNotifyLost, watch.EventAnswerInvalid,
		exchange.StateExpired, exchange.StateUndeliverable, exchange.StateNotifyExpired, exchange.StateNotifyUndeliverable:
		return ansiRed
	case exchange.StateQueued, exchange.StateNotifyQueued, exchange.StateHeld:
		return ansiYellow
	case watch.EventAsked:
		return ansiYellow
	case watch.EventAutoAnswered, watch.EventCapExceeded, watch.EventStale, watch.EventAnswerLate:
		return ansiMagenta
	case watch.EventResolved:
		return ansiDim
	}
	return ansiGreen
}

func (p *watchPrinter) print(ev watch.WatchEvent) error {
	if p.json {
		// One compact object per line, so `wcomm watch --json | jq` and line readers work.
		data, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		_, err = p.w.Write(append(data, '\n'))
		return err
	}
	ref := "-"
	switch ev.Kind {
	case watch.FeedExchange:
		ref = fmt.Sprintf("%03d %s", ev.Seq, orDash(ev.ID))
	case watch.FeedQuestion:
		ref = ev.ID
	}
	at := ev.At.Local().Format("15:04:05.000")
	name := fmt.Sprintf("%-14s", ev.Event)
	if p.color {
		at = ansiDim + at + ansiReset
		name = eventColor(ev) + name + ansiReset
	}
	_, err := fmt.Fprintf(p.w, "%s  %s  %-24s  %s %s\n", at, ev.Session, messages.SanitizeField(ref), name, ev.Say())
	return err
}
