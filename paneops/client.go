package paneops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server selects a tmux server the way tmux's own -L and -S flags do. The zero value is the
// default server: the one named by $TMUX inside a pane.
type Server struct {
	Socket string // -S PATH
	Name   string // -L NAME
}

// flags returns the socket flags for every call; tmux gives -S precedence over -L when both are set.
func (s Server) flags() []string {
	var f []string
	if s.Name != "" {
		f = append(f, "-L", s.Name)
	}
	if s.Socket != "" {
		f = append(f, "-S", s.Socket)
	}
	return f
}

// Client runs tmux commands against one server. It is safe for concurrent use.
type Client struct {
	Server Server
	Bin    string // tmux binary; "" means "tmux" from PATH

	ctl *Control // calls without stdin go through this control client (Control.Client)
	res Router   // calls go through the resident client of the root and server (WithResident)
}

// argv returns the full command line of one call: binary, socket flags, then args.
func (c *Client) argv(args []string) []string {
	bin := c.Bin
	if bin == "" {
		bin = "tmux"
	}
	// -u: a tmux client that does not find UTF-8 in LC_ALL, LC_CTYPE or LANG (cron, env -i,
	// a service) prints every tab and non-ASCII byte of -F and -p output as "_", which would
	// garble every format wcomm parses and every pane title and command line it reports.
	argv := append([]string{bin, "-u"}, c.Server.flags()...)
	return append(argv, args...)
}

// Run runs one tmux command list (argv after the socket flags) with stdin (may be nil) and returns
// its stdout. A non-zero exit is an *Error. Never pass message text in args.
func (c *Client) Run(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	if c.routed() {
		out, st, err := c.route(ctx, stdin, args)
		switch {
		case st == RouteDone:
			return out, err
		case st == RouteLost && !RerunSafe(args):
			return "", &Error{Argv: c.argv(args), ExitCode: -1, Err: ErrRouteLost}
		}
	}
	argv := c.argv(args)
	// exec.Command looks a bare name up on $PATH for every call (a stat of each folder of it;
	// a send makes two or three calls): it is given the path found once, argv[0] kept as named.
	name := argv[0]
	if path, err := lookPath(name); err == nil {
		name = path
	}
	cmd := exec.CommandContext(ctx, name, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// The tmux client forks nothing, but if ctx kills it we must not wait on pipes forever.
	cmd.WaitDelay = time.Second
	cmd.SysProcAttr = dieWithParent()
	err := cmd.Run()
	if err == nil {
		return stdout.String(), nil
	}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		e := NewError(argv, exitErr.ExitCode(), stderr.String(), err)
		if e.Err == err && ctx.Err() != nil {
			e.Err = ctx.Err() // killed by the context: say so rather than "signal: killed"
		}
		return stdout.String(), e
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return "", &Error{Argv: argv, ExitCode: -1, Err: fmt.Errorf("%w: %w", ErrNoTmux, err)}
	case ctx.Err() != nil:
		return "", &Error{Argv: argv, ExitCode: -1, Err: ctx.Err()}
	default:
		return "", &Error{Argv: argv, ExitCode: -1, Stderr: stderr.String(), Err: err}
	}
}

// lookPaths caches exec.LookPath per program name for the life of the process.
var lookPaths sync.Map // name -> string

// lookPath is exec.LookPath, asked once per name; a failed lookup is not cached, so a tmux
// installed meanwhile is found.
func lookPath(name string) (string, error) {
	if v, ok := lookPaths.Load(name); ok {
		return v.(string), nil
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	lookPaths.Store(name, path)
	return path, nil
}

// ServerInfo identifies a running server. Pane ids restart at %0 when a server restarts, so a pane
// is only named exactly by (ServerInfo.Key(), PaneID).
type ServerInfo struct {
	PID       int
	StartTime int64 // unix seconds, #{start_time}
	Version   string
	Socket    string // #{socket_path}
}

// Key is "PID-STARTTIME", stable for a server's lifetime and different after a restart.
func (s ServerInfo) Key() string {
	return strconv.Itoa(s.PID) + "-" + strconv.FormatInt(s.StartTime, 10)
}

// serverFormat is read by ServerInfo; the socket path comes last because only it could hold a tab.
const serverFormat = "#{pid}\t#{start_time}\t#{version}\t#{socket_path}"

// ServerInfo asks the server for its pid, start time, version and socket path.
func (c *Client) ServerInfo(ctx context.Context) (ServerInfo, error) {
	out, err := c.Run(ctx, nil, "display-message", "-p", serverFormat)
	if err != nil {
		return ServerInfo{}, err
	}
	return parseServerInfo(out)
}

// parseServerInfo parses the one line printed for serverFormat.
func parseServerInfo(out string) (ServerInfo, error) {
	line := strings.TrimSuffix(out, "\n")
	f := strings.SplitN(line, "\t", 4)
	if len(f) != 4 {
		return ServerInfo{}, fmt.Errorf("unexpected server info %q from tmux: want 4 tab-separated fields", line)
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseInt(f[1], 10, 64)
	if err := errors.Join(err1, err2); err != nil || pid <= 0 {
		return ServerInfo{}, fmt.Errorf("unexpected server info %q from tmux: pid and start time must be numbers", line)
	}
	return ServerInfo{PID: pid, StartTime: start, Version: f[2], Socket: f[3]}, nil
}
