package paneops

// Where a tmux call goes. A call starts a tmux client of its own unless the Client has a route
// kept open: a control client of this process (Control), or the resident client of the root and
// server (a Router: package tmuxd), which answers for a write and a read on a socket. A route
// that cannot take the call leaves it to a client of its own, as before. A route that breaks
// after taking the call leaves it unknown whether tmux ran it, and tmux may still run it a
// moment later: a call that only reads, or that does the same when run twice, is then run again;
// any other is ErrRouteLost, which the delivery resolves through a fence (deliver_fence.go).

import (
	"context"
	"errors"
	"io"
)

// ErrRouteLost is a call that changes a pane (a paste, a key) whose kept-open client broke
// before answering: tmux may have run it, or may still.
var ErrRouteLost = errors.New("the tmux client kept open ended during the call; whether tmux ran it is not known")

// rerunnable are the tmux commands that a route which broke mid-call may hand to a client of
// their own: they read, or running them twice does what running them once does.
var rerunnable = map[string]bool{
	"display-message": true, "display": true, "list-panes": true, "lsp": true, "list-windows": true,
	"list-sessions": true, "list-clients": true, "list-buffers": true, "capture-pane": true,
	"show-options": true, "show": true, "show-buffer": true, "has-session": true, "show-environment": true, "showenv": true,
	"delete-buffer": true, "set-option": true, "-V": true,
}

// RerunSafe reports whether every command of the list (args as for Client.Run) is rerunnable.
func RerunSafe(args []string) bool {
	first := true
	for _, a := range args {
		switch {
		case a == ";":
			first = true
		case first:
			if !rerunnable[a] {
				return false
			}
			first = false
		}
	}
	return true
}

// Router is a route kept open for a Client's calls besides its own control client: the resident
// tmux client of the root and server (package tmuxd). Route runs the call (argv is its whole
// command line, args the part after the socket flags) and says whether it reached tmux.
type Router interface {
	Route(ctx context.Context, argv []string, stdin io.Reader, args []string) (string, RouteState, error)
}

// WithResident is c with its calls going through r when r answers.
func (c *Client) WithResident(r Router) *Client {
	cl := *c
	cl.res = r
	return &cl
}

// routed reports whether calls of c may go through a route kept open: the delivery then fences
// its paste and its Enter so that a call a broken route may still run is never run twice.
func (c *Client) routed() bool { return c.ctl != nil || c.res != nil }

// Direct is c without its routes: every call starts a tmux client of its own.
func (c *Client) Direct() *Client { return &Client{Server: c.Server, Bin: c.Bin} }

// route runs the call through c's routes, in order: this process's control client for a call
// without stdin, then the resident client.
func (c *Client) route(ctx context.Context, stdin io.Reader, args []string) (string, RouteState, error) {
	if c.ctl != nil && stdin == nil {
		if out, st, err := c.ctl.Route(ctx, args); st != RouteNotRun {
			return out, st, err
		}
	}
	if c.res != nil {
		return c.res.Route(ctx, c.argv(args), stdin, args)
	}
	return "", RouteNotRun, nil
}
