package cli

// The set-up and the agent kit's files on a clean machine, against the real binary (and a real tmux
// server where it matters): wcomm found by login shells in tmux panes, linked where a fresh account
// finds it, make deps installing only what is missing, hooks and MCP entries that run wcomm from the
// agent's PATH, and install-mcp's help naming what it writes.

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
)

// debianProfile is the part of the ~/.profile that Debian and Ubuntu give every new user which
// matters here: it puts ~/.local/bin first in PATH when the folder exists at login.
const debianProfile = `# set PATH so it includes user's private bin if it exists
if [ -d "$HOME/.local/bin" ] ; then
    PATH="$HOME/.local/bin:$PATH"
fi
`

// loginWhich opens a new tmux window running the default shell as tmux runs it (a login shell),
// types 'command -v wcomm' and 'wcomm help' into it, and returns what they printed.
func loginWhich(w *world, out string) (which, help string) {
	w.t.Helper()
	pane := strings.TrimSpace(w.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "-c", w.work))
	require.NotEmpty(w.t, pane)
	os.Remove(out)
	line := "{ command -v wcomm || echo NOT-FOUND; wcomm help >/dev/null 2>&1; echo exit=$?; } > " + out + ".tmp; mv " + out + ".tmp " + out
	w.tmux("send-keys", "-t", pane, "-l", line)
	w.tmux("send-keys", "-t", pane, "Enter")
	var data []byte
	waitFor(w.t, 20*time.Second, func() bool {
		var err error
		data, err = os.ReadFile(out)
		return err == nil
	}, "the login shell in %s to answer; screen:\n%s", pane, w.capture(pane))
	which, help, _ = strings.Cut(strings.TrimSpace(string(data)), "\n")
	return which, help
}

// TestE2ELoginShellFindsWcomm: tmux starts each pane's shell as a login shell, which sets PATH
// afresh; after 'make install' (the README's first command) a new pane finds wcomm all the same.
func TestE2ELoginShellFindsWcomm(t *testing.T) {
	t.Parallel()
	_, err := exec.LookPath("make")
	require.NoError(t, err, "the README's set-up runs make")
	// The folders come before the world: cleanups run last first, so the tmux server (and the
	// login shells in its panes, which write into HOME as they exit) is gone before they are removed.
	home, gobin := t.TempDir(), t.TempDir()
	w := newWorld(t)
	require.NoError(t, os.WriteFile(filepath.Join(home, ".profile"), []byte(debianProfile), 0o600))
	// The panes get the new user's home, a login shell, and the PATH the README once said to
	// export: Go's bin folder appended.
	w.tmux("set-environment", "-g", "HOME", home)
	w.tmux("set-environment", "-g", "PATH", os.Getenv("PATH")+":"+gobin)
	w.tmux("set-option", "-g", "default-shell", "/bin/bash")
	w.tmux("set-option", "-g", "default-command", "")

	// The trip: wcomm in Go's bin folder on the exported PATH is not found in a new pane.
	mk := exec.Command("go", "build", "-o", gobin+string(filepath.Separator), wcommPkg, wcommMCPPkg)
	out, err := mk.CombinedOutput()
	require.NoError(t, err, "%s", out)
	which, _ := loginWhich(w, filepath.Join(w.work, "before"))
	assert.NotEqual(t, filepath.Join(gobin, "wcomm"), which, "a login shell kept the exported PATH: the test shows nothing")

	// make install: go install into GOBIN, then the link. Go's own caches are the real ones
	// (the module cache holds the dependencies; nothing is downloaded).
	env := append(cleanEnv(), "HOME="+home, "SHELL=/bin/bash", "GOBIN="+gobin)
	for _, k := range []string{"GOPATH", "GOMODCACHE", "GOCACHE"} {
		v, err := exec.Command("go", "env", k).Output()
		require.NoError(t, err)
		env = append(env, k+"="+strings.TrimSpace(string(v)))
	}
	install := exec.Command("make", "-s", "install")
	install.Dir = filepath.Join("..", "..")
	install.Env = env
	out, err = install.CombinedOutput()
	require.NoError(t, err, "make install: %s", out)
	assert.Contains(t, string(out), "new shells and new tmux panes find it")

	which, help := loginWhich(w, filepath.Join(w.work, "after"))
	assert.Equal(t, filepath.Join(home, ".local", "bin", "wcomm"), which, "a new pane's login shell finds the linked wcomm")
	assert.Equal(t, "exit=0", help, "wcomm help runs in the new pane")
	real, err := filepath.EvalSymlinks(filepath.Join(home, ".local", "bin", "wcomm"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(gobin, "wcomm"), real)
	assert.FileExists(t, filepath.Join(home, ".local", "bin", "wcomm-mcp"), "wcomm-mcp is linked beside it")
}

// TestE2EHooksRunWcommFromPath: the hooks install-skill writes, and the server install-mcp
// registers, run "wcomm" from the agent's PATH: a project's files are committed and read on other
// machines, where this one's path of the binary means nothing. --bin names a path instead, and then
// an agent whose PATH lacks wcomm runs them.
func TestE2EHooksRunWcommFromPath(t *testing.T) {
	t.Parallel()
	bin := wcommBin(t)
	self, err := filepath.Abs(bin)
	require.NoError(t, err)
	home := t.TempDir()
	install := func(dir string, args ...string) {
		for _, cmd := range []string{"install-skill", "install-mcp"} {
			c := exec.Command(bin, append([]string{cmd, "--dir", dir}, args...)...)
			c.Env = append(cleanEnv(), "HOME="+home)
			out, err := c.CombinedOutput()
			require.NoError(t, err, "wcomm %s %s: %s", cmd, strings.Join(args, " "), out)
		}
	}
	// hook runs command as an agent runs its hook, with path as its PATH.
	hook := func(command, event, path string) int {
		cmd := exec.Command("/bin/sh", "-c", command)
		cmd.Env = []string{"PATH=" + path, "HOME=" + home}
		cmd.Stdin = strings.NewReader(`{"hook_event_name": "` + event + `"}`)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		require.NoError(t, err, "%s", out)
		return 0
	}
	type hooks struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string } `json:"hooks"`
		} `json:"hooks"`
	}
	// check runs every hook of dir's files with path, each starting with prefix, and returns the
	// command of the Claude Code server entry; portable files name no path of this machine.
	check := func(dir, prefix, path string, portable bool) string {
		ran := 0
		for _, f := range []string{".claude/settings.json", ".codex/hooks.json", ".gemini/settings.json"} {
			data, err := os.ReadFile(filepath.Join(dir, f))
			require.NoError(t, err)
			if portable {
				assert.NotContains(t, string(data), filepath.Dir(self)+"/", "%s: no path of this machine", f)
			}
			var h hooks
			require.NoError(t, json.Unmarshal(data, &h), f)
			require.NotEmpty(t, h.Hooks, f)
			for event, groups := range h.Hooks {
				for _, g := range groups {
					for _, c := range g.Hooks {
						assert.True(t, strings.HasPrefix(c.Command, prefix+" hook --agent "), "%s %s runs %q", f, event, c.Command)
						assert.Equal(t, 0, hook(c.Command, event, path), "%s %s: %q", f, event, c.Command)
						ran++
					}
				}
			}
		}
		assert.Equal(t, 7, ran, "two events for each of three agents, and Claude Code's permission prompts")
		var entry struct {
			MCPServers map[string]struct{ Command string } `json:"mcpServers"`
		}
		data, err := os.ReadFile(filepath.Join(dir, ".mcp.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &entry))
		return entry.MCPServers["wcomm"].Command
	}

	// By default "wcomm", which an agent whose PATH holds it runs.
	dir := t.TempDir()
	install(dir)
	assert.Equal(t, "wcomm", check(dir, "wcomm", filepath.Dir(self)+":/usr/bin:/bin", true))
	require.Equal(t, 127, hook("wcomm hook --agent claude", "Stop", "/usr/bin:/bin"), "without it on PATH, a bare name fails, hence the warning")

	// --bin: that path, which runs whatever the agent's PATH.
	dir = t.TempDir()
	install(dir, "--bin", self)
	assert.Equal(t, self, check(dir, self, "/usr/bin:/bin", false))
}

// TestE2EInstallMCPHelpNamesWhatItWrites: the variables install-mcp --help says Codex is told
// to forward are the ones it writes into env_vars, all of them. Before, the help named $TMUX and
// $TMUX_PANE, and the file got WCOMM_ROOT too.
func TestE2EInstallMCPHelpNamesWhatItWrites(t *testing.T) {
	var help, out, errb bytes.Buffer
	require.Equal(t, 0, Run(Companions{}, []string{"install-mcp", "--help"}, strings.NewReader(""), &help, &errb), errb.String())
	require.Equal(t, 0, Run(Companions{}, []string{"install-mcp", "--for", "codex", "--dir", t.TempDir(), "--dry-run"}, strings.NewReader(""), &out, &errb), errb.String())

	m := regexp.MustCompile(`(?m)^env_vars = \[(.*)\]$`).FindStringSubmatch(out.String())
	require.NotNil(t, m, "%s", out.String())
	var written []string
	for _, v := range strings.Split(m[1], ",") {
		written = append(written, "$"+strings.Trim(strings.TrimSpace(v), `"`))
	}
	codex := regexp.MustCompile(`(?s)Codex: .*?\nGemini CLI:`).FindString(help.String())
	require.NotEmpty(t, codex, "%s", help.String())
	var named []string
	for _, v := range regexp.MustCompile(`\$[A-Z_]+`).FindAllString(codex, -1) {
		if v != "$CODEX_HOME" {
			named = append(named, v)
		}
	}
	assert.Equal(t, written, named, "the help names what is written, in its order")
}

// TestE2ELinkBinSystemFolder: on a fresh machine as root, whose profile adds no folder of its home,
// the set-up links wcomm into /usr/local/bin, where a login shell finds it. The test runs in a
// mount namespace of its own with an empty tmpfs over /usr/local/bin, so the machine's is untouched.
// As another user, with no folder of a login shell's PATH writable, it fails and says what to do.
func TestE2ELinkBinSystemFolder(t *testing.T) {
	t.Parallel()
	bin := wcommBin(t)
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "link-bin.sh"))
	require.NoError(t, err)
	home := t.TempDir()
	env := append(cleanEnv(), "HOME="+home, "SHELL=/bin/bash")
	if os.Geteuid() != 0 {
		cmd := exec.Command(script, filepath.Dir(bin))
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "%s", out)
		assert.Contains(t, string(out), "add this line to ~/.profile")
		assert.NoDirExists(t, filepath.Join(home, ".local", "bin"), "a folder made in vain is taken back")
		return
	}
	// In the namespace: the set-up, then what a fresh login shell finds and runs.
	steps := `mount -t tmpfs -o mode=0755 wcomm-test /usr/local/bin || exit 90
"$0" "$1" || exit 91
echo "which=$(env -i HOME="$HOME" TERM=dumb /bin/bash -l -c 'command -v wcomm')"
env -i HOME="$HOME" TERM=dumb /bin/bash -l -c 'wcomm help >/dev/null' && echo help=ok`
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", steps, script, filepath.Dir(bin))
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "wcomm: linked into /usr/local/bin;")
	assert.Contains(t, string(out), "which=/usr/local/bin/wcomm\n")
	assert.Contains(t, string(out), "help=ok")
	assert.NoDirExists(t, filepath.Join(home, ".local", "bin"), "a folder made in vain is taken back")
	if dest, err := os.Readlink("/usr/local/bin/wcomm"); err == nil {
		assert.NotEqual(t, bin, dest, "the link was made in the machine's /usr/local/bin, not the namespace's")
	}
}

// goEnv is the value of a Go setting as this test's go reads it.
func goEnv(t *testing.T, key string) string {
	t.Helper()
	v, err := exec.Command("go", "env", key).Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(v))
}

// TestE2ENewcomerFirstCommand: the README's first command exits 0 in the shell of a fresh account
// (a fresh HOME, the default PATH with Go's, nothing else in its environment) that typed it, where
// 'make install && wcomm help' exited 127 on a fresh account whose link folder was new to that
// shell. As root (in a mount namespace with an empty /usr/local/bin), make install links into
// /usr/local/bin, which this shell holds too; as another user (nobody, or the one running the
// test), it links into ~/.local/bin,
// says this shell does not have it, and the command runs wcomm by its path.
func TestE2ENewcomerFirstCommand(t *testing.T) {
	t.Parallel()
	root := os.Geteuid() == 0
	cmds := setupCommands(t, readme(t))
	first := cmds[0]
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	goBin := filepath.Dir(strings.TrimSpace(func() string { p, err := exec.LookPath("go"); require.NoError(t, err); return p }()))
	// What 'wcomm help install' says of the panes open at the time is the truth: they keep their PATH.
	topic, err := exec.Command(wcommBin(t), "help", "install").Output()
	require.NoError(t, err)
	flat := strings.Join(strings.Fields(string(topic)), " ")
	assert.NotContains(t, flat, "tmux panes already find it")
	assert.Contains(t, flat, "every tmux pane open at the time, do not find `wcomm` in a folder that was new to them")
	readHelp := `rc=$?; echo "rc=$rc"; echo "which=$(command -v wcomm || echo none)"; exit $rc`

	t.Run("root", func(t *testing.T) {
		if !root {
			return // a mount namespace needs root; as another user, the next case is this user's
		}
		home := t.TempDir()
		env := []string{"HOME=" + home, "SHELL=/bin/bash", "TERM=dumb",
			"PATH=" + goBin + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			// Go's own caches are the real ones: nothing is downloaded or rebuilt needlessly.
			"GOMODCACHE=" + goEnv(t, "GOMODCACHE"), "GOCACHE=" + goEnv(t, "GOCACHE"), "GOFLAGS=" + goEnv(t, "GOFLAGS"), "GOPROXY=off"}
		steps := `mount -t tmpfs -o mode=0755 wcomm-test /usr/local/bin || exit 90
cd "$0" || exit 91
exec env -i "$@" /bin/sh -c '{ ` + strings.ReplaceAll(first, "'", `'\''`) + `; } >"$HOME/help.out" 2>&1; ` + readHelp + `'`
		cmd := exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "/bin/sh", "-c", steps, repo}, env...)...)
		cmd.Dir = home
		out, err := cmd.CombinedOutput()
		help, _ := os.ReadFile(filepath.Join(home, "help.out"))
		require.NoError(t, err, "%s\nhelp.out:\n%s", out, help)
		assert.Contains(t, string(out), "rc=0")
		assert.Contains(t, string(help), "wcomm: linked into /usr/local/bin; this shell, new shells and new tmux panes find it")
		assert.Contains(t, string(help), "usage: wcomm", "wcomm help ran")
		assert.Contains(t, string(out), "which=/usr/local/bin/wcomm\n", "this shell finds wcomm by name as well")
		if dest, err := os.Readlink("/usr/local/bin/wcomm"); err == nil {
			assert.NotEqual(t, filepath.Join(home, "go", "bin", "wcomm"), dest, "the link was made in the machine's /usr/local/bin")
		}
	})

	t.Run("another user", func(t *testing.T) {
		// A fresh account of nobody's: a home of its own (under /tmp, which it can reach) with the
		// profile Debian gives a new user, the programs where make install's go install puts them,
		// and the link step of make install. The go install itself is make's, tested as root.
		base, err := os.MkdirTemp("", "wcomm-fresh-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(base) })
		require.NoError(t, os.Chmod(base, 0o755))
		home := filepath.Join(base, "home")
		bin := filepath.Join(home, "go", "bin")
		require.NoError(t, os.MkdirAll(bin, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(home, ".profile"), []byte(debianProfile), 0o644))
		for _, name := range []string{"wcomm", "wcomm-mcp"} {
			data, err := os.ReadFile(filepath.Join(filepath.Dir(wcommBin(t)), name))
			if name != "wcomm" && err != nil {
				continue
			}
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(bin, name), data, 0o755))
		}
		script, err := os.ReadFile(filepath.Join(repo, "scripts", "link-bin.sh"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(base, "link-bin.sh"), script, 0o755))
		var as []string
		if root {
			require.NoError(t, exec.Command("chown", "-R", "65534:65534", home).Run())
			as = []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}
		}
		// The README's command, make install's link step standing for make install.
		line := strings.Replace(first, "make install", filepath.Join(base, "link-bin.sh")+` "$HOME/go/bin"`, 1)
		cmd := exec.Command("env", append(as, "env", "-i", "HOME="+home, "SHELL=/bin/bash", "TERM=dumb", "GOTOOLCHAIN=local", "GOCACHE=off",
			"PATH="+goBin+":/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games",
			"/bin/sh", "-c", "{ "+line+`; } >"$HOME/help.out" 2>&1; `+readHelp)...)
		cmd.Dir = base
		out, err := cmd.CombinedOutput()
		help, _ := os.ReadFile(filepath.Join(home, "help.out"))
		require.NoError(t, err, "%s\nhelp.out:\n%s", out, help)
		local := filepath.Join(home, ".local", "bin")
		assert.Contains(t, string(help), "wcomm: linked into "+local+"; new shells and new tmux panes find it")
		assert.Contains(t, string(help), "this shell and the panes opened before it do not have "+local+" in PATH: run "+bin+"/wcomm there")
		assert.Contains(t, string(help), "usage: wcomm", "wcomm help ran by its path")
		assert.Contains(t, string(out), "which=none", "this shell's PATH is as it was")
	})
}

// TestNewcomerMakeDepsInstallsOnlyWhatIsMissing: make deps (which make test runs) says first what
// it installs and why, asks apt-get for the packages whose command is missing and that are not
// installed, and for nothing else, without Recommends and never upgrading one that is installed: a
// package that would upgrade one stops it, named. It never installs openssh-server (which enabled
// sshd at boot and upgraded the client). The real make, the Makefile and scripts/deps.sh, with
// apt-get and dpkg-query standing in.
func TestNewcomerMakeDepsInstallsOnlyWhatIsMissing(t *testing.T) {
	t.Parallel()
	mk, err := exec.LookPath("make")
	require.NoError(t, err)
	goCmd, err := exec.LookPath("go")
	require.NoError(t, err)
	stubs := t.TempDir()
	log := filepath.Join(t.TempDir(), "apt.log")
	write := func(name, script string) {
		require.NoError(t, os.WriteFile(filepath.Join(stubs, name), []byte("#!/bin/sh\n"+script), 0o755))
	}
	for _, name := range []string{"id", "grep", "bash", "dirname", "awk", "cat"} {
		p, err := exec.LookPath(name)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(p, filepath.Join(stubs, name)))
	}
	write("sudo", `exec "$@"`+"\n")
	// Found: python3, dash, ssh, chromium. Not found but installed (off this PATH): tmux, zsh.
	// Missing: fish.
	for _, name := range []string{"python3", "dash", "ssh", "chromium"} {
		write(name, "exit 0\n")
	}
	write("dpkg-query", `for a; do pkg=$a; done
case $pkg in tmux|zsh) printf 'install ok installed' ;; *) echo "dpkg-query: no packages found matching $pkg" >&2; exit 1 ;; esac
`)
	// The simulation answers what the log's first line (when there is one) says it installs.
	sim := filepath.Join(t.TempDir(), "sim")
	write("apt-get", `echo "$*" >> `+log+`
case " $* " in *" -s "*) cat `+sim+` 2>/dev/null ;; esac
`)
	run := func(simulated string) (string, error) {
		require.NoError(t, os.WriteFile(sim, []byte(simulated), 0o600))
		require.NoError(t, os.WriteFile(log, nil, 0o600))
		cmd := exec.Command(mk, "-s", "deps", "GO="+goCmd)
		cmd.Dir = filepath.Join("..", "..")
		// WCOMM_SSHD: an sshd of the person's choosing, so that none is fetched here.
		cmd.Env = []string{"PATH=" + stubs, "HOME=" + t.TempDir(), "WCOMM_SSHD=/nonexistent/sshd"}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := run("Inst fish (3.6.0-3.1 Debian:12 [amd64])\n")
	require.NoError(t, err, "%s", out)
	assert.Regexp(t, `(?s)^deps: installing with apt-get .*no upgrades, no Recommends.*\n  fish: the shell completion scripts are loaded in it\n`, out, "what and why, first")
	calls := strings.Split(strings.TrimSpace(readString(t, log)), "\n")
	assert.Equal(t, []string{"update -qq", "install -s -qq --no-install-recommends fish",
		"install -y -qq --no-upgrade --no-install-recommends fish"}, calls, "only the missing package, no Recommends")
	assert.NotContains(t, readString(t, log), "openssh-server")

	// A package that needs a newer version of an installed one: nothing is installed, and the
	// upgrade is named.
	out, err = run("Inst libpcre2-8-0 [10.42-1] (10.42-1+deb12u1 Debian:12 [amd64])\nInst fish (3.6.0-3.1 Debian:12 [amd64])\n")
	require.Error(t, err, "%s", out)
	assert.Contains(t, out, "would upgrade installed packages:\n  libpcre2-8-0 [10.42-1]")
	assert.Contains(t, out, "DEPS_UPGRADE=1")
	calls = strings.Split(strings.TrimSpace(readString(t, log)), "\n")
	assert.Equal(t, []string{"update -qq", "install -s -qq --no-install-recommends fish"}, calls, "no install")
}
