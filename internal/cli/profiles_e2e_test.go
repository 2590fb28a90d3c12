package cli

// End-to-end tests of delivery by profile and of `wcomm doctor`, against real shells,
// cat and python3 in a private tmux server. The real agent TUIs are in agents_e2e_test.go.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/tmuxtest"
	"github.com/wcomm/wcomm/messages"
)

// exchangeDelivery is the delivery part of `show --json`.
type exchangeDelivery struct {
	exchangeJSON
	Profile  string `json:"profile"`
	Verified bool   `json:"verified"`
	Evidence string `json:"evidence"`
}

// promptPane starts an interactive program and waits until its cursor has left column 0 (its
// prompt is drawn).
func (w *world) promptPane(cwd string, env []string, argv ...string) string {
	w.t.Helper()
	p := w.paneEnv(cwd, env, argv...)
	var x string
	waitFor(w.t, 10*time.Second, func() bool {
		out, err := w.tmuxErr("display-message", "-p", "-t", p, "#{cursor_x}")
		x = strings.TrimSpace(out)
		return err == nil && x != "0" && x != ""
	}, "a prompt in %v (cursor at %s)", argv, &x)
	return p
}

// Interactive shells and REPLs: the request is never typed into them, only a comment line that
// points at its file, and nothing of the request runs.
func TestE2EShellProfiles(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	// Folders under the world's work folder: they are removed after the tmux server is killed, so
	// no shell still writes its history into them.
	home := filepath.Join(w.work, "home") // no start-up files of the user's
	require.NoError(t, os.Mkdir(home, 0o700))
	// fish's first start spawns a detached man-page scan that writes completions into this folder
	// unless it exists, and would still be writing when the test's folders are removed.
	require.NoError(t, os.MkdirAll(filepath.Join(home, "fish", "generated_completions"), 0o700))
	victimDir := func(t *testing.T) string {
		d, err := os.MkdirTemp(w.work, "victim")
		require.NoError(t, err)
		return d
	}
	shells := []struct {
		name string
		argv []string
	}{
		{"bash", []string{"bash", "--norc", "--noprofile", "-i"}},
		{"sh", []string{"sh", "-i"}},
		{"dash", []string{"dash", "-i"}},
		{"zsh", []string{"zsh", "-f", "-i"}},
		{"fish", []string{"fish", "--private", "-i"}},
		// -S: no site module, so no history file written at exit either.
		{"python3", []string{"python3", "-q", "-S", "-i"}},
	}
	for _, sh := range shells {
		t.Run(sh.name, func(t *testing.T) {
			if _, err := exec.LookPath(sh.argv[0]); err != nil {
				if sh.name == "bash" || sh.name == "sh" || os.Getenv("REQUIRE_SHELLS") == "1" || tmuxtest.Required() {
					t.Fatalf("%s is not installed: %v", sh.name, err)
				}
				t.Skipf("%s is not installed", sh.name) // optional here; CI (REQUIRE_TMUX=1) installs and requires them
			}
			victim := victimDir(t)
			// No history files: the shells would write them while the test's folders are removed.
			p := w.promptPane(victim, []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "XDG_DATA_HOME=" + home, "HISTFILE="}, sh.argv...)
			r := w.run(call{pane: orch, stdin: []byte(hostile)}, "send", "--to", p, "--enter-delay", "50ms", "-")
			requireCode(t, 0, r)
			s := parseSent(t, r.stdout)
			rs := w.in(orch, "show", "--json", s.ID)
			requireCode(t, 0, rs)
			x := decode[exchangeDelivery](t, rs)
			assert.Equal(t, "shell", x.Profile)
			assert.Equal(t, "comment", x.Form)
			assert.Equal(t, "submitted", x.State)
			screen := w.waitScreen(p, "# [WORKER capability=READONLY id="+s.ID)
			for _, f := range []string{"pwn", "pwned"} {
				assert.NoFileExists(t, filepath.Join(victim, f), "a command of the message ran in %s; screen:\n%s", sh.name, screen)
			}
			assert.NotContains(t, screen, "touch pwn", "the request's text never reaches a shell")
			dead, exists := w.paneDead(p)
			assert.True(t, exists && !dead, "%s is alive", sh.name)
		})
	}

	t.Run("half-typed command is not run (fail-fast)", func(t *testing.T) {
		victim := victimDir(t)
		p := w.promptPane(victim, nil, "bash", "--norc", "--noprofile", "-i")
		w.tmux("send-keys", "-t", p, "-l", "touch typed-by-a-person")
		before := w.waitScreen(p, "touch typed-by-a-person")
		r := w.in(orch, "send", "--to", p, "--no-queue", "--busy-wait", "500ms", "--", "a request")
		requireCode(t, 1, r)
		assert.Contains(t, r.stderr, "someone else's text")
		assert.Contains(t, r.stderr, "touch typed-by-a-person")
		assert.Equal(t, before, w.capture(p), "the line is untouched")
		assert.NoFileExists(t, filepath.Join(victim, "typed-by-a-person"), "Enter was pressed on the person's command")
		m := regexp.MustCompile(`request kept at (\S+-request\.md)`).FindStringSubmatch(r.stderr)
		require.NotNil(t, m, "%s", r)
		rs := w.in(orch, "show", "--json", m[1])
		requireCode(t, 0, rs)
		x := decode[exchangeDelivery](t, rs)
		assert.Equal(t, "refused", x.State)
		assert.Equal(t, "undelivered", x.Status)
		assert.Contains(t, x.Evidence, "someone else's text")
		// An unknown --agent is a usage error, before anything is written.
		r = w.in(orch, "send", "--to", p, "--agent", "nope", "--", "x")
		requireCode(t, 2, r)
		assert.Contains(t, r.stderr, "claude, codex, gemini")
	})

	t.Run("the RESPONSE line reaches a shell orchestrator as a comment", func(t *testing.T) {
		worker := w.catPane()
		s := w.send(orch, worker, "what is 6 times 7?")
		r := w.in(worker, "notify", "--response", s.Response, "--", "42")
		requireCode(t, 0, r)
		screen := w.waitScreen(orch, "# "+notifyLine(s, orch, worker))
		assert.NotContains(t, screen, "command not found")
	})
}

// Cooked-mode readers: lines stay under the terminal's canonical limit (4095 bytes: a longer line
// loses its end, silently), or the request goes as a pointer line.
func TestE2EReaderProfile(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	script, err := filepath.Abs(filepath.Join(fixtures, "linereader.py"))
	require.NoError(t, err)
	for i, tc := range []struct {
		name string
		line int
		form string
	}{
		{"lines under the canonical limit are pasted", 4000, "paste"},
		{"a longer line goes as a pointer", 5000, "pointer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(w.work, fmt.Sprintf("lines-%d.jsonl", i))
			p := w.pane("", "python3", script, log)
			w.waitScreen(p, "LINE READER READY")
			body := "first line\n" + strings.Repeat("y", tc.line) + "\nlast line"
			s := w.send(orch, p, body)
			rs := w.in(orch, "show", "--json", s.ID)
			requireCode(t, 0, rs)
			x := decode[exchangeDelivery](t, rs)
			assert.Equal(t, "reader", x.Profile)
			assert.Equal(t, tc.form, x.Form)
			assert.Equal(t, "cooked reader: Enter sent", x.Evidence)
			assert.False(t, x.Verified)
			var want []string
			if tc.form == "paste" {
				want = strings.Split(strings.TrimRight(messages.Sanitize(readString(t, s.Request), true), "\n"), "\n")
			} else {
				want = []string{""}
			}
			var got []map[string]any
			waitFor(t, 10*time.Second, func() bool { got = jsonLines(t, log); return len(got) >= len(want) }, "%d lines read", len(want))
			require.Len(t, got, len(want))
			if tc.form == "paste" {
				for i, l := range want {
					assert.Equal(t, l, got[i]["line"], "line %d arrives whole", i+1)
				}
			} else {
				assert.Contains(t, got[0]["line"], "read it whole from "+s.Request)
			}
		})
	}
}

// doctorJSON is the part of `doctor --json` the tests read.
type doctorJSON struct {
	Tmux struct {
		Running bool   `json:"server_running"`
		Version string `json:"server_version"`
		Socket  string `json:"socket"`
	} `json:"tmux"`
	Bugs []struct {
		ID      string `json:"id"`
		Applies bool   `json:"applies"`
	} `json:"known_bugs"`
	Root struct {
		Path string `json:"path"`
		OK   bool   `json:"ok"`
		Note string `json:"note"`
	} `json:"root"`
	Pane *struct {
		ID        string `json:"pane_id"`
		Detection struct {
			Profile string `json:"profile"`
			Reason  string `json:"reason"`
			TTYMode string `json:"tty_mode"`
		} `json:"detection"`
		InputState string `json:"input_state"`
		Probes     []struct {
			Marker string `json:"marker"`
			Shown  int64  `json:"shown_after_ns"`
			Erased bool   `json:"erased"`
		} `json:"probes"`
		Suggested string `json:"suggested_enter_delay"`
	} `json:"pane"`
	Problems []string `json:"problems"`
}

func TestE2EDoctor(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")

	t.Run("server and root", func(t *testing.T) {
		r := w.in(orch, "doctor")
		requireCode(t, 0, r)
		for _, want := range []string{"known tmux bugs", "dead-pane-paste-crash", "trailing-semicolon", w.sock, "root:", "problems:     none"} {
			assert.Contains(t, r.stdout, want)
		}
		r = w.in(orch, "doctor", "--json")
		requireCode(t, 0, r)
		d := decode[doctorJSON](t, r)
		assert.True(t, d.Tmux.Running)
		assert.Equal(t, w.sock, d.Tmux.Socket)
		assert.NotEmpty(t, d.Tmux.Version)
		assert.NotEmpty(t, d.Bugs)
		assert.True(t, d.Root.OK, d.Root.Note)
		assert.Empty(t, d.Problems)
		assert.Nil(t, d.Pane)
	})

	t.Run("bash pane, probed", func(t *testing.T) {
		sh := w.bashPane("")
		r := w.in(orch, "doctor", "--pane", sh, "--probe", "--json")
		requireCode(t, 0, r)
		d := decode[doctorJSON](t, r)
		require.NotNil(t, d.Pane)
		assert.Equal(t, "shell", d.Pane.Detection.Profile)
		assert.Equal(t, "empty", d.Pane.InputState)
		require.Len(t, d.Pane.Probes, 3)
		for _, p := range d.Pane.Probes {
			assert.Positive(t, p.Shown)
			assert.True(t, p.Erased)
		}
		assert.NotEmpty(t, d.Pane.Suggested)
		// Nothing ran and nothing is left on the prompt line.
		screen := w.settle(sh)
		assert.NotContains(t, screen, "command not found")
		assert.NotContains(t, screen, "wcomm-probe-\n")
	})

	t.Run("cat pane, probed: the reader gets nothing", func(t *testing.T) {
		cat := w.catPane()
		r := w.in(orch, "doctor", "--pane", cat, "--probe", "--json")
		requireCode(t, 0, r)
		d := decode[doctorJSON](t, r)
		require.NotNil(t, d.Pane)
		assert.Equal(t, "reader", d.Pane.Detection.Profile)
		assert.Equal(t, "cooked", d.Pane.Detection.TTYMode)
		require.Len(t, d.Pane.Probes, 3)
		// The next line cat reads is the one typed now: the markers were erased from its line buffer.
		w.tmux("send-keys", "-t", cat, "-l", "after the probe")
		w.tmux("send-keys", "-t", cat, "Enter")
		// The erased cells stay on screen as spaces after the echoed line.
		screen := w.waitScreen(cat, "\nafter the probe\n")
		assert.Regexp(t, `(?m)^after the probe *\nafter the probe$`, screen)
		assert.NotContains(t, screen, "wcomm-probe-")
	})

	t.Run("unknown program: no probe", func(t *testing.T) {
		rec, log := w.recorderPane()
		r := w.in(orch, "doctor", "--pane", rec, "--probe")
		requireCode(t, 1, r)
		assert.Contains(t, r.stdout, "profile:      generic")
		assert.Contains(t, r.stdout, "no probe for an unknown program")
		assert.Empty(t, jsonLines(t, log), "nothing reached the program")
	})

	t.Run("failures", func(t *testing.T) {
		r := w.in(orch, "doctor", "--pane", "%999")
		requireCode(t, 4, r)
		assert.Contains(t, r.stdout, "%999")
		r = w.in(orch, "doctor", "--probe")
		requireCode(t, 2, r)
		r = w.in(orch, "doctor", "extra")
		requireCode(t, 2, r)
		link := filepath.Join(t.TempDir(), "root-link")
		require.NoError(t, os.Symlink(t.TempDir(), link))
		r = w.in(orch, "doctor", "--root", link)
		requireCode(t, 1, r)
		assert.Contains(t, r.stdout, "symlink")
		r = w.run(call{}, "doctor", "-S", filepath.Join(t.TempDir(), "nobody"))
		requireCode(t, 1, r)
		assert.Contains(t, r.stdout, "not running")
		assert.Contains(t, r.stdout, "no tmux server")
	})

	t.Run("forced profile", func(t *testing.T) {
		cat := w.catPane()
		r := w.in(orch, "doctor", "--pane", cat, "--agent", "claude", "--json")
		// Read as Claude Code, cat's screen has no input box: reported, not a failure.
		requireCode(t, 0, r)
		d := decode[doctorJSON](t, r)
		assert.Equal(t, "claude", d.Pane.Detection.Profile)
		assert.Equal(t, "not on screen", d.Pane.InputState)
	})
}
