package tmuxcomm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/shlex"
	"go.yaml.in/yaml/v3"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
)

// The settings file: .wcomm.yaml in the working folder, else $XDG_CONFIG_HOME/wcomm/config.yaml
// (~/.config/wcomm/config.yaml without XDG_CONFIG_HOME). Only the first one found is read; the
// environment overrides it and flags override both.
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
//	actions:                         # what an approval may run (see actions.go)
//	  publish:
//	    run: [make, docs]            # argv, never a shell string
//	    targets: [docs]              # files or folders whose content is fingerprinted
//	    dir: .                       # where it runs; default the settings file's folder
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
type Settings struct {
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
	// OnQuestion is the argv of the question hook (shlex-split, run without a shell); nil: none.
	OnQuestion        []string      `json:"on_question,omitempty"`
	OnQuestionTimeout time.Duration `json:"on_question_timeout"`
	// Profiles are the agent profiles with the file's agent_profiles applied (nil: the embedded ones).
	Profiles *paneops.ProfileSet `json:"-"`
	// Actions are the registered actions by name, their folders resolved (nil: none).
	Actions map[string]messages.ActionDef `json:"actions,omitempty"`
	// Source is the settings file read, "" when none was found.
	Source string `json:"source,omitempty"`
	// Hosts are the declared remote hosts by name (hosts.go); nil: none.
	Hosts map[string]HostDef `json:"hosts,omitempty"`
	// Ignored names what an untrusted project file declared and was not applied ("on_question",
	// "actions publish, lint", "agent_profiles"); empty when nothing was ignored.
	Ignored []string `json:"ignored,omitempty"`
}

// IgnoredNote says what was ignored and how to trust it; "" when nothing was.
func (s Settings) IgnoredNote() string {
	if len(s.Ignored) == 0 {
		return ""
	}
	return fmt.Sprintf("%s is not trusted: wcomm ignores its %s; review it and run 'wcomm trust %s' to trust its exact content (any change needs a new trust)",
		s.Source, strings.Join(s.Ignored, " and its "), s.Source)
}

// DefaultSettings are the settings without a file or environment.
func DefaultSettings() Settings {
	return Settings{
		RelayEnabled:      true,
		QuestionTimeout:   DefaultQuestionTimeout,
		AutoAnswer:        true,
		MaxQuestions:      DefaultMaxQuestions,
		EnterDelay:        DefaultEnterDelay,
		MailTTL:           DefaultMailTTL,
		OnQuestionTimeout: DefaultOnQuestionTimeout,
	}
}

// configFile is the YAML shape of the settings file; pointers tell "absent" from zero.
type configFile struct {
	QuestionRelay     relayFile     `yaml:"question_relay"`
	EnterDelay        *yamlDuration `yaml:"enter_delay"`
	Mailbox           mailboxFile   `yaml:"mailbox"`
	OnQuestion        *string       `yaml:"on_question"`
	OnQuestionTimeout *yamlDuration `yaml:"on_question_timeout"`
	// AgentProfiles override or add delivery profiles (paneops/profiles.json's fields).
	AgentProfiles []map[string]any      `yaml:"agent_profiles"`
	Actions       map[string]actionFile `yaml:"actions"`
	Hosts         map[string]hostFile   `yaml:"hosts"`
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

// yamlDuration reads "300ms", "2m" or a number of seconds.
type yamlDuration struct{ d time.Duration }

func (y *yamlDuration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration such as 300ms or a number of seconds", n.Line)
	}
	d, err := ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %v", n.Line, err)
	}
	y.d = d
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

// LoadSettings returns the defaults, overridden by the settings file that applies in dir (see
// FindConfig), overridden by the environment: WCOMM_QUESTION_RELAY (on/off), WCOMM_QUESTION_TIMEOUT,
// WCOMM_AUTO_ANSWER (true/false), WCOMM_MAX_QUESTIONS, WCOMM_ENTER_DELAY, WCOMM_MAIL_TTL,
// WCOMM_NO_QUEUE (true/false), WCOMM_ON_QUESTION. A file
// or variable that does not parse is an error naming it (file:line for the file).
func LoadSettings(dir string, getenv func(string) string) (Settings, error) {
	s := DefaultSettings()
	if path := FindConfig(dir, getenv); path != "" {
		if err := s.applyFile(path, getenv); err != nil {
			return DefaultSettings(), err
		}
		s.Source = path
	}
	if err := s.applyEnv(getenv); err != nil {
		return DefaultSettings(), err
	}
	return s, nil
}

// yamlLineRe finds yaml.v3's "line N: message" parts.
var (
	yamlLineRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+): (.*)`) })
	yamlTypeRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(` in type [\w.]+`) })
)

// LoadSettingsFile returns the defaults overridden by the settings file at path (as LoadSettings,
// without the environment): the dispatcher reads the file that registered an action.
func LoadSettingsFile(path string, getenv func(string) string) (Settings, error) {
	s := DefaultSettings()
	if err := s.applyFile(path, getenv); err != nil {
		return DefaultSettings(), err
	}
	s.Source = path
	return s, nil
}

// applyFile applies the settings file at path; the commands it names apply only when it is the
// user's own file or trusted as it is now.
func (s *Settings) applyFile(path string, getenv func(string) string) error {
	data, err := readConfig(path)
	if err != nil {
		return err
	}
	trusted := isUserConfig(path, getenv)
	if !trusted {
		list, err := readTrustList(getenv)
		if err != nil {
			return err
		}
		abs, _ := filepath.Abs(path)
		trusted = list.Trusts(abs, messages.ContentSHA256(data))
	}
	return s.applyData(path, data, trusted)
}

func (s *Settings) applyData(path string, data []byte, trusted bool) error {
	var c configFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	// Unknown keys are errors: a misspelt "timeout_secs" silently ignored would be worse.
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return configError(path, err)
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
		if err := checkEnterDelay(c.EnterDelay.d); err != nil {
			return fmt.Errorf("%s: enter_delay: %w", path, err)
		}
		if trusted {
			s.EnterDelay = c.EnterDelay.d
		} else {
			s.Ignored = append(s.Ignored, "enter_delay")
		}
	}
	if c.Mailbox.TTL != nil {
		if c.Mailbox.TTL.d <= 0 {
			return fmt.Errorf("%s: mailbox.ttl must be more than 0 (such as 6h)", path)
		}
		s.MailTTL = c.Mailbox.TTL.d
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
			s.Actions = actions
		} else {
			s.Ignored = append(s.Ignored, "actions "+strings.Join(sortedKeys(actions), ", "))
		}
	}
	if len(c.Hosts) > 0 {
		hosts, err := resolveHosts(path, c.Hosts)
		if err != nil {
			return err
		}
		if trusted {
			s.Hosts = hosts
		} else {
			s.Ignored = append(s.Ignored, "hosts "+strings.Join(sortedKeys(hosts), ", "))
		}
	}
	if c.AgentProfiles != nil {
		overrides, err := json.Marshal(map[string]any{"profiles": c.AgentProfiles})
		if err != nil {
			return fmt.Errorf("%s: agent_profiles: %w", path, err)
		}
		set, err := paneops.LoadProfiles(overrides)
		if err != nil {
			return fmt.Errorf("%s: agent_profiles: %w", path, err)
		}
		if trusted {
			s.Profiles = set
		} else {
			s.Ignored = append(s.Ignored, "agent_profiles")
		}
	}
	if c.OnQuestionTimeout != nil {
		if c.OnQuestionTimeout.d <= 0 {
			return fmt.Errorf("%s: on_question_timeout must be more than 0", path)
		}
		s.OnQuestionTimeout = c.OnQuestionTimeout.d
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// userConfigDir is the user's own wcomm config folder: $XDG_CONFIG_HOME/wcomm, else
// ~/.config/wcomm; "" without either.
func userConfigDir(getenv func(string) string) string {
	base := getenv("XDG_CONFIG_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "wcomm")
}

// isUserConfig reports whether path is the user's own config file, trusted as it is.
func isUserConfig(path string, getenv func(string) string) bool {
	dir := userConfigDir(getenv)
	if dir == "" {
		return false
	}
	a, err1 := filepath.Abs(path)
	b, err2 := filepath.Abs(filepath.Join(dir, "config.yaml"))
	return err1 == nil && err2 == nil && a == b
}

// TrustListPath is where the user's trust list lives: trusted.json in the user's config folder.
func TrustListPath(getenv func(string) string) string {
	dir := userConfigDir(getenv)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "trusted.json")
}

// readTrustList reads the user's trust list; none is an empty one.
func readTrustList(getenv func(string) string) (messages.TrustList, error) {
	path := TrustListPath(getenv)
	if path == "" {
		return messages.TrustList{}, nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return messages.TrustList{}, nil
	}
	data, err := readOwned("trust list", path)
	if err != nil {
		return messages.TrustList{}, err
	}
	l, err := messages.ParseTrustList(data)
	if err != nil {
		return messages.TrustList{}, fmt.Errorf("%s: %w; fix or remove it and trust your project files again", path, err)
	}
	return l, nil
}

// TrustConfig trusts the settings file at path as its content is now: its on_question and
// actions apply until the content changes. A file that does not load is not trusted. It returns
// the file's absolute path and the sha256 trusted.
func TrustConfig(path string, getenv func(string) string, now time.Time) (string, string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", err
	}
	data, err := readConfig(abs)
	if err != nil {
		return "", "", err
	}
	scratch := DefaultSettings()
	if err := scratch.applyData(abs, data, true); err != nil {
		return "", "", fmt.Errorf("not trusted: %w", err)
	}
	listPath := TrustListPath(getenv)
	if listPath == "" {
		return "", "", fmt.Errorf("no config folder to keep the trust list in: set HOME or XDG_CONFIG_HOME")
	}
	list, err := readTrustList(getenv)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(filepath.Dir(listPath), dirMode); err != nil {
		return "", "", fmt.Errorf("create %s: %w", filepath.Dir(listPath), err)
	}
	sum := messages.ContentSHA256(data)
	if err := writeAtomic(listPath, messages.FormatTrustList(list.With(abs, sum, now))); err != nil {
		return "", "", err
	}
	return abs, sum, nil
}

// configError turns yaml.v3's messages into "file:line: what is wrong" lines.
func configError(path string, err error) error {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		// yaml.v3 names Go types; the user wrote YAML.
		l = yamlTypeRe().ReplaceAllString(l, "")
		l = strings.ReplaceAll(l, "!!", "")
		if m := yamlLineRe().FindStringSubmatch(l); m != nil {
			parts = append(parts, path+":"+m[1]+": "+strings.TrimPrefix(m[2], "line "+m[1]+": "))
			continue
		}
		parts = append(parts, path+": "+l)
	}
	return fmt.Errorf("%s", strings.Join(parts, "; "))
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

func (s *Settings) applyEnv(getenv func(string) string) error {
	if v := getenv("WCOMM_QUESTION_RELAY"); v != "" {
		b, err := parseBool(v)
		if err != nil {
			return fmt.Errorf("WCOMM_QUESTION_RELAY: %w", err)
		}
		s.RelayEnabled = b
	}
	if v := getenv("WCOMM_QUESTION_TIMEOUT"); v != "" {
		d, err := ParseDuration(v)
		if err != nil {
			return fmt.Errorf("WCOMM_QUESTION_TIMEOUT: %w", err)
		}
		s.QuestionTimeout = d
	}
	if v := getenv("WCOMM_AUTO_ANSWER"); v != "" {
		b, err := parseBool(v)
		if err != nil {
			return fmt.Errorf("WCOMM_AUTO_ANSWER: %w", err)
		}
		s.AutoAnswer = b
	}
	if v := getenv("WCOMM_MAX_QUESTIONS"); v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return fmt.Errorf("WCOMM_MAX_QUESTIONS: %q is not a whole number of 1 or more", v)
		}
		s.MaxQuestions = n
	}
	if v := getenv("WCOMM_ENTER_DELAY"); v != "" {
		d, err := ParseDuration(v)
		if err == nil {
			err = checkEnterDelay(d)
		}
		if err != nil {
			return fmt.Errorf("WCOMM_ENTER_DELAY: %w", err)
		}
		s.EnterDelay = d
	}
	if v := getenv("WCOMM_MAIL_TTL"); v != "" {
		d, err := ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("WCOMM_MAIL_TTL: %q is not a duration of more than 0, such as 6h", v)
		}
		s.MailTTL = d
	}
	if v := getenv("WCOMM_NO_QUEUE"); v != "" {
		b, err := parseBool(v)
		if err != nil {
			return fmt.Errorf("WCOMM_NO_QUEUE: %w", err)
		}
		s.NoQueue = b
	}
	if v := getenv("WCOMM_ON_QUESTION"); v != "" {
		argv, err := splitCommand(v)
		if err != nil {
			return fmt.Errorf("WCOMM_ON_QUESTION: %w", err)
		}
		s.OnQuestion = argv
	}
	return nil
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not on/off, true/false or 1/0", v)
}
