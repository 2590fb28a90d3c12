package settings

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func cfgEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func writeCfg(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
}

func TestConfigSources(t *testing.T) {
	work, xdg, home := t.TempDir(), t.TempDir(), t.TempDir()
	local := filepath.Join(work, ConfigFileName)
	xdgFile := filepath.Join(xdg, "wcomm", "config.yaml")
	homeFile := filepath.Join(home, ".config", "wcomm", "config.yaml")
	env := map[string]string{"HOME": home}

	s, err := Load(work, cfgEnv(env))
	require.NoError(t, err)
	assert.Equal(t, Defaults(), s, "no file: the defaults")
	assert.Equal(t, 180*time.Second, s.QuestionTimeout)
	assert.True(t, s.AutoAnswer)
	assert.Equal(t, 3, s.MaxQuestions)

	writeCfg(t, homeFile, "question_relay:\n  max_questions_per_worker: 5\n")
	s, err = Load(work, cfgEnv(env))
	require.NoError(t, err)
	assert.Equal(t, homeFile, s.Source)
	assert.Equal(t, 5, s.MaxQuestions)

	env["XDG_CONFIG_HOME"] = xdg
	writeCfg(t, xdgFile, "question_relay:\n  max_questions_per_worker: 6\n")
	s, err = Load(work, cfgEnv(env))
	require.NoError(t, err)
	assert.Equal(t, xdgFile, s.Source, "XDG_CONFIG_HOME comes before ~/.config")
	assert.Equal(t, 6, s.MaxQuestions)

	writeCfg(t, local, "enter_delay: 50ms\n")
	s, err = Load(work, cfgEnv(env))
	require.NoError(t, err)
	assert.Equal(t, local, s.Source, "the working folder's file is the most specific")
	assert.Equal(t, 6, s.MaxQuestions, "a key the project file leaves out keeps the user's value")
	assert.Equal(t, DefaultEnterDelay, s.EnterDelay, "an untrusted project file does not change how panes are typed into")
	assert.Equal(t, []string{"enter_delay"}, s.Ignored)
}

func TestConfigFileAndEnv(t *testing.T) {
	tests := []struct {
		Name string
		File string
		Env  map[string]string
		Want func(s *Values)
	}{
		{"the question_relay block other tools write", `question_relay:
  enabled: true
  timeout_seconds: 180
  poll_interval_seconds: 15
  auto_answer_on_timeout: true
  max_questions_per_worker: 3
`, nil, func(s *Values) {}},
		{"everything", `question_relay:
  enabled: false
  timeout_seconds: 0
  auto_answer_on_timeout: false
  max_questions_per_worker: 1
enter_delay: 500ms
on_question: "notify-send 'wcomm question' --urgency=low"
on_question_timeout: 3s
`, nil, func(s *Values) {
			s.RelayEnabled, s.QuestionTimeout, s.AutoAnswer, s.MaxQuestions = false, 0, false, 1
			s.EnterDelay = 500 * time.Millisecond
			s.OnQuestion = []string{"notify-send", "wcomm question", "--urgency=low"}
			s.OnQuestionTimeout = 3 * time.Second
		}},
		{"env overrides the file", "question_relay:\n  timeout_seconds: 30\nenter_delay: 1s\non_question: a b\n", map[string]string{
			"WCOMM_QUESTION_TIMEOUT": "2m", "WCOMM_AUTO_ANSWER": "off", "WCOMM_MAX_QUESTIONS": "7",
			"WCOMM_ENTER_DELAY": "10ms", "WCOMM_QUESTION_RELAY": "0", "WCOMM_ON_QUESTION": `tee "/x y"`,
		}, func(s *Values) {
			s.QuestionTimeout, s.AutoAnswer, s.MaxQuestions, s.EnterDelay, s.RelayEnabled = 2*time.Minute, false, 7, 10*time.Millisecond, false
			s.OnQuestion = []string{"tee", "/x y"}
		}},
		{"empty file", "", nil, func(s *Values) {}},
		{"mailbox", "mailbox:\n  ttl: 90m\n  no_queue: true\n", nil, func(s *Values) { s.MailTTL, s.NoQueue = 90*time.Minute, true }},
		{"web port", "web:\n  port: 8765\n", nil, func(s *Values) { s.WebPort = 8765 }},
		{"mailbox from the environment", "mailbox:\n  ttl: 90m\n", map[string]string{"WCOMM_MAIL_TTL": "2h", "WCOMM_NO_QUEUE": "1"},
			func(s *Values) { s.MailTTL, s.NoQueue = 2*time.Hour, true }},
		{"seconds as a fraction", "question_relay:\n  timeout_seconds: 1.5\n", nil, func(s *Values) { s.QuestionTimeout = 1500 * time.Millisecond }},
	}
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ConfigFileName)
			writeCfg(t, path, tt.File)
			env := map[string]string{"HOME": t.TempDir()}
			for k, v := range tt.Env {
				env[k] = v
			}
			// Trusted, so that its on_question applies (TestConfigTrust tests the rule).
			_, _, err := TrustConfig(path, cfgEnv(env), time.Now())
			require.NoError(t, err)
			got, err := Load(dir, cfgEnv(env))
			require.NoError(t, err)
			want := Defaults()
			want.Source = path
			tt.Want(&want)
			assert.Equal(t, want, got)
		})
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		Name string
		File string
		Mode os.FileMode
		Env  map[string]string
		Want string
	}{
		{"unknown key", "question_relay:\n  enabled: true\n  timeout_secs: 10\n", 0o600, nil, ".wcomm.yaml:3: field timeout_secs not found"},
		{"misspelt key", "question_relay:\n  enabled: true\n  timout_seconds: 10\n", 0o600, nil, ".wcomm.yaml:3: field timout_seconds not found; did you mean timeout_seconds?"},
		{"misspelt top key", "enter_dely: 1s\n", 0o600, nil, ".wcomm.yaml:1: field enter_dely not found; did you mean enter_delay?"},
		{"misspelt channel key", "channels: {telegram: {tokn_file: t}}\n", 0o600, nil, ".wcomm.yaml:1: field tokn_file not found; did you mean token_file?"},
		{"misspelt key in a flow mapping", "enter_delay: 1s\nquestion_relay: {enabled: true, timout_seconds: 5}\n", 0o600, nil,
			".wcomm.yaml:2: field timout_seconds not found; did you mean timeout_seconds?"},
		// yaml.v3 names these at the flow mapping's first line less one, or at no line.
		{"flow mapping left open", "enter_delay: 1s\nquestion_relay: {enabled: true,\n  timeout_seconds: 5\nmailbox: {ttl: 1h}\n", 0o600, nil,
			".wcomm.yaml:4: did not find expected ',' or '}'"},
		{"flow mapping without a comma", "question_relay: {enabled: true timeout_seconds: 5}\n", 0o600, nil,
			".wcomm.yaml:1: did not find expected ',' or '}'"},
		{"flow mapping closed twice", "question_relay: {enabled: true}}\nenter_delay: 1s\n", 0o600, nil, ".wcomm.yaml:1: did not find expected key"},
		{"block mapping indented wrong", "question_relay: {enabled: true}\n  enter_delay: 1s\n", 0o600, nil, ".wcomm.yaml:2: did not find expected key"},
		{"bare enter delay", "enter_delay: 300\n", 0o600, nil, ".wcomm.yaml:1: 300 has no unit: write one, such as 300ms"},
		{"bare ttl", "mailbox:\n  ttl: 6\n", 0o600, nil, ".wcomm.yaml:2: 6 has no unit"},
		{"wrong type", "question_relay:\n  max_questions_per_worker: many\n", 0o600, nil, ".wcomm.yaml:2: cannot unmarshal"},
		{"bad yaml", "question_relay: [\n", 0o600, nil, ".wcomm.yaml"},
		{"negative timeout", "question_relay:\n  timeout_seconds: -1\n", 0o600, nil, "timeout_seconds is -1"},
		{"zero cap", "question_relay:\n  max_questions_per_worker: 0\n", 0o600, nil, "set enabled: false to ask nothing"},
		{"bad enter delay", "enter_delay: soon\n", 0o600, nil, ".wcomm.yaml:1: invalid duration \"soon\""},
		{"long enter delay", "enter_delay: 1m\n", 0o600, nil, "longer than 10s"},
		{"unbalanced quote", "on_question: \"notify-send oops\n", 0o600, nil, ".wcomm.yaml"},
		{"writable by others", "enter_delay: 1s\n", 0o666, nil, "writable by others"},
		{"bad env timeout", "", 0o600, map[string]string{"WCOMM_QUESTION_TIMEOUT": "-5s"}, "WCOMM_QUESTION_TIMEOUT"},
		{"bad env bool", "", 0o600, map[string]string{"WCOMM_AUTO_ANSWER": "perhaps"}, "WCOMM_AUTO_ANSWER: \"perhaps\""},
		{"bad env cap", "", 0o600, map[string]string{"WCOMM_MAX_QUESTIONS": "0"}, "WCOMM_MAX_QUESTIONS"},
		{"bad env hook", "", 0o600, map[string]string{"WCOMM_ON_QUESTION": `a "b`}, "WCOMM_ON_QUESTION"},
		{"zero ttl", "mailbox:\n  ttl: 0s\n", 0o600, nil, "mailbox.ttl must be more than 0"},
		{"bad env ttl", "", 0o600, map[string]string{"WCOMM_MAIL_TTL": "forever"}, "WCOMM_MAIL_TTL"},
		{"bad env no-queue", "", 0o600, map[string]string{"WCOMM_NO_QUEUE": "maybe"}, "WCOMM_NO_QUEUE"},
	}
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ConfigFileName)
			writeCfg(t, path, tt.File)
			require.NoError(t, os.Chmod(path, tt.Mode))
			env := map[string]string{"HOME": t.TempDir()}
			for k, v := range tt.Env {
				env[k] = v
			}
			got, err := Load(dir, cfgEnv(env))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.Want)
			assert.NotContains(t, err.Error(), "tmuxcomm.", "errors name YAML, not Go types")
			assert.NotContains(t, err.Error(), "in type", "errors name YAML, not Go types")
			assert.Equal(t, Defaults(), got)
		})
	}
}

func TestConfigParseDuration(t *testing.T) {
	tests := []struct {
		In   string
		Want time.Duration
		Ok   bool
	}{
		{"200ms", 200 * time.Millisecond, true},
		{"2m", 2 * time.Minute, true},
		{"30", 30 * time.Second, true},
		{"0.25", 250 * time.Millisecond, true},
		{"0", 0, true},
		{"-1s", 0, false},
		{"-3", 0, false},
		{"soon", 0, false},
		{"NaN", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.In)
		if !tt.Ok {
			assert.Error(t, err, tt.In)
			continue
		}
		require.NoError(t, err, tt.In)
		assert.Equal(t, tt.Want, got, tt.In)
	}
}

func TestConfigAgentProfiles(t *testing.T) {
	dir := t.TempDir()
	env := cfgEnv(map[string]string{"XDG_CONFIG_HOME": t.TempDir()})
	path := filepath.Join(dir, ConfigFileName)
	write := func(body string) {
		require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	}

	write("agent_profiles:\n  - name: codex\n    enter_delay:\n      floor_ms: 750\n  - name: mytui\n    kind: agent\n    detect:\n      names: [mytui]\n")
	s, err := Load(dir, env)
	require.NoError(t, err)
	assert.Nil(t, s.Profiles, "an untrusted project file's profiles do not apply")
	assert.Equal(t, []string{"agent_profiles"}, s.Ignored)
	assert.Contains(t, s.IgnoredNote(), "run 'wcomm trust "+path+"'")

	_, _, err = TrustConfig(path, env, time.Now())
	require.NoError(t, err)
	s, err = Load(dir, env)
	require.NoError(t, err)
	assert.Empty(t, s.Ignored)
	require.NotNil(t, s.Profiles)
	require.NotNil(t, s.Profiles.Lookup("codex"))
	assert.Equal(t, 750, s.Profiles.Lookup("codex").EnterDelay.FloorMS, "an override changes the field it names")
	assert.NotNil(t, s.Profiles.Lookup("claude"), "the other built-in profiles stay")
	assert.NotNil(t, s.Profiles.Lookup("mytui"), "a new name adds a profile")

	write("agent_profiles:\n  - name: codex\n    enter_dealy:\n      floor_ms: 750\n")
	_, err = Load(dir, env)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "agent_profiles")
	assert.Contains(t, err.Error(), "enter_dealy")
}

func TestConfigTrust(t *testing.T) {
	work, xdg := t.TempDir(), t.TempDir()
	env := cfgEnv(map[string]string{"XDG_CONFIG_HOME": xdg})
	local := filepath.Join(work, ConfigFileName)
	body := "on_question: notify-send q\nactions:\n  publish:\n    run: [make, docs]\n    targets: [docs]\n  lint:\n    run: [make, lint]\n    dir: sub\n"
	writeCfg(t, local, body)

	s, err := Load(work, env)
	require.NoError(t, err)
	assert.Nil(t, s.OnQuestion, "an untrusted project file's hook does not apply")
	assert.Nil(t, s.Actions, "nor its actions")
	assert.Equal(t, []string{"on_question", "actions lint, publish"}, s.Ignored)
	assert.Contains(t, s.IgnoredNote(), "run 'wcomm trust "+local+"'")

	abs, sum, err := TrustConfig(local, env, time.Now())
	require.NoError(t, err)
	assert.Equal(t, local, abs)
	assert.Len(t, sum, 64)
	info, err := os.Stat(TrustListPath(env))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	s, err = Load(work, env)
	require.NoError(t, err)
	assert.Empty(t, s.Ignored)
	assert.Equal(t, []string{"notify-send", "q"}, s.OnQuestion)
	require.Contains(t, s.Actions, "publish")
	assert.Equal(t, []string{"make", "docs"}, s.Actions["publish"].Run)
	assert.Equal(t, work, s.Actions["publish"].Dir, "an action runs in the settings file's folder")
	assert.Equal(t, filepath.Join(work, "sub"), s.Actions["lint"].Dir, "dir is relative to the settings file")

	writeCfg(t, local, body+"# one more line\n")
	s, err = Load(work, env)
	require.NoError(t, err)
	assert.Nil(t, s.Actions, "any change needs a new trust")
	assert.Len(t, s.Ignored, 2)

	// The user's own file is trusted as it is.
	require.NoError(t, os.Remove(local))
	writeCfg(t, filepath.Join(xdg, "wcomm", "config.yaml"), body)
	s, err = Load(work, env)
	require.NoError(t, err)
	assert.Empty(t, s.Ignored)
	assert.Contains(t, s.Actions, "publish")

	// A file that does not load is not trusted; a shell string is not an argv.
	writeCfg(t, local, "actions:\n  publish:\n    run: make docs && rm -rf /\n")
	_, _, err = TrustConfig(local, env, time.Now())
	require.Error(t, err)
	assert.Contains(t, err.Error(), ".wcomm.yaml:3: run is a list of words such as [make, docs], never a shell string")
	writeCfg(t, local, "actions:\n  pub lish:\n    run: [x]\n")
	_, err = Load(work, env)
	assert.ErrorContains(t, err, "action name")
}

// Who may answer an agent's permission prompt is widened only by the user's own file: a project
// file's answerers are ignored even once trusted, and the note says trust does not change it.
func TestConfigAnswerersOnlyFromTheUsersFile(t *testing.T) {
	work, xdg := t.TempDir(), t.TempDir()
	env := cfgEnv(map[string]string{"XDG_CONFIG_HOME": xdg})
	local := filepath.Join(work, ConfigFileName)
	writeCfg(t, local, "permissions:\n  answerers: [claude, \"%0\"]\n")
	_, _, err := TrustConfig(local, env, time.Now())
	require.NoError(t, err)
	s, err := Load(work, env)
	require.NoError(t, err)
	assert.Nil(t, s.PermissionAnswerers, "a trusted project file names no answerer")
	assert.Equal(t, []string{"permissions.answerers"}, s.OwnOnly)
	assert.Contains(t, s.IgnoredNote(), "only your own config file may set")

	require.NoError(t, os.Remove(local))
	writeCfg(t, filepath.Join(xdg, "wcomm", "config.yaml"), "permissions:\n  answerers: [claude]\n")
	s, err = Load(work, env)
	require.NoError(t, err)
	assert.Equal(t, []string{"claude"}, s.PermissionAnswerers)
	assert.Empty(t, s.IgnoredNote())
}

func TestConfigWorktree(t *testing.T) {
	work := t.TempDir()
	env := cfgEnv(map[string]string{"XDG_CONFIG_HOME": t.TempDir()})
	local := filepath.Join(work, ConfigFileName)
	writeCfg(t, local, "worktree:\n  folder: ../agents\n  setup:\n    - [npm, ci]\n    - [make, generate]\n")

	s, err := Load(work, env)
	require.NoError(t, err)
	assert.Equal(t, "../agents", s.WorktreeFolder, "a folder runs nothing: it applies untrusted")
	assert.Nil(t, s.WorktreeSetup, "an untrusted project file's setup commands do not run")
	assert.Equal(t, []string{"worktree.setup"}, s.Ignored)

	_, _, err = TrustConfig(local, env, time.Now())
	require.NoError(t, err)
	s, err = Load(work, env)
	require.NoError(t, err)
	assert.Empty(t, s.Ignored)
	assert.Equal(t, [][]string{{"npm", "ci"}, {"make", "generate"}}, s.WorktreeSetup)

	writeCfg(t, local, "worktree:\n  setup:\n    - npm ci\n")
	_, err = Load(work, env)
	require.Error(t, err, "a setup command is a list of words, never a shell line")
}
