package lifecycle

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// DefaultReadyTimeout bounds the wait for a spawned agent to be ready for input: Claude Code
// takes 5 to 15 seconds to show its box on a loaded machine.
const DefaultReadyTimeout = 60 * time.Second

// SpawnOptions are the inputs of one spawn: a profile name or a command, and where and how.
type SpawnOptions struct {
	// Profile names the profile whose Launch command starts the agent; Argv is a command
	// instead (its agent detected as find does). One of the two.
	Profile string
	Argv    []string
	// Agent names the profile of Argv's agent when its command line does not show it (a
	// wrapper script); "": detected from the command line, then from the pane's processes.
	Agent string
	// Name is the pane's name, unique on its tmux server ("": none).
	Name string
	// Dir is the folder the program starts in ("": the caller's).
	Dir string
	// Worktree makes a git worktree for the agent (branch Branch, or the agent's name) and
	// starts it there.
	Worktree bool
	Branch   string
	// Split splits the window of Target (a pane or window; "": the caller's) instead of opening
	// a new window in session Session ("": the caller's).
	Split   bool
	Target  string
	Session string
	// Env are KEY=VALUE pairs set for the program (tmux -e).
	Env []string
	// Prompt is the first message, delivered once the agent is ready, as a send.
	Prompt []byte
	// ReadyTimeout bounds the wait for readiness (0: DefaultReadyTimeout).
	ReadyTimeout time.Duration
	// Restart is the restart policy recorded for the pane: "" or "on-failure".
	Restart string
}

// Spawned is what a spawn started.
type Spawned struct {
	Pane     messages.PaneID `json:"pane"`
	Name     string          `json:"name,omitempty"`
	Agent    string          `json:"agent,omitempty"`
	Folder   string          `json:"folder"`
	Worktree string          `json:"worktree,omitempty"`
	Branch   string          `json:"branch,omitempty"`
	// Exchange is the id of the first prompt's exchange.
	Exchange string `json:"exchange,omitempty"`
	// Ready says how readiness was seen: "door" (the agent's own door opened), "input box"
	// (its box idle on screen for its quiet time) or "quiet" (a plain program's screen quiet).
	Ready string `json:"ready"`
	// Conversation is the agent's conversation id, when it has one (see profile.SessionSpec).
	Conversation string `json:"conversation,omitempty"`
	// ReadyAfter is how long the agent took to be ready.
	ReadyAfter time.Duration `json:"ready_after_ns"`
}

// usagef is a usage error (exit 2).
func usagef(format string, args ...any) error {
	return &core.UsageError{Msg: fmt.Sprintf(format, args...)}
}

// Spawn starts an agent in a new pane and returns once it is ready for input and its first prompt
// (if any) is delivered. A spawn that fails removes what it made: the pane, its record, a
// worktree it added.
func (r *Room) Spawn(ctx context.Context, o SpawnOptions) (*Spawned, error) {
	argv, prof, err := r.command(o)
	if err != nil {
		return nil, err
	}
	if o.Name != "" {
		if err := paneops.ValidName(o.Name); err != nil {
			return nil, usagef("--name: %v", err)
		}
	}
	for _, kv := range o.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, usagef("--env %q: give KEY=VALUE", messages.SanitizeField(kv))
		}
	}
	if o.Restart != "" && o.Restart != "on-failure" {
		return nil, usagef("--restart %q: the policy is on-failure", messages.SanitizeField(o.Restart))
	}
	if len(o.Prompt) > 0 && r.Send == nil {
		return nil, fmt.Errorf("a first prompt needs a send, and this caller has none")
	}
	if o.Worktree && o.Name == "" && o.Branch == "" {
		return nil, usagef("--worktree needs a --name (the worktree's folder and branch are named after it) or a BRANCH")
	}
	dir := o.Dir
	if dir == "" {
		dir = r.Folder
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("folder %s: not a folder; nothing was started", dir)
	}
	if err := r.findCommand(argv[0], dir); err != nil {
		return nil, err
	}
	if err := paneops.CheckArgv("command", argv); err != nil {
		return nil, usagef("%v", err)
	}
	agent := ""
	if prof != nil {
		agent = prof.Name
	}

	// The name's check and its setting on the new pane are one step under the names lock, so two
	// spawns of one name at once cannot both pass the check.
	unlock := func() {}
	if o.Name != "" {
		unlock, err = r.lockNames()
		if err != nil {
			return nil, err
		}
		if holder, err := r.holder(ctx, o.Name); err != nil {
			unlock()
			return nil, err
		} else if holder != "" {
			unlock()
			return nil, fmt.Errorf("name %q is held by pane %s; stop it first ('wcomm stop %s') or choose another name; nothing was started", o.Name, holder, o.Name)
		}
	}
	defer func() { unlock() }()

	var wt *worktree
	if o.Worktree {
		branch := o.Branch
		if branch == "" {
			branch = o.Name
		}
		wname := o.Name
		if wname == "" {
			wname = branch
		}
		if wt, err = r.addWorktree(ctx, dir, wname, branch); err != nil {
			return nil, err
		}
		dir = wt.Dir
	}
	undoWorktree := func() {
		if wt != nil {
			_ = wt.remove(ctx, true)
		}
	}

	srv, err := r.Tmux.ServerInfo(ctx)
	if err != nil {
		undoWorktree()
		return nil, err
	}
	rec := &Record{Server: srv.Key(), Socket: srv.Socket, Name: o.Name, Agent: agent, Argv: argv, Dir: dir,
		Env: o.Env, Restart: o.Restart, StartedAt: r.now().UTC()}
	if wt != nil {
		rec.Worktree, rec.Branch, rec.Repo = wt.Dir, wt.Branch, wt.Repo
	}
	start := argv
	if prof != nil && prof.Session != nil && slices.ContainsFunc(prof.Session.Start, func(w string) bool { return strings.Contains(w, "{id}") }) && !namesConversation(argv) {
		rec.Conversation = newUUID()
		start = withSession(argv, prof.Session.Start, rec.Conversation)
	}
	began := r.now()
	pane, err := r.Tmux.Open(ctx, paneops.PaneStart{Split: o.Split, Target: r.where(o), Window: o.Name, Name: o.Name,
		Dir: dir, Env: o.Env, Argv: start})
	if err != nil {
		undoWorktree()
		return nil, fmt.Errorf("open a pane for %s: %w; nothing was started", strings.Join(argv, " "), err)
	}
	unlock() // the pane holds its name now
	unlock = func() {}
	rec.Pane = pane
	fail := func(err error) (*Spawned, error) {
		_ = r.Tmux.KillPane(context.WithoutCancel(ctx), pane)
		r.drop(rec.Server, pane)
		undoWorktree()
		what := "the pane was removed"
		if wt != nil {
			what += " and its worktree with it"
		}
		return nil, fmt.Errorf("%w; %s", err, what)
	}
	if err := r.save(rec); err != nil {
		return fail(err)
	}
	if wt != nil {
		if err := r.setup(ctx, wt.Dir); err != nil {
			return fail(err)
		}
	}
	how, thread, seen, err := r.awaitReady(ctx, pane, prof, o.ReadyTimeout)
	if err != nil {
		return fail(err)
	}
	if prof == nil && seen != nil {
		agent, rec.Agent = seen.Name, seen.Name
		if err := r.save(rec); err != nil {
			return fail(err)
		}
	}
	if rec.Conversation == "" && thread != "" {
		rec.Conversation = thread
		if err := r.save(rec); err != nil {
			return fail(err)
		}
	}
	if o.Restart == "on-failure" && r.StartWatcher != nil {
		if err := r.StartWatcher(rec.Server, rec.Socket, pane); err != nil {
			return fail(fmt.Errorf("start the watcher of its restart policy: %w", err))
		}
	}
	out := &Spawned{Pane: pane, Name: o.Name, Agent: agent, Folder: dir, Ready: how, Conversation: rec.Conversation,
		ReadyAfter: r.now().Sub(began)}
	if wt != nil {
		out.Worktree, out.Branch = wt.Dir, wt.Branch
	}
	if len(o.Prompt) > 0 {
		// Sent once: the send writes the request before it delivers, and a delivery that does
		// not finish waits in the pane's outbox; it is never typed again here.
		id, err := r.Send(ctx, pane, o.Prompt)
		out.Exchange = id
		if err != nil {
			// A spawn that fails leaves nothing behind: an agent without its task is not what
			// was asked for, and the request stays on disk (its exchange) to send again.
			return fail(fmt.Errorf("pane %s was ready, but its first prompt was not delivered: %w", pane, err))
		}
	}
	return out, nil
}

// where is the tmux target the new pane opens at.
func (r *Room) where(o SpawnOptions) string {
	if o.Split {
		return o.Target
	}
	return o.Session
}

// command is the command line a spawn runs and the profile of its agent (nil: a plain program).
func (r *Room) command(o SpawnOptions) ([]string, *profile.Profile, error) {
	switch {
	case o.Profile != "" && o.Agent != "":
		return nil, nil, usagef("--agent names the agent of a command after --; a profile names its own")
	case o.Profile != "" && len(o.Argv) > 0:
		return nil, nil, usagef("give a profile name or a command after --, not both")
	case o.Profile != "":
		p := r.Profiles.Lookup(o.Profile)
		if p == nil || len(p.Launch) == 0 {
			return nil, nil, &notFound{fmt.Sprintf("no profile %q to spawn; the known ones: %s; or give a command after --",
				messages.SanitizeField(o.Profile), strings.Join(r.Launchable(), ", "))}
		}
		return slices.Clone(p.Launch), p, nil
	case len(o.Argv) > 0 && o.Agent != "":
		p := r.Profiles.Lookup(o.Agent)
		if p == nil {
			return nil, nil, &notFound{fmt.Sprintf("no profile %q; the known ones: %s", messages.SanitizeField(o.Agent), strings.Join(r.Profiles.Names(), ", "))}
		}
		return slices.Clone(o.Argv), p, nil
	case len(o.Argv) > 0:
		return slices.Clone(o.Argv), r.agentOf(o.Argv), nil
	}
	return nil, nil, usagef("name a profile (%s) or give a command after --", strings.Join(r.Launchable(), ", "))
}

// Launchable lists the profiles that can be spawned by their name.
func (r *Room) Launchable() []string {
	var out []string
	for _, p := range r.Profiles.Profiles {
		if len(p.Launch) > 0 {
			out = append(out, p.Name)
		}
	}
	return out
}

// agentOf is the agent profile a command line runs, judged as find judges a running process (its
// program, or the script its interpreter starts); nil: a plain program.
func (r *Room) agentOf(argv []string) *profile.Profile {
	return paneops.AgentOfCommand(r.Profiles, argv)
}

// findCommand refuses a command that is not there before anything starts: tmux would start it
// in a pane that dies at once and show nothing of why.
func (r *Room) findCommand(name, dir string) error {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("command %s is not an executable file; nothing was started", name)
		}
		return nil
	}
	look := r.LookPath
	if look == nil {
		look = exec.LookPath
	}
	if _, err := look(name); err != nil {
		return fmt.Errorf("command %q is not found on PATH; install it or give its path; nothing was started", messages.SanitizeField(name))
	}
	return nil
}

// lockNames takes the names lock of the root.
func (r *Room) lockNames() (func(), error) {
	root, err := store.EnsureRoot(r.Root, true)
	if err != nil {
		return nil, err
	}
	d, err := store.Dir(root, Dir, true)
	if err != nil {
		return nil, err
	}
	return lock.File(filepath.Join(d, "names.lock"), syscall.LOCK_EX, 30*time.Second)
}

// holder is the pane that holds name on the server, "" when none does. A dead pane kept for a
// restart still holds its name: the name is freed when the pane goes (wcomm stop).
func (r *Room) holder(ctx context.Context, name string) (messages.PaneID, error) {
	named, err := r.Tmux.Names(ctx)
	if err != nil {
		return "", err
	}
	for _, n := range named {
		if n.Name == name {
			return n.ID, nil
		}
	}
	return "", nil
}

// namesConversation reports whether argv already names a conversation (the caller resumes one).
func namesConversation(argv []string) bool {
	for _, a := range argv[1:] {
		switch a {
		case "--session-id", "--resume", "-r", "--continue", "-c", "resume":
			return true
		}
		if strings.HasPrefix(a, "--session-id=") || strings.HasPrefix(a, "--resume=") {
			return true
		}
	}
	return false
}

// withSession is argv with words (id put in for "{id}") at its end: after the script of an
// agent run by its interpreter (node .../cli.js), where its own flags are read.
func withSession(argv, words []string, id string) []string {
	out := slices.Clone(argv)
	for _, w := range words {
		out = append(out, strings.ReplaceAll(w, "{id}", id))
	}
	return out
}

// newUUID is a random (version 4) UUID, the form Claude Code's --session-id takes.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// notFound is an error of the not-found class (exit 4) in its own words.
type notFound struct{ msg string }

func (n *notFound) Error() string { return n.msg }
func (n *notFound) Unwrap() error { return store.ErrNotFound }
