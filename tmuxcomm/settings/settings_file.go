package settings

// How the settings file is found and read: its YAML shape, decoded strictly (an unknown key is an error
// naming file:line), the checks on its values and on who owns it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/shlex"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/profile"
	"go.yaml.in/yaml/v3"
)

// FindConfig returns the settings file that applies in dir, or "" when there is none.
func FindConfig(dir string, getenv func(string) string) string {
	if dir != "" {
		p := filepath.Join(dir, ConfigFileName)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	base := userConfigDir(getenv)
	if base == "" {
		return ""
	}
	p := filepath.Join(base, "config.yaml")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}

// Load returns the settings that apply in dir, in layers: the built-in defaults, then the user's
// own file (~/.config/wcomm/config.yaml), then the project's .wcomm.yaml found in dir, key by key
// (a key the project file leaves out keeps the user's value; hosts merge by name), then the
// environment: WCOMM_QUESTION_RELAY (on/off), WCOMM_QUESTION_TIMEOUT, WCOMM_AUTO_ANSWER
// (true/false), WCOMM_MAX_QUESTIONS, WCOMM_ENTER_DELAY, WCOMM_MAIL_TTL, WCOMM_NO_QUEUE
// (true/false), WCOMM_ON_QUESTION. What an untrusted project file may not set (commands, hosts,
// channels, ...) is ignored and named in Ignored, so the user's own value stands. A file or
// variable that does not parse is an error naming it (file:line for the file).
func Load(dir string, getenv func(string) string) (Values, error) {
	s := Defaults()
	for _, path := range layers(dir, getenv) {
		if err := s.applyFile(path, getenv); err != nil {
			return Defaults(), err
		}
		s.Source = path
	}
	if err := s.applyEnv(getenv); err != nil {
		return Defaults(), err
	}
	return s, nil
}

// layers lists the settings files that apply in dir, the most general first: the user's own
// file, then the project's. A project file that is the user's own file is read once.
func layers(dir string, getenv func(string) string) []string {
	var out []string
	user := ""
	if base := userConfigDir(getenv); base != "" {
		p := filepath.Join(base, "config.yaml")
		if _, err := os.Stat(p); err == nil {
			user = p
			out = append(out, p)
		}
	}
	if dir != "" {
		p := filepath.Join(dir, ConfigFileName)
		if _, err := os.Stat(p); err == nil && !sameFile(p, user) {
			out = append(out, p)
		}
	}
	return out
}

// sameFile reports whether a and b name one file.
func sameFile(a, b string) bool {
	if b == "" {
		return false
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// LoadSettingsFile returns the defaults overridden by the settings file at path (as LoadSettings,
// without the environment): the dispatcher reads the file that registered an action.
func LoadFile(path string, getenv func(string) string) (Values, error) {
	s := Defaults()
	if err := s.applyFile(path, getenv); err != nil {
		return Defaults(), err
	}
	s.Source = path
	if s.ActionsFrom == "" {
		s.ActionsFrom = path
	}
	return s, nil
}

// configFile is the YAML shape of the settings file; pointers tell "absent" from zero.
type configFile struct {
	QuestionRelay     relayFile     `yaml:"question_relay"`
	EnterDelay        *yamlDuration `yaml:"enter_delay"`
	Mailbox           mailboxFile   `yaml:"mailbox"`
	OnQuestion        *string       `yaml:"on_question"`
	OnQuestionTimeout *yamlDuration `yaml:"on_question_timeout"`
	// AgentProfiles override or add delivery profiles (paneops/profile/profiles.json's fields).
	AgentProfiles []map[string]any      `yaml:"agent_profiles"`
	Actions       map[string]actionFile `yaml:"actions"`
	Hosts         map[string]hostFile   `yaml:"hosts"`
	// Channels are the answer channels (internal/bridge); a project file's only once trusted.
	Channels *messages.ChannelsConfig `yaml:"channels"`
	// Permissions are the rules of the agents' permission prompts relayed to the person.
	Permissions permissionsFile `yaml:"permissions"`
	// NotifyIdle tells the answer channels once when an agent ends its turn and waits for its
	// next instruction; a reply to that post is delivered to the agent.
	NotifyIdle *bool `yaml:"notify_idle"`
	// Groups name lists of targets a send reaches at once (--to @NAME).
	Groups map[string][]string `yaml:"groups"`
	// Worktree says where wcomm spawn --worktree makes its worktrees and what runs in a new one.
	Worktree worktreeFile `yaml:"worktree"`
	// Loops caps the requests agents send each other (loops.go); a project file's only once trusted.
	Loops *loopsFile `yaml:"loops"`
	// Web is the web page's block: the port 'wcomm web' listens on (0 or none: a free one).
	Web struct {
		Port *int `yaml:"port"`
	} `yaml:"web"`
}

// worktreeFile is the worktree block: folder (where the agents' worktrees go) and setup (commands,
// each a list of words, run in a new worktree; a project file's only once trusted).
type worktreeFile struct {
	Folder *string    `yaml:"folder"`
	Setup  []argvList `yaml:"setup"`
}

// permissionsFile is the permissions block.
type permissionsFile struct {
	// Answerers are the agents (profile names) and panes (%N) that may answer an agent's
	// permission prompt besides the person; only the user's own file's count.
	Answerers []string `yaml:"answerers"`
	// Wait bounds how long the hook waits for an answer before it leaves the dialog to the
	// terminal.
	Wait *yamlDuration `yaml:"wait"`
}

// mailboxFile is the mailbox block.
type mailboxFile struct {
	TTL     *yamlDuration `yaml:"ttl"`
	NoQueue *bool         `yaml:"no_queue"`
}

// actionFile is one entry of the actions block.
type actionFile struct {
	Run     argvList `yaml:"run"`
	Targets []string `yaml:"targets"`
	Dir     string   `yaml:"dir"`
}

// argvList is a list of words; a single string is refused, so no one mistakes it for a shell line.
type argvList []string

func (a *argvList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("line %d: run is a list of words such as [make, docs], never a shell string", n.Line)
	}
	var words []string
	if err := n.Decode(&words); err != nil {
		return err
	}
	*a = words
	return nil
}

// relayFile is the question_relay block, with the key names other tools' settings files use for it.
type relayFile struct {
	Enabled               *bool    `yaml:"enabled"`
	TimeoutSeconds        *float64 `yaml:"timeout_seconds"`
	PollIntervalSeconds   *float64 `yaml:"poll_interval_seconds"`
	AutoAnswerOnTimeout   *bool    `yaml:"auto_answer_on_timeout"`
	MaxQuestionsPerWorker *int     `yaml:"max_questions_per_worker"`
}

// yamlDuration reads a duration with its unit: "300ms", "2m". A bare number other than 0 is
// refused: enter_delay: 300 meant milliseconds to whoever wrote it, and was read as 300 seconds.
type yamlDuration struct{ D time.Duration }

func (y *yamlDuration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration such as 300ms or 2m", n.Line)
	}
	if secs, err := strconv.ParseFloat(strings.TrimSpace(n.Value), 64); err == nil && secs != 0 {
		return fmt.Errorf("line %d: %s has no unit: write one, such as %sms or %ss", n.Line, n.Value, n.Value, n.Value)
	}
	d, err := ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %v", n.Line, err)
	}
	y.D = d
	return nil
}

// ParseDuration reads "300ms", "2m" or a bare number of seconds ("0.3"); negative is an error.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return 0, fmt.Errorf("negative duration %q", s)
		}
		return d, nil
	}
	secs, err := strconv.ParseFloat(s, 64)
	if err != nil || secs < 0 || math.IsInf(secs, 0) || math.IsNaN(secs) || secs > 1e9 {
		return 0, fmt.Errorf("invalid duration %q (use 300ms, 30s, 2m or a number of seconds)", s)
	}
	return time.Duration(secs * float64(time.Second)), nil
}

// applyFile applies the settings file at path; the commands it names apply only when it is the
// user's own file or trusted as it is now.
func (s *Values) applyFile(path string, getenv func(string) string) error {
	data, err := readConfig(path)
	if err != nil {
		return err
	}
	own := isUserConfig(path, getenv)
	trusted := own
	if !trusted {
		list, err := readTrustList(getenv)
		if err != nil {
			return err
		}
		abs, _ := filepath.Abs(path)
		trusted = list.Trusts(abs, messages.ContentSHA256(data))
	}
	return s.applyData(path, data, trusted, own)
}

// applyData applies a settings file's content: trusted lets it name commands (a project file's
// once the person trusted it), own is the user's own file, the only one that may widen who
// decides an agent's permission prompt.
func (s *Values) applyData(path string, data []byte, trusted, own bool) error {
	var c configFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	// Unknown keys are errors: a misspelt "timeout_secs" silently ignored would be worse.
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return configError(path, data, err)
	}
	r := c.QuestionRelay
	if r.Enabled != nil {
		s.RelayEnabled = *r.Enabled
	}
	if r.TimeoutSeconds != nil {
		v := *r.TimeoutSeconds
		if v < 0 || math.IsNaN(v) || v > 1e9 {
			return fmt.Errorf("%s: question_relay.timeout_seconds is %v; want 0 (no limit) or more", path, v)
		}
		s.QuestionTimeout = time.Duration(v * float64(time.Second))
	}
	if r.AutoAnswerOnTimeout != nil {
		s.AutoAnswer = *r.AutoAnswerOnTimeout
	}
	if r.MaxQuestionsPerWorker != nil {
		if *r.MaxQuestionsPerWorker < 1 {
			return fmt.Errorf("%s: question_relay.max_questions_per_worker is %d; want 1 or more (set enabled: false to ask nothing)", path, *r.MaxQuestionsPerWorker)
		}
		s.MaxQuestions = *r.MaxQuestionsPerWorker
	}
	if c.EnterDelay != nil {
		if err := checkEnterDelay(c.EnterDelay.D); err != nil {
			return fmt.Errorf("%s: enter_delay: %w", path, err)
		}
		if trusted {
			s.EnterDelay = c.EnterDelay.D
		} else {
			s.Ignored = append(s.Ignored, "enter_delay")
		}
	}
	if p := c.Web.Port; p != nil {
		if *p < 0 || *p > 65535 {
			return fmt.Errorf("%s: web.port must be a port number, 0-65535 (0: a free one)", path)
		}
		s.WebPort = *p
	}
	if c.Mailbox.TTL != nil {
		if c.Mailbox.TTL.D <= 0 {
			return fmt.Errorf("%s: mailbox.ttl must be more than 0 (such as 6h)", path)
		}
		s.MailTTL = c.Mailbox.TTL.D
	}
	if c.Mailbox.NoQueue != nil {
		if trusted {
			s.NoQueue = *c.Mailbox.NoQueue
		} else {
			s.Ignored = append(s.Ignored, "mailbox.no_queue")
		}
	}
	if c.OnQuestion != nil {
		argv, err := splitCommand(*c.OnQuestion)
		if err != nil {
			return fmt.Errorf("%s: on_question: %w", path, err)
		}
		if trusted {
			s.OnQuestion = argv
		} else if argv != nil {
			s.Ignored = append(s.Ignored, "on_question")
		}
	}
	if len(c.Actions) > 0 {
		actions, err := resolveActions(path, c.Actions)
		if err != nil {
			return err
		}
		if trusted {
			// One file registers the actions, so an approval can name it (ActionsFrom) and the
			// dispatcher read it again; a project's actions replace the user's whole.
			s.Actions, s.ActionsFrom = actions, path
		} else {
			s.Ignored = append(s.Ignored, "actions "+strings.Join(SortedKeys(actions), ", "))
		}
	}
	if len(c.Hosts) > 0 {
		hosts, err := resolveHosts(path, c.Hosts)
		if err != nil {
			return err
		}
		if trusted {
			merged := make(map[string]HostDef, len(s.Hosts)+len(hosts))
			for name, h := range s.Hosts {
				merged[name] = h
			}
			for name, h := range hosts {
				merged[name] = h
			}
			s.Hosts = merged
		} else {
			s.Ignored = append(s.Ignored, "hosts "+strings.Join(SortedKeys(hosts), ", "))
		}
	}
	if c.Channels != nil {
		if trusted {
			s.Channels = c.Channels
		} else if c.Channels.Any() {
			s.Ignored = append(s.Ignored, "channels")
		}
	}
	if c.Permissions.Answerers != nil {
		for _, a := range c.Permissions.Answerers {
			if strings.TrimSpace(a) == "" {
				return fmt.Errorf("%s: permissions.answerers: an empty name; list agent names (claude) or panes (%%3)", path)
			}
		}
		// Never a project's, even trusted: a project file is one an agent in it can write, and
		// the person's trust of it is asked for commands, not for letting agents decide.
		if own {
			s.PermissionAnswerers = c.Permissions.Answerers
		} else if len(c.Permissions.Answerers) > 0 {
			s.OwnOnly = append(s.OwnOnly, "permissions.answerers")
		}
	}
	if c.NotifyIdle != nil {
		s.NotifyIdle = *c.NotifyIdle
	}
	if c.Groups != nil {
		if err := checkGroups(c.Groups); err != nil {
			return fmt.Errorf("%s: groups: %w", path, err)
		}
		s.applyGroups(c.Groups, trusted)
	}
	if c.Permissions.Wait != nil {
		if c.Permissions.Wait.D <= 0 {
			return fmt.Errorf("%s: permissions.wait must be more than 0 (such as 10m)", path)
		}
		s.PermissionWait = c.Permissions.Wait.D
	}
	if c.AgentProfiles != nil {
		overrides, err := json.Marshal(map[string]any{"profiles": c.AgentProfiles})
		if err != nil {
			return fmt.Errorf("%s: agent_profiles: %w", path, err)
		}
		set, err := profile.Load(overrides)
		if err != nil {
			return fmt.Errorf("%s: agent_profiles: %w", path, err)
		}
		if trusted {
			s.Profiles = set
		} else {
			s.Ignored = append(s.Ignored, "agent_profiles")
		}
	}
	if c.Worktree.Folder != nil {
		s.WorktreeFolder = *c.Worktree.Folder
	}
	if c.Worktree.Setup != nil {
		// The setup commands run in every worktree made: a command, so only from a trusted file.
		if trusted {
			s.WorktreeSetup = nil
			for _, a := range c.Worktree.Setup {
				if len(a) == 0 {
					return fmt.Errorf("%s: worktree.setup: an empty command; give each as a list of words such as [make, deps]", path)
				}
				s.WorktreeSetup = append(s.WorktreeSetup, []string(a))
			}
		} else if len(c.Worktree.Setup) > 0 {
			s.Ignored = append(s.Ignored, "worktree.setup")
		}
	}
	if c.Loops != nil {
		l, err := c.Loops.resolve(s.Loops)
		if err != nil {
			return fmt.Errorf("%s: loops: %w", path, err)
		}
		// A project's caps would let an agent that writes the file raise them: only once trusted.
		if trusted {
			s.Loops = l
		} else {
			s.Ignored = append(s.Ignored, "loops")
		}
	}
	if c.OnQuestionTimeout != nil {
		if c.OnQuestionTimeout.D <= 0 {
			return fmt.Errorf("%s: on_question_timeout must be more than 0", path)
		}
		s.OnQuestionTimeout = c.OnQuestionTimeout.D
	}
	return nil
}

// readConfig reads a settings file that is a regular file of this user, writable by no one else:
// on_question runs a command from it, so a file another user could change must not be read.
func readConfig(path string) ([]byte, error) { return readOwned("settings file", path) }

// readOwned reads a regular file of this user that no one else may write.
func readOwned(what, path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s %s is not a regular file", what, path)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return nil, fmt.Errorf("%s %s is owned by uid %d, not by you (uid %d); it is not read", what, path, sys.Uid, os.Getuid())
	}
	if st.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("%s %s is writable by others (mode %04o); run chmod go-w on it", what, path, st.Mode().Perm())
	}
	if st.Size() > maxConfigSize {
		return nil, fmt.Errorf("%s %s is %d bytes; it should be under %d", what, path, st.Size(), maxConfigSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	return data, nil
}

// resolveActions checks the actions block and resolves each action's folder against the
// settings file's folder.
func resolveActions(path string, in map[string]actionFile) (map[string]messages.ActionDef, error) {
	base, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	out := map[string]messages.ActionDef{}
	for name, a := range in {
		if err := messages.ValidActionName(name); err != nil {
			return nil, fmt.Errorf("%s: actions: %v", path, err)
		}
		if len(a.Run) == 0 || a.Run[0] == "" {
			return nil, fmt.Errorf("%s: actions.%s: run is empty; give the command as a list of words such as [make, docs]", path, name)
		}
		for _, w := range append(append([]string(nil), a.Run...), a.Targets...) {
			if strings.ContainsRune(w, 0) {
				return nil, fmt.Errorf("%s: actions.%s holds a NUL byte", path, name)
			}
		}
		for _, t := range a.Targets {
			if strings.TrimSpace(t) == "" {
				return nil, fmt.Errorf("%s: actions.%s: an empty target", path, name)
			}
		}
		dir := base
		if a.Dir != "" {
			dir = a.Dir
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(base, dir)
			}
		}
		out[name] = messages.ActionDef{Run: a.Run, Targets: a.Targets, Dir: filepath.Clean(dir)}
	}
	return out, nil
}

func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// MaxEnterDelay bounds the pause between paste and Enter, from any source: the pane's lock is
// held for it.
const MaxEnterDelay = 10 * time.Second

func checkEnterDelay(d time.Duration) error {
	if d > MaxEnterDelay {
		return fmt.Errorf("%s is longer than %s", d, MaxEnterDelay)
	}
	return nil
}

// splitCommand splits a hook command line like a shell would split words (quotes and
// backslashes), without running a shell: no variables, globs, pipes or redirections.
func splitCommand(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	argv, err := shlex.Split(s)
	if err != nil {
		return nil, fmt.Errorf("cannot split %q into words: %w", s, err)
	}
	if len(argv) == 0 {
		return nil, nil
	}
	return argv, nil
}
