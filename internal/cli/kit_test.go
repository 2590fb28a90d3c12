package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/wcomm/wcomm/internal/buildinfo"
	"github.com/wcomm/wcomm/internal/kit"
	"github.com/wcomm/wcomm/internal/tmuxtest"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// kitRun runs the command line in-process and returns its streams and exit code.
func kitRun(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(Companions{}, args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func TestKitEveryCommandHasAnExample(t *testing.T) {
	for name, cmd := range commands {
		t.Run(name, func(t *testing.T) {
			require.NotEmpty(t, strings.TrimSpace(cmd.Example), "command %q has no Example: its --help must show one", name)
			out, errOut, code := kitRun(t, name, "--help")
			require.Equal(t, exitOK, code, errOut)
			assert.Contains(t, out, "\nexample:\n")
			first, _, _ := strings.Cut(kit.FirstExample(cmd.Example), "\n")
			assert.Contains(t, out, "  "+first+"\n")
			assert.Contains(t, out, exitCodesText)
		})
	}
}

func TestKitHelp(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"help"}, exitOK, "commands:\n"},
		{[]string{"help", "send"}, exitOK, "usage: wcomm send --to TARGET"},
		{[]string{"help", "exit-codes"}, exitOK, exitCodesText},
		{[]string{"help", "EXIT-CODES"}, exitOK, exitCodesText},
		{[]string{"help", "nosuch"}, exitUsage, ""},
		{[]string{"help", "a", "b"}, exitUsage, ""},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, code := kitRun(t, tc.args...)
			require.Equal(t, tc.code, code, errOut)
			assert.Contains(t, out, tc.want)
		})
	}
	out, _, _ := kitRun(t, "help")
	assert.NotContains(t, out, "__complete", "hidden commands are not listed")
}

func TestKitPrompt(t *testing.T) {
	for _, role := range []string{"orchestrator", "worker"} {
		for _, agent := range kit.AgentNames() {
			t.Run(role+"/"+agent, func(t *testing.T) {
				out, errOut, code := kitRun(t, "prompt", role, "--agent", agent)
				require.Equal(t, exitOK, code, errOut)
				lines := strings.Count(out, "\n")
				assert.LessOrEqual(t, lines, 85, "the %s prompt should stay short:\n%s", role, out)
				for _, l := range strings.Split(out, "\n") {
					if strings.HasPrefix(l, "  [WORKER ") || strings.HasPrefix(l, "  [RESPONSE ") {
						continue // real header lines, as long as they are
					}
					assert.LessOrEqual(t, len([]rune(l)), 110, "line too long: %q", l)
				}
				a, _ := kit.FindAgent(agent)
				assert.Contains(t, out, a.Shell)
				for n := 0; n <= 4; n++ {
					assert.Regexp(t, `(?m)^  `+string(rune('0'+n))+`  \S`, out, "exit code %d", n)
				}
				steps := kit.WorkerSteps()
				if role == "orchestrator" {
					steps = kit.OrchestratorSteps(agent)
				}
				for _, s := range steps {
					if s.Run != "" {
						assert.Contains(t, out, "\n     "+s.Run+"\n")
					}
				}
				for _, c := range book().RoleCommands(role, nil) {
					assert.Regexp(t, `(?m)^  `+regexp.QuoteMeta(c.Name)+` +`+regexp.QuoteMeta(c.Summary)+`$`, out, "command list")
				}
				for _, c := range book().QuestionCommands(role) {
					assert.Contains(t, out, kit.Indent(kit.FirstExample(c.Example), "     "))
				}
				if role == "orchestrator" {
					n, err := messages.FindNotification(out)
					require.NoError(t, err, "the RESPONSE line example must parse")
					assert.Equal(t, kit.ExampleResponsePath(), n.Path)
					assert.Contains(t, out, "wcomm parse '"+kit.LinePlaceholder+"'")
				} else {
					assert.Contains(t, out, kit.Indent(strings.TrimRight(kit.ExampleRequest(), "\n"), "  "))
					assert.Contains(t, out, "READONLY: ")
					assert.Contains(t, out, "WRITABLE: ")
				}
			})
		}
	}
	t.Run("json", func(t *testing.T) {
		out, _, code := kitRun(t, "prompt", "worker", "--json")
		require.Equal(t, exitOK, code)
		var v map[string]string
		require.NoError(t, json.Unmarshal([]byte(out), &v))
		want, err := book().Prompt("worker", "generic")
		require.NoError(t, err)
		assert.Equal(t, want, v["text"])
	})
	for _, args := range [][]string{{"prompt"}, {"prompt", "boss"}, {"prompt", "worker", "--agent", "vim"}} {
		_, _, code := kitRun(t, args...)
		assert.Equal(t, exitUsage, code, args)
	}
}

// kitShellSegments splits a shell line into the words of its simple commands, as far as the
// examples need: quotes, comments, and | ; & < > ( ) between commands.
func kitShellSegments(line string) [][]string {
	var segs [][]string
	var words []string
	var cur strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	endSeg := func() {
		endWord()
		if len(words) > 0 {
			segs = append(segs, words)
			words = nil
		}
	}
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case ch == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			cur.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case ch == '"':
			inWord = true
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) {
					i++
				}
				cur.WriteByte(line[i])
			}
		case ch == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		case ch == '#' && !inWord:
			endSeg()
			return segs
		case strings.IndexByte("|;&<>()", ch) >= 0:
			endSeg()
		case ch == ' ' || ch == '\t':
			endWord()
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	endSeg()
	return segs
}

func TestKitShellSegments(t *testing.T) {
	tests := []struct {
		line string
		want [][]string
	}{
		{`wcomm find codex          # prints e.g. %7`, [][]string{{"wcomm", "find", "codex"}}},
		{`wcomm send --to "$(wcomm find codex)" 'review the diff'`, [][]string{{"wcomm", "send", "--to", "$(wcomm find codex)", "review the diff"}}},
		{`tmux capture-pane -p | wcomm parse --json -`, [][]string{{"tmux", "capture-pane", "-p"}, {"wcomm", "parse", "--json", "-"}}},
		{`source <(wcomm completion bash)`, [][]string{{"source"}, {"wcomm", "completion", "bash"}}},
		{`printf '%s\n' "$ANSWER" | wcomm notify -`, [][]string{{"printf", `%s\n`, "$ANSWER"}, {"wcomm", "notify", "-"}}},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, kitShellSegments(tc.line), tc.line)
	}
}

// TestKitLinesMatchTheFlags parses every wcomm line the prompts and the examples show with the
// named command's own flags: a renamed or removed flag fails here, not in an agent's hands.
func TestKitLinesMatchTheFlags(t *testing.T) {
	var lines []string
	for _, a := range kit.AgentNames() {
		for _, s := range kit.OrchestratorSteps(a) {
			lines = append(lines, s.Run)
		}
	}
	for _, s := range kit.WorkerSteps() {
		lines = append(lines, s.Run)
	}
	lines = append(lines, "wcomm parse '"+kit.LinePlaceholder+"'")
	for _, c := range commands {
		for _, ex := range kit.ExampleLines(c.Example) {
			lines = append(lines, strings.ReplaceAll(ex, "\\\n", " "))
		}
	}
	checked := 0
	for _, line := range lines {
		for _, words := range kitShellSegments(line) {
			if words[0] != "wcomm" {
				continue
			}
			require.GreaterOrEqual(t, len(words), 2, line)
			cmd, ok := commands[words[1]]
			require.True(t, ok, "%q names no command", line)
			_, err := parseInterleaved(commandFlags(cmd), words[2:])
			assert.NoError(t, err, "%q does not parse with the flags of %s", line, cmd.Name)
			checked++
		}
	}
	assert.Greater(t, checked, len(commands))
}

func TestKitInstallSkill(t *testing.T) {
	dir := t.TempDir()
	skill := filepath.Join(dir, ".claude", "skills", "wcomm", "SKILL.md")
	agents := filepath.Join(dir, "AGENTS.md")
	gemini := filepath.Join(dir, "GEMINI.md")
	userText := "# Project rules\n\nRun make test before you commit.\n"
	require.NoError(t, os.WriteFile(agents, []byte(userText), 0o644))

	read := func() map[string]string {
		out := map[string]string{}
		for _, p := range []string{skill, agents, gemini} {
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			out[p] = string(data)
		}
		return out
	}
	install := func(args ...string) (string, int) {
		out, errOut, code := kitRun(t, append([]string{"install-skill", "--dir", dir}, args...)...)
		return out + errOut, code
	}

	out, code := install()
	require.Equal(t, exitOK, code, out)
	assert.Contains(t, out, "created   "+skill)
	assert.Contains(t, out, "updated   "+agents+" (block added)")
	assert.Contains(t, out, "created   "+gemini)
	first := read()
	front, _, ok := strings.Cut(strings.TrimPrefix(first[skill], "---\n"), "\n---\n")
	require.True(t, ok && strings.HasPrefix(first[skill], "---\n"), "SKILL.md opens with front matter:\n%s", first[skill])
	var meta map[string]string
	require.NoError(t, yaml.Unmarshal([]byte(front), &meta))
	assert.Equal(t, map[string]string{"name": "wcomm", "description": kit.SkillDescription}, meta)
	assert.Contains(t, first[skill], "## Orchestrator")
	assert.Contains(t, first[skill], "## Worker")
	assert.True(t, strings.HasPrefix(first[agents], userText+"\n"+kit.MarkBegin+"\n"), "the user's text is kept, the block appended")
	assert.True(t, strings.HasSuffix(first[agents], kit.MarkEnd+"\n"))
	assert.Contains(t, first[agents], "wcomm prompt worker --agent codex")
	assert.Contains(t, first[gemini], "wcomm prompt worker --agent gemini")
	st, err := os.Stat(filepath.Dir(skill))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), st.Mode().Perm(), "a project's folder")
	st, err = os.Stat(agents)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm(), "an existing file keeps its mode")

	out, code = install()
	require.Equal(t, exitOK, code, out)
	assert.Equal(t, 6, strings.Count(out, "unchanged "), out, "three instruction files and three hook settings")
	assert.Equal(t, first, read(), "a second run changes no byte")

	// The user edits the skill and writes below the block: the skill is kept, the text below too.
	edited := strings.Replace(first[skill], "## Worker", "## Worker (my notes)", 1)
	require.NoError(t, os.WriteFile(skill, []byte(edited), 0o600))
	require.NoError(t, os.WriteFile(agents, []byte(first[agents]+"\nMore rules.\n"), 0o644))
	out, code = install()
	assert.Equal(t, exitOK, code, out, "keeping an edit is no failure")
	assert.Contains(t, out, "kept      "+skill)
	assert.Contains(t, out, "--force")
	now := read()
	assert.Equal(t, edited, now[skill])
	assert.Equal(t, first[agents]+"\nMore rules.\n", now[agents], "text outside the block is the user's")

	// An edit inside the block is kept too.
	require.NoError(t, os.WriteFile(gemini, []byte(strings.Replace(first[gemini], "tmux", "TMUX", 1)), 0o600))
	out, code = install()
	assert.Equal(t, exitOK, code, out)
	assert.Contains(t, out, "kept      "+gemini)

	out, code = install("--force")
	require.Equal(t, exitOK, code, out)
	assert.Contains(t, out, "updated   "+skill)
	assert.Contains(t, out, "updated   "+gemini)
	now = read()
	assert.Equal(t, first[skill], now[skill])
	assert.Equal(t, first[gemini], now[gemini])
	assert.Equal(t, first[agents]+"\nMore rules.\n", now[agents])

	out, code = install()
	require.Equal(t, exitOK, code, out)
	assert.Equal(t, 6, strings.Count(out, "unchanged "), out)

	t.Run("--for one agent", func(t *testing.T) {
		d := t.TempDir()
		out, errOut, code := kitRun(t, "install-skill", "--dir", d, "--for", "codex", "--json")
		require.Equal(t, exitOK, code, errOut)
		var res []kit.Result
		require.NoError(t, json.Unmarshal([]byte(out), &res))
		require.Len(t, res, 2)
		assert.Equal(t, kit.Result{Path: filepath.Join(d, "AGENTS.md"), Agent: "codex", Status: kit.Created}, res[0])
		assert.Equal(t, filepath.Join(d, ".codex", "hooks.json"), res[1].Path)
		assert.Contains(t, res[1].Note, "trust")
		assert.NoFileExists(t, filepath.Join(d, "GEMINI.md"))
		assert.NoFileExists(t, filepath.Join(d, ".gemini", "settings.json"))
		_, errOut, code = kitRun(t, "install-skill", "--dir", t.TempDir(), "--for", "codex", "--no-hooks")
		require.Equal(t, exitOK, code, errOut)
	})
	t.Run("hooks join the agent's own settings", func(t *testing.T) {
		d := t.TempDir()
		claude := filepath.Join(d, ".claude", "settings.json")
		require.NoError(t, os.MkdirAll(filepath.Dir(claude), 0o700))
		mine := `{"permissions": {"allow": ["Bash"]}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "my-stop.sh"}]}]}}`
		require.NoError(t, os.WriteFile(claude, []byte(mine), 0o600))
		_, errOut, code := kitRun(t, "install-skill", "--dir", d, "--for", "claude,gemini")
		require.Equal(t, exitOK, code, errOut)
		var got struct {
			Permissions map[string][]string `json:"permissions"`
			Hooks       map[string][]struct {
				Hooks []struct {
					Type, Command string
					Timeout       int `json:"timeout"`
				} `json:"hooks"`
			} `json:"hooks"`
		}
		data, err := os.ReadFile(claude)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &got))
		assert.Equal(t, []string{"Bash"}, got.Permissions["allow"], "the person's settings stay")
		var stop []string
		for _, g := range got.Hooks["Stop"] {
			for _, h := range g.Hooks {
				stop = append(stop, h.Command)
			}
		}
		assert.Equal(t, []string{"my-stop.sh", "wcomm hook --agent claude"}, stop, "the hook runs wcomm from the agent's PATH, no path of this machine")
		require.Len(t, got.Hooks["UserPromptSubmit"], 1)
		// The permission prompts reach the person through the same command, given the time
		// a person needs.
		require.Len(t, got.Hooks["PermissionRequest"], 1)
		perm := got.Hooks["PermissionRequest"][0].Hooks[0]
		assert.Equal(t, "wcomm hook --agent claude", perm.Command)
		assert.Equal(t, 600, perm.Timeout, "Claude Code's own default, said out loud")
		gem, err := os.ReadFile(filepath.Join(d, ".gemini", "settings.json"))
		require.NoError(t, err)
		assert.Contains(t, string(gem), `"AfterAgent"`)
		assert.Contains(t, string(gem), `"wcomm hook --agent gemini"`)
		out, errOut, code := kitRun(t, "install-skill", "--dir", d, "--for", "claude,gemini")
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, 4, strings.Count(out, "unchanged "), out)
		again, err := os.ReadFile(claude)
		require.NoError(t, err)
		assert.Equal(t, string(data), string(again), "idempotent")

		bad := filepath.Join(t.TempDir(), ".claude", "settings.json")
		require.NoError(t, os.MkdirAll(filepath.Dir(bad), 0o700))
		require.NoError(t, os.WriteFile(bad, []byte("{not json"), 0o600))
		out, _, code = kitRun(t, "install-skill", "--dir", filepath.Dir(filepath.Dir(bad)), "--for", "claude")
		assert.Equal(t, exitFailure, code, out)
		assert.Contains(t, out, "not a JSON object")
		left, err := os.ReadFile(bad)
		require.NoError(t, err)
		assert.Equal(t, "{not json", string(left), "a broken file is never rewritten")
	})
	t.Run("the hooks run wcomm from PATH, or --bin", func(t *testing.T) {
		// What the project's files name is the same on every machine: no path of this one.
		d := t.TempDir()
		path := t.TempDir()
		t.Setenv("PATH", path)
		_, errOut, code := kitRun(t, "install-skill", "--dir", d, "--for", "claude,codex,gemini")
		require.Equal(t, exitOK, code, errOut)
		assert.Contains(t, errOut, `warning: "wcomm" is not on this PATH`, "said when the agents may not find it")
		self, err := os.Executable()
		require.NoError(t, err)
		for _, f := range []string{".claude/settings.json", ".codex/hooks.json", ".gemini/settings.json"} {
			data, err := os.ReadFile(filepath.Join(d, f))
			require.NoError(t, err)
			assert.Contains(t, string(data), `"wcomm hook --agent `, f)
			assert.NotContains(t, string(data), filepath.Dir(self), f)
		}
		// Found on PATH: no warning.
		require.NoError(t, os.WriteFile(filepath.Join(path, "wcomm"), []byte("#!/bin/sh\n"), 0o755))
		_, errOut, code = kitRun(t, "install-skill", "--dir", d, "--for", "claude")
		require.Equal(t, exitOK, code, errOut)
		assert.NotContains(t, errOut, "warning")
		// The person's own path replaces the bare name, in place.
		bin := filepath.Join(path, "wcomm")
		out, errOut, code := kitRun(t, "install-skill", "--dir", d, "--for", "claude", "--bin", bin)
		require.Equal(t, exitOK, code, errOut)
		assert.Contains(t, out, "updated   "+filepath.Join(d, ".claude", "settings.json"))
		data, err := os.ReadFile(filepath.Join(d, ".claude", "settings.json"))
		require.NoError(t, err)
		assert.Equal(t, 3, strings.Count(string(data), bin+" hook --agent claude"), "each event's hook updated, none added")
		assert.NotContains(t, string(data), `"wcomm hook`)
		_, errOut, _ = kitRun(t, "install-skill", "--dir", d, "--for", "claude", "--bin", filepath.Join(path, "missing"))
		assert.Contains(t, errOut, "is not a program here")
	})
	t.Run("--user", func(t *testing.T) {
		home := t.TempDir()
		t.Setenv("HOME", home)
		_, errOut, code := kitRun(t, "install-skill", "--user")
		require.Equal(t, exitOK, code, errOut)
		for _, p := range []string{".claude/skills/wcomm/SKILL.md", ".codex/AGENTS.md", ".gemini/GEMINI.md"} {
			assert.FileExists(t, filepath.Join(home, p))
		}
	})
	t.Run("a symlinked file stays a link", func(t *testing.T) {
		d := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(d, "CLAUDE.md"), []byte("rules\n"), 0o600))
		require.NoError(t, os.Symlink("CLAUDE.md", filepath.Join(d, "AGENTS.md")))
		_, errOut, code := kitRun(t, "install-skill", "--dir", d, "--for", "codex")
		require.Equal(t, exitOK, code, errOut)
		st, err := os.Lstat(filepath.Join(d, "AGENTS.md"))
		require.NoError(t, err)
		assert.NotZero(t, st.Mode()&os.ModeSymlink)
		data, err := os.ReadFile(filepath.Join(d, "CLAUDE.md"))
		require.NoError(t, err)
		assert.Contains(t, string(data), kit.MarkBegin)
	})
	t.Run("broken markers", func(t *testing.T) {
		d := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(d, "AGENTS.md"), []byte(kit.MarkBegin+"\nhalf a block\n"), 0o600))
		_, errOut, code := kitRun(t, "install-skill", "--dir", d, "--for", "codex", "--force")
		assert.Equal(t, exitFailure, code)
		assert.Contains(t, errOut, "without "+kit.MarkEnd)
	})
	t.Run("usage", func(t *testing.T) {
		for _, args := range [][]string{{"--for", "vim"}, {"--for", ""}, {"--user", "--dir", "x"}, {"extra"}} {
			_, _, code := kitRun(t, append([]string{"install-skill"}, args...)...)
			assert.Equal(t, exitUsage, code, args)
		}
	})
}

// shQuote quotes s for a POSIX shell, for the shell lines the tests run.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// kitBashComplete loads the bash script and completes the words (the last is the one being typed)
// with the environment env (nil: the test's, less any tmux pane).
func kitBashComplete(t *testing.T, script string, env []string, words ...string) []string {
	t.Helper()
	var quoted []string
	for _, w := range words {
		quoted = append(quoted, shQuote(w))
	}
	prog := "source " + shQuote(script) + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" +
		string(rune('0'+len(words)-1)) + "\n_wcomm\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", prog)
	cmd.Env = env
	if env == nil {
		cmd.Env = cleanEnv()
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	var got []string
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" {
			got = append(got, l)
		}
	}
	return got
}

func TestKitCompletionScripts(t *testing.T) {
	dir := t.TempDir()
	scripts := map[string]string{}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		out, errOut, code := kitRun(t, "completion", sh)
		require.Equal(t, exitOK, code, errOut)
		for _, n := range commandNames() {
			assert.Contains(t, out, n, sh)
		}
		scripts[sh] = filepath.Join(dir, "wcomm."+sh)
		require.NoError(t, os.WriteFile(scripts[sh], []byte(out), 0o600))
	}
	_, _, code := kitRun(t, "completion", "tcsh")
	assert.Equal(t, exitUsage, code)

	out, err := exec.Command("bash", "--norc", "--noprofile", "-c", "source "+shQuote(scripts["bash"])+" && complete -p wcomm").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "-F _wcomm wcomm")

	tests := []struct {
		words []string
		want  []string
		not   []string
	}{
		{[]string{"wcomm", "se"}, []string{"send"}, []string{"panes"}},
		{[]string{"wcomm", "w"}, []string{"watch"}, nil},
		{[]string{"wcomm", "send", "--ca"}, []string{"--capability"}, nil},
		{[]string{"wcomm", "send", "--capability", ""}, []string{"READONLY", "WRITABLE"}, nil},
		{[]string{"wcomm", "send", "-capability", "W"}, []string{"WRITABLE"}, []string{"READONLY"}},
		{[]string{"wcomm", "prompt", ""}, []string{"orchestrator", "worker"}, nil},
		{[]string{"wcomm", "prompt", "worker", "--agent", "c"}, []string{"claude", "codex"}, []string{"gemini"}},
		{[]string{"wcomm", "help", "exit"}, []string{"exit-codes"}, nil},
		{[]string{"wcomm", "completion", "f"}, []string{"fish"}, nil},
		{[]string{"wcomm", "await", "--timeout", ""}, nil, []string{"--timeout"}},
		{[]string{"wcomm", "watch", "--"}, []string{"--session", "--count", "--json", "--since"}, nil},
	}
	for _, tc := range tests {
		got := kitBashComplete(t, scripts["bash"], nil, tc.words...)
		for _, w := range tc.want {
			assert.Contains(t, got, w, "%q", tc.words)
		}
		for _, w := range tc.not {
			assert.NotContains(t, got, w, "%q", tc.words)
		}
	}

	// zsh and fish check their scripts where they are installed; CI installs both, and there
	// (REQUIRE_TMUX=1) a missing shell fails instead of passing over the check.
	if kitHaveShell(t, "zsh") {
		out, err := exec.Command("zsh", "-n", scripts["zsh"]).CombinedOutput()
		assert.NoError(t, err, "zsh -n: %s", out)
		out, err = exec.Command("zsh", "-f", "-c", "autoload -Uz compinit && compinit -u -D; source "+shQuote(scripts["zsh"])+"; print -r -- $_comps[wcomm]").CombinedOutput()
		assert.NoError(t, err, "%s", out)
		assert.Equal(t, "_wcomm", strings.TrimSpace(string(out)))
		// zsh's completion builtins work only inside a completion widget: stand-ins print what
		// the script asks them to offer.
		stubs := `compadd() { print -r -- "compadd $*" }
_describe() { print -rl -- ${(P)4} }
_files() { print -r -- "_files $*" }
_values() { print -r -- "_values $*" }
compdef() { : }
source ` + shQuote(scripts["zsh"]) + "\n"
		zshTests := []struct {
			words string
			want  string
		}{
			{"wcomm se", "send:write the next request file"},
			{"wcomm prompt worker --agent c", "compadd -- generic claude codex gemini"},
			{"wcomm send --ca", "--capability[READONLY (look, change nothing) or WRITABLE]"},
			{"wcomm send --file x", "_files"},
			{"wcomm help e", "exit-codes"},
		}
		for _, tc := range zshTests {
			words := strings.Fields(tc.words)
			prog := stubs + "words=(" + tc.words + "); CURRENT=" + string(rune('0'+len(words))) + "; _wcomm"
			out, err := exec.Command("zsh", "-f", "-c", prog).CombinedOutput()
			assert.NoError(t, err, "%s", out)
			assert.Contains(t, string(out), tc.want, tc.words)
		}
	}
	if kitHaveShell(t, "fish") {
		out, err := exec.Command("fish", "--no-execute", scripts["fish"]).CombinedOutput()
		assert.NoError(t, err, "fish --no-execute: %s", out)
		out, err = exec.Command("fish", "--no-config", "-c", "source "+shQuote(scripts["fish"])+"; complete -C'wcomm se'; complete -C'wcomm send --capability '").CombinedOutput()
		assert.NoError(t, err, "%s", out)
		assert.Contains(t, string(out), "send\t")
		assert.Contains(t, string(out), "WRITABLE")
	}
}

func TestKitCompleteKinds(t *testing.T) {
	out, errOut, code := kitRun(t, "__complete", "commands", "se")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "send\n", out)

	out, _, code = kitRun(t, "__complete", "--describe", "commands", "wat")
	require.Equal(t, exitOK, code)
	assert.Equal(t, "watch\t"+commands["watch"].Summary+"\n", out)

	_, _, code = kitRun(t, "__complete", "bogus")
	assert.Equal(t, exitUsage, code)

	// No server: nothing, quietly, so a Tab never prints an error into the command line.
	sock := filepath.Join(t.TempDir(), "none")
	out, errOut, code = kitRun(t, "__complete", "-S", sock, "panes")
	assert.Equal(t, exitOK, code)
	assert.Empty(t, out)
	assert.Empty(t, errOut)

	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, "20260117-120000-o6-w7"), 0o700))
	out, _, code = kitRun(t, "__complete", "--root", root, "sessions", "2026")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, "20260117-120000-o6-w7\n", out)
}

// The version and commit are buildinfo's (set at build time, kit_e2e_test builds with them set):
// version prints them as they are.
func TestKitVersion(t *testing.T) {
	wantV, wantC := buildinfo.Version()
	out, _, code := kitRun(t, "version")
	require.Equal(t, exitOK, code)
	assert.True(t, strings.HasPrefix(out, "wcomm "+wantV+" (commit "+wantC+", go"), out)
	out, _, code = kitRun(t, "--version", "--json")
	require.Equal(t, exitOK, code)
	var v map[string]string
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	assert.Equal(t, wantV, v["version"])
	assert.Equal(t, wantC, v["commit"])
}

func TestKitWatchPrinter(t *testing.T) {
	at := time.Date(2026, 1, 17, 12, 0, 1, 234e6, time.Local)
	sess := "20260117-120000-o6-w7"
	tests := []struct {
		ev   watch.WatchEvent
		want string
	}{
		{watch.WatchEvent{Kind: watch.FeedSession, Event: watch.EventSession, Detail: map[string]string{"orchestrator": "%6", "worker": "%7"}},
			"-                         session        %6 -> %7"},
		{watch.WatchEvent{Kind: watch.FeedExchange, Seq: 1, ID: "20260117-120000-a1b2", Event: watch.EventRequest,
			Detail: map[string]string{"orchestrator": "%6", "worker": "%7", "capability": "READONLY", "summary": "list the tests"}},
			"001 20260117-120000-a1b2  request        %6 -> %7 READONLY: list the tests"},
		{watch.WatchEvent{Kind: watch.FeedExchange, Seq: 1, ID: "20260117-120000-a1b2", Event: exchange.StatePasted,
			Detail: map[string]string{"pane": "%7", "form": "paste", "bytes": "512"}},
			"pasted         into %7 as paste, 512 bytes"},
		{watch.WatchEvent{Kind: watch.FeedExchange, Seq: 1, Event: exchange.StateRefused,
			Detail: map[string]string{"pane": "%7", "error": "pane is dead"}},
			"001 -                     refused        pane %7: pane is dead"},
		{watch.WatchEvent{Kind: watch.FeedExchange, Seq: 1, Event: exchange.StateAwaitWoken},
			"await-woken    an await, or a send holding it for one, has the response; no line pasted"},
		{watch.WatchEvent{Kind: watch.FeedQuestion, Seq: 1, ID: "task-3.q1-a1b2", Event: watch.EventAsked,
			Detail: map[string]string{"question": "bcrypt?", "urgency": "blocking", "options": "A | B"}},
			"task-3.q1-a1b2            asked          [blocking] bcrypt? (A | B)"},
		{watch.WatchEvent{Kind: watch.FeedQuestion, ID: "t.q1", Event: watch.EventAnswered,
			Detail: map[string]string{"answer": "A", "by": "user"}},
			"answered       A (by user)"},
		// A person's answer names the way it came, the console's too.
		{watch.WatchEvent{Kind: watch.FeedQuestion, ID: "t.q1", Event: watch.EventAnswered,
			Detail: map[string]string{"answer": "A", "by": "user", "source": "ui"}},
			"answered       A (from the console)\n"},
		{watch.WatchEvent{Kind: watch.FeedQuestion, ID: "t.q1", Event: watch.EventAnswered,
			Detail: map[string]string{"answer": "A", "by": "user", "source": "telegram"}},
			"answered       A (from telegram)\n"},
		{watch.WatchEvent{Kind: watch.FeedQuestion, ID: "t.q1", Event: watch.EventAnswered,
			Detail: map[string]string{"answer": "A", "by": "auto-timeout", "source": "timeout"}},
			"answered       A (by auto-timeout)\n"},
		{watch.WatchEvent{Kind: watch.FeedExchange, Event: watch.EventAnswered,
			Detail: map[string]string{"summary": "all pass\x1b[2J\x07"}},
			"answered       all pass\n"},
		// A question's delivered event: typed (no via), through the agent's socket, or by its hook.
		{watch.WatchEvent{Kind: watch.FeedQuestion, ID: "t.q1", Event: exchange.StateDelivered,
			Detail: map[string]string{"pane": "%0", "form": "paste"}},
			"delivered      pasted into %0 as paste\n"},
		{watch.WatchEvent{Kind: watch.FeedQuestion, ID: "t.q1", Event: exchange.StateDelivered,
			Detail: map[string]string{"pane": "%0", "via": exchange.ViaSocket}},
			"delivered      written to the messaging socket of %0's agent\n"},
		{watch.WatchEvent{Kind: watch.FeedExchange, Seq: 1, Event: exchange.StateDelivered,
			Detail: map[string]string{"pane": "%7", "via": "hook"}},
			"delivered      handed to %7 by its hook\n"},
		{watch.WatchEvent{Kind: watch.FeedExchange, Seq: 1, Event: exchange.StateNotified,
			Detail: map[string]string{"pane": "%6", "via": exchange.ViaSocket}},
			"notified       RESPONSE line written to the messaging socket of %6's agent\n"},
		{watch.WatchEvent{Kind: watch.FeedExchange, Event: "future-state", Detail: map[string]string{"b": "2", "a": "1"}},
			"future-state   a=1 b=2"},
	}
	for _, tc := range tests {
		tc.ev.At, tc.ev.Session = at, sess
		var buf bytes.Buffer
		p := &watchPrinter{w: &buf}
		require.NoError(t, p.print(tc.ev))
		line := buf.String()
		assert.True(t, strings.HasPrefix(line, "12:00:01.234  "+sess+"  "), line)
		assert.Contains(t, line, tc.want)
		assert.NotContains(t, line, "\x1b", "plain output has no escapes, and a worker's text cannot bring any")
	}

	var buf bytes.Buffer
	p := &watchPrinter{w: &buf, color: true}
	require.NoError(t, p.print(tests[1].ev))
	assert.Contains(t, buf.String(), ansiCyan+"request")

	buf.Reset()
	p = &watchPrinter{w: &buf, json: true}
	require.NoError(t, p.print(tests[1].ev))
	assert.Equal(t, 1, strings.Count(buf.String(), "\n"), "one object per line")
	var back watch.WatchEvent
	require.NoError(t, json.Unmarshal(buf.Bytes(), &back))
	assert.Equal(t, tests[1].ev.ID, back.ID)
	assert.Equal(t, "request", back.Event)

	assert.False(t, wantColor(&buf, os.Getenv), "a buffer is no terminal")
}

func TestKitWatchCommand(t *testing.T) {
	root := t.TempDir()
	_, errOut, code := kitRun(t, "watch", "--root", root, "--count", "1", "--timeout", "100ms")
	assert.Equal(t, exitTimeout, code, errOut)
	assert.Contains(t, errOut, "0 of 1 events")

	_, errOut, code = kitRun(t, "watch", "--root", root, "--timeout", "50ms")
	assert.Equal(t, exitOK, code, errOut)

	require.NoError(t, os.Mkdir(filepath.Join(root, "20260117-120000-o6-w7"), 0o700))
	out, errOut, code := kitRun(t, "watch", "--root", root, "--since", "87600h", "--count", "1", "--json", "--timeout", "10s")
	require.Equal(t, exitOK, code, errOut)
	var ev watch.WatchEvent
	require.NoError(t, json.Unmarshal([]byte(out), &ev))
	assert.Equal(t, "session", ev.Event)
	assert.Equal(t, "20260117-120000-o6-w7", ev.Session)

	for _, args := range [][]string{{"extra"}, {"--count", "-1"}, {"--session", "../x", "--timeout", "1s"}} {
		_, _, code := kitRun(t, append([]string{"watch", "--root", root}, args...)...)
		assert.NotEqual(t, exitOK, code, args)
	}
}

// kitHaveShell reports whether a shell is installed; where REQUIRE_TMUX=1 (CI) its absence fails.
func kitHaveShell(t *testing.T, name string) bool {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if tmuxtest.Required() {
			t.Errorf("%s is not installed; CI installs it (apt-get install %s)", name, name)
		}
		return false
	}
	return true
}

// install-skill --help names every hook it installs (the PermissionRequest hook, which relays the
// agent's permission prompts, included): each event in the files a run writes is in the help.
func TestKitInstallSkillHelpListsEveryHook(t *testing.T) {
	help, errOut, code := kitRun(t, "install-skill", "--help")
	require.Equal(t, exitOK, code, errOut)
	d := t.TempDir()
	_, errOut, code = kitRun(t, "install-skill", "--dir", d)
	require.Equal(t, exitOK, code, errOut)
	events, want := 0, 0
	for _, a := range profile.Agents() {
		if a.Hooks == nil {
			continue
		}
		f := a.Hooks.File
		want += len(a.Hooks.Events())
		data, err := os.ReadFile(filepath.Join(d, f))
		require.NoError(t, err)
		var got struct {
			Hooks map[string]any `json:"hooks"`
		}
		require.NoError(t, json.Unmarshal(data, &got), f)
		assert.Contains(t, help, f)
		for ev := range got.Hooks {
			events++
			assert.Regexp(t, `\b`+ev+`\b`, help, "%s's %s hook", f, ev)
		}
	}
	assert.Equal(t, want, events, "the hooks of every agent that has them")
	assert.Equal(t, 7, events, "Claude Code's three, Codex's two, Gemini CLI's two")
	assert.Contains(t, help, "relays a permission prompt")
}
