package paneops

// The tmux side of an agent's life in a pane (the lifecycle room, tmuxcomm/lifecycle, decides
// when): opening a pane for a program, starting the program in it again, its name, and ending it.

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/paneops/profile"
)

// NameOption is the pane option that holds a pane's wcomm name (wcomm spawn --name): kept by
// tmux on the pane itself, so it lives exactly as long as the pane and needs no file to agree
// with.
const NameOption = "@wcomm-name"

// validName reports whether name is what a pane name may be: a word that no other kind of
// target can be (no '%', ':', '.' or '@', which name a pane id, a tmux target or a group), safe
// as a tmux format value: a letter, then up to 63 letters, digits, '-' or '_'. Checked by hand:
// the regular expression it was compiled at every start of the program, a fifth of what the
// program initialises before it acts (its {0,63} unrolled into 871 allocations).
func validName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		b := name[i]
		switch {
		case b >= 'A' && b <= 'Z', b >= 'a' && b <= 'z':
		case i > 0 && (b >= '0' && b <= '9' || b == '-' || b == '_'):
		default:
			return false
		}
	}
	return true
}

// ValidName reports, as an error that says what a name may be, whether name can name a pane.
func ValidName(name string) error {
	if !validName(name) {
		return fmt.Errorf("pane name %q: a name is a letter, then up to 63 letters, digits, '-' or '_'", messages.SanitizeField(name))
	}
	return nil
}

// placeholder holds a new pane until the program is started in it (Open): the pane's options
// (remain-on-exit, its name) must be set before the program runs, so that a program that exits at
// once leaves its pane, dead, to be seen and removed, instead of vanishing with what it printed.
// tmux 3.3a has no way to set a pane option in the new-window call itself (an option set in the
// same command list goes to the current pane, measured), so the pane starts with this and the
// program is started over it with respawn-pane -k.
var placeholder = []string{"sleep", "2147483647"}

// PaneStart says where a new pane opens and what runs in it.
type PaneStart struct {
	// Split splits Target's window (a pane or window target; "": the current one) instead of
	// opening a new window in session Target ("": the current session).
	Split  bool
	Target string
	// Window names a new window ("": tmux's automatic name).
	Window string
	// Name is the pane's wcomm name (NameOption); "": none.
	Name string
	// Dir, Env (KEY=VALUE) and Argv are the program's folder, extra environment and command
	// line, executed directly (no shell).
	Dir  string
	Env  []string
	Argv []string
}

// CheckArgv refuses a command line that tmux would change on its way: tmux eats a trailing ';' of
// an argument (it ends a command there), and control characters have no place in one.
func CheckArgv(what string, words []string) error {
	for _, w := range words {
		if strings.HasSuffix(w, ";") || strings.ContainsFunc(w, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return fmt.Errorf("%s word %q ends in ';' or holds control characters, which tmux would change; pass it another way (a file, an environment variable)", what, messages.SanitizeField(w))
		}
	}
	return nil
}

// Open opens a pane as o says and starts o.Argv in it, the pane kept when the program exits
// (remain-on-exit) so it can be seen, started again (Respawn) or removed (KillPane). It returns
// the pane's id; when the program could not be started, the pane is removed again.
func (c *Client) Open(ctx context.Context, o PaneStart) (messages.PaneID, error) {
	if len(o.Argv) == 0 {
		return "", fmt.Errorf("no command to start")
	}
	if err := CheckArgv("command", o.Argv); err != nil {
		return "", err
	}
	if err := CheckArgv("environment", o.Env); err != nil {
		return "", err
	}
	args := []string{"new-window", "-d", "-P", "-F", "#{pane_id}"}
	if o.Split {
		args = []string{"split-window", "-d", "-P", "-F", "#{pane_id}"}
	}
	if o.Target != "" {
		if err := checkTarget(o.Target); err != nil {
			return "", err
		}
		t := o.Target
		if !o.Split && !strings.ContainsAny(t, ":.%") {
			t += ":" // a session: the next free window of it
		}
		args = append(args, "-t", t)
	}
	if o.Window != "" && !o.Split {
		if err := ValidName(o.Window); err != nil {
			return "", err
		}
		args = append(args, "-n", o.Window)
	}
	if o.Dir != "" {
		args = append(args, "-c", o.Dir)
	}
	args = append(append(args, "--"), placeholder...)
	out, err := c.Run(ctx, nil, args...)
	if err != nil {
		return "", err
	}
	id := messages.PaneID(strings.TrimSpace(out))
	if _, err := paneNum(id); err != nil {
		return "", fmt.Errorf("tmux printed %q for the new pane: %w", out, err)
	}
	set := []string{"set-option", "-p", "-t", string(id), "remain-on-exit", "on", ";"}
	if o.Name != "" {
		if err := ValidName(o.Name); err != nil {
			_ = c.KillPane(ctx, id)
			return "", err
		}
		set = append(set, "set-option", "-p", "-t", string(id), NameOption, o.Name, ";")
	}
	if err := c.respawn(ctx, id, o.Dir, o.Env, o.Argv, set); err != nil {
		_ = c.KillPane(ctx, id)
		return "", err
	}
	return id, nil
}

// Respawn starts argv in pane again (respawn-pane -k: whatever runs there is killed first), in dir
// with env: the same pane, id and name, for a restart.
func (c *Client) Respawn(ctx context.Context, pane messages.PaneID, dir string, env, argv []string) error {
	if _, err := paneNum(pane); err != nil {
		return err
	}
	if err := CheckArgv("command", argv); err != nil {
		return err
	}
	if err := CheckArgv("environment", env); err != nil {
		return err
	}
	return c.respawn(ctx, pane, dir, env, argv, nil)
}

func (c *Client) respawn(ctx context.Context, pane messages.PaneID, dir string, env, argv, before []string) error {
	args := append(before, "respawn-pane", "-k", "-t", string(pane))
	if dir != "" {
		args = append(args, "-c", dir)
	}
	for _, kv := range env {
		args = append(args, "-e", kv)
	}
	args = append(append(args, "--"), argv...)
	_, err := c.Run(ctx, nil, args...)
	return err
}

// KillPane removes pane and whatever runs in it.
func (c *Client) KillPane(ctx context.Context, pane messages.PaneID) error {
	if _, err := paneNum(pane); err != nil {
		return err
	}
	_, err := c.Run(ctx, nil, "kill-pane", "-t", string(pane))
	return err
}

// SendKeys presses keys (tmux key names: C-c, C-d, Enter) in pane, or with literal types text
// as it is: for an agent's own quit command ("/exit"), a fixed word of its profile, never a
// message.
func (c *Client) SendKeys(ctx context.Context, pane messages.PaneID, literal bool, keys ...string) error {
	if _, err := paneNum(pane); err != nil {
		return err
	}
	if err := CheckArgv("key", keys); err != nil {
		return err
	}
	args := []string{"send-keys", "-t", string(pane)}
	if literal {
		args = append(args, "-l")
	}
	_, err := c.Run(ctx, nil, append(args, keys...)...)
	return err
}

// AgentOfCommand is the agent profile a command line will run, judged as a running process is
// (Detect): by its program, or the script its interpreter is started on; nil for a plain program.
func AgentOfCommand(s *profile.Set, argv []string) *profile.Profile {
	if len(argv) == 0 {
		return nil
	}
	return agentOf(s, proc.Process{Comm: filepath.Base(argv[0]), Args: argv})
}

// DeadStatus reports whether pane's program has ended (the pane kept by remain-on-exit) and with
// what exit status: a program killed by a signal has 128 plus the signal's number, as a shell says; -1 while tmux has not recorded it yet.
func (c *Client) DeadStatus(ctx context.Context, pane messages.PaneID) (dead bool, status int, err error) {
	if _, err := paneNum(pane); err != nil {
		return false, 0, err
	}
	out, err := c.Run(ctx, nil, "list-panes", "-t", string(pane), "-f", "#{==:#{pane_id},"+string(pane)+"}",
		"-F", "#{pane_dead}\t#{pane_dead_status}\t#{pane_dead_signal}")
	if err != nil {
		return false, 0, err
	}
	f := strings.Split(strings.TrimRight(out, "\n"), "\t") // empty fields end the line: keep them
	if len(f) != 3 {
		return false, 0, fmt.Errorf("pane %s: %w", pane, ErrPaneNotFound)
	}
	// tmux marks a pane dead when its terminal closes, and records the status only once it has
	// reaped the process (SIGCHLD, handled apart): in between, the pane is dead with neither a
	// status nor a signal. That is -1, not yet known, never 0 (which would read as a clean end).
	status = -1
	if n, err := strconv.Atoi(f[1]); err == nil {
		status = n
	}
	if sig, err := strconv.Atoi(f[2]); err == nil && sig > 0 {
		status = 128 + sig
	}
	return f[0] == "1", status, nil
}

// Named is a pane that has a wcomm name.
type Named struct {
	ID   messages.PaneID `json:"pane_id"`
	Name string          `json:"name"`
	Dead bool            `json:"dead"`
	// DeadStatus is the exit status of a dead pane's program.
	DeadStatus int `json:"dead_status,omitempty"`
}

// Names lists the panes of the whole server that have a name: a name is unique on its server,
// whatever the session.
func (c *Client) Names(ctx context.Context) ([]Named, error) {
	out, err := c.Run(ctx, nil, "list-panes", "-a", "-F", "#{pane_id}\t#{pane_dead}\t#{pane_dead_status}\t#{s/[\t\n]/ /:"+NameOption+"}")
	if err != nil {
		return nil, err
	}
	var named []Named
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 || f[3] == "" || ValidName(f[3]) != nil {
			continue
		}
		if _, err := paneNum(messages.PaneID(f[0])); err != nil {
			continue
		}
		st, _ := strconv.Atoi(f[2])
		named = append(named, Named{ID: messages.PaneID(f[0]), Name: f[3], Dead: f[1] == "1", DeadStatus: st})
	}
	return named, nil
}
