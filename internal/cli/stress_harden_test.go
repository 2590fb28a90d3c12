package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// The faults of hostile output, unbounded input, damaged files, hostile roots, dying panes and
// full disks, each driven through the real binary against a real tmux server. Every case either
// is refused with a clear error (non-zero exit, the message says what to do) or made harmless,
// and no case reports a state that did not happen.

// nobody is the uid the foreign-owner cases give a folder to (root may chown).
const nobody = 65534

// holderExchange sends a request to a worker that never answers and returns the exchange.
func holderExchange(t *testing.T, s *sxServer, orch, holder, hlog string) *exchange.Exchange {
	t.Helper()
	x := s.mustSend(orch, holder, []byte("a request for the hardening cases "+sxNonce()))
	sxWaitReceipt(t, hlog, x.ResponsePath)
	return x
}

// showJSON reads an exchange back with show --json.
func showJSON(t *testing.T, s *sxServer, ref string) exchange.Exchange {
	t.Helper()
	out := s.wcomm(nil, "show", ref, "--json")
	require.Equal(t, 0, out.Code, "%s", out)
	var x exchange.Exchange
	require.NoError(t, json.Unmarshal([]byte(out.Stdout), &x))
	return x
}

func hasState(x exchange.Exchange, state string) bool {
	for _, ev := range x.Events {
		if ev.State == state {
			return true
		}
	}
	return false
}

// termSafe reports the first byte or character of s a terminal would act on, "" when none.
func termSafe(s string) string {
	for i, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return fmt.Sprintf("%U at %d", r, i)
		}
	}
	return ""
}

// TestStressHardenOutput: a worker's answer holding escape sequences reaches the orchestrator's
// terminal clean through await, show and parse; --raw prints the bytes for a pipeline and --json
// carries them escaped, decoding to the exact body.
func TestStressHardenOutput(t *testing.T) {
	s := sxNew(t)
	orch, _ := s.linesPane()
	holder, hlog := s.workerPane("hold", "0s")
	x := holderExchange(t, s, orch, holder, hlog)
	body := "answer start\x1b]2;HACKED-TITLE\x07 middle \x1b[2J\x1b[H\u009b31m end\x1b\n"
	require.NoError(t, os.WriteFile(filepath.Join(s.work, "hostile-answer"), []byte(body), 0o600))
	_, out := s.notify(x.ResponsePath, []byte(body), "0")
	require.Equal(t, 0, out.Code, "%s", out)
	line := fmt.Sprintf("[RESPONSE started_at=%s orchestrator=%s worker=%s] %s", x.StartedAt, x.Orchestrator, x.Worker, x.ResponsePath)

	for _, tc := range []struct {
		name string
		out  func() sxOut
	}{
		{"await", func() sxOut { return s.wcomm(nil, "await", x.ID, "--timeout", "10s") }},
		{"show", func() sxOut { return s.wcomm(nil, "show", x.ID) }},
		{"parse", func() sxOut { return s.wcomm(nil, "parse", line) }},
		{"history", func() sxOut { return s.wcomm(nil, "history") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sxFault(t, func() {
				o := tc.out()
				require.Equal(t, 0, o.Code, "%s", o)
				assert.Empty(t, termSafe(o.Stdout), "stdout is safe for a terminal: %q", o.Stdout)
				assert.Empty(t, termSafe(o.Stderr), "stderr is safe for a terminal: %q", o.Stderr)
				if tc.name != "history" {
					assert.Contains(t, o.Stdout, "answer start")
					assert.Contains(t, o.Stdout, "31m end")
					assert.NotContains(t, o.Stdout, "HACKED-TITLE", "an OSC sequence is removed whole")
				}
			})
		})
	}
	t.Run("raw", func(t *testing.T) {
		sxFault(t, func() {
			o := s.wcomm(nil, "show", x.ID, "--raw")
			require.Equal(t, 0, o.Code, "%s", o)
			assert.Contains(t, o.Stdout, "\x1b]2;HACKED-TITLE\x07", "--raw prints the bytes as they are")
		})
	})
	t.Run("json", func(t *testing.T) {
		sxFault(t, func() {
			o := s.wcomm(nil, "show", x.ID, "--json")
			require.Equal(t, 0, o.Code, "%s", o)
			assert.Empty(t, termSafe(o.Stdout), "--json carries control characters escaped")
			assert.Contains(t, o.Stdout, `\u001b]2;HACKED-TITLE\u0007`)
			assert.Contains(t, o.Stdout, `\u009b`)
			var got exchange.Exchange
			require.NoError(t, json.Unmarshal([]byte(o.Stdout), &got))
			assert.Equal(t, body, got.ResponseBody, "the escaped JSON decodes to the exact body")
		})
	})
}

// TestStressHardenInput: a message read from an endless file is refused while it streams, with
// memory bounded; every blocking command stops on SIGINT and SIGTERM, says so, and leaves nothing
// half-written.
func TestStressHardenInput(t *testing.T) {
	s := sxNew(t)
	orch, _ := s.linesPane()
	holder, hlog := s.workerPane("hold", "0s")
	x := holderExchange(t, s, orch, holder, hlog)

	t.Run("send --file /dev/zero", func(t *testing.T) {
		sxFault(t, func() {
			// Through a small parent that reports the send's own peak (see withPeakRSS).
			rss := filepath.Join(s.work, "peak-rss")
			argv := append([]string{"python3", "-c", peakRSSScript, rss}, s.wcommArgv("send", "--to", holder, "--from", orch, "--file", "/dev/zero")...)
			o := sxExec(2*time.Minute, cleanEnv(), nil, argv...)
			assert.Equal(t, 1, o.Code, "%s", o)
			assert.Contains(t, o.Stderr, "larger than 256 MiB")
			kib := readPeakRSS(t, rss)
			assert.Less(t, kib, int64(1<<20), "memory stays bounded: peak %d KiB", kib)
			t.Logf("send --file /dev/zero: refused in %s, peak RSS %d MiB", o.Took.Round(time.Millisecond), kib>>10)
		})
	})

	before := len(sxRequestFiles(t, s.root))
	cases := []struct {
		name  string
		sig   syscall.Signal
		wchan string // where the blocked command waits in the kernel ("a|b": either)
		argv  []string
		ready func() bool // besides blocking there, what must have happened first (nil: nothing)
	}{
		{"send - on an open stdin, SIGINT", syscall.SIGINT, "pipe_read", s.wcommArgv("send", "--to", holder, "--from", orch, "-"), nil},
		{"send - on an open stdin, SIGTERM", syscall.SIGTERM, "pipe_read", s.wcommArgv("send", "--to", holder, "--from", orch, "-"), nil},
		{"notify - on an open stdin, SIGTERM", syscall.SIGTERM, "pipe_read", s.wcommArgv("notify", "--response", x.ResponsePath, "-"), nil},
		{"parse - on an open stdin, SIGINT", syscall.SIGINT, "pipe_read", s.wcommArgv("parse", "-"), nil},
		// An await handed to the resident waits in its socket's read, one run by the command itself
		// in epoll_wait.
		{"await, SIGTERM", syscall.SIGTERM, "unix_stream_read|epoll_wait", s.wcommArgv("await", x.ID, "--timeout", "0"), nil},
		{"await, SIGINT", syscall.SIGINT, "unix_stream_read|epoll_wait", s.wcommArgv("await", x.ID, "--timeout", "0"), nil},
		{"watch, SIGTERM", syscall.SIGTERM, "epoll_wait", s.wcommArgv("watch"), nil},
		{"ask waiting for its answer, SIGINT", syscall.SIGINT, "epoll_wait", s.wcommArgv("ask", "--from", holder, "--task", "t9",
			"--context", "Either works.", "--option", "a", "--option", "b", "--timeout", "0", "Which one?"),
			func() bool { // the question reached the orchestrator: the ask now waits for its answer
				logs, _ := filepath.Glob(filepath.Join(s.root, "*", "t9.q*.answers.jsonl"))
				for _, l := range logs {
					if data, err := os.ReadFile(l); err == nil && strings.Contains(string(data), `"delivered"`) {
						return true
					}
				}
				return false
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sxFault(t, func() {
				cmd := exec.Command(tc.argv[0], tc.argv[1:]...)
				cmd.Env = cleanEnv()
				pr, pw, err := os.Pipe() // a stdin that never closes
				require.NoError(t, err)
				defer pw.Close()
				cmd.Stdin = pr
				var stdout, stderr strings.Builder
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				require.NoError(t, cmd.Start())
				pr.Close()
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				// Signal once the command is blocked where it waits (a thread in a pipe read or in
				// epoll_wait, as /proc/PID/task/*/wchan shows): past its signal set-up.
				waitFor(t, 10*time.Second, func() bool {
					return (tc.ready == nil || tc.ready()) && blockedIn(cmd.Process.Pid, tc.wchan)
				}, "%s to block", tc.name)
				require.NoError(t, cmd.Process.Signal(tc.sig))
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					_ = cmd.Process.Kill()
					t.Fatalf("%s still running 10s after %v", tc.name, tc.sig)
				}
				code := cmd.ProcessState.ExitCode()
				t.Logf("%v: exit %d: %s", tc.sig, code, strings.TrimSpace(stderr.String()))
				assert.NotContains(t, stderr.String(), "panic")
				if !strings.HasPrefix(tc.name, "watch") {
					assert.Equal(t, 128+int(tc.sig), code, "an interrupted command exits as the signal ended it (130, 143): %s", stderr.String())
					assert.Contains(t, stderr.String(), "interrupted")
				} else {
					assert.Contains(t, []int{0, 1}, code, "watch ends cleanly: %s", stderr.String())
				}
			})
		})
	}
	assert.Equal(t, before, len(sxRequestFiles(t, s.root)), "no interrupted send wrote a request")
	assert.False(t, showJSON(t, s, x.ID).Status == exchange.StatusAnswered, "no interrupted notify wrote a response")
}

// TestStressHardenDamaged: a response file without its header is not an answer (await fails and
// does not mark it read), and notify into a response path taken by a FIFO, a folder or a dangling
// symlink says so instead of "already answered".
func TestStressHardenDamaged(t *testing.T) {
	s := sxNew(t)
	orch, _ := s.linesPane()
	holder, hlog := s.workerPane("hold", "0s")

	t.Run("response without its header", func(t *testing.T) {
		sxFault(t, func() {
			x := holderExchange(t, s, orch, holder, hlog)
			require.NoError(t, os.WriteFile(x.ResponsePath+".tmp", []byte("just text, no header\n"), 0o600))
			require.NoError(t, os.Rename(x.ResponsePath+".tmp", x.ResponsePath))
			o := s.wcomm(nil, "await", x.ID, "--timeout", "10s")
			assert.Equal(t, 1, o.Code, "%s", o)
			assert.Contains(t, o.Stderr, "damaged")
			assert.Empty(t, o.Stdout, "no empty body is printed as if it were the answer")
			got := showJSON(t, s, x.ID)
			assert.False(t, got.Read || hasState(got, exchange.StateRead), "a damaged response is not marked read")
		})
	})
	for _, tc := range []struct {
		name, want string
		make       func(path string) error
	}{
		{"FIFO", "a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"folder", "a folder", func(p string) error { return os.Mkdir(p, 0o700) }},
		{"dangling symlink", "a symlink", func(p string) error { return os.Symlink(filepath.Join(s.work, "nowhere"), p) }},
	} {
		t.Run("notify into a "+tc.name, func(t *testing.T) {
			sxFault(t, func() {
				x := holderExchange(t, s, orch, holder, hlog)
				require.NoError(t, tc.make(x.ResponsePath))
				o := s.wcomm([]byte("the answer"), "notify", "--response", x.ResponsePath, "--file", "-")
				assert.Equal(t, 1, o.Code, "%s", o)
				assert.Contains(t, o.Stderr, tc.want+", not a response; nothing was saved")
				assert.NotContains(t, o.Stderr, "already holds a response")
			})
		})
	}
}

// TestStressHardenRoots: roots the protocol's lines cannot carry are refused before anything is
// made; no symlink inside the root is followed; a session folder another user planted is never
// read or reused; a root of another owner fails history instead of showing "no exchanges".
func TestStressHardenRoots(t *testing.T) {
	s := sxNew(t)
	orch, _ := s.linesPane()
	holder, hlog := s.workerPane("hold", "0s")
	x := holderExchange(t, s, orch, holder, hlog)
	line := func(path string) string {
		return fmt.Sprintf("[RESPONSE started_at=%s orchestrator=%s worker=%s] %s", x.StartedAt, x.Orchestrator, x.Worker, path)
	}

	for _, c := range []string{" ", "$", `"`, "\n", "\x1b", "`"} {
		t.Run(fmt.Sprintf("root with %q", c), func(t *testing.T) {
			sxFault(t, func() {
				root := filepath.Join(s.work, "bad"+c+"root")
				o := sxExec(time.Minute, cleanEnv(), nil, s.bin, "send", "-S", s.sock, "--root", root, "--to", holder, "--from", orch, "hi")
				assert.Equal(t, 1, o.Code, "%s", o)
				assert.Contains(t, o.Stderr, "cannot be named in a RESPONSE line")
				_, err := os.Lstat(root)
				assert.True(t, errors.Is(err, os.ErrNotExist), "nothing is made under a refused root")
			})
		})
	}

	t.Run("symlink between two session folders inside the root", func(t *testing.T) {
		sxFault(t, func() {
			link := filepath.Join(s.root, "20260101-000003-o1-w2")
			require.NoError(t, os.Symlink(x.Dir, link))
			defer os.Remove(link)
			o := s.wcomm(nil, "parse", line(filepath.Join(link, filepath.Base(x.ResponsePath))))
			assert.NotEqual(t, 0, o.Code, "%s", o)
			assert.Contains(t, o.Stderr, "is a symlink")
			o = s.wcomm(nil, "show", filepath.Join(link, filepath.Base(x.RequestPath)))
			assert.NotEqual(t, 0, o.Code, "%s", o)
		})
	})

	t.Run("session folder of another user", func(t *testing.T) {
		needRoot(t, "to give a folder to another uid")
		sxFault(t, func() {
			// The pair's own folder, with a forged response, handed to another user as if planted.
			y := holderExchange(t, s, orch, holder, hlog)
			forged := "FORGED-" + sxNonce()
			resp := fmt.Sprintf("[WORKER RESPONSE id=%s started_at=%s orchestrator=%s worker=%s]\n%s\n", y.ID, y.StartedAt, y.Orchestrator, y.Worker, forged)
			require.NoError(t, os.WriteFile(y.ResponsePath, []byte(resp), 0o600))
			require.NoError(t, filepath.Walk(y.Dir, func(p string, _ os.FileInfo, err error) error {
				if err != nil {
					return err
				}
				return os.Lchown(p, nobody, nobody)
			}))
			require.NoError(t, os.Chmod(y.Dir, 0o777))
			defer filepath.Walk(y.Dir, func(p string, _ os.FileInfo, err error) error {
				if err == nil {
					_ = os.Lchown(p, 0, 0)
				}
				return nil
			})
			for _, o := range []sxOut{
				s.wcomm(nil, "await", y.ID, "--timeout", "1s"),
				s.wcomm(nil, "show", y.ResponsePath),
				s.wcomm(nil, "parse", line(y.ResponsePath)),
			} {
				assert.NotEqual(t, 0, o.Code, "%s", o)
				assert.NotContains(t, o.Stdout+o.Stderr, forged, "a planted response is never returned")
			}
			o := s.wcomm(nil, "show", y.ResponsePath)
			assert.Contains(t, o.Stderr, "owned by uid 65534")
			h := s.wcomm(nil, "history")
			assert.Equal(t, 0, h.Code, "%s", h)
			assert.Contains(t, h.Stdout, "not yours")
			z, so := s.send(orch, holder, []byte("after the planted folder"))
			require.NotNil(t, z, "%s", so)
			assert.NotEqual(t, y.Dir, z.Dir, "the planted folder is not reused")
		})
	})

	t.Run("root of another user", func(t *testing.T) {
		needRoot(t, "to give a folder to another uid")
		sxFault(t, func() {
			root := filepath.Join(s.work, "root-of-nobody")
			require.NoError(t, os.MkdirAll(root, 0o700))
			require.NoError(t, os.Chown(root, nobody, nobody))
			o := sxExec(time.Minute, cleanEnv(), nil, s.bin, "history", "--root", root)
			assert.Equal(t, 1, o.Code, "%s", o)
			assert.Contains(t, o.Stderr, "owned by uid 65534")
			assert.NotContains(t, o.Stdout, "no exchanges")
		})
	})
}

// TestStressHardenPanes: a pane that dies between paste and Enter fails the send (undelivered,
// not submitted); a sender killed between paste and Enter leaves a paste the next send finishes
// before typing its own, so a line reader never gets two messages on one line.
func TestStressHardenPanes(t *testing.T) {
	s := sxNew(t)
	orch, _ := s.linesPane()

	t.Run("pane dies between paste and Enter", func(t *testing.T) {
		sxFault(t, func() {
			w := s.window(sxSession, nil, "cat")
			bg := s.start([]byte("a request whose pane dies "+sxNonce()), "send", "--to", w, "--from", orch, "--enter-delay", "5s", "--json", "--file", "-")
			waitFor(t, 20*time.Second, func() bool {
				out := s.markRecord("PASTED", w)
				return strings.TrimSpace(out) != ""
			}, "the paste into %s", w)
			require.NoError(t, syscall.Kill(s.panePID(w), syscall.SIGKILL))
			o := bg.wait(t, time.Minute)
			assert.Equal(t, 1, o.Code, "%s", o)
			assert.Contains(t, o.Stderr, "not submitted")
			var x exchange.Exchange
			if json.Unmarshal([]byte(o.Stdout), &x) == nil && x.ID != "" {
				got := showJSON(t, s, x.ID)
				assert.False(t, hasState(got, exchange.StateSubmitted), "never logged submitted")
				assert.Equal(t, exchange.StateUndelivered, got.State)
			}
			assert.True(t, s.alive(), "the tmux server survives")
		})
	})

	for _, mode := range []string{"queue", "no-queue"} {
		t.Run("sender killed between paste and Enter, "+mode, func(t *testing.T) {
			sxFault(t, func() {
				w, wlog := s.linesPane()
				extra := []string{}
				if mode == "no-queue" {
					extra = append(extra, "--no-queue")
				}
				first := "FIRST-" + sxNonce()
				bg := s.start([]byte(first), "send", append([]string{"--to", w, "--from", orch, "--enter-delay", "8s", "--file", "-"}, extra...)...)
				waitFor(t, 20*time.Second, func() bool {
					out := s.markRecord("PASTED", w)
					return strings.TrimSpace(out) != ""
				}, "the paste into %s", w)
				require.NoError(t, bg.cmd.Process.Kill())
				_ = bg.wait(t, time.Minute)
				second := "SECOND-" + sxNonce()
				o := s.wcomm([]byte(second), "send", append([]string{"--to", w, "--from", orch, "--enter-delay", "0", "--file", "-"}, extra...)...)
				require.Equal(t, 0, o.Code, "%s", o)
				waitFor(t, 20*time.Second, func() bool {
					all := strings.Join(sxLines(t, wlog), "\n")
					return strings.Contains(all, first) && strings.Contains(all, second)
				}, "both requests to reach the reader")
				for _, l := range sxLines(t, wlog) {
					assert.False(t, strings.Contains(l, first) && strings.Contains(l, second), "two messages merged on one line: %q", l)
					if i := strings.Index(l, "[WORKER "); i > 0 {
						t.Errorf("a request header joined the line before it: %q", l)
					}
				}
			})
		})
	}
}

// TestStressHardenFullDisk puts the root on a small tmpfs, fills it, and sends with one more free
// page each time: at every cut point a send either exits 0 with its state fully recorded, or fails
// and says why; never exit 0 with a log that lacks what it reported.
func TestStressHardenFullDisk(t *testing.T) {
	s := sxNew(t)
	mnt := mountTmpfs(t, s, "small", "512k")
	s.root = filepath.Join(mnt, "root")

	orch, _ := s.linesPane()
	w, wlog := s.linesPane()
	s.mustSend(orch, w, []byte("before the disk fills"))

	// Fill the disk: one big file, then single pages, so each removal frees exactly one page.
	big, err := os.Create(filepath.Join(mnt, "filler"))
	require.NoError(t, err)
	chunk := make([]byte, 64<<10)
	for {
		if _, err := big.Write(chunk); err != nil {
			break
		}
	}
	// Give back 32 pages from the big file and take them again one by one.
	st, err := big.Stat()
	require.NoError(t, err)
	require.NoError(t, big.Truncate(max(0, st.Size()/4096*4096-32*4096)))
	big.Close()
	var spares []string
	for i := 0; ; i++ {
		p := filepath.Join(mnt, "spare-"+strconv.Itoa(i))
		if err := os.WriteFile(p, make([]byte, 4096), 0o600); err != nil {
			os.Remove(p)
			break
		}
		spares = append(spares, p)
	}
	rounds := sxN(24, sxScale(t)*10, 20)
	ok, failed := 0, 0
	for i := 0; i < rounds; i++ {
		sxFault(t, func() {
			o := s.wcomm([]byte(fmt.Sprintf("request %d on a nearly full disk", i)), "send", "--to", w, "--from", orch, "--enter-delay", "0", "--json", "--file", "-")
			assert.NotContains(t, o.Stderr, "panic")
			if o.Code == 0 {
				ok++
				var x exchange.Exchange
				require.NoError(t, json.Unmarshal([]byte(o.Stdout), &x), "%s", o)
				got := showJSON(t, s, x.ID)
				assert.True(t, hasState(got, exchange.StateWritten), "round %d: exit 0 with 'written' recorded", i)
				assert.True(t, hasState(got, exchange.StateSubmitted) || hasState(got, exchange.StateQueued),
					"round %d: exit 0 with 'submitted' or 'queued' recorded: %+v", i, got.Events)
			} else {
				failed++
				assert.Equal(t, 1, o.Code, "%s", o)
				assert.Contains(t, o.Stderr, "no space left on device", "round %d: the failure says why: %s", i, o)
			}
		})
		// Three pages more each round: a failed send may keep what it wrote (its request, for
		// --resend), so the disk fills again unless more comes free than it took.
		for j := 0; j < 3 && len(spares) > 0; j++ {
			require.NoError(t, os.Remove(spares[len(spares)-1]))
			spares = spares[:len(spares)-1]
		}
	}
	// Exactly once, even when outcomes could not be written: no request header reached the
	// reader twice.
	seen := map[string]int{}
	for _, l := range sxLines(t, wlog) {
		if strings.HasPrefix(l, "[WORKER capability=") {
			seen[l]++
		}
	}
	for l, n := range seen {
		assert.Equal(t, 1, n, "typed %d times: %s", n, l)
	}
	t.Logf("full disk: %d rounds, %d sends exited 0 with their state recorded, %d failed saying so", rounds, ok, failed)
	assert.Greater(t, failed, 0, "the disk was full for some sends")
	assert.Greater(t, ok, 0, "with space again, sends succeed")
	assert.True(t, s.alive(), "the tmux server survives")
}

// blockedIn reports whether a thread of pid waits in a kernel function whose name holds what, or
// one of its alternatives ("a|b").
func blockedIn(pid int, what string) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, w := range strings.Split(what, "|") {
			if strings.Contains(string(b), w) {
				return true
			}
		}
	}
	return false
}

// TestStressHardenReadOnlyRoot: a root on a file system mounted read-only can be read (history and
// show list what is there) but nothing can be sent or answered into it: each command says so and
// exits 1, and nothing is reported that did not happen.
func TestStressHardenReadOnlyRoot(t *testing.T) {
	s := sxNew(t)
	mnt := mountTmpfs(t, s, "ro", "4m")
	s.root = filepath.Join(mnt, "root")
	orch, _ := s.linesPane()
	w, _ := s.linesPane()
	x := s.mustSend(orch, w, []byte("sent before the file system became read-only"))
	// The send's guard (a child that outlives it by a moment) holds the deliverer's log open for
	// writing until it sees the send end; the kernel refuses to remount while it does.
	waitNoOpenFiles(t, mnt)
	out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput()
	require.NoError(t, err, "remount read-only: %s", out)

	sxFault(t, func() {
		h := s.wcomm(nil, "history", "--json")
		require.Equal(t, 0, h.Code, "%s", h)
		assert.Contains(t, h.Stdout, x.ID, "what is there is listed")
		o := s.wcomm([]byte("a new request"), "send", "--to", w, "--from", orch, "--enter-delay", "0", "--file", "-")
		assert.Equal(t, 1, o.Code, "%s", o)
		assert.Contains(t, o.Stderr, "read-only file system")
		assert.NotContains(t, o.Stderr, "panic")
		n := s.wcomm([]byte("an answer"), "notify", "--response", x.ResponsePath, "--enter-delay", "0", "--file", "-")
		assert.Equal(t, 1, n.Code, "%s", n)
		assert.Contains(t, n.Stderr, "read-only file system")
		got := showJSON(t, s, x.ID)
		assert.Equal(t, exchange.StatusPending, got.Status, "no answer was reported")
	})
}

// waitNoOpenFiles polls, to a deadline, until no process holds a file under dir open.
func waitNoOpenFiles(t *testing.T, dir string) {
	t.Helper()
	var holders string
	waitFor(t, 10*time.Second, func() bool {
		holders = ""
		fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
		for _, fd := range fds {
			if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, dir+"/") && openForWriting(fd) {
				holders += "\n" + fd + " -> " + l
			}
		}
		return holders == ""
	}, "no file under %s to be open for writing; open:%s", dir, &holders)
}

// openForWriting reports whether the file descriptor /proc/PID/fd/N is open for writing (the
// flags of /proc/PID/fdinfo/N): only those stop a remount read-only.
func openForWriting(fd string) bool {
	data, err := os.ReadFile(strings.Replace(fd, "/fd/", "/fdinfo/", 1))
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			return err != nil || flags&syscall.O_ACCMODE != syscall.O_RDONLY
		}
	}
	return true
}

// mountTmpfs mounts a private tmpfs of size under the test's work folder (unmounted at cleanup)
// and returns its path. Mounting needs root, which CI has.
func mountTmpfs(t *testing.T, s *sxServer, name, size string) string {
	t.Helper()
	needRoot(t, "to mount a tmpfs")
	mnt := filepath.Join(s.work, name)
	require.NoError(t, os.MkdirAll(mnt, 0o700))
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", mnt).CombinedOutput()
	require.NoError(t, err, "mount a tmpfs: %s", out)
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	return mnt
}

// needRoot skips a test that needs root where there is none, except under REQUIRE_TMUX=1 (CI,
// which runs as root): there the test fails instead, so CI never skips it.
func needRoot(t *testing.T, why string) {
	t.Helper()
	if os.Getuid() == 0 {
		return
	}
	if os.Getenv("REQUIRE_TMUX") == "1" {
		t.Fatalf("needs root %s, and REQUIRE_TMUX=1 forbids skipping it", why)
	}
	t.Skip("needs root " + why)
}
