package tmuxcomm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// The front door hands its StartBridge to the engine only when channels are configured, so both
// faces start a bridge for an ask and neither does without channels.
func TestDoorStartBridgeOnlyWithChannels(t *testing.T) {
	xdg := t.TempDir()
	env := cfgEnv(map[string]string{"XDG_CONFIG_HOME": xdg})
	d := &Door{Root: t.TempDir(), Getenv: env, Dir: t.TempDir(), StartBridge: func() error { return nil }}
	e, _, err := d.Engine()
	require.NoError(t, err)
	assert.Nil(t, e.StartBridge, "no channels: no bridge to start")

	writeCfg(t, filepath.Join(xdg, "wcomm", "config.yaml"), "channels:\n  webhook:\n    url: http://127.0.0.1:1/q\n")
	e, _, err = d.Engine()
	require.NoError(t, err)
	assert.NotNil(t, e.StartBridge, "channels configured: the door's StartBridge")
}

// An ask and a wait call StartBridge before they wait; its failure is a warning, and the question
// still reaches the orchestrator and is answered.
func TestQuestionAskStartsBridge(t *testing.T) {
	_, orch, worker, _ := qPair(t)
	calls := 0
	worker.StartBridge = func() error { calls++; return errors.New("no wcomm-bridge") }
	done := qAskAsync(worker, questions.AskOptions{Questions: []messages.Question{qQuestion("bcrypt or argon2?")}, Wait: true, Timeout: 10 * time.Second, MaxQuestions: 3})
	st := qWaitQuestion(t, orch, 1)
	_, err := orch.Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: "1"})
	require.NoError(t, err)
	out := <-done
	require.NoError(t, out.err)
	assert.Equal(t, 1, calls)
	require.Len(t, out.res.Warnings, 1)
	assert.Contains(t, out.res.Warnings[0], "could not start the bridge to your answer channels (no wcomm-bridge); run 'wcomm bridge'")

	// A wait for a question already decided starts nothing; one still pending does.
	res, err := worker.WaitQuestions(context.Background(), questions.WaitOptions{IDs: []string{st.ID}})
	require.NoError(t, err)
	assert.Empty(t, res.Warnings)
	assert.Equal(t, 1, calls)
	worker.StartBridge = func() error { calls++; return nil }
	pend, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{qQuestion("tabs or spaces?")}, MaxQuestions: 3})
	require.NoError(t, err)
	assert.Equal(t, 2, calls)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, _ = worker.WaitQuestions(ctx, questions.WaitOptions{IDs: []string{pend.Questions[0].ID}})
	assert.Equal(t, 3, calls)
}

func cfgEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func writeCfg(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
}
