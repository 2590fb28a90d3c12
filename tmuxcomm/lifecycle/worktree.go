package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/wcomm/wcomm/messages"
)

// worktree is a git worktree a spawn made for its agent.
type worktree struct {
	Dir    string
	Branch string
	Repo   string
}

// git runs git with args in dir (argv, no shell) and returns its stdout, or an error with its
// stderr.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// WorktreePath is where the worktree of agent name goes for the repository whose top folder is
// top: under the settings' worktree.folder (relative to top) when set, else beside the
// repository in TOP-worktrees/NAME, outside its tree so the main checkout's status never shows it.
func WorktreePath(top, folder, name string) string {
	if folder == "" {
		return filepath.Join(filepath.Dir(top), filepath.Base(top)+"-worktrees", name)
	}
	if !filepath.IsAbs(folder) {
		folder = filepath.Join(top, folder)
	}
	return filepath.Join(folder, name)
}

// addWorktree adds a worktree for agent name on branch (made from HEAD when it does not exist)
// in the repository of dir.
func (r *Room) addWorktree(ctx context.Context, dir, name, branch string) (*worktree, error) {
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("--worktree needs a git repository, and %s is not in one (%v); nothing was started", dir, err)
	}
	top := strings.TrimSpace(out)
	if _, err := git(ctx, top, "check-ref-format", "--branch", branch); err != nil || strings.HasPrefix(branch, "-") {
		return nil, usagef("branch %q is not a valid branch name", messages.SanitizeField(branch))
	}
	path := WorktreePath(top, r.WorktreeFolder, name)
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("worktree folder %s already exists; remove it or choose another name; nothing was started", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("make the worktrees' folder: %w; nothing was started", err)
	}
	args := []string{"worktree", "add", "-b", branch, path}
	if _, err := git(ctx, top, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		args = []string{"worktree", "add", path, branch}
	}
	if _, err := git(ctx, top, args...); err != nil {
		return nil, fmt.Errorf("add the worktree: %w; nothing was started", err)
	}
	return &worktree{Dir: path, Branch: branch, Repo: top}, nil
}

// setup runs the settings' worktree.setup commands in a new worktree, in order (argv each; the
// settings take them only from a trusted file).
func (r *Room) setup(ctx context.Context, dir string) error {
	for _, argv := range r.WorktreeSetup {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("worktree.setup %s in %s: %w: %s", strings.Join(argv, " "), dir, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// dirty lists what is uncommitted in the worktree (git status --porcelain), "" when clean.
func (w *worktree) dirty(ctx context.Context) (string, error) {
	out, err := git(ctx, w.Dir, "status", "--porcelain")
	return strings.TrimRight(out, "\n"), err
}

// remove removes the worktree and its branch. Without force a branch with commits not merged
// into the repository's HEAD is kept, and said so.
func (w *worktree) remove(ctx context.Context, force bool) error {
	args := []string{"worktree", "remove", w.Dir}
	if force {
		args = []string{"worktree", "remove", "--force", w.Dir}
	}
	if _, err := git(ctx, w.Repo, args...); err != nil {
		return fmt.Errorf("remove worktree %s: %w", w.Dir, err)
	}
	del := "-d"
	if force {
		del = "-D"
	}
	if _, err := git(ctx, w.Repo, "branch", del, w.Branch); err != nil {
		return fmt.Errorf("worktree %s removed, but branch %s was kept: it has commits not merged into HEAD; delete it with 'git branch -D %s': %w", w.Dir, w.Branch, w.Branch, errKeptBranch)
	}
	return nil
}

// errKeptBranch is a worktree removed whose branch was kept.
var errKeptBranch = errors.New("branch kept")
