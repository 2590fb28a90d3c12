package cli

// The answer channels' command: 'wcomm bridge' runs the configured channels (internal/bridge);
// an ask starts one itself, detached, when channels are configured and none runs; doctor checks
// each channel. The chat clients live in the companion program wcomm-bridge (cmd/wcomm-bridge),
// as the MCP server lives in wcomm-mcp: they bring net/http and TLS, whose start-up cost every
// send, await and notify would pay otherwise. wcomm hands 'bridge' over to it, starts it, and
// asks it for doctor's checks.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/wcomm/wcomm/internal/bridge/lockfile"
	"github.com/wcomm/wcomm/internal/bridge/tokens"
	"github.com/wcomm/wcomm/internal/helpers"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// BridgeEnv is what the bridge takes from the command line that starts it.
type BridgeEnv struct {
	Engine   *tmuxcomm.Engine
	Settings settings.Values
	Root     string // absolute
	// Channels is the key of the channel configuration of Settings (messages.ChannelsConfig.Key):
	// the bridge serves the questions asked where it applied. Unrecorded is set when it is the
	// user's own configuration, which also serves the questions that record no key.
	Channels   string
	Unrecorded bool
	Getenv     func(string) string
	IdleExit   time.Duration
	// Logf writes one diagnostic line (to stderr, or a started bridge's log).
	Logf func(format string, a ...any)
	// Tmux is the engine's tmux client, from which the bridge keeps one open (its Control).
	Tmux *paneops.Client
}

// ChannelCheck is one line of doctor's report on a channel (the bridge's Check).
type ChannelCheck struct {
	Channel string `json:"channel"`
	What    string `json:"what"`
	OK      bool   `json:"ok"`
	Detail  string `json:"detail,omitempty"`
}

func init() {
	register(&command{
		Name: "bridge", Args: "[--idle-exit D]", Role: "admin",
		Summary: "carry questions to Telegram, Slack or a webhook and take answers from there",
		Help: `Runs every channel of the settings' channels block (telegram, slack, webhook) in the foreground
until SIGINT or SIGTERM. Each new question is posted (Telegram: compact, a button per option,
/yes_TOKEN and /no_TOKEN for yes-no; Slack: a button per option, and its thread takes a reply; webhook: one
JSON POST). An answer from an allowed user in the configured chat goes through the same path as
'wcomm answer' with --source telegram or slack: the first valid answer from anywhere wins, a later
one is told it is stale. A question answered elsewhere is marked answered in the chat. A message
dead-lettered (expired or undeliverable) is told once, with the command that re-sends it. What was
posted is kept in the root's .bridge folder, and a Telegram bot's update offset where the bridges
of that bot meet (a private folder in $XDG_RUNTIME_DIR/wcomm, else /tmp/wcomm-UID), so a restart
posts nothing twice and applies no update twice. Bridges of several roots may share one bot: one
of them polls it and hands each update to the bridge of its question. One bridge runs per root and channel configuration: each
question records the channels that applied where it was asked, and only their bridge posts it and
takes its answers, so a project whose trusted settings name other channels never sees another
folder's questions (a question that records none goes to your own config's channels). A second
bridge of the same channels says which process runs it and exits 1. A question a service refuses
for good (too long for it) is recorded, logged and shown by doctor; it holds up no other. When
channels are configured, an ask starts the bridge of its channels if none runs; that one ends
after --idle-exit with nothing pending. Tokens: token files of mode 0600, or
WCOMM_TELEGRAM_TOKEN, WCOMM_SLACK_BOT_TOKEN, WCOMM_SLACK_APP_TOKEN. 'wcomm doctor' checks each
channel without posting. The channels run in the companion program wcomm-bridge, which this
command hands over to. See 'wcomm help channels'.`,
		Example: "wcomm bridge\nwcomm bridge --idle-exit 5m",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			var idle time.Duration
			durationVar(fs, &idle, "idle-exit", 0, "end once nothing has been pending for this long (0: run until stopped)")
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("bridge takes no arguments")
				}
				if c.comp.Bridge.Run == nil {
					return c.execCompanion(bridgeProgram, "the bridge", "bridge", "--idle-exit", idle.String())
				}
				return c.runBridge(idle)
			}
		},
	})
	register(&command{
		Name: "__channels", Role: "admin", Hidden: true,
		Summary: "check each configured channel without posting, as JSON (doctor runs it in wcomm-bridge)",
		Example: "wcomm-bridge __channels",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			return func(args []string) error {
				if c.comp.Bridge.Check == nil {
					return fmt.Errorf("__channels runs in %s", bridgeProgram)
				}
				env, err := c.bridgeEnv(0, nil)
				if err != nil {
					return err
				}
				checks, err := c.comp.Bridge.Check(c.ctx, env)
				if err != nil {
					return err
				}
				return c.printJSON(checks)
			}
		},
	})
}

// bridgeEnv gathers what the bridge needs; logf nil writes to stderr.
func (c *cli) bridgeEnv(idle time.Duration, logf func(string, ...any)) (BridgeEnv, error) {
	s, err := c.settings()
	if err != nil {
		return BridgeEnv{}, err
	}
	root, err := filepath.Abs(c.rootDir())
	if err != nil {
		return BridgeEnv{}, err
	}
	if logf == nil {
		logf = func(format string, a ...any) {
			fmt.Fprintf(c.stderr, "%s wcomm bridge: %s\n", time.Now().Format("15:04:05"), messages.SanitizeField(fmt.Sprintf(format, a...)))
		}
	}
	key, unrecorded := helpers.ChannelsKey(s, c.getenv)
	return BridgeEnv{Engine: c.engine(), Settings: s, Root: root, Getenv: c.getenv, IdleExit: idle, Logf: logf,
		Channels: key, Unrecorded: unrecorded, Tmux: c.tmux()}, nil
}

func (c *cli) runBridge(idle time.Duration) error {
	env, err := c.bridgeEnv(idle, nil)
	if err != nil {
		return err
	}
	if note := env.Settings.IgnoredNote(); note != "" {
		fmt.Fprintf(c.stderr, "wcomm bridge: %s\n", note)
	}
	if !env.Settings.Channels.Any() {
		return fmt.Errorf("no channels configured: add a channels block (telegram, slack or webhook) to %s; see 'wcomm help channels'", userConfigName(c.getenv))
	}
	// The one root check of every command: a root that is a symlink or another user's is
	// refused before anything is made inside it.
	if _, err := store.EnsureRoot(env.Root, true); err != nil {
		return err
	}
	unlock, err := lockfile.Lock(env.Root, env.Channels)
	if err != nil {
		return err
	}
	defer unlock()
	return c.comp.Bridge.Run(c.ctx, env)
}

func userConfigName(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "wcomm", "config.yaml")
	}
	return "~/.config/wcomm/config.yaml"
}

// doctorChannels checks each configured channel (token valid, chat reachable) without posting,
// through wcomm-bridge.
func (c *cli) doctorChannels(r *doctorReport) {
	s, err := c.settings()
	if err != nil || !s.Channels.Any() {
		return
	}
	// Settings and tokens first, in wcomm's own words: what a person fixes.
	checks, err := []ChannelCheck(nil), tokens.Check(s.Channels, c.getenv)
	if err == nil {
		checks, err = c.channelChecks()
	}
	if err != nil {
		r.Channels = append(r.Channels, ChannelCheck{Channel: "channels", What: "settings", Detail: err.Error()})
		r.Problems = append(r.Problems, "answer channels cannot be reached: "+err.Error())
		return
	}
	for _, chk := range checks {
		r.Channels = append(r.Channels, chk)
		if !chk.OK {
			r.Problems = append(r.Problems, fmt.Sprintf("%s %s: %s", chk.Channel, chk.What, chk.Detail))
		}
	}
	root, _ := filepath.Abs(c.rootDir())
	key, _ := helpers.ChannelsKey(s, c.getenv)
	state := "no bridge runs for the channels that apply here (an ask starts one)"
	if lockfile.Running(root, key) {
		state = fmt.Sprintf("process %d runs the bridge of the channels that apply here (%s)", lockfile.PID(root, key), key)
	}
	others := 0
	for _, k := range lockfile.Keys(root) {
		if k != key && lockfile.Running(root, k) {
			others++
		}
	}
	if others > 0 {
		state += fmt.Sprintf("; %d more for other folders' channels", others)
	}
	r.Channels = append(r.Channels, ChannelCheck{Channel: "bridge", What: "process", OK: true, Detail: state})
}

func (c *cli) channelChecks() ([]ChannelCheck, error) {
	if c.comp.Bridge.Check != nil {
		env, err := c.bridgeEnv(0, nil)
		if err != nil {
			return nil, err
		}
		return c.comp.Bridge.Check(c.ctx, env)
	}
	path, err := findProgram(bridgeProgram, "the channels' check")
	if err != nil {
		return nil, err
	}
	argv, err := c.companionArgv(path, "__channels")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(c.ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		// The check's own words, without the hidden command's name that Run puts before them:
		// "wcomm-bridge: wcomm __channels: ..." named internals the user never typed.
		line := bytes.TrimPrefix([]byte(firstLine(errb.String(), err)), []byte("wcomm __channels: "))
		return nil, fmt.Errorf("%s", messages.SanitizeField(string(line)))
	}
	var checks []ChannelCheck
	if err := json.Unmarshal(out.Bytes(), &checks); err != nil {
		return nil, fmt.Errorf("%s printed no checks: %w", bridgeProgram, err)
	}
	return checks, nil
}

func firstLine(s string, err error) string {
	for _, l := range bytes.Split([]byte(s), []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 {
			return string(t)
		}
	}
	return err.Error()
}

// printChannels prints doctor's channel lines.
func printChannels(w io.Writer, checks []ChannelCheck) {
	for _, chk := range checks {
		mark := "ok"
		if !chk.OK {
			mark = "FAILED"
		}
		fmt.Fprintf(w, "channel:      %s %s: %s: %s\n", chk.Channel, chk.What, mark, messages.SanitizeField(chk.Detail))
	}
}
