package kit

// wcomm install-skill: the instructions as a Claude Code skill and an AGENTS.md / GEMINI.md block,
// and the agents' hooks (hooks.go).

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
)

// The markers of wcomm's block in AGENTS.md and GEMINI.md, and of its hash.
const (
	MarkBegin = "<!-- wcomm:begin -->"
	MarkEnd   = "<!-- wcomm:end -->"
	markHash  = "<!-- wcomm:sha256="
)

// SkillOptions are install-skill's choices.
type SkillOptions struct {
	Dir     string // the project folder ("": the current one)
	User    bool   // the user's files instead of a project's
	For     string // the agents, comma-separated: claude, codex, gemini
	Force   bool   // overwrite what was edited since wcomm wrote it
	NoHooks bool   // leave the agents' hooks alone
	Bin     string // what the hooks run ("": DefaultBin, found on the agent's PATH)
	Getenv  func(string) string
}

// target is one file install-skill writes: a whole file (the skill) or a block in a file.
type target struct {
	Path  string
	Agent string
	Block bool // a block between the markers, the rest of the file kept
}

func skillTargets(dir string, user bool, forAgents string, getenv func(string) string) ([]target, error) {
	want, err := agentsFor("", forAgents, func(a *profile.Agent) bool { return a.Skill != nil })
	if err != nil {
		return nil, err
	}
	base := dir
	if user {
		if base = userHome(getenv); base == "" {
			return nil, fmt.Errorf("no home folder for --user; pass --dir")
		}
	} else if base, err = projectDir(dir); err != nil {
		return nil, err
	}
	var out []target
	for _, a := range want {
		path := a.Skill.Project
		if user {
			path = a.Skill.User
		}
		out = append(out, target{Path: filepath.Join(base, filepath.FromSlash(path)), Agent: a.Name, Block: a.Skill.Block})
	}
	return out, nil
}

// agentsFor reads a --for list of agents (comma-separated, any case; all, when allWord names
// it, for every agent): the records that has accepts, in the order given, once each.
func agentsFor(allWord, list string, has func(*profile.Agent) bool) ([]*profile.Agent, error) {
	known := profile.AgentsWith(has)
	use := strings.Join(known, ", ")
	if allWord != "" {
		use += " (or " + allWord + ")"
	}
	var want []*profile.Agent
	for _, name := range strings.Split(list, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		names := []string{name}
		switch {
		case name == "":
			continue
		case name == allWord:
			names = known
		case !slices.Contains(known, name):
			return nil, tmuxcomm.Usagef("--for: unknown agent %q; use %s", messages.SanitizeField(name), use)
		}
		for _, n := range names {
			if a := profile.AgentNamed(n); !slices.Contains(want, a) {
				want = append(want, a)
			}
		}
	}
	if len(want) == 0 {
		return nil, tmuxcomm.Usagef("--for names no agent; use %s", use)
	}
	return want, nil
}

// userHome is $HOME, else the system's idea of it ("" when there is none).
func userHome(getenv func(string) string) string {
	if h := getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

func orDot(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

// projectDir checks a project folder given with --dir ("": the current one).
func projectDir(dir string) (string, error) {
	dir = orDot(dir)
	st, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("--dir %s: %w", dir, err)
	}
	if !st.IsDir() {
		return "", tmuxcomm.Usagef("--dir %s is not a folder", dir)
	}
	return dir, nil
}

// agentsOf lists the agents of the targets, once each.
func agentsOf(targets []target) []string {
	var out []string
	for _, t := range targets {
		if !slices.Contains(out, t.Agent) {
			out = append(out, t.Agent)
		}
	}
	return out
}

// SkillDescription tells Claude Code when to load the skill.
const SkillDescription = "Hand tasks to, and answer tasks from, other AI agents (Claude Code, Codex, Gemini CLI) " +
	"running in other tmux panes, through the wcomm command. Use when asked to delegate, coordinate or consult " +
	"another agent or pane, when your input holds a request starting with [WORKER capability=..., " +
	"a question starting with [QUESTION from worker, or a line starting with [RESPONSE started_at=...."

// skillText is the whole SKILL.md, without its hash line.
func (k Book) skillText() (string, error) {
	orch, err := k.Prompt("orchestrator", "claude")
	if err != nil {
		return "", err
	}
	work, err := k.Prompt("worker", "claude")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("---\nname: wcomm\n")
	// Double-quoted, so the brackets and colons of the description are never read as YAML.
	b.WriteString(`description: "` + SkillDescription + `"` + "\n")
	b.WriteString("---\n\n")
	b.WriteString("# wcomm: requests and answers between agents in tmux panes\n\n")
	b.WriteString("Generated by 'wcomm install-skill'. Use the part for your role: you orchestrate when you hand\n")
	b.WriteString("tasks out; you are a worker when a [WORKER ...] request arrives in your input.\n\n")
	b.WriteString("## Orchestrator\n\n```text\n" + orch + "```\n\n")
	b.WriteString("## Worker\n\n```text\n" + work + "```\n")
	return b.String(), nil
}

// blockText is the body of the AGENTS.md / GEMINI.md block: short, pointing at `wcomm prompt`, so
// the file stays small and the full instructions always come from the installed binary.
func blockText(agent string) string {
	return fmt.Sprintf(`## Other agents in tmux panes (wcomm)

Other AI agents may run in other panes of this tmux server; the wcomm command exchanges tasks and
answers with them. Run it as a shell command.
- To hand a task to another agent: run `+"`wcomm prompt orchestrator --agent %[1]s`"+` and follow what it prints
  (in short: `+"`wcomm find AGENT`, `wcomm send --to PANE 'TASK'`, `wcomm await ID`"+`).
- When your input holds a request starting with `+"`[WORKER capability=...`"+`: run `+"`wcomm prompt worker --agent %[1]s`"+`
  and follow it; answer with the `+"`wcomm notify ...`"+` line at the end of the request.
- When a line `+"`[RESPONSE started_at=...] PATH`"+` appears in your input: `+"`wcomm parse 'LINE'`"+` shows the answer.
`, agent)
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func hashLine(body string) string {
	return markHash + hashOf(body) + " written by wcomm install-skill; edit freely: an edited text is kept unless --force -->"
}

var hashRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^<!-- wcomm:sha256=([0-9a-f]{64})\b.*-->$`) })

// What an install did to a file.
const (
	Created   = "created"
	Updated   = "updated"
	Unchanged = "unchanged"
	Kept      = "kept" // edited since wcomm wrote it, or unreadable: left as it is
)

// Result is what an install did to one file.
type Result struct {
	Path   string `json:"path"`
	Agent  string `json:"agent"`
	Status string `json:"status"`
	Note   string `json:"note,omitempty"`
	// Preview is what a dry run would have written.
	Preview []byte `json:"-"`
}

// InstallSkill writes the skill and the blocks, then the hooks, and says what it did to each
// file: kept ones were edited since (files) or could not be read (hooks).
func (k Book) InstallSkill(o SkillOptions) (files, hooks []Result, err error) {
	targets, err := skillTargets(o.Dir, o.User, o.For, o.Getenv)
	if err != nil {
		return nil, nil, err
	}
	skill, err := k.skillText()
	if err != nil {
		return nil, nil, err
	}
	for _, t := range targets {
		var r Result
		var err error
		if t.Block {
			r, err = installBlock(t.Path, blockText(t.Agent), o.Force)
		} else {
			r, err = installWhole(t.Path, skill, o.Force)
		}
		if err != nil {
			return nil, nil, err
		}
		r.Agent = t.Agent
		files = append(files, r)
	}
	if o.NoHooks {
		return files, nil, nil
	}
	home := ""
	if o.User {
		home = userHome(o.Getenv)
	}
	for _, h := range hookTargets(orDot(o.Dir), home, agentsOf(targets)) {
		r, err := installHooks(h, Bin(o.Bin))
		if err != nil {
			return nil, nil, err
		}
		hooks = append(hooks, r)
	}
	return files, hooks, nil
}

// installWhole writes a file wcomm owns whole (the skill), its hash on the last line.
func installWhole(path, body string, force bool) (Result, error) {
	want := body + "\n" + hashLine(body) + "\n"
	r := Result{Path: path}
	real, old, mode, err := readTarget(path)
	if err != nil {
		return r, err
	}
	switch {
	case old == nil:
		r.Status = Created
	case string(old) == want:
		r.Status = Unchanged
		return r, nil
	case !force && !wholeUnedited(string(old)):
		r.Status, r.Note = Kept, "edited since wcomm wrote it; --force overwrites"
		return r, nil
	default:
		r.Status = Updated
	}
	return r, writeTarget(real, []byte(want), mode)
}

// wholeUnedited reports whether a file still holds exactly what wcomm wrote: its last line is a
// hash of everything before it.
func wholeUnedited(text string) bool {
	text = strings.TrimSuffix(text, "\n")
	i := strings.LastIndex(text, "\n")
	if i < 0 {
		return false
	}
	m := hashRe().FindStringSubmatch(text[i+1:])
	return m != nil && m[1] == hashOf(text[:i])
}

// installBlock writes wcomm's block into a file, keeping everything outside the markers.
func installBlock(path, body string, force bool) (Result, error) {
	block := MarkBegin + "\n" + hashLine(body) + "\n" + body + MarkEnd + "\n"
	r := Result{Path: path}
	real, old, mode, err := readTarget(path)
	if err != nil {
		return r, err
	}
	if old == nil {
		r.Status = Created
		return r, writeTarget(real, []byte(block), mode)
	}
	text := string(old)
	begin := strings.Index(text, MarkBegin+"\n")
	if begin < 0 && strings.HasSuffix(text, MarkBegin) {
		begin = len(text) - len(MarkBegin)
	}
	if begin < 0 {
		// No block yet: append one, after a blank line.
		sep := ""
		switch {
		case text == "":
		case strings.HasSuffix(text, "\n\n"):
		case strings.HasSuffix(text, "\n"):
			sep = "\n"
		default:
			sep = "\n\n"
		}
		r.Status, r.Note = Updated, "block added"
		return r, writeTarget(real, []byte(text+sep+block), mode)
	}
	if strings.Count(text, MarkBegin) > 1 {
		return r, fmt.Errorf("%s holds %d %s markers; keep one block and run again", path, strings.Count(text, MarkBegin), MarkBegin)
	}
	endRel := strings.Index(text[begin:], MarkEnd)
	if endRel < 0 {
		return r, fmt.Errorf("%s has %s without %s; restore or remove the block and run again", path, MarkBegin, MarkEnd)
	}
	end := begin + endRel + len(MarkEnd)
	if end < len(text) && text[end] == '\n' {
		end++
	}
	current := text[begin:end]
	if current == block {
		r.Status = Unchanged
		return r, nil
	}
	if !force && !blockUnedited(current) {
		r.Status, r.Note = Kept, "block edited since wcomm wrote it; --force overwrites it"
		return r, nil
	}
	r.Status = Updated
	return r, writeTarget(real, []byte(text[:begin]+block+text[end:]), mode)
}

// blockUnedited reports whether a block still holds exactly what wcomm wrote.
func blockUnedited(block string) bool {
	lines := strings.SplitAfter(block, "\n")
	if len(lines) < 3 {
		return false
	}
	m := hashRe().FindStringSubmatch(strings.TrimSuffix(lines[1], "\n"))
	if m == nil {
		return false
	}
	body := strings.Join(lines[2:], "")
	body = strings.TrimSuffix(strings.TrimSuffix(body, "\n"), MarkEnd)
	return m[1] == hashOf(body)
}

// readTarget resolves a symlinked target to the file it names (so a CLAUDE.md -> AGENTS.md link
// stays a link) and reads it; old is nil when it does not exist yet.
func readTarget(path string) (real string, old []byte, mode fs.FileMode, err error) {
	real = path
	if st, err := os.Lstat(path); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		if real, err = filepath.EvalSymlinks(path); err != nil {
			return "", nil, 0, fmt.Errorf("%s is a symlink that leads nowhere (%v); fix or remove it", path, err)
		}
	}
	st, err := os.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Instruction files are the project's, read by everyone who works in it (and committed):
		// 0644, unlike wcomm's own state.
		return real, nil, 0o644, nil
	case err != nil:
		return "", nil, 0, err
	case !st.Mode().IsRegular():
		return "", nil, 0, fmt.Errorf("%s is not a regular file; move it away and run again", path)
	}
	data, err := os.ReadFile(real)
	if err != nil {
		return "", nil, 0, err
	}
	return real, data, st.Mode().Perm(), nil
}

// writeTarget replaces path atomically, creating its folders 0755 as a project's folders are.
func writeTarget(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return store.WriteFile(path, data, mode)
}
