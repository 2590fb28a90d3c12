package questions

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// GitBinding ties a question to the state of a git work tree: an answer given after the state
// changed answers a question about code that is no longer there, so it is stale.
type GitBinding struct {
	Dir         string `json:"dir"`
	Head        string `json:"head"`          // commit id, "" before the first commit
	Changed     int    `json:"changed_paths"` // lines of `git status --porcelain`
	Fingerprint string `json:"fingerprint"`   // sha256 of HEAD and the status
}

// gitChange says how the git state moved from then to now.
func gitChange(then, now GitBinding) string {
	short := func(s string) string {
		if s == "" {
			return "(no commit)"
		}
		if len(s) > 12 {
			return s[:12]
		}
		return s
	}
	if then.Head != now.Head {
		return fmt.Sprintf("the git state of %s changed since the question: HEAD moved from %s to %s", then.Dir, short(then.Head), short(now.Head))
	}
	return fmt.Sprintf("the git state of %s changed since the question: the work tree differs (git status lists %d changed paths, then %d)", then.Dir, now.Changed, then.Changed)
}

// gitFingerprint reads HEAD and `git status --porcelain` in dir (argv, no shell) and hashes them.
func gitFingerprint(ctx context.Context, dir string) (GitBinding, error) {
	abs, head, status, err := GitRead(ctx, dir)
	if err != nil {
		return GitBinding{}, err
	}
	sum := sha256.Sum256([]byte(head + "\x00\x00" + status))
	return GitBinding{Dir: abs, Head: head, Changed: StatusPaths(status), Fingerprint: hex.EncodeToString(sum[:16])}, nil
}

// GitRead returns dir made absolute, its HEAD ("" before the first commit) and its
// `git status --porcelain=v1 -z --untracked-files=all`, read with argv and no shell.
func GitRead(ctx context.Context, dir string) (abs, head, status string, err error) {
	abs, err = filepath.Abs(dir)
	if err != nil {
		return "", "", "", err
	}
	run := func(args ...string) (string, int, error) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "git", append([]string{"--no-optional-locks", "-C", abs}, args...)...)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), ee.ExitCode(), fmt.Errorf("git %s in %s: %s", strings.Join(args, " "), abs, strings.TrimSpace(stderr.String()))
		}
		return out.String(), 0, err
	}
	if _, _, err := run("rev-parse", "--show-toplevel"); err != nil {
		return "", "", "", fmt.Errorf("%s is not inside a git work tree: %w", abs, err)
	}
	head, code, err := run("rev-parse", "--verify", "-q", "HEAD")
	if err != nil && code != 1 {
		return "", "", "", err
	}
	status, _, err = run("status", "--porcelain=v1", "-z", "--untracked-files=all")
	if err != nil {
		return "", "", "", err
	}
	return abs, strings.TrimSpace(head), status, nil
}

// StatusPaths counts the changed paths of a `git status --porcelain=v1 -z` output.
func StatusPaths(status string) int {
	changed := 0
	for _, rec := range strings.Split(status, "\x00") {
		if len(rec) > 3 && rec[2] == ' ' {
			changed++
		}
	}
	return changed
}
