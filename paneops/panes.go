package paneops

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/wcomm/wcomm/messages"
)

// Pane is one pane as tmux reports it.
type Pane struct {
	ID          messages.PaneID `json:"pane_id"`
	Session     string          `json:"session"`
	Window      int             `json:"window"`
	Index       int             `json:"pane"`
	PID         int             `json:"pid"`
	Command     string          `json:"current_command"`
	Title       string          `json:"title"`
	TTY         string          `json:"tty"`
	Dead        bool            `json:"dead"`
	InMode      bool            `json:"in_mode"`
	InputOff    bool            `json:"input_off"`
	Active      bool            `json:"active"`
	Width       int             `json:"width"`
	Height      int             `json:"height"`
	StartedWith string          `json:"start_command"`
}

// Target returns "session:window.pane".
func (p Pane) Target() string {
	return p.Session + ":" + strconv.Itoa(p.Window) + "." + strconv.Itoa(p.Index)
}

// Scope says which panes to list: one session's (Session is a tmux target; "" means the session of
// $TMUX_PANE, or tmux's current session outside a pane) or, with All, every pane of the server.
type Scope struct {
	All     bool
	Session string
	// Self is the caller's own pane ($TMUX_PANE), used to pick the session when Session is "".
	Self messages.PaneID
}

// clean is a format that replaces tabs and newlines in a free-text field with spaces, so the tab
// separator of paneFormat cannot occur inside a field and one pane is always one line. tmux 3.3a
// already refuses control characters in titles and escapes them in session names and start
// commands; this keeps the parser safe if another version does not. The pattern holds a literal
// tab and newline: in tmux's regex "\t" means the letter t.
func clean(field string) string { return "#{s/[\t\n]/ /:" + field + "}" }

// paneFields are the format fields of one pane, in the order parsePane reads them.
var paneFields = []string{
	"#{pane_id}",
	clean("session_name"),
	"#{window_index}",
	"#{pane_index}",
	"#{pane_pid}",
	clean("pane_current_command"),
	clean("pane_title"),
	clean("pane_tty"),
	"#{pane_dead}",
	"#{pane_in_mode}",
	"#{pane_input_off}",
	"#{pane_active}",
	"#{pane_width}",
	"#{pane_height}",
	clean("pane_start_command"),
}

// paneFormat is the -F format for list-panes and display -p: one tab-separated line per pane.
var paneFormat = strings.Join(paneFields, "\t")

// parsePane parses one line printed for paneFormat.
func parsePane(line string) (Pane, error) {
	f := strings.Split(line, "\t")
	if len(f) != len(paneFields) {
		return Pane{}, fmt.Errorf("unexpected pane line %q from tmux: %d tab-separated fields, want %d",
			line, len(f), len(paneFields))
	}
	var p Pane
	var errs []error
	num := func(name, s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q is not a number", name, s))
		}
		return n
	}
	flag := func(name, s string) bool {
		if s != "0" && s != "1" {
			errs = append(errs, fmt.Errorf("%s %q is not 0 or 1", name, s))
		}
		return s == "1"
	}
	if _, err := paneNum(messages.PaneID(f[0])); err != nil {
		errs = append(errs, err)
	}
	p.ID = messages.PaneID(f[0])
	p.Session = f[1]
	p.Window = num("window index", f[2])
	p.Index = num("pane index", f[3])
	p.PID = num("pane pid", f[4])
	p.Command = f[5]
	p.Title = f[6]
	p.TTY = f[7]
	p.Dead = flag("pane_dead", f[8])
	p.InMode = flag("pane_in_mode", f[9])
	p.InputOff = flag("pane_input_off", f[10])
	p.Active = flag("pane_active", f[11])
	p.Width = num("pane width", f[12])
	p.Height = num("pane height", f[13])
	p.StartedWith = f[14]
	if err := errors.Join(errs...); err != nil {
		return Pane{}, fmt.Errorf("unexpected pane line %q from tmux: %w", line, err)
	}
	return p, nil
}

// parsePanes parses list-panes output: one pane per non-empty line.
func parsePanes(out string) ([]Pane, error) {
	var panes []Pane
	for _, line := range strings.Split(out, "\n") {
		if line == "" {
			continue
		}
		p, err := parsePane(line)
		if err != nil {
			return nil, err
		}
		panes = append(panes, p)
	}
	return panes, nil
}

// panesArgs builds the list-panes call for a scope.
func panesArgs(scope Scope) ([]string, error) {
	args := []string{"list-panes"}
	switch {
	case scope.All:
		args = append(args, "-a")
	case scope.Session != "":
		if err := checkTarget(scope.Session); err != nil {
			return nil, err
		}
		args = append(args, "-s", "-t", scope.Session)
	case scope.Self != "":
		// -s with a pane target lists that pane's whole session, which is what "my session" means
		// inside a pane; without -t tmux would pick its "best" session instead (measured on tmux 3.3a).
		if _, err := paneNum(scope.Self); err != nil {
			return nil, err
		}
		args = append(args, "-s", "-t", string(scope.Self))
	default:
		args = append(args, "-s")
	}
	return append(args, "-F", paneFormat), nil
}

// Panes lists panes with one list-panes call (-s for a session, -a for all), using -F formats.
func (c *Client) Panes(ctx context.Context, scope Scope) ([]Pane, error) {
	args, err := panesArgs(scope)
	if err != nil {
		return nil, err
	}
	out, err := c.Run(ctx, nil, args...)
	if err != nil {
		return nil, err
	}
	return parsePanes(out)
}

// PanesBeside is Panes with the pids of the server's other live panes, in the same call: a find
// among the panes of one session need not read those processes (proc.ScanPanesBeside). With
// scope.All every pane is listed, and others is empty.
func (c *Client) PanesBeside(ctx context.Context, scope Scope) (panes []Pane, others []int, err error) {
	args, err := panesArgs(scope)
	if err != nil {
		return nil, nil, err
	}
	if scope.All {
		panes, err := c.Panes(ctx, scope)
		return panes, nil, err
	}
	// Each other pane is a line of its pid alone, where every pane line of paneFormat holds tabs.
	out, err := c.Run(ctx, nil, append(args, ";", "list-panes", "-a", "-F", "#{?pane_dead,,#{pane_pid}}")...)
	if err != nil {
		return nil, nil, err
	}
	var lines []string
	for _, line := range strings.Split(out, "\n") {
		if line == "" {
			continue
		}
		if !strings.Contains(line, "\t") {
			if pid, err := strconv.Atoi(line); err == nil && pid > 0 {
				others = append(others, pid)
			}
			continue
		}
		lines = append(lines, line)
	}
	panes, err = parsePanes(strings.Join(lines, "\n"))
	return panes, others, err
}

// Pane resolves any tmux target ("%7", "work:1.0", "work") to exactly one pane with display -p -t.
// An unknown target is ErrPaneNotFound or ErrTargetNotFound.
//
// display-message treats its target as optional (CMD_FIND_CANFAIL in tmux): "%999" prints empty
// fields and "work:9" silently falls back to another pane, both with exit 0. So the same call first
// runs list-panes -t TARGET, which fails on an unknown target and stops the command list; the
// pane is then the last line, printed by display -p.
func (c *Client) Pane(ctx context.Context, target string) (Pane, error) {
	if err := checkTarget(target); err != nil {
		return Pane{}, err
	}
	out, err := c.Run(ctx, nil,
		"list-panes", "-t", target, "-F", "#{pane_id}", ";",
		"display-message", "-p", "-t", target, paneFormat)
	if err != nil {
		return Pane{}, err
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	return parsePane(lines[len(lines)-1])
}

// PaneServer is Pane and ServerInfo in one tmux call: a send needs both, and every client call
// costs a process start and a round trip to the server. Both come from the same moment, so the
// pane id is named by the server that answered.
func (c *Client) PaneServer(ctx context.Context, target string) (Pane, ServerInfo, error) {
	if err := checkTarget(target); err != nil {
		return Pane{}, ServerInfo{}, err
	}
	out, err := c.Run(ctx, nil,
		"list-panes", "-t", target, "-F", "#{pane_id}", ";",
		"display-message", "-p", "-t", target, paneFormat, ";",
		"display-message", "-p", serverFormat)
	if err != nil {
		return Pane{}, ServerInfo{}, err
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) >= 2 {
		si, err1 := parseServerInfo(lines[len(lines)-1])
		p, err2 := parsePane(lines[len(lines)-2])
		if err1 == nil && err2 == nil {
			return p, si, nil
		}
	}
	// A socket path holding a newline splits the server's line: ask in two calls instead.
	p, err := c.Pane(ctx, target)
	if err != nil {
		return Pane{}, ServerInfo{}, err
	}
	si, err := c.ServerInfo(ctx)
	return p, si, err
}

// Capture returns the visible screen of a pane (capture-pane -p -J, plus the last `history` lines of
// scrollback when history > 0), with trailing blank lines removed.
func (c *Client) Capture(ctx context.Context, pane messages.PaneID, history int) (string, error) {
	if _, err := paneNum(pane); err != nil {
		return "", err
	}
	args := []string{"capture-pane", "-p", "-J", "-t", string(pane)}
	if history > 0 {
		args = append(args, "-S", "-"+strconv.Itoa(history))
	}
	out, err := c.Run(ctx, nil, args...)
	if err != nil {
		return "", err
	}
	return trimBlankLines(out), nil
}

// trimBlankLines drops the blank lines at the end of a capture (the unused rows of the screen),
// keeping a newline after the last line that has text.
func trimBlankLines(s string) string {
	lines := strings.Split(s, "\n")
	n := len(lines)
	for n > 0 && strings.TrimSpace(lines[n-1]) == "" {
		n--
	}
	if n == 0 {
		return ""
	}
	return strings.Join(lines[:n], "\n") + "\n"
}

// paneNum returns N of a pane id "%N" (N decimal, no sign, at most 9 digits). It is the rule of
// messages.ParsePaneID less its refusal of leading zeros, kept here so that argv never depends on
// another package accepting more than this one expects.
func paneNum(id messages.PaneID) (int, error) {
	s := string(id)
	if len(s) < 2 || len(s) > 10 || s[0] != '%' {
		return -1, fmt.Errorf("invalid pane id %q: want %%N, like %%7", s)
	}
	for _, r := range s[1:] {
		if r < '0' || r > '9' {
			return -1, fmt.Errorf("invalid pane id %q: want %%N, like %%7", s)
		}
	}
	n, _ := strconv.Atoi(s[1:])
	return n, nil
}

// checkTarget refuses targets that tmux's argv parser would split or that cannot name anything:
// an argument ending in ";" ends the command (measured on tmux 3.3a), and control characters never occur
// in names tmux hands out.
func checkTarget(target string) error {
	if target == "" {
		return errors.New("empty tmux target: pass a pane id like %7 or a target like work:1.0")
	}
	if strings.HasSuffix(target, ";") || strings.ContainsFunc(target, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("invalid tmux target %q: it ends in ';' or holds control characters", target)
	}
	return nil
}
