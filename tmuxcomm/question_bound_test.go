package tmuxcomm

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// An ask records the key of the channels that applied where it was asked, and that folder; a
// question file without them (an older wcomm's) still loads; one larger than an ask writes is
// not read, and is named among the listing's problems.
func TestQuestionRecordsChannelsAndHugeFilesAreNotRead(t *testing.T) {
	_, orch, worker, _ := qPair(t)
	worker.ChannelsKey, worker.AskedIn = "0123456789abcdef", "/some/project"
	q := qQuestion("bcrypt or argon2?")
	q.Urgency = messages.NonBlocking
	_, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{q}, MaxQuestions: 3})
	require.NoError(t, err)
	st := qWaitQuestion(t, orch, 1)
	assert.Equal(t, "0123456789abcdef", st.Channels)
	assert.Equal(t, "/some/project", st.AskedIn)

	// The same record without the two fields, as an older wcomm wrote it.
	var rec map[string]any
	raw, err := os.ReadFile(st.Path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &rec))
	delete(rec, "channels")
	delete(rec, "asked_in")
	rec["id"], rec["task_id"] = "task-old.q1-abcd", "task-old"
	old, err := json.Marshal(rec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(st.Dir, "task-old.q1.question"), old, 0o600))

	// A valid record of 1 MiB, written by hand.
	rec["id"], rec["task_id"], rec["question"] = "task-huge.q1-abcd", "task-huge", strings.Repeat("h", 1<<20)
	huge, err := json.Marshal(rec)
	require.NoError(t, err)
	hugePath := filepath.Join(st.Dir, "task-huge.q1.question")
	require.NoError(t, os.WriteFile(hugePath, huge, 0o600))

	list, problems, err := orch.Questions(context.Background(), questions.QuestionsOptions{FilesOnly: true})
	require.NoError(t, err)
	var tasks []string
	for _, q := range list {
		tasks = append(tasks, q.Task)
		if q.Task == "task-old" {
			assert.Empty(t, q.Channels, "an older record has no key")
		}
	}
	assert.ElementsMatch(t, []string{"task-3", "task-old"}, tasks)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0], hugePath)
	assert.Contains(t, problems[0], "is unreadable: it is 104")
	assert.Contains(t, problems[0], "more than the 256 KiB a question may be")
}

// The front door gives the engine the key of the channels that apply in its folder: the user's,
// or none at all.
func TestDoorEngineKnowsItsChannelsKey(t *testing.T) {
	work, xdg := t.TempDir(), t.TempDir()
	env := cfgEnv(map[string]string{"XDG_CONFIG_HOME": xdg})
	d := &Door{Root: t.TempDir(), Getenv: env, Dir: work}
	e, _, err := d.Engine()
	require.NoError(t, err)
	assert.Equal(t, messages.NoChannelsKey, e.ChannelsKey)
	assert.Equal(t, work, e.AskedIn)

	writeCfg(t, filepath.Join(xdg, "wcomm", "config.yaml"), "channels:\n  webhook:\n    url: https://ntfy.sh/my-topic\n")
	e, s, err := d.Engine()
	require.NoError(t, err)
	assert.True(t, messages.ValidChannelsKey(e.ChannelsKey))
	assert.Equal(t, s.Channels.Key(work), e.ChannelsKey)
}
