package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/internal/helpers"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/tmuxd"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

// cli is one invocation's environment: streams, environment and the global flags.
type cli struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string

	socketName string // -L
	socketPath string // -S
	root       string
	json       bool
	raw        bool // --raw: foreign text printed as is (see output.go)

	// comp are the companion programs' parts this program links (companions.go).
	comp Companions

	warnedIgnored bool // the untrusted settings note was printed (once per invocation)

	oneDoor *tmuxcomm.Door // the command's door (door), built once its flags are parsed
	command string         // the command being run
	args    []string       // the command's arguments as given (spawn tells a profile from a command after "--")
	res     *residentState // the resident tmux client's calling side (cmd_tmuxd.go); nil: none
	// call is the caller's, when the resident runs this command for a process that handed it
	// over (cmd_tmuxd.go): its folder, its pid and the resident's route to tmux.
	call *tmuxd.ExecCall
	// stdinRead is the message already read from stdin (by the caller, for a handed command).
	stdinRead []byte
	handTried bool // hand asked the resident already (its words scanned, then its flag set)
	// watched is closed once Ctrl-C and SIGTERM are watched (runWatched); nil: no watch to wait for.
	watched <-chan struct{}
}

var globalFlagNames = map[string]bool{"L": true, "S": true, "root": true, "json": true, "help": true}

func isGlobalFlag(name string) bool { return globalFlagNames[name] }

func (c *cli) globalFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.socketName, "L", "", "tmux server socket name (as tmux -L)")
	fs.StringVar(&c.socketPath, "S", "", "tmux server socket path (as tmux -S)")
	fs.StringVar(&c.root, "root", "", "folder of session folders (default /tmp/worker-comm, env WCOMM_ROOT)")
	fs.BoolVar(&c.json, "json", false, "print JSON")
}

func (c *cli) tmux() *paneops.Client {
	cl := &paneops.Client{Server: paneops.Server{Socket: c.socketPath, Name: c.socketName}}
	if c.call != nil {
		return cl.WithResident(c.call.Tmux)
	}
	if r := c.resident(); r != nil {
		return cl.WithResident(r)
	}
	return cl
}

func (c *cli) rootDir() string {
	if c.root != "" {
		return c.path(c.root)
	}
	if r := c.getenv("WCOMM_ROOT"); r != "" {
		return c.path(r)
	}
	return tmuxcomm.DefaultRoot
}

// self is the caller's pane: $TMUX_PANE, which every process in a pane inherits. It is only
// meaningful for the server the pane belongs to: with -L/-S naming another server, it is ignored
// unless $TMUX names that same socket.
func (c *cli) self() messages.PaneID {
	p := c.getenv("TMUX_PANE")
	if p == "" {
		return ""
	}
	if c.socketPath != "" || c.socketName != "" {
		sock, _, _ := strings.Cut(c.getenv("TMUX"), ",")
		if c.socketPath == "" || sock != c.socketPath {
			return ""
		}
	}
	return messages.PaneID(p)
}

// door is this invocation's front door to the engine. It reads the settings once: one command is
// one reading of them, however many parts of it ask.
func (c *cli) door() *tmuxcomm.Door {
	if c.oneDoor == nil {
		c.oneDoor = c.newDoor()
		c.oneDoor.Once = true
	}
	return c.oneDoor
}

// newDoor builds a front door from the global flags and the environment: the MCP server gets one
// of its own, which reads the settings again for every call.
func (c *cli) newDoor() *tmuxcomm.Door {
	root := c.rootDir()
	d := &tmuxcomm.Door{Root: root, Tmux: c.tmux(), Self: c.self(), Getenv: c.getenv,
		CardKey: fleet.CardKey(c.socketPath, c.socketName, c.getenv("TMUX"), c.getenv("TMUX_TMPDIR")),
		Helpers: helpers.New(helpers.Where{Ctx: c.ctx, Root: root, Server: paneops.Server{Socket: c.socketPath, Name: c.socketName},
			Getenv: c.getenv, Resident: c.resident, Settings: c.settings}),
		Relay: c.relay()}
	if c.call != nil {
		d.Dir, d.SelfPID = c.call.Dir, c.call.PID
	}
	return d
}

// engine builds the protocol engine for this invocation through the front door. Its enter delay
// comes from the settings file and WCOMM_ENTER_DELAY (a command's --enter-delay flag overrides
// it). Commands that work with exchanges have refused a settings file that does not load before
// they get here (runCommand); the others (doctor, completion) go on with the defaults.
func (c *cli) engine() *tmuxcomm.Engine {
	e, s, err := c.door().Engine()
	if err != nil {
		fmt.Fprintf(c.stderr, "wcomm: warning: %v; using the default settings\n", err)
	}
	c.warnIgnored(s)
	return e
}

// warnIgnored says, once per invocation, what an untrusted project settings file declared that
// wcomm ignores, and how to trust it: whoever runs a command there expects the file to apply.
func (c *cli) warnIgnored(s settings.Values) {
	if note := s.IgnoredNote(); note != "" && !c.warnedIgnored {
		c.warnedIgnored = true
		fmt.Fprintf(c.stderr, "wcomm: warning: %s\n", note)
	}
}

// settings are the settings file and environment that apply in the working folder.
func (c *cli) settings() (settings.Values, error) { return c.door().Settings() }

// maxMessage bounds a message: the engine reads files up to 256 MiB, and a message that large is
// better sent as a path anyway.
const maxMessage = 256 << 20

// readBody takes a message from --file, from stdin ("-" as the only argument) or from the
// arguments joined by spaces; none at all is an empty one. The engine refuses an empty message,
// in its words, with this face's hint (needHints).
func (c *cli) readBody(file string, args []string) ([]byte, error) {
	switch {
	case file != "" && len(args) > 0:
		return nil, usagef("give the message either with --file or as arguments, not both")
	case file == "-" || (len(args) == 1 && args[0] == "-"):
		if c.stdinRead != nil {
			return c.stdinRead, nil
		}
		return store.ReadBounded(c.ctx, c.stdin, maxMessage, "the message on stdin")
	case file != "":
		data, err := store.ReadFileBounded(c.ctx, file, maxMessage)
		if err != nil {
			return nil, fmt.Errorf("read message file: %w", err)
		}
		return data, nil
	}
	return []byte(strings.Join(args, " ")), nil
}

// laterBodyFile reports whether --file names a regular file that can be read later than the
// other arguments (notify reads its answer only after the request it answers, so that the two are
// never held at once). It checks now what readBody would: the size bound, and that the file holds
// more than white space. Anything else (a FIFO, /dev/stdin, a missing file) is read at once by
// readBody, which reports its error: such a source can be read only once.
func laterBodyFile(file string) (bool, error) {
	if file == "" || file == "-" {
		return false, nil
	}
	st, err := os.Stat(file)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxMessage {
		return false, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := f.Read(buf)
		if len(bytes.TrimSpace(buf[:n])) > 0 {
			return true, nil
		}
		if err == io.EOF {
			return false, usagef("empty message: give the text as arguments, --file F, or - for stdin")
		}
		if err != nil {
			return false, nil
		}
	}
}

func (c *cli) printJSON(v any) error {
	enc := json.NewEncoder(c.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// durationFlag parses "30s", "2m" and also a bare number of seconds ("30").
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil {
		return ""
	}
	return messages.DurationText(*f.d)
}

func (f durationFlag) Set(s string) error {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return fmt.Errorf("negative duration %q", s)
		}
		*f.d = d
		return nil
	}
	secs, err := strconv.ParseFloat(s, 64)
	if err != nil || secs < 0 || math.IsInf(secs, 0) || math.IsNaN(secs) {
		return fmt.Errorf("invalid duration %q (use 30s, 2m, 1h or seconds)", s)
	}
	*f.d = time.Duration(secs * float64(time.Second))
	return nil
}

func durationVar(fs *flag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	*p = def
	fs.Var(durationFlag{p}, name, usage)
}

// cappedDuration is a durationFlag with an upper bound, checked as the flag is parsed.
type cappedDuration struct {
	durationFlag
	max time.Duration
}

func (f cappedDuration) Set(s string) error {
	var d time.Duration
	if err := (durationFlag{&d}).Set(s); err != nil {
		return err
	}
	if d > f.max {
		return fmt.Errorf("%s is longer than %s", s, f.max)
	}
	*f.d = d
	return nil
}
