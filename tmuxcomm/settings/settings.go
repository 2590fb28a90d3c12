package settings

import (
	"fmt"
	"strings"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/profile"
)

// The settings files: the user's own, $XDG_CONFIG_HOME/wcomm/config.yaml (~/.config/wcomm/config.yaml
// without XDG_CONFIG_HOME), then .wcomm.yaml in the working folder, key by key over it (see Load);
// the environment overrides both and flags override all.
//
//	question_relay:
//	  enabled: true                  # false: ask answers at once "decide yourself"
//	  timeout_seconds: 180           # how long a blocking ask waits; 0 = no limit
//	  auto_answer_on_timeout: true   # on timeout take the first option (DECIDED_BY auto-timeout)
//	  max_questions_per_worker: 3    # per worker pane per task; more get DECIDED_BY cap-exceeded
//	  poll_interval_seconds: 15      # accepted for seed compatibility; unused (waits use file events)
//	enter_delay: 200ms               # pause between a paste and its Enter
//	mailbox:
//	  ttl: 6h                        # how long a message waits for a pane that is not ready
//	  no_queue: false                # true: fail fast instead of queuing (scripts)
//	on_question: notify-send wcomm   # run for every new question, the question's JSON on stdin
//	on_question_timeout: 10s         # bound of one on_question run
//	hosts:                           # remote hosts, reached through OpenSSH (see hosts.go)
//	  gpu1:
//	    via: [ssh, gpu1]             # argv prefix that runs a command there, stdin/stdout carried
//	    wcomm: /usr/local/bin/wcomm  # the binary there (default wcomm)
//	actions:                         # what an approval may run (wcomm help actions)
//	  publish:
//	    run: [make, docs]            # argv, never a shell string
//	    targets: [docs]              # files or folders whose content is fingerprinted
//	    dir: .                       # where it runs; default the settings file's folder
//	loops:                           # requests agents send each other (loops.go)
//	  rate: 20/10m                   # chained requests one pane may send another per window
//	  chain_depth: 10                # how deep a chain of requests sent while handling one may go
//	  inbound:                       # per source: accept (within the caps), hold or refuse
//	    - {from: "relayed:*", policy: hold}
//	groups:                          # targets a send reaches at once: --to @reviewers
//	  reviewers: [codex, "%3", "gpu1:claude"]
//	channels:                        # answer channels, run by 'wcomm bridge' (internal/bridge)
//	  telegram: {token_file: ..., chat_id: -100..., allowed_users: [777]}
//	  slack: {bot_token_file: ..., app_token_file: ..., channel: C0123456, allowed_users: [U0123456]}
//	  webhook: {url: https://ntfy.sh/my-topic}
//
// A project's .wcomm.yaml comes with the repository someone cloned, so what it says about running
// commands (on_question, actions) and about how panes are read and typed into (agent_profiles,
// enter_delay, mailbox.no_queue) applies only once the user has trusted that file's exact content
// (TrustConfig): a hash kept in the user's own config folder, as direnv's allow keeps one. A
// profile decides whether a pane's text is pasted and Enter pressed, so an untrusted one could make
// a shell run a request's lines. The user's own config file is trusted as it is.

// ConfigFileName is the settings file looked for in the working folder.
const ConfigFileName = ".wcomm.yaml"

// Defaults of the question relay: a blocking ask waits 180 s so an agent's turn never hangs (the
// README says why), and a worker asks at most 3 questions per task.
const (
	DefaultQuestionTimeout   = 180 * time.Second
	DefaultMaxQuestions      = 3
	DefaultOnQuestionTimeout = 10 * time.Second
	// maxConfigSize bounds the settings file: a bigger one is not a settings file.
	maxConfigSize = 1 << 20
)

// Settings are the effective settings of one invocation.
type Values struct {
	RelayEnabled bool `json:"relay_enabled"`
	// QuestionTimeout bounds a blocking ask; 0 waits without limit.
	QuestionTimeout time.Duration `json:"question_timeout"`
	AutoAnswer      bool          `json:"auto_answer_on_timeout"`
	MaxQuestions    int           `json:"max_questions_per_worker"`
	EnterDelay      time.Duration `json:"enter_delay"`
	// MailTTL bounds how long a message waits in a pane's outbox; NoQueue makes deliveries fail
	// fast instead of queuing.
	MailTTL time.Duration `json:"mail_ttl"`
	NoQueue bool          `json:"no_queue"`
	// WorktreeFolder is where wcomm spawn --worktree makes the agents' worktrees ("": beside the
	// repository, REPO-worktrees/NAME); WorktreeSetup the commands run in a new one (argv each).
	WorktreeFolder string     `json:"worktree_folder,omitempty"`
	WorktreeSetup  [][]string `json:"worktree_setup,omitempty"`
	// OnQuestion is the argv of the question hook (shlex-split, run without a shell); nil: none.
	OnQuestion        []string      `json:"on_question,omitempty"`
	OnQuestionTimeout time.Duration `json:"on_question_timeout"`
	// Profiles are the agent profiles with the file's agent_profiles applied (nil: the embedded ones).
	Profiles *profile.Set `json:"-"`
	// Actions are the registered actions by name, their folders resolved (nil: none).
	Actions map[string]messages.ActionDef `json:"actions,omitempty"`
	// Channels are the chat services questions go to and answers come from (nil: none). A
	// project file's apply only once trusted: they send its questions elsewhere.
	Channels *messages.ChannelsConfig `json:"channels,omitempty"`
	// Source is the most specific settings file read (the project's, else the user's), "" when
	// none was found.
	Source string `json:"source,omitempty"`
	// ActionsFrom is the settings file that registered Actions, "" when none did.
	ActionsFrom string `json:"actions_from,omitempty"`
	// WebPort is the port 'wcomm web' listens on (0: a free one, chosen at each start).
	WebPort int `json:"web_port,omitempty"`
	// Hosts are the declared remote hosts by name (hosts.go); nil: none.
	Hosts map[string]HostDef `json:"hosts,omitempty"`
	// PermissionAnswerers are the agents and panes that may answer an agent's permission prompt
	// besides the person (nil: none); PermissionWait bounds how long its hook waits for an answer.
	PermissionAnswerers []string      `json:"permission_answerers,omitempty"`
	PermissionWait      time.Duration `json:"permission_wait"`
	// NotifyIdle tells the answer channels when an agent ends its turn (its Stop hook), once; a
	// reply is delivered to the agent as the person's message.
	NotifyIdle bool `json:"notify_idle,omitempty"`
	// Groups are the named lists of targets (groups.go): --to @NAME sends to each; nil: none.
	Groups map[string][]string `json:"groups,omitempty"`
	// Loops are the caps and per-source policies of requests agents send each other (loops.go).
	Loops Loops `json:"loops"`
	// Ignored names what an untrusted project file declared and was not applied ("on_question",
	// "actions publish, lint"); empty when nothing was ignored.
	Ignored []string `json:"ignored,omitempty"`
	// OwnOnly names what a project file declared that only the user's own file may set (who
	// may answer an agent's permission prompt), ignored even when the file is trusted.
	OwnOnly []string `json:"own_only,omitempty"`
}

// IgnoredNote says what was ignored and how to trust it; "" when nothing was.
func (s Values) IgnoredNote() string {
	var notes []string
	if len(s.Ignored) > 0 {
		notes = append(notes, fmt.Sprintf("%s is not trusted: wcomm ignores its %s; review it and run 'wcomm trust %s' to trust its exact content (any change needs a new trust)",
			s.Source, strings.Join(s.Ignored, " and its "), s.Source))
	}
	if len(s.OwnOnly) > 0 {
		notes = append(notes, fmt.Sprintf("%s sets %s, which only your own config file may set (trust does not change it): ignored",
			s.Source, strings.Join(s.OwnOnly, " and ")))
	}
	return strings.Join(notes, "; ")
}

// DefaultSettings are the settings without a file or environment.
func Defaults() Values {
	return Values{
		RelayEnabled:      true,
		QuestionTimeout:   DefaultQuestionTimeout,
		AutoAnswer:        true,
		MaxQuestions:      DefaultMaxQuestions,
		EnterDelay:        DefaultEnterDelay,
		MailTTL:           DefaultMailTTL,
		OnQuestionTimeout: DefaultOnQuestionTimeout,
		PermissionWait:    DefaultPermissionWait,
		Loops:             DefaultLoops(),
	}
}

// DefaultPermissionWait is how long a permission hook waits for the person: a little under the
// 600 s Claude Code gives a hook by default (and install-skill sets), so the hook ends on its own
// and says so, instead of being killed.
const DefaultPermissionWait = 590 * time.Second

// DefaultMailTTL is how long a message waits for its pane by default: long enough for an agent's
// longest turns and a person's lunch, short enough that a stale message does not surface days later.
const DefaultMailTTL = 6 * time.Hour

// DefaultEnterDelay is the pause between the paste and its Enter that the command line uses
// when the settings name none.
const DefaultEnterDelay = 200 * time.Millisecond
