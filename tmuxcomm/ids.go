package tmuxcomm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/messages"
)

// idsDir holds one empty claim file per request id. An id is its second plus 16 random bits (the
// seed's format), so busy senders collide now and then (a stress run saw 1 in 1,600); a claim
// made with O_EXCL makes every id unique under the root. Only ids of the same second can
// collide, so old claims are pruned now and then.
const idsDir = ".ids"

// pruneAge is how old a claim may get before pruning removes it: far more than any clock step.
const pruneAge = time.Hour

// newID returns a request id that no other request under root has.
func (e *Engine) newID(root string) (string, error) {
	dir := filepath.Join(root, idsDir)
	if err := os.Mkdir(dir, dirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	for attempt := 0; attempt < 64; attempt++ {
		id, err := messages.NewID(e.Now(), e.Rand)
		if err != nil {
			return "", err
		}
		f, err := os.OpenFile(filepath.Join(dir, id), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, fileMode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("claim id %s: %w", id, err)
		}
		f.Close()
		if id[len(id)-1] == '0' && id[len(id)-2] == '0' {
			// About one send in 256 tidies the claims up.
			pruneIDs(dir, e.Now().Add(-pruneAge))
		}
		return id, nil
	}
	return "", fmt.Errorf("no free request id this second under %s; try again", root)
}

// pruneIDs removes claims whose second is before cutoff.
func pruneIDs(dir string, cutoff time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	limit := cutoff.Format(messages.StampLayout)
	for _, ent := range entries {
		name := ent.Name()
		if messages.ValidID(name) == nil && strings.Compare(name[:len(messages.StampLayout)], limit) < 0 {
			os.Remove(filepath.Join(dir, name))
		}
	}
}

// whereDir holds one small file per request id saying where the request is (RecordID), so that
// show, await and notify by id read one file instead of the request headers of other sessions.
// It grows with the requests themselves, and only hints: the files stay the truth.
const whereDir = ".where"

// RecordID writes where an id's request is: "SESSION SEQ" in whereDir. It is a hint, never the
// truth: whoever follows it checks that the request there carries the id (idWhere), and looks
// everywhere when it does not, so a stale, half-written or damaged hint costs a scan, never a
// wrong answer.
func RecordID(root, id, session string, seq int) error {
	if err := messages.ValidID(id); err != nil {
		return err
	}
	dir := filepath.Join(root, whereDir)
	if err := os.Mkdir(dir, dirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, id), os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, fileMode)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s %d\n", session, seq)
	return errors.Join(err, f.Close())
}

// idWhere follows an id's hint (RecordID) to the exchange, checking the request's own header;
// nil when there is no hint or it does not hold.
func idWhere(root, id string) *Exchange {
	data, err := readFile(filepath.Join(root, whereDir, id))
	if err != nil || len(data) == 0 || len(data) > 256 {
		return nil
	}
	session, num, ok := strings.Cut(strings.TrimSpace(string(data)), " ")
	if !ok {
		return nil
	}
	seq, err := strconv.Atoi(num)
	if err != nil || seq < 1 {
		return nil
	}
	if _, err := messages.ParseSessionName(session); err != nil {
		return nil // also keeps the hint from naming anything outside the root
	}
	dir := filepath.Join(root, session)
	line, err := readFirstLine(filepath.Join(dir, messages.SeqFileName(seq, messages.KindRequest)))
	if err != nil {
		return nil
	}
	if h, err := messages.ParseRequestHeader(line); err != nil || h.ID != id {
		return nil
	}
	return loadExchange(dir, seq, false)
}
