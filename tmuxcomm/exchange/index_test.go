package exchange

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// indexRoot is a root of two session folders written as send and notify write them: answered
// exchanges with their delivery logs, one pending, a foreign file.
type indexRoot struct {
	t    *testing.T
	root string
	dirs []string
}

func newIndexRoot(t *testing.T) *indexRoot {
	r := &indexRoot{t: t, root: t.TempDir()}
	for i := 0; i < 2; i++ {
		s := messages.Session{StartedAt: fmt.Sprintf("20260117-12000%d", i), Orchestrator: "%1", Worker: messages.PaneID(fmt.Sprintf("%%%d", 2+i))}
		dir := filepath.Join(r.root, s.Name())
		require.NoError(t, os.Mkdir(dir, 0o700))
		meta, _ := json.Marshal(SessionMeta{Server: "1-1", Orchestrator: s.Orchestrator, Worker: s.Worker, StartedAt: s.StartedAt})
		require.NoError(t, os.WriteFile(filepath.Join(dir, store.MetaName), meta, 0o600))
		r.dirs = append(r.dirs, dir)
		for k := 0; k < 4; k++ {
			r.add(i, k < 3)
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(r.dirs[1], "notes.txt"), []byte("mine"), 0o600))
	return r
}

// add writes the next exchange of session folder i, answered or pending, and returns its number.
func (r *indexRoot) add(i int, answered bool) int {
	dir := r.dirs[i]
	s, err := messages.ParseSessionName(filepath.Base(dir))
	require.NoError(r.t, err)
	files, _, err := ListSeq(dir)
	require.NoError(r.t, err)
	n := nextRequestNumber(files)
	id := fmt.Sprintf("%s-%04x", s.StartedAt, n)
	body := fmt.Sprintf("request %d: review pkg/%d\nsecond line\n", n, n)
	size, sum := messages.BodySum([]byte(body))
	resp := filepath.Join(dir, messages.SeqFileName(n+1, messages.KindResponse))
	req := messages.Request{Header: messages.RequestHeader{Capability: messages.ReadOnly, ID: id, StartedAt: s.StartedAt,
		Orchestrator: s.Orchestrator, Worker: s.Worker, Bytes: size, Sum: sum}, Body: body,
		Instructions: messages.Instructions{ResponsePath: resp, Notify: "wcomm notify --response " + resp, Fallback: messages.FallbackCommand(s, resp)}}
	require.NoError(r.t, store.WriteExclusive(filepath.Join(dir, messages.SeqFileName(n, messages.KindRequest)), []byte(messages.FormatRequest(req))))
	at := time.Date(2026, 1, 17, 12, 0, n, 0, time.UTC)
	require.NoError(r.t, LogEvent(dir, n, StateWritten, nil, at))
	require.NoError(r.t, LogEvent(dir, n, StateSubmitted, map[string]string{"evidence": "the prompt took it", "verified": "true"}, at))
	if answered {
		answer := messages.Response{Header: messages.ResponseHeader{ID: id, StartedAt: s.StartedAt, Orchestrator: s.Orchestrator,
			Worker: s.Worker, RequestBytes: size, RequestSum: sum}, Body: fmt.Sprintf("done %d\n", n)}
		require.NoError(r.t, store.WriteAtomic(resp, []byte(messages.FormatResponse(answer))))
		require.NoError(r.t, LogEvent(dir, n, StateAnswered, nil, at))
	}
	return n
}

// book is a reader of the root; with index false it keeps no index and reads every file. The
// file system's clock it reads runs an hour ahead, so every file of the test has settled and the
// index is used as soon as it is written, unless settle is set: then it reads the real one.
func (r *indexRoot) book(index, settle bool) (*Book, *atomic.Int64) {
	loads := &atomic.Int64{}
	b := &Book{Config: core.New(r.root, nil), noIndex: !index, loads: loads}
	if !settle {
		b.clock = func() int64 { return time.Now().Add(time.Hour).UnixNano() }
	}
	return b, loads
}

// listing is the whole history as history --json prints it (encoded) and as History returns it
// (decoded, then encoded by encoding/json), and how many exchanges were read from their files.
func (r *indexRoot) listing(b *Book, o HistoryOptions) (encoded, decoded string, loaded int64) {
	r.t.Helper()
	before := b.loads.Load()
	var out []byte
	o.Encoded = true
	_, err := b.HistoryEach(context.Background(), o, nil, func(s SessionSummary) error {
		var err error
		out, err = s.AppendJSON(append(out, '\n'), "    ", "  ")
		return err
	})
	require.NoError(r.t, err)
	o.Encoded = false
	sessions, _, err := b.History(context.Background(), o)
	require.NoError(r.t, err)
	data, err := json.MarshalIndent(sessions, "", "  ")
	require.NoError(r.t, err)
	return string(out), string(data), b.loads.Load() - before
}

// same checks that the indexed listing is exactly the files' listing, and returns how many
// exchanges the indexed one read from their files.
func (r *indexRoot) same(o HistoryOptions, what string) int64 {
	r.t.Helper()
	indexed, _ := r.book(true, false)
	plain, _ := r.book(false, false)
	wantEnc, wantDec, _ := r.listing(plain, o)
	gotEnc, gotDec, loaded := r.listing(indexed, o)
	require.Equal(r.t, wantEnc, gotEnc, "%s: history --json", what)
	require.Equal(r.t, wantDec, gotDec, "%s: History", what)
	// The files' listing must not have been the index's: the plain reader keeps none.
	_, err := os.Stat(filepath.Join(r.root, store.HistoryDir))
	require.NoError(r.t, err, "%s: the index exists", what)
	return loaded
}

func TestHistoryIndexListsWhatTheFilesSay(t *testing.T) {
	r := newIndexRoot(t)
	all := HistoryOptions{}
	pending := HistoryOptions{Pending: true}
	// Each listing is read twice by the indexed reader (encoded, then decoded): the first read of
	// a change goes to the files and writes the index, the second is the index's.
	assert.Equal(t, int64(8), r.same(all, "no index yet"), "every exchange read from its files, once")
	assert.Zero(t, r.same(all, "unchanged"), "every exchange from the index")
	assert.Zero(t, r.same(pending, "unchanged, pending only"))

	n := r.add(0, false)
	assert.Equal(t, int64(1), r.same(all, "one exchange added"), "only the new one read")
	assert.Equal(t, int64(0), r.same(pending, "one exchange added, pending only"))

	// A person edits a response in place: same file, another text.
	resp := filepath.Join(r.dirs[1], messages.SeqFileName(2, messages.KindResponse))
	data, err := os.ReadFile(resp)
	require.NoError(t, err)
	f, err := os.OpenFile(resp, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	_, err = f.Write(bytes.Replace(data, []byte("done 1"), []byte("done 1, and one more thing"), 1))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Equal(t, int64(1), r.same(all, "a response edited by hand"))

	// The worker answers the new one; a delivery log grows (as send and the deliverer append).
	r.answer(0, n)
	require.NoError(t, LogEvent(r.dirs[1], 3, StateRead, nil, time.Now()))
	assert.Equal(t, int64(2), r.same(all, "an answer written, a log appended"))
	assert.Equal(t, int64(0), r.same(pending, "an answer written, pending only"))

	// A request deleted: its response is an orphan now.
	require.NoError(t, os.Remove(filepath.Join(r.dirs[0], messages.SeqFileName(3, messages.KindRequest))))
	assert.Zero(t, r.same(all, "a request deleted"), "the others from the index")
	// A foreign file added, one removed: the listing of names follows the folder.
	require.NoError(t, os.WriteFile(filepath.Join(r.dirs[0], "todo.txt"), nil, 0o600))
	require.NoError(t, os.Remove(filepath.Join(r.dirs[1], "notes.txt")))
	assert.Zero(t, r.same(all, "foreign files"))
	enc, _, _ := r.listing(func() *Book { b, _ := r.book(true, false); return b }(), all)
	assert.Contains(t, enc, `"todo.txt"`)
	assert.NotContains(t, enc, `"notes.txt"`)
	assert.Contains(t, enc, `"orphans": [`)

	// A session folder deleted by hand: its index goes with the next listing.
	require.NoError(t, os.RemoveAll(r.dirs[1]))
	assert.Zero(t, r.same(all, "a session folder deleted"))
	names, err := os.ReadDir(filepath.Join(r.root, store.HistoryDir))
	require.NoError(t, err)
	require.Len(t, names, 1)
	assert.Equal(t, filepath.Base(r.dirs[0]), names[0].Name())
}

// answer writes the response of exchange n of session folder i.
func (r *indexRoot) answer(i, n int) {
	dir := r.dirs[i]
	x := LoadExchange(dir, n, false)
	require.NotNil(r.t, x.Request())
	h := x.Request().Header
	answer := messages.Response{Header: messages.ResponseHeader{ID: h.ID, StartedAt: h.StartedAt, Orchestrator: h.Orchestrator,
		Worker: h.Worker, RequestBytes: h.Bytes, RequestSum: h.Sum}, Body: "answered late\n"}
	require.NoError(r.t, store.WriteAtomic(x.ResponsePath, []byte(messages.FormatResponse(answer))))
}

func TestHistoryIndexDamagedIsRebuilt(t *testing.T) {
	r := newIndexRoot(t)
	assert.Equal(t, int64(8), r.same(HistoryOptions{}, "no index yet"))
	index := filepath.Join(r.root, store.HistoryDir, filepath.Base(r.dirs[0]))
	good, err := os.ReadFile(index)
	require.NoError(t, err)
	other, err := os.ReadFile(filepath.Join(r.root, store.HistoryDir, filepath.Base(r.dirs[1])))
	require.NoError(t, err)
	at := bytes.Index(good, []byte(`"status": "answered"`))
	require.Positive(t, at)
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"a byte of an entry changed", append(append(append([]byte{}, good[:at]...), `"status": "answeres"`...), good[at+20:]...)},
		{"cut short", good[:len(good)/2]},
		{"empty", nil},
		{"another version", append([]byte("wcomm-index 9 "), good[len(indexMagic):]...)},
		{"of another folder", other},
	} {
		require.NoError(t, os.WriteFile(index, c.data, 0o600))
		assert.Equal(t, int64(4), r.same(HistoryOptions{}, c.name), "%s: that folder read again from its files", c.name)
		assert.Zero(t, r.same(HistoryOptions{}, c.name+", then"), "%s: and the index rebuilt", c.name)
	}
	// The root moved: the files keep their stamps, but every path the index holds is the old one.
	moved := filepath.Join(t.TempDir(), "moved")
	require.NoError(t, os.Rename(r.root, moved))
	r.root = moved
	for i := range r.dirs {
		r.dirs[i] = filepath.Join(moved, filepath.Base(r.dirs[i]))
	}
	index = filepath.Join(r.root, store.HistoryDir, filepath.Base(r.dirs[0]))
	assert.Equal(t, int64(8), r.same(HistoryOptions{}, "the root moved"), "read again from the files")
	// Planted by a symlink: not followed, and replaced.
	require.NoError(t, os.Remove(index))
	require.NoError(t, os.Symlink(filepath.Join(r.dirs[1], store.MetaName), index))
	assert.Equal(t, int64(4), r.same(HistoryOptions{}, "a symlink"))
	st, err := os.Lstat(index)
	require.NoError(t, err)
	assert.True(t, st.Mode().IsRegular(), "the symlink replaced by the index")
}

func TestHistoryIndexTrustsFilesOnceTheClockPassedThem(t *testing.T) {
	// With the real clock: every file of the test changed just now, but once the file system's
	// clock has ticked past the newest, a change would give it another stamp, so the index the
	// first listing writes is trusted by the next (it was 3 s of the wall clock).
	r := newIndexRoot(t)
	newest := r.newestChange()
	require.Eventually(t, func() bool { return fsNow(t, t.TempDir()) > newest }, 10*time.Second, time.Millisecond,
		"the file system's clock passes the files")
	b, loads := r.book(true, true)
	r.listing(b, HistoryOptions{})
	assert.Equal(t, int64(8), loads.Load(), "read from the files once, then from the index")
	r.listing(b, HistoryOptions{})
	assert.Equal(t, int64(8), loads.Load(), "then none")
}

func TestHistoryIndexTrustsNothingOfTheClocksTick(t *testing.T) {
	// A reading whose clock is the tick in which the newest exchange changed: a file changed again
	// in that tick would keep its stamp, so what changed in it is read again by the next listing,
	// the rest not.
	r := newIndexRoot(t)
	var changed []int64 // each exchange's last change
	for _, dir := range r.dirs {
		for _, n := range []int{1, 3, 5, 7} {
			var last int64
			for _, name := range []string{messages.SeqFileName(n, messages.KindRequest), messages.SeqFileName(n+1, messages.KindResponse), LogName(n)} {
				if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
					last = max(last, ctime(t, filepath.Join(dir, name)))
				}
			}
			changed = append(changed, last)
		}
	}
	newest := slices.Max(changed)
	var young int64
	for _, c := range changed {
		if c >= newest {
			young++
		}
	}
	same, loads := r.book(true, true)
	same.clock = func() int64 { return newest }
	r.listing(same, HistoryOptions{})
	assert.Equal(t, 8+young, loads.Load(), "read from the files; then the index, but for what changed in the tick")
	late, lateLoads := r.book(true, false)
	r.listing(late, HistoryOptions{})
	assert.Equal(t, young, lateLoads.Load(), "only the exchanges of that tick read again")
	r.listing(late, HistoryOptions{})
	assert.Equal(t, young, lateLoads.Load(), "then none")
}

func TestReadFSClockIsTheFilesClock(t *testing.T) {
	root := t.TempDir()
	before := readFSClock(root)
	require.True(t, before.ok)
	path := filepath.Join(root, "f")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	after := readFSClock(root)
	require.True(t, after.ok)
	assert.LessOrEqual(t, before.ns, ctime(t, path), "a file changed after the reading is not before it")
	assert.LessOrEqual(t, ctime(t, path), after.ns)
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(path, &st))
	assert.Equal(t, uint64(st.Dev), after.dev)
	// Only the index folder's times changed: no name appeared in the root but it.
	names, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Len(t, names, 2)
}

// newestChange is the latest change time of a file of the root's session folders.
func (r *indexRoot) newestChange() int64 {
	var newest int64
	for _, dir := range r.dirs {
		names, err := os.ReadDir(dir)
		require.NoError(r.t, err)
		for _, n := range names {
			newest = max(newest, ctime(r.t, filepath.Join(dir, n.Name())))
		}
		newest = max(newest, ctime(r.t, dir))
	}
	return newest
}

func ctime(t *testing.T, path string) int64 {
	var st syscall.Stat_t
	require.NoError(t, syscall.Lstat(path, &st))
	return time.Unix(st.Ctim.Unix()).UnixNano()
}

// fsNow is the file system's clock now, read as a file of dir changed now.
func fsNow(t *testing.T, dir string) int64 {
	path := filepath.Join(dir, "now")
	require.NoError(t, os.WriteFile(path, []byte("x"), 0o600))
	return ctime(t, path)
}

func TestAppendJSONIsMarshalIndent(t *testing.T) {
	r := newIndexRoot(t)
	b, _ := r.book(true, false)
	_, _, err := b.History(context.Background(), HistoryOptions{}) // writes the index
	require.NoError(t, err)
	for _, pending := range []bool{false, true} {
		// Decoded from the index, and as the files say.
		decoded, _, err := b.History(context.Background(), HistoryOptions{Pending: pending})
		require.NoError(t, err)
		plain, _ := r.book(false, false)
		files, _, err := plain.History(context.Background(), HistoryOptions{Pending: pending})
		require.NoError(t, err)
		// Encoded: only what they stand for, and the index's encoding.
		encoded, _, err := b.History(context.Background(), HistoryOptions{Pending: pending, Encoded: true})
		require.NoError(t, err)
		require.Len(t, encoded, len(files))
		empty := SessionSummary{Name: "empty", Problems: []string{"a \"quoted\" problem\nand a <line>"}}
		for i, want := range append(files, empty) {
			got := []SessionSummary{empty, empty, empty}
			if i < len(files) {
				got = []SessionSummary{decoded[i], encoded[i], files[i]}
			}
			for _, prefix := range []string{"", "    ", "\t"} {
				w, err := json.MarshalIndent(want, prefix, "  ")
				require.NoError(t, err)
				for k, s := range got {
					data, err := s.AppendJSON([]byte("x"), prefix, "  ")
					require.NoError(t, err)
					assert.Equal(t, "x"+string(w), string(data), "session %d, prefix %q, listing %d", i, prefix, k)
				}
			}
		}
	}
}
