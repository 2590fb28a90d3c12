package exchange

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// The requests this process sent last, by id, as their send wrote them: an MCP server's await
// of the id it just sent finds the exchange here, instead of reading the root's id hints (a stat
// of their folder, and an open, a read and a close of the hints of the id's second) and the
// request back (an open, a read and a close), a third of what an await otherwise opens. The
// request is taken only while a stat finds its file as the send left it (the same size and
// modification time, as LoadSent takes it, and still this user's); the delivery log and the
// response are read as ever.
// Ids are never reused, so what one names does not change: a request moved or changed is read
// from the files again.

// sentMemoMax bounds how many sends are kept; sentMemoText, the size of a request kept.
const (
	sentMemoMax  = 32
	sentMemoText = 64 << 10
)

var sentMemo = struct {
	mu    sync.Mutex
	m     map[string]sentRequest
	order []string // oldest first
}{m: map[string]sentRequest{}}

// sentRequest is one send's request as written.
type sentRequest struct {
	dir  string
	seq  int
	text *knownText
}

// RememberSent keeps x, which LoadSent made from the request its send wrote with an id claimed
// by its line in the hints (WriteNewRequest), for an await of that id in this process
// (IDClaimedHere).
func RememberSent(x *Exchange) {
	if x == nil || x.ID == "" || x.requestText == nil || len(x.requestText.data) > sentMemoText {
		return
	}
	sentMemo.mu.Lock()
	defer sentMemo.mu.Unlock()
	if _, ok := sentMemo.m[x.ID]; !ok {
		sentMemo.order = append(sentMemo.order, x.ID)
	}
	sentMemo.m[x.ID] = sentRequest{dir: x.Dir, seq: x.Seq, text: x.requestText}
	for len(sentMemo.order) > sentMemoMax {
		delete(sentMemo.m, sentMemo.order[0])
		sentMemo.order = sentMemo.order[1:]
	}
}

// sentHere loads the exchange of id that this process sent into root, taking the request as its
// send wrote it while its file is unchanged; nil when it is not kept or the file changed.
func sentHere(root, id string) *Exchange {
	sentMemo.mu.Lock()
	s, ok := sentMemo.m[id]
	sentMemo.mu.Unlock()
	if !ok || filepath.Dir(s.dir) != root {
		return nil
	}
	path := filepath.Join(s.dir, messages.SeqFileName(s.seq, messages.KindRequest))
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() != int64(len(s.text.data)) || !st.ModTime().Equal(s.text.mtime) {
		return nil
	}
	if store.CheckOwned(path, st) != nil {
		return nil // another user's now: the read from the files refuses it, and says why
	}
	if x := loadExchange(s.dir, s.seq, false, false, &fileReads{plain: true, noResponse: true, request: s.text}); x.ID == id {
		return x
	}
	return nil
}

// forgetSent drops every send kept (tests).
func forgetSent() {
	sentMemo.mu.Lock()
	clear(sentMemo.m)
	sentMemo.order = nil
	sentMemo.mu.Unlock()
}
