package questions_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

func TestLookupQuestionsByIDAndItsEnd(t *testing.T) {
	w := newWorld(t)
	d := w.desk("")
	_, err := d.Question(context.Background(), "task-3.q1-abcd")
	assert.ErrorIs(t, err, store.ErrNotFound, "no root yet")
	_, err = d.QuestionID("q1-abcd")
	assert.ErrorIs(t, err, store.ErrNotFound, "no root yet")
	_, err = d.Answer(context.Background(), questions.AnswerOptions{ID: "task-3.q1-abcd", Raw: "A"})
	assert.ErrorIs(t, err, store.ErrNotFound, "no root yet")
	_, err = d.ResolveQuestion(context.Background(), "task-3.q1-abcd", "why")
	assert.ErrorIs(t, err, store.ErrNotFound, "no root yet")
	list, _, err := d.Questions(context.Background(), questions.QuestionsOptions{})
	require.NoError(t, err)
	assert.Empty(t, list)

	x := w.request("%1", "%2")
	res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, MaxQuestions: 3})
	require.NoError(t, err)
	id := res.Questions[0].ID
	tail := id[strings.Index(id, "q1-"):]

	st, err := d.Question(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, questions.QuestionPending, st.State)
	_, err = d.Question(context.Background(), "task-3.q2-abcd")
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = d.Question(context.Background(), "not an id")
	assert.Error(t, err)

	got, err := d.QuestionID(tail)
	require.NoError(t, err)
	assert.Equal(t, id, got)
	got, err = d.QuestionID(id)
	require.NoError(t, err)
	assert.Equal(t, id, got, "a whole id is itself")
	_, err = d.QuestionID("q9-ffff")
	assert.ErrorIs(t, err, store.ErrNotFound)
	var ue *core.UsageError
	require.ErrorAs(t, questions.CheckQuestionRef("../x"), &ue)
	assert.NoError(t, questions.CheckQuestionRef(tail))

	// show takes either kind of id by its end.
	got, err = d.AnyID(tail)
	require.NoError(t, err)
	assert.Equal(t, id, got)
	xtail := x.ID[len(x.ID)-4:]
	got, err = d.AnyID(xtail)
	require.NoError(t, err)
	assert.Equal(t, x.ID, got)
	got, err = d.AnyID(x.ID)
	require.NoError(t, err)
	assert.Equal(t, x.ID, got, "a whole id is itself")
	_, err = newWorld(t).desk("").AnyID(tail)
	assert.ErrorIs(t, err, store.ErrNotFound, "no root yet")
}

// A question file that cannot be read is named by Question, not reported missing.
func TestLookupUnreadableQuestion(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, MaxQuestions: 3})
	require.NoError(t, err)
	st := res.Questions[0]
	require.NoError(t, os.WriteFile(st.Path, []byte("{not json"), 0o600))
	_, err = w.desk("").Question(context.Background(), st.ID)
	require.Error(t, err)
	list, problems, err := w.desk("").Questions(context.Background(), questions.QuestionsOptions{})
	require.NoError(t, err)
	assert.Empty(t, list)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0], st.Path)
}

// A record that names another task or number than its file is not believed: a path built from
// it could lead outside its folder.
func TestLookupRecordMustMatchItsFileName(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("q?"))}, MaxQuestions: 3})
	require.NoError(t, err)
	st := res.Questions[0]
	data, err := os.ReadFile(st.Path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(st.Dir, "task-9.q1.question"), data, 0o600))
	_, err = questions.LoadQuestion(st.Dir, "task-9", 1)
	assert.ErrorContains(t, err, `it says task "task-3"`)
}

func TestLookupRelayOffAnswer(t *testing.T) {
	a := questions.RelayOffAnswer("task-3")
	assert.Equal(t, messages.DecidedByDisabled, a.DecidedBy)
	assert.Equal(t, "task-3", a.Task)
	assert.Contains(t, a.Text, "Make the decision yourself")
}

// An approval's question stores its intent before anyone can answer it, is never decided by a
// timeout whatever auto-answer says, and outlives its asker: its worker pane gone, it is still
// answerable, the intent's own fingerprint deciding later whether the yes still holds.
func TestApprovalQuestion(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	yn := numbered("publish the docs?")
	yn.Type, yn.Options = messages.YesNo, nil
	in := &messages.Intent{Action: "publish", Definition: messages.ActionDef{Run: []string{"true"}, Dir: "/"}, CreatedAt: time.Now().UTC(),
		Git: messages.GitState{Dir: "/", StatusSHA256: messages.ContentSHA256(nil)}}
	in.DefinitionHash = in.Definition.Hash()
	res, err := w.desk("%2").Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{yn}, Wait: true,
		Timeout: 50 * time.Millisecond, AutoAnswer: true, MaxQuestions: 3, Intent: in})
	require.ErrorIs(t, err, store.ErrTimeout)
	st := res.Questions[0]
	assert.Equal(t, "publish", st.Action)
	assert.False(t, st.AutoAnswer, "no timeout may approve an action")
	assert.Equal(t, questions.QuestionPending, st.State)
	assert.Nil(t, st.Answer)

	data, err := os.ReadFile(st.File(messages.SuffixIntent))
	require.NoError(t, err)
	stored, err := messages.ParseIntent(data)
	require.NoError(t, err)
	assert.Equal(t, st.ID, stored.QuestionID, "the intent names its question")
	assert.Equal(t, "publish", stored.Action)

	// A later wait with auto-answer on decides nothing either, even of a record that says
	// auto-answer on (written by hand, or by another tool).
	var rec map[string]any
	data, err = os.ReadFile(st.Path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &rec))
	rec["auto_answer_on_timeout"] = true
	data, err = json.Marshal(rec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(st.Path, data, 0o600))
	on := true
	wres, err := w.desk("%2").WaitQuestions(context.Background(), questions.WaitOptions{IDs: []string{st.ID}, Timeout: 30 * time.Millisecond, TimeoutSet: true, AutoAnswer: &on})
	require.ErrorIs(t, err, store.ErrTimeout)
	assert.Nil(t, wres.Questions[0].Answer, "no timeout approves an action")

	w.tmux.Mu.Lock()
	delete(w.tmux.PaneMap, "%2")
	w.tmux.Mu.Unlock()
	got, err := w.desk("").Question(context.Background(), st.ID)
	require.NoError(t, err)
	assert.Equal(t, questions.QuestionPending, got.State, "an approval outlives its asker")
	ar, err := w.desk("%1").Answer(context.Background(), questions.AnswerOptions{ID: st.ID, Raw: "yes"})
	require.NoError(t, err)
	assert.Equal(t, "yes", ar.Question.Answer.Answer)
}

// An ask records the key of the channels that applied where it was asked, and that folder; a
// question file without them (an older wcomm's) still loads; one larger than an ask writes is
// not read, and is named among the listing's problems.
func TestLookupRecordsChannelsAndHugeFilesAreNotRead(t *testing.T) {
	w := newWorld(t)
	w.request("%1", "%2")
	worker := w.desk("%2")
	worker.ChannelsKey, worker.AskedIn = "0123456789abcdef", "/some/project"
	res, err := worker.Ask(context.Background(), questions.AskOptions{Questions: []messages.Question{nonBlocking(numbered("bcrypt or argon2?"))}, MaxQuestions: 3})
	require.NoError(t, err)
	st := res.Questions[0]
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

	list, problems, err := w.desk("%1").Questions(context.Background(), questions.QuestionsOptions{FilesOnly: true})
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
	_, err = w.desk("").Question(context.Background(), "task-huge.q1-abcd")
	assert.ErrorIs(t, err, store.ErrTooLarge, "looked up by id, it says why")
}
