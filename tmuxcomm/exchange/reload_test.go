package exchange

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/store/storetest"
)

// A send loads the exchange it returns from the request text it wrote, and an await reloads the
// one it found from the request it read: each the same exchange as a load from the files, with
// the request file not read again (here it is gone by then, and still the request is whole).
func TestSentAndReloadedExchangesKeepTheRequestAsRead(t *testing.T) {
	root, dir, n, path, parts, id := writeSentRequest(t)

	fresh := LoadExchange(dir, n, false)
	sent := LoadSent(dir, n, bytes.Join(parts, nil))
	fj, err := json.Marshal(fresh)
	require.NoError(t, err)
	sj, err := json.Marshal(sent)
	require.NoError(t, err)
	assert.JSONEq(t, string(fj), string(sj), "the exchange loaded from what was written")
	assert.Equal(t, fresh.Request(), sent.Request())

	found := IDClaimedHere(root, id)
	require.NotNil(t, found, "a plain send's id is found by its line")
	assert.Equal(t, id, found.ID)
	want := LoadExchangeBodies(dir, n, true, true)
	require.NoError(t, os.Remove(path))
	got := found.Reload(true, true, nil)
	require.NotNil(t, got.Request(), "the request as the await read it: %v", got.Problems)
	assert.Equal(t, want.RequestBody, got.RequestBody)
	assert.Equal(t, want.SentAt, got.SentAt)
	assert.Equal(t, want.Integrity, got.Integrity)
	assert.Equal(t, want.State, got.State)
}

// An await reads a finished response in the same open that asks the kernel whether a writer
// still holds it, and its reload takes that text (here the file is gone by then); while a
// writer holds it, it is not complete.
func TestResponseReadWhereItIsFoundComplete(t *testing.T) {
	root, _, n, id := workRequest(t)
	x, w := heldResponse(t, root, id)
	done, _, err := ResponseCompleteRead(x.ResponsePath, false)
	require.NoError(t, err)
	assert.False(t, done, "a writer still holds it")
	require.NoError(t, w.Close())

	done, c, err := ResponseCompleteRead(x.ResponsePath, false)
	require.NoError(t, err)
	require.True(t, done)
	require.NoError(t, os.Remove(x.ResponsePath))
	got := x.Reload(true, true, c)
	require.NotNil(t, got.Response(), "the response as the look read it: %v", got.Problems)
	assert.Contains(t, got.ResponseBody, "all done")
	assert.Equal(t, StatusAnswered, got.Status)
	assert.Equal(t, n, got.Seq)
}

// An await's reload takes the delivery log as the await's load read it while the file is
// unchanged (a stat tells), and reads it again once an event was appended: the reload's state is
// always the log's.
func TestReloadReadsTheDeliveryLogOnlyWhenItChanged(t *testing.T) {
	root, dir, n, id := workRequest(t)
	require.NoError(t, LogEvent(dir, n, StateWritten, map[string]string{"id": id}, time.Now()))
	require.NoError(t, LogEvent(dir, n, StatePasted, nil, time.Now()))
	x := IDClaimedHere(root, id)
	require.NotNil(t, x)
	require.Equal(t, StatePasted, x.State)

	var got *Exchange
	opens := storetest.OpensIn(t, dir, func() { got = x.Reload(false, true, nil) })
	assert.Zero(t, opens[LogName(n)], "the unchanged log is not read again (%v)", opens)
	assert.Equal(t, StatePasted, got.State)
	assert.Len(t, got.Events, 2)

	require.NoError(t, LogEvent(dir, n, StateSubmitted, map[string]string{"evidence": "seen"}, time.Now()))
	opens = storetest.OpensIn(t, dir, func() { got = x.Reload(false, true, nil) })
	assert.Equal(t, 1, opens[LogName(n)], "the log an event was appended to is read (%v)", opens)
	assert.Equal(t, StateSubmitted, got.State)
	assert.Equal(t, "seen", got.Evidence)
	assert.Len(t, got.Events, 3)
	again := got.Reload(false, true, nil)
	assert.Equal(t, got.Events, again.Events, "a reload of the reload keeps what it read")
}

// newPairSession opens the session of %1 and %2 in a new root: the root, its book, the session's
// folder and the session.
func newPairSession(t *testing.T) (root string, b *Book, dir string, sess messages.Session) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "root")
	require.NoError(t, os.Mkdir(root, 0o700))
	b = &Book{Config: core.New(root, nil)}
	dir, sess, err := b.OpenSession(root, "%1", "%2", "100-1700000000", "/tmp/sock")
	require.NoError(t, err)
	return root, b, dir, sess
}

// writeSentRequest writes a request "list the failing tests" from %1 to %2, with its size and sum, in
// a new root, as a send does, and logs it written: the root, the session's folder, the request's
// number, its path, the parts written and its id.
func writeSentRequest(t *testing.T) (root, dir string, n int, path string, parts [][]byte, id string) {
	t.Helper()
	root, b, dir, sess := newPairSession(t)
	body := []byte("list the failing tests\n")
	size, sum := messages.BodySum(body)
	h := messages.RequestHeader{Capability: core.DefaultCapability, StartedAt: sess.StartedAt, Orchestrator: "%1", Worker: "%2", Bytes: size, Sum: sum}
	n, path, parts, id, err := b.WriteNewRequest(dir, sess, h, body, nil)
	require.NoError(t, err)
	require.NoError(t, LogEvent(dir, n, StateWritten, map[string]string{"id": id}, time.Now()))
	return root, dir, n, path, parts, id
}

// heldResponse finds the exchange of id and writes its response ("all done") through a writer it
// returns still open, as a writer that holds the file does.
func heldResponse(t *testing.T, root, id string) (*Exchange, *os.File) {
	t.Helper()
	x := IDClaimedHere(root, id)
	require.NotNil(t, x)
	resp := messages.ResponseHeader{ID: id, StartedAt: x.StartedAt, Orchestrator: "%1", Worker: "%2", RequestBytes: -1}
	w, err := os.OpenFile(x.ResponsePath, os.O_WRONLY|os.O_CREATE, 0o600)
	require.NoError(t, err)
	_, err = w.WriteString(resp.String() + "\nall done\n")
	require.NoError(t, err)
	return x, w
}

// workRequest writes a request "work" from %1 to %2 in a new root: the root, the session's folder,
// the request's number and its id.
func workRequest(t *testing.T) (root, dir string, n int, id string) {
	t.Helper()
	root, b, dir, sess := newPairSession(t)
	h := messages.RequestHeader{Capability: core.DefaultCapability, StartedAt: sess.StartedAt, Orchestrator: "%1", Worker: "%2", Bytes: -1}
	n, _, _, id, err := b.WriteNewRequest(dir, sess, h, []byte("work\n"), nil)
	require.NoError(t, err)
	return root, dir, n, id
}

// A response wcomm's notify published is whole once its delivery log says "answered", which
// notify logs right after the rename while it still holds the file for its fsync: the look
// takes it then, not when the fsync ends. A log that names another response, or none, leaves a
// held file incomplete.
func TestResponseHeldForItsSyncIsCompleteOnceLoggedAnswered(t *testing.T) {
	root, dir, n, id := workRequest(t)
	x, w := heldResponse(t, root, id)
	defer w.Close()

	require.NoError(t, LogEvent(dir, n, StateAnswered, map[string]string{"response": filepath.Join(dir, "999-response.md")}, time.Now()))
	done, _, err := ResponseCompleteRead(x.ResponsePath, false)
	require.NoError(t, err)
	assert.False(t, done, "held by a writer, and the log answers another response")

	require.NoError(t, LogEvent(dir, n, StateAnswered, map[string]string{"response": x.ResponsePath}, time.Now()))
	done, c, err := ResponseCompleteRead(x.ResponsePath, false)
	require.NoError(t, err)
	require.True(t, done, "logged answered: whole, though its writer still holds it")
	got := x.Reload(true, true, c)
	require.NotNil(t, got.Response(), "%v", got.Problems)
	assert.Contains(t, got.ResponseBody, "all done")
}
