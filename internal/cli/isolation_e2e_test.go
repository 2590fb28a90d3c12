package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/testhome"
)

// plantedHomeEnv marks the run of this package's tests under a planted home (the child of
// TestE2ETestsNeverReadTheUsersSettings), which must not start another.
const plantedHomeEnv = "WCOMM_TEST_PLANTED_HOME"

// plantedTests are tests that ask questions, run an agent's hooks and resolve groups through the
// harness: under a home whose settings name channels and groups, they pass and post nothing.
var plantedTests = []string{
	"TestE2EBroadcast", "TestE2EFacesRules", "TestE2EMailboxQuestionAndAnswer", "TestE2EMailboxHook",
	"TestE2EAskEnvelopeWithoutTask", "TestE2EAskWaitTakesTheEnvironment",
}

// The tests never read the developer's own settings nor reach their channels: this package's tests
// that ask, hook and broadcast run again in a child whose HOME (and no XDG_CONFIG_HOME, as on a
// workstation) holds a config.yaml with a webhook and a Telegram bot (both a local listener that
// counts every request) and groups that would change what @pair and @trio mean. They pass, and
// nothing reaches the listener.
func TestE2ETestsNeverReadTheUsersSettings(t *testing.T) {
	if os.Getenv(plantedHomeEnv) != "" {
		t.Skip("already the run under a planted home")
	}
	t.Parallel()
	requireTmux(t)
	var mu sync.Mutex
	var reached []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reached = append(reached, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok":true,"result":[]}`)
	}))
	t.Cleanup(srv.Close)

	home := t.TempDir()
	cfgDir := filepath.Join(home, ".config", "wcomm")
	require.NoError(t, os.MkdirAll(cfgDir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(cfgDir, "telegram.token"), []byte("123:planted\n"), 0o600))
	cfg := fmt.Sprintf(`channels:
  telegram:
    api_url: %s
    token_file: ~/.config/wcomm/telegram.token
    chat_id: 42
    allowed_users: [777]
  webhook:
    url: %s/hook
groups:
  pair: ["%%0"]
  trio: ["%%0", "%%1", "%%2"]
`, srv.URL, srv.URL)
	require.NoError(t, os.WriteFile(filepath.Join(cfgDir, "config.yaml"), []byte(cfg), 0o600))

	// The child's environment is this one's as a developer's shell has it: HOME is the planted
	// home, no XDG folder is set; Go's folders stay the real ones, so that it builds from the cache.
	env := []string{"HOME=" + home, plantedHomeEnv + "=1"}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || strings.HasPrefix(k, "XDG_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, testhome.GoEnv()...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^("+strings.Join(plantedTests, "|")+")$",
		"-test.count=1", "-test.parallel=4", "-test.v")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("the tests under the planted home:\n%s", tail(string(out), 80))
	}
	assert.NoError(t, err, "the tests pass whatever the user's settings say")
	for _, name := range plantedTests {
		assert.True(t, strings.Contains(string(out), "--- PASS: "+name+" "), "%s ran and passed", name)
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, reached, "no request reaches the user's webhook or Telegram bot")
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
