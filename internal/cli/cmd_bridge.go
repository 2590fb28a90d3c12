package cli

// The answer channels' command: 'wcomm bridge' runs the configured channels (internal/bridge);
// an ask starts one itself, detached, when channels are configured and none runs; doctor checks
// each channel.

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/internal/bridge"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
)

// spawnedIdleExit is how long a bridge an ask started waits with nothing pending before it ends:
// long enough to outlast the gap between the ask that started it and its question
// (WCOMM_BRIDGE_IDLE_EXIT sets another).
const spawnedIdleExit = 30 * time.Second

func init() {
	register(&command{
		Name: "bridge", Args: "[--idle-exit D]", Role: "admin",
		Summary: "carry questions to Telegram, Slack or a webhook and take answers from there",
		Help: `Runs every channel of the settings' channels block (telegram, slack, webhook) in the foreground
until SIGINT or SIGTERM. Each new question is posted (Telegram: compact, a button per option,
/yes_TOKEN and /no_TOKEN for yes-no; Slack: a message whose thread takes the answer; webhook: one
JSON POST). An answer from an allowed user in the configured chat goes through the same path as
'wcomm answer' with --source telegram or slack: the first valid answer from anywhere wins, a later
one is told it is stale. A question answered elsewhere is marked answered in the chat. What was
posted and the update offsets are kept in the root's .bridge folder, so a restart posts nothing
twice and applies no update twice. One bridge runs per root; a second one says which process runs
it and exits 1. When channels are configured, an ask starts a bridge itself if none runs; that one
ends after --idle-exit with nothing pending. Tokens: token files of mode 0600, or
WCOMM_TELEGRAM_TOKEN, WCOMM_SLACK_BOT_TOKEN, WCOMM_SLACK_APP_TOKEN. 'wcomm doctor' checks each
channel without posting. See 'wcomm help channels'.`,
		Example: "wcomm bridge\nwcomm bridge --idle-exit 5m",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			var idle time.Duration
			durationVar(fs, &idle, "idle-exit", 0, "end once nothing has been pending for this long (0: run until stopped)")
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("bridge takes no arguments")
				}
				return c.runBridge(idle)
			}
		},
	})
}

// lineLog writes a bridge's diagnostics one line each, with the time, safe for its goroutines.
type lineLog struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineLog) logf(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "%s wcomm bridge: %s\n", time.Now().Format("15:04:05"), messages.SanitizeField(fmt.Sprintf(format, a...)))
}

func (c *cli) runBridge(idle time.Duration) error {
	s, err := c.settings()
	if err != nil {
		return err
	}
	if note := s.IgnoredNote(); note != "" {
		fmt.Fprintf(c.stderr, "wcomm bridge: %s\n", note)
	}
	if !s.Channels.Any() {
		return fmt.Errorf("no channels configured: add a channels block (telegram, slack or webhook) to %s; see 'wcomm help channels'", userConfigName(c.getenv))
	}
	root, err := filepath.Abs(c.rootDir())
	if err != nil {
		return err
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return fmt.Errorf("create root %s: %w", root, err)
	}
	unlock, err := bridge.Lock(root)
	if err != nil {
		return err
	}
	defer unlock()
	log := &lineLog{w: c.stderr}
	e := c.engine()
	h := &bridge.Hub{Engine: e, Root: root, Logf: log.logf, IdleExit: idle}
	if err := h.Open(); err != nil {
		return err
	}
	chans, err := bridge.Open(s.Channels, h, c.getenv)
	if err != nil {
		return err
	}
	names := make([]string, len(chans))
	for i, ch := range chans {
		names[i] = ch.Name()
	}
	log.logf("pid %d runs %s for %s", os.Getpid(), strings.Join(names, ", "), root)
	return h.Run(c.ctx, chans)
}

func userConfigName(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "wcomm", "config.yaml")
	}
	return "~/.config/wcomm/config.yaml"
}

// startBridge starts 'wcomm bridge' detached for this root when channels are configured and no
// bridge runs, so a question reaches the chat without anyone having started one. Its
// diagnostics go to bridge.log in the root's .bridge folder. A failure only warns: the question
// still reaches the orchestrator's pane.
func (c *cli) startBridge(s tmuxcomm.Settings) {
	if !s.Channels.Any() {
		return
	}
	root, err := filepath.Abs(c.rootDir())
	if err != nil || bridge.Running(root) {
		return
	}
	if err := c.spawnBridge(root); err != nil {
		fmt.Fprintf(c.stderr, "wcomm ask: warning: could not start the bridge to your channels (%v); run 'wcomm bridge'\n", err)
	}
}

func (c *cli) spawnBridge(root string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(bridge.Dir(root), 0o700); err != nil {
		return err
	}
	// The tokens stay in the environment or their files: never in this argv.
	idle := spawnedIdleExit
	if v := c.getenv("WCOMM_BRIDGE_IDLE_EXIT"); v != "" {
		if d, err := tmuxcomm.ParseDuration(v); err == nil && d > 0 {
			idle = d
		}
	}
	args := []string{"bridge", "--root", root, "--idle-exit", idle.String()}
	if c.socketPath != "" {
		args = append(args, "-S", c.socketPath)
	} else if c.socketName != "" {
		args = append(args, "-L", c.socketName)
	}
	cmd := exec.Command(exe, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	log, err := os.OpenFile(filepath.Join(bridge.Dir(root), bridge.LogFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err == nil {
		defer log.Close()
		cmd.Stderr = log
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	// Reaped when it ends, should this process still run then (a blocking ask).
	go cmd.Wait()
	return nil
}

// doctorChannels checks each configured channel (token valid, chat reachable) without posting.
func (c *cli) doctorChannels(r *doctorReport) {
	s, err := c.settings()
	if err != nil || !s.Channels.Any() {
		return
	}
	h := &bridge.Hub{Engine: c.engine(), Root: c.rootDir()}
	chans, err := bridge.Open(s.Channels, h, c.getenv)
	if err != nil {
		r.Channels = append(r.Channels, bridge.Check{Channel: "channels", What: "settings", Detail: err.Error()})
		r.Problems = append(r.Problems, "channels: "+err.Error())
		return
	}
	for _, ch := range chans {
		for _, chk := range ch.Check(c.ctx) {
			r.Channels = append(r.Channels, chk)
			if !chk.OK {
				r.Problems = append(r.Problems, fmt.Sprintf("%s %s: %s", chk.Channel, chk.What, chk.Detail))
			}
		}
	}
	root, _ := filepath.Abs(c.rootDir())
	state := "no bridge runs (an ask starts one)"
	if bridge.Running(root) {
		state = fmt.Sprintf("process %d runs the bridge", bridge.RunningPID(root))
	}
	r.Channels = append(r.Channels, bridge.Check{Channel: "bridge", What: "process", OK: true, Detail: state})
}

// printChannels prints doctor's channel lines.
func printChannels(w io.Writer, checks []bridge.Check) {
	for _, chk := range checks {
		mark := "ok"
		if !chk.OK {
			mark = "FAILED"
		}
		fmt.Fprintf(w, "channel:      %s %s: %s: %s\n", chk.Channel, chk.What, mark, messages.SanitizeField(chk.Detail))
	}
}
