package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"

	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/store"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// The console itself lives in the companion program wcomm-ui (cmd/wcomm-ui, internal/ui): its
// terminal libraries look at the terminal when their packages load (Lip Gloss runs 'tmux info'
// whenever stdout is a terminal inside tmux, 30-45 ms measured), which every send, await and
// notify typed in a pane would otherwise pay. 'wcomm ui' hands over to it.

// UIConsole runs the console on a terminal; wcomm-ui passes it to Run (Companions.UI). wcomm has
// none, and 'ui' hands over to wcomm-ui.
type UIConsole func(ctx context.Context, a UIArgs) error

// UIArgs is what the console runs with: the engine and what it reads, set up by this package.
type UIArgs struct {
	Engine *tmuxcomm.Engine
	Scope  paneops.Scope
	Getenv func(string) string
	// Tmux reads tmux through the client kept open in control mode, Control; its Changes tell
	// the console and its sentry when to read the panes.
	Tmux    *paneops.Client
	Control *paneops.Control
	Watch   func(ctx context.Context, since time.Duration, emit func(watch.WatchEvent)) error
	Title   string
	Color   bool
	Mouse   bool
	// Detail words a feed event as 'wcomm watch' does.
	Detail func(watch.WatchEvent) string
	In     *os.File
	Out    io.Writer
	Env    []string
	// Web, when set, serves the page of 'wcomm web' (internal/web) instead of the console.
	Web *WebArgs
}

// WebArgs are the flags of 'wcomm web'; the page checks them (internal/web).
type WebArgs struct {
	Listen, TLSCert, TLSKey string
	ReadOnly, InsecureHTTP  bool
	Err                     io.Writer
}

func init() {
	register(&command{
		Name: "ui", Args: "[--all] [--session S] [--popup] [--mouse]", Role: "admin",
		Summary: "the fleet console: every pane's agent and state, pending questions, the live feed",
		Help: `A full-screen console for a person supervising agents. PANES lists every pane of the session
(--all: of every session) with its agent, its state (idle, busy, typing: a person's text in its
input, answer or permission: waiting for a person, starting, gone), the messages queued for it,
the requests it has not answered, its pending questions and the age of the oldest of these.
QUESTIONS lists the pending questions, blocking first and newest first: press the question's
number, then its option's letter or number (freeform: type the answer, Enter); the answer goes
through 'wcomm answer' with source ui. Approvals show what a yes would run and why they are stale.
Tab shows the exchanges: the live feed of 'wcomm watch', newest first; Enter opens one whole, r
re-sends a queued, refused or dead-lettered request ('wcomm send --resend'). Files are followed by
their events, tmux is read through one tmux client kept open in control mode when it tells of a
change in the panes (read-only; 'tmux list-clients' shows it while the console runs). ? shows the keys, q quits.
--popup opens the console in a tmux popup over your pane. NO_COLOR turns colour off; --mouse lets
the wheel move the selection.`,
		Example: "wcomm ui\nwcomm ui --all\nwcomm ui --popup",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			all := fs.Bool("all", false, "every session of the server")
			session := fs.String("session", "", "this tmux session instead of your own")
			popup := fs.Bool("popup", false, "open in a tmux popup over your pane")
			mouse := fs.Bool("mouse", false, "let the mouse wheel move the selection")
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("ui takes no arguments")
				}
				if *all && *session != "" {
					return usagef("give --all or --session, not both")
				}
				if *popup {
					return c.uiPopup(*all, *session, *mouse)
				}
				return c.runUI(*all, *session, *mouse, nil)
			}
		},
	})
	register(&command{
		Name: "web", Args: "[--all] [--session S] [--listen ADDR] [--read-only] [--tls-cert F --tls-key F] [--insecure-http]", Role: "admin",
		Summary: "the fleet in a browser: the console's view, live, its questions answered with a click",
		Help: `Serves the console's view as one page (every session of the server, or --session's): every pane's agent and state and what it waits for, the
pending questions and permission prompts with their answers as buttons, each pane's latest
exchanges and its screen, a box that tells agents a message through their outbox, and the live
feed, pushed as it happens. It prints a URL with a fresh secret: open it (the secret becomes a
cookie); every request without it is refused. It listens on 127.0.0.1 (the settings' web.port, or
a free port); --listen ADDR off loopback needs --tls-cert and --tls-key, or --insecure-http.
--read-only serves the view and no action. 'wcomm help web' says more.`,
		Example: "wcomm web\nwcomm web --all --read-only\nwcomm web --listen 0.0.0.0:8765 --tls-cert cert.pem --tls-key key.pem",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			all := fs.Bool("all", true, "every session of the server (the default)")
			session := fs.String("session", "", "only this tmux session")
			w := &WebArgs{Err: c.stderr}
			fs.StringVar(&w.Listen, "listen", "", "listen on ADDR (host or host:port) instead of 127.0.0.1")
			fs.StringVar(&w.TLSCert, "tls-cert", "", "serve HTTPS with this certificate (PEM)")
			fs.StringVar(&w.TLSKey, "tls-key", "", "and this key (PEM)")
			fs.BoolVar(&w.ReadOnly, "read-only", false, "show the fleet, take no action")
			fs.BoolVar(&w.InsecureHTTP, "insecure-http", false, "serve plain HTTP off loopback (a warning says what that exposes)")
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("web takes no arguments")
				}
				// The page is the fleet: every session of the server, unless one is named.
				return c.runUI(*all && *session == "", *session, false, w)
			}
		},
	})
}

func (c *cli) runUI(all bool, session string, mouse bool, web *WebArgs) error {
	in, ok := c.stdin.(*os.File)
	if web == nil && (!ok || !isTerminal(in)) {
		return usagef("wcomm ui needs a terminal: run it in a tmux pane (or use 'wcomm watch' in a pipeline)")
	}
	// The console reads the root as every command does, and refuses it as they do before it
	// takes the terminal: an error shown inside the console would be read as an empty fleet.
	if _, _, err := store.ReadRoot(c.rootDir()); err != nil {
		return err
	}
	if c.comp.UI == nil && web != nil {
		return c.execCompanion(uiProgram, "the web page", append([]string{"web"}, c.args...)...)
	}
	if c.comp.UI == nil {
		args := []string{"ui"}
		if all {
			args = append(args, "--all")
		}
		if session != "" {
			args = append(args, "--session", session)
		}
		if mouse {
			args = append(args, "--mouse")
		}
		return c.execCompanion(uiProgram, "the console", args...)
	}
	e := c.engine()
	scope := paneops.Scope{All: all, Session: session}
	title, target := "all sessions", ""
	if !all {
		// Without --session the header names the session the panes are read from.
		title, target = session, session
		if target == "" {
			target = tmuxSession(c.getenv("TMUX"))
		}
	}
	// The panes are read through one tmux client kept open (control mode) rather than a client
	// started for each read, when it tells of a change in them.
	ctl := c.tmux().Control(target)
	defer ctl.Close()
	go ctl.Start() // its process start overlaps the terminal's set-up
	feed := func(ctx context.Context, since time.Duration, emit func(watch.WatchEvent)) error {
		return e.Watch(ctx, watch.WatchOptions{Since: since}, func(ev watch.WatchEvent) error {
			emit(ev)
			return nil
		})
	}
	err := c.comp.UI(c.ctx, UIArgs{Engine: e, Scope: scope, Getenv: c.getenv, Tmux: ctl.Client(), Control: ctl, Watch: feed,
		Title: title, Color: c.getenv("NO_COLOR") == "" && c.getenv("TERM") != "dumb", Mouse: mouse,
		Detail: watch.WatchEvent.Say, In: in, Out: c.stdout, Env: os.Environ(), Web: web})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// tmuxSession is the session named by $TMUX ("SOCKET,PID,SESSION": "$SESSION"), the session
// the console's pane was started in, or "". A pane id would do as a target too, but
// attach-session makes a pane's window the current one of its session.
func tmuxSession(env string) string {
	f := strings.Split(env, ",")
	if len(f) != 3 {
		return ""
	}
	if _, err := strconv.Atoi(f[2]); err != nil {
		return ""
	}
	return "$" + f[2]
}

// isTerminal reports whether f is a terminal (not merely a character device such as /dev/null).
func isTerminal(f *os.File) bool { return term.IsTerminal(f.Fd()) }

// uiPopup opens 'wcomm ui' in a tmux popup over the caller's pane, with the same root, server and
// scope spelled out as flags: the popup's program starts from the tmux server's environment, not
// from this one.
func (c *cli) uiPopup(all bool, session string, mouse bool) error {
	self := c.self()
	if self == "" {
		return usagef("--popup opens over your pane: run it inside tmux (TMUX_PANE is not set)")
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find wcomm's own program for the popup: %w", err)
	}
	argv := []string{exe, "ui", "--root", c.rootDir()}
	sock := c.socketPath
	if sock == "" && c.socketName == "" {
		sock, _, _ = strings.Cut(c.getenv("TMUX"), ",")
	}
	if sock != "" {
		argv = append(argv, "-S", sock)
	} else {
		argv = append(argv, "-L", c.socketName)
	}
	if all {
		argv = append(argv, "--all")
	} else {
		if session == "" {
			p, err := c.tmux().Pane(c.ctx, string(self))
			if err != nil {
				return fmt.Errorf("look up your pane %s: %w", self, err)
			}
			session = p.Session
		}
		argv = append(argv, "--session", session)
	}
	if mouse {
		argv = append(argv, "--mouse")
	}
	var env []string
	for _, k := range []string{"NO_COLOR", "WCOMM_ENTER_DELAY", "WCOMM_MAIL_TTL", "WCOMM_NO_QUEUE"} {
		if v := c.getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	dir, _ := os.Getwd()
	err = c.tmux().ShowPopup(c.ctx, paneops.Popup{Pane: self, Dir: dir, Env: env, Width: "90%", Height: "90%",
		Title: " wcomm ui ", Argv: argv})
	if err != nil {
		return fmt.Errorf("open the popup over pane %s (it needs a tmux client attached, tmux 3.2 or newer): %w", self, err)
	}
	return nil
}
