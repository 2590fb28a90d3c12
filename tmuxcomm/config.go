package tmuxcomm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/shlex"
	"go.yaml.in/yaml/v3"

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
//	on_question: notify-send wcomm   # run for every new question, the question's JSON on stdin
//	on_question_timeout: 10s         # bound of one on_question run

// ConfigFileName is the settings file looked for in the working folder.
const ConfigFileName = ".wcomm.yaml"

// Defaults of the question relay (seed 000's, see the README on the timeout).
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
	// OnQuestion is the argv of the question hook (shlex-split, run without a shell); nil: none.
	OnQuestion        []string      `json:"on_question,omitempty"`
	OnQuestionTimeout time.Duration `json:"on_question_timeout"`
	// Profiles are the agent profiles with the file's agent_profiles applied (nil: the embedded ones).
	Profiles *paneops.ProfileSet `json:"-"`
	// Source is the settings file read, "" when none was found.
	Source string `json:"source,omitempty"`
}

// DefaultSettings are the settings without a file or environment.
func DefaultSettings() Settings {
	return Settings{
		RelayEnabled:      true,
		QuestionTimeout:   DefaultQuestionTimeout,
		AutoAnswer:        true,
		MaxQuestions:      DefaultMaxQuestions,
		EnterDelay:        DefaultEnterDelay,
		OnQuestionTimeout: DefaultOnQuestionTimeout,
	}
}

// configFile is the YAML shape of the settings file; pointers tell "absent" from zero.
type configFile struct {
	QuestionRelay     relayFile     `yaml:"question_relay"`
	EnterDelay        *yamlDuration `yaml:"enter_delay"`
	OnQuestion        *string       `yaml:"on_question"`
	OnQuestionTimeout *yamlDuration `yaml:"on_question_timeout"`
	// AgentProfiles override or add delivery profiles (paneops/profiles.json's fields).
	AgentProfiles []map[string]any `yaml:"agent_profiles"`
}

// relayFile is the question_relay block (seed 000's talisman keys).
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
	base := getenv("XDG_CONFIG_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".config")
	}
	p := filepath.Join(base, "wcomm", "config.yaml")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}

// LoadSettings returns the defaults, overridden by the settings file that applies in dir (see
// FindConfig), overridden by the environment: WCOMM_QUESTION_RELAY (on/off), WCOMM_QUESTION_TIMEOUT,
// WCOMM_AUTO_ANSWER (true/false), WCOMM_MAX_QUESTIONS, WCOMM_ENTER_DELAY, WCOMM_ON_QUESTION. A file
// or variable that does not parse is an error naming it (file:line for the file).
func LoadSettings(dir string, getenv func(string) string) (Settings, error) {
	s := DefaultSettings()
	if path := FindConfig(dir, getenv); path != "" {
		if err := s.applyFile(path); err != nil {
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
	yamlLineRe = regexp.MustCompile(`line (\d+): (.*)`)
	yamlTypeRe = regexp.MustCompile(` in type [\w.]+`)
)

func (s *Settings) applyFile(path string) error {
	data, err := readConfig(path)
	if err != nil {
		return err
	}
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
		s.EnterDelay = c.EnterDelay.d
	}
	if c.OnQuestion != nil {
		argv, err := splitCommand(*c.OnQuestion)
		if err != nil {
			return fmt.Errorf("%s: on_question: %w", path, err)
		}
		s.OnQuestion = argv
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
		s.Profiles = set
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
func readConfig(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("settings file %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("settings file %s is not a regular file", path)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return nil, fmt.Errorf("settings file %s is owned by uid %d, not by you (uid %d); it is not read", path, sys.Uid, os.Getuid())
	}
	if st.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("settings file %s is writable by others (mode %04o); run chmod go-w on it", path, st.Mode().Perm())
	}
	if st.Size() > maxConfigSize {
		return nil, fmt.Errorf("settings file %s is %d bytes; a settings file is under %d", path, st.Size(), maxConfigSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("settings file %s: %w", path, err)
	}
	return data, nil
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
		l = yamlTypeRe.ReplaceAllString(l, "")
		l = strings.ReplaceAll(l, "!!", "")
		if m := yamlLineRe.FindStringSubmatch(l); m != nil {
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
