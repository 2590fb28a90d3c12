package kit

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHookCommandWords(t *testing.T) {
	assert.Equal(t, "wcomm hook --agent claude", hookCommand(Bin(""), "claude"), "wcomm from PATH by default")
	assert.Equal(t, "/opt/bin/wcomm hook --agent claude", hookCommand("/opt/bin/wcomm", "claude"))
	assert.Equal(t, `'/home/a b/wcomm' hook --agent codex`, hookCommand("/home/a b/wcomm", "codex"))
	assert.Equal(t, `'/x/it'\''s/wcomm' hook --agent gemini`, hookCommand("/x/it's/wcomm", "gemini"))
	for cmd, want := range map[string]bool{
		"wcomm hook --agent claude":               true, // written by an older install: updated in place
		"/opt/bin/wcomm hook --agent claude":      true,
		"'/home/a b/wcomm' hook --agent claude":   true,
		"/usr/local/bin/wcomm-mcp hook --agent x": true,
		"my-stop.sh":                              false,
		"wcomm inbox":                             false,
		"/opt/bin/notwcomm hook --agent claude":   false,
		"unterminated 'quote hook --agent claude": false,
		"/opt/dev/wc hook --agent claude":         true, // the --bin given now
		"/opt/dev/other hook --agent claude":      false,
	} {
		assert.Equal(t, want, isHookCommand(cmd, "/opt/dev/wc"), cmd)
	}
}
