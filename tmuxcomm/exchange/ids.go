package exchange

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
)

// pruneAge is how old a claim may get before pruning removes it: far more than any clock step.
const pruneAge = time.Hour

// newID returns a request id that no other request under root has.
func (b *Book) ClaimID(root string) (string, error) {
	dir, err := store.Dir(root, store.IDsDir, true)
	if err != nil {
		return "", err
	}
	for attempt := 0; attempt < 64; attempt++ {
		id, err := messages.NewID(b.Now(), b.Rand)
		if err != nil {
			return "", err
		}
		if _, err := os.Lstat(filepath.Join(root, store.WhereDir, id)); err == nil {
			continue // claimed by its where-link (ClaimIDAt)
		}
		f, err := os.OpenFile(filepath.Join(dir, id), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, store.FileMode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("claim id %s: %w", id, err)
		}
		f.Close()
		if id[len(id)-1] == '0' && id[len(id)-2] == '0' {
			// About one send in 256 tidies the claims up.
			PruneIDs(dir, b.Now().Add(-pruneAge))
		}
		return id, nil
	}
	return "", fmt.Errorf("no free request id this second under %s; try again", root)
}

// ClaimIDAt claims a new request id under root for the request seq of session: the id's
// where-link (RecordID) is made pointing at that request, and a link is made only when no other
// has the name, so the one new file claims the id and records where it is (ClaimID and RecordID
// made two). An id claimed in the claims' folder by ClaimID is not taken either.
func (b *Book) ClaimIDAt(root, session string, seq int) (string, error) {
	dir, err := store.Dir(root, store.WhereDir, true)
	if err != nil {
		// The hints' folder cannot be used (another user's, a symlink): the id is claimed by
		// its claim file, and goes without a hint, as a hint that cannot be written always did.
		return b.ClaimID(root)
	}
	claims := filepath.Join(root, store.IDsDir)
	target := session + "/" + messages.SeqFileName(seq, messages.KindRequest)
	for attempt := 0; attempt < 64; attempt++ {
		id, err := messages.NewID(b.Now(), b.Rand)
		if err != nil {
			return "", err
		}
		if _, err := os.Lstat(filepath.Join(claims, id)); err == nil {
			continue
		}
		err = os.Symlink(target, filepath.Join(dir, id))
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("claim id %s: %w", id, err)
		}
		return id, nil
	}
	return "", fmt.Errorf("no free request id this second under %s; try again", root)
}

// PruneIDs removes claims whose second is before cutoff.
func PruneIDs(dir string, cutoff time.Time) {
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

// RecordID records where an id's request is: a symlink in whereDir whose target text is
// "SESSION/NNN-request.md". A link, not a file, because its few bytes live in the inode (a file
// would take a block of a full disk for each request), it appears whole or not at all, and one
// readlink reads it. It is never followed: idWhere parses its text. It is a hint, never the
// truth: whoever follows it checks that the request there carries the id, and looks everywhere
// when it does not, so a stale, damaged or missing hint costs a scan, never a wrong answer.
func RecordID(root, id, session string, seq int) error {
	if err := messages.ValidID(id); err != nil {
		return err
	}
	dir, err := store.Dir(root, store.WhereDir, true)
	if err != nil {
		return err
	}
	target := session + "/" + messages.SeqFileName(seq, messages.KindRequest)
	path := filepath.Join(dir, id)
	err = os.Symlink(target, path)
	if errors.Is(err, fs.ErrExist) {
		os.Remove(path)
		err = os.Symlink(target, path)
	}
	return err
}

// IDWhere follows an id's hint (RecordID) to the exchange, checking the request's own header;
// nil when there is no hint or it does not hold.
func IDWhere(root, id string) *Exchange {
	dir, err := store.Dir(root, store.WhereDir, false)
	if err != nil {
		return nil
	}
	target, err := os.Readlink(filepath.Join(dir, id))
	if err != nil || len(target) > 256 {
		return nil
	}
	session, name, ok := strings.Cut(target, "/")
	if !ok {
		return nil
	}
	if _, err := messages.ParseSessionName(session); err != nil {
		return nil // also keeps the hint from naming anything outside the root
	}
	seq, kind, ok := messages.ParseSeqFileName(name)
	if !ok || kind != messages.KindRequest {
		return nil
	}
	// The request is read once, whole, and its id checked on what was read; only a request that
	// did not parse is looked at again, for its header line alone (a damaged exchange is still
	// the one its id names).
	dir = filepath.Join(root, session)
	x := LoadExchange(dir, seq, false)
	if x.ID == id {
		return x
	}
	if x.ID != "" {
		return nil
	}
	line, err := store.ReadFirstLine(filepath.Join(dir, name))
	if err != nil {
		return nil
	}
	if h, err := messages.ParseRequestHeader(line); err != nil || h.ID != id {
		return nil
	}
	return x
}
