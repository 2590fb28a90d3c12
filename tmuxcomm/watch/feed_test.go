package watch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// seedRequest writes a request the way the seed's plain procedure does: cat > file, no log.
func seedRequest(t *testing.T, dir string, n int, id, body string) {
	t.Helper()
	s, err := messages.ParseSessionName(filepath.Base(dir))
	require.NoError(t, err)
	resp := filepath.Join(dir, messages.SeqFileName(n+1, messages.KindResponse))
	text := messages.FormatRequest(messages.Request{
		Header: messages.RequestHeader{Capability: messages.Writable, ID: id, StartedAt: s.StartedAt,
			Orchestrator: s.Orchestrator, Worker: s.Worker, Bytes: -1},
		Body:         body,
		Instructions: messages.Instructions{ResponsePath: resp, Fallback: messages.FallbackCommand(s, resp)},
	})
	require.NoError(t, os.WriteFile(filepath.Join(dir, messages.SeqFileName(n, messages.KindRequest)), []byte(text), 0o600))
}

func feedEventNames(evs []WatchEvent) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Kind+":"+ev.Event)
	}
	return out
}

func TestWatchForgetsRemovedSessionsAndRescansOnOverflow(t *testing.T) {
	root := t.TempDir()
	tw, err := store.NewTreeWatcher()
	require.NoError(t, err)
	defer tw.Close()
	fd := &feed{root: root, tw: tw, sessions: map[string]*feedSession{}}

	dir := filepath.Join(root, "20260117-120000-o6-w7")
	require.NoError(t, os.Mkdir(dir, 0o700))
	seedRequest(t, dir, 1, "20260117-120000-0001", "one")
	fd.handle([]store.TreeEvent{{Overflow: true}})
	assert.Equal(t, []string{"session:session", "exchange:request"}, feedEventNames(drain(fd)))
	fd.handle([]store.TreeEvent{{Overflow: true}})
	assert.Empty(t, drain(fd), "a rescan reports nothing twice")

	require.NoError(t, os.RemoveAll(dir))
	fd.handle([]store.TreeEvent{{Dir: dir, Name: "001-request.md"}})
	assert.Empty(t, fd.sessions)
}

func drain(fd *feed) []WatchEvent {
	var out []WatchEvent
	_ = fd.flush(func(ev WatchEvent) error {
		out = append(out, ev)
		return nil
	})
	return out
}

func TestReadNewLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	var got []string
	read := func(off int64) int64 {
		return readNewLines(path, off, func(b []byte) { got = append(got, string(b)) })
	}
	tests := []struct {
		name   string
		append string
		reset  bool // replace the file instead of appending
		want   []string
	}{
		{"missing file", "", false, nil},
		{"two lines", "a\nb\n", false, []string{"a", "b"}},
		{"a partial line waits", "c", false, nil},
		{"its end completes it", "c\n\n", false, []string{"cc"}},
		{"an overlong line is skipped", strings.Repeat("x", 100<<10) + "\nd\n", false, []string{"d"}},
		{"a replaced file is read again", "e\n", true, []string{"e"}},
	}
	var off int64
	for _, tc := range tests {
		if tc.reset {
			require.NoError(t, os.WriteFile(path, []byte(tc.append), 0o600))
		} else if tc.append != "" {
			fl, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			require.NoError(t, err)
			_, err = fl.WriteString(tc.append)
			require.NoError(t, err)
			require.NoError(t, fl.Close())
		}
		got = nil
		off = read(off)
		assert.Equal(t, tc.want, got, tc.name)
	}
}

// TestAnEventReadsTheQuestionItNames: a file event in a session folder reads again only the
// question whose file it names (a folder of a pane's permission prompts holds hundreds); the
// safety rescan reads the rest.
func TestAnEventReadsTheQuestionItNames(t *testing.T) {
	root := t.TempDir()
	tw, err := store.NewTreeWatcher()
	require.NoError(t, err)
	defer tw.Close()
	fd := &feed{root: root, tw: tw, sessions: map[string]*feedSession{}, questionsOnly: true}
	dir := filepath.Join(root, "20260117-120000-o2-w2")
	require.NoError(t, os.Mkdir(dir, 0o700))
	write := func(seq int, suffix string, v any) string {
		name := messages.QuestionFileName("perm", seq, suffix)
		data, err := json.Marshal(v)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
		return name
	}
	for seq := 1; seq <= 2; seq++ {
		write(seq, messages.SuffixQuestion, questions.QuestionRecord{Question: messages.Question{Text: "may I?"}, Seq: seq, Worker: "%2"})
	}
	fd.handle([]store.TreeEvent{{Overflow: true}})
	assert.Equal(t, []string{"session:session", "question:asked", "question:asked"}, feedEventNames(drain(fd)))

	write(2, messages.SuffixAnswer, questions.AnswerRecord{Answer: "allow", DecidedBy: messages.DecidedByUser})
	one := write(1, messages.SuffixAnswer, questions.AnswerRecord{Answer: "deny", DecidedBy: messages.DecidedByUser})
	fd.handle([]store.TreeEvent{{Dir: dir, Name: one}})
	evs := drain(fd)
	require.Len(t, evs, 1)
	assert.Equal(t, []string{"question:answered", "perm.q1"}, []string{evs[0].Kind + ":" + evs[0].Event, evs[0].ID})

	fd.handle([]store.TreeEvent{{Overflow: true}})
	evs = drain(fd)
	require.Len(t, evs, 1, "the rescan reads the question no event named")
	assert.Equal(t, "perm.q2", evs[0].ID)
}
