package profile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProfileDefaultsLoad(t *testing.T) {
	set := Defaults()
	assert.Equal(t, []string{"claude", "codex", "gemini", "opencode", "copilot", "qwen", "aider", "shell", "reader", "generic"}, set.Names())
	assert.Equal(t, set.Names(), BuiltinNames(), "the names a flag's help gives without loading the profiles")
	for _, p := range set.Profiles {
		assert.NotEmpty(t, p.Title, p.Name)
		if p.Kind == KindAgent {
			assert.True(t, p.HasBox(), "%s reads its input box", p.Name)
			assert.True(t, p.BracketedPaste, p.Name)
			assert.NotEmpty(t, p.Verify.WindowsMS, p.Name)
			assert.Positive(t, p.EnterDelay.FloorMS, p.Name)
		}
	}
	assert.Equal(t, 4095, set.Lookup("reader").LineLimit, "the canonical line limit measured on Linux")
	assert.True(t, set.Lookup("shell").HasBox())
	assert.False(t, set.Lookup("generic").HasBox())
}

func TestProfileOverrides(t *testing.T) {
	tests := []struct {
		name      string
		overrides string
		check     func(t *testing.T, s *Set)
		wantErr   string
	}{
		{"none", "", func(t *testing.T, s *Set) {
			assert.Len(t, s.Profiles, 10)
		}, ""},
		{"one field of a known profile", `{"profiles": [{"name": "codex", "enter_delay": {"floor_ms": 700}}]}`,
			func(t *testing.T, s *Set) {
				c := s.Lookup("codex")
				assert.Equal(t, 700, c.EnterDelay.FloorMS)
				assert.Equal(t, 500, c.EnterDelay.PerMBMS, "fields not named keep their value")
				assert.Equal(t, "^› ?", c.Input.Prompt, "nested objects not named keep their value")
				assert.Equal(t, 100, Defaults().Lookup("codex").EnterDelay.FloorMS, "the shared defaults are untouched")
			}, ""},
		{"new agent goes before the catch-alls", `{"profiles": [{"name": "mytui", "title": "My TUI", "detect": {"names": ["mytui"]},
			"enter_delay": {"floor_ms": 10}, "input": {"prompt": "^>> ", "blank_ends": true}}]}`,
			func(t *testing.T, s *Set) {
				assert.Equal(t, []string{"claude", "codex", "gemini", "opencode", "copilot", "qwen", "aider", "mytui", "shell", "reader", "generic"}, s.Names())
				assert.Equal(t, KindAgent, s.Lookup("mytui").Kind)
				assert.True(t, s.Lookup("mytui").HasBox())
			}, ""},
		{"bad regex", `{"profiles": [{"name": "claude", "input": {"busy": ["(unclosed"]}}]}`, nil, `profile "claude": input.busy`},
		{"misspelt field", `{"profiles": [{"name": "claude", "enter_dealy": {"floor_ms": 1}}]}`, nil, "enter_dealy"},
		{"no name", `{"profiles": [{"kind": "agent"}]}`, nil, "entry 1 has no name"},
		{"bad kind", `{"profiles": [{"name": "x", "kind": "robot"}]}`, nil, `kind "robot"`},
		{"negative delay", `{"profiles": [{"name": "gemini", "enter_delay": {"floor_ms": -1}}]}`, nil, "negative"},
		{"negative quiet time", `{"profiles": [{"name": "copilot", "verify": {"quiet_ms": -1}}]}`, nil, "negative"},
		{"negative turn start", `{"profiles": [{"name": "opencode", "verify": {"turn_start_ms": -5}}]}`, nil, "negative"},
		{"readiness fields of a known profile", `{"profiles": [{"name": "codex", "verify": {"quiet_ms": 700, "turn_start_ms": 900}}]}`,
			func(t *testing.T, s *Set) {
				v := s.Lookup("codex").Verify
				assert.Equal(t, 700, v.QuietMS)
				assert.Equal(t, 900, v.TurnStartMS)
				assert.Equal(t, 3000, v.VisibleMS, "fields not named keep their value")
			}, ""},
		{"cursor line without prompt end", `{"profiles": [{"name": "x", "kind": "shell", "input": {"cursor_line": true}}]}`, nil, "prompt_end"},
		{"not JSON", `profiles: []`, nil, "agent profiles"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load([]byte(tt.overrides))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.check(t, s)
		})
	}
}

func TestProfileDelay(t *testing.T) {
	d := DelaySpec{FloorMS: 150, PerMBMS: 500, MaxMS: 1500}
	for _, tt := range []struct {
		size int
		want time.Duration
	}{
		{0, 150 * time.Millisecond},
		{1 << 20, 650 * time.Millisecond},
		{100 << 20, 1500 * time.Millisecond},
	} {
		assert.Equal(t, tt.want, d.For(tt.size), "size %d", tt.size)
	}
	assert.Equal(t, time.Duration(0), DelaySpec{}.For(1<<30))
}

func TestBuiltinProfilePatternsCompile(t *testing.T) {
	// Built-in patterns are compiled on first use, not at load: this is where a bad one is caught.
	set, err := Load(nil)
	require.NoError(t, err)
	for _, p := range set.Profiles {
		assert.NoError(t, (&Profile{Name: p.Name, Kind: p.Kind, Input: p.Input}).compilePatterns(), p.Name)
	}
	// A settings file's pattern is compiled when it is loaded, so a bad one is reported at once.
	_, err = Load([]byte(`{"profiles": [{"name": "claude", "input": {"prompt": "("}}]}`))
	assert.ErrorContains(t, err, "input.prompt")
}
