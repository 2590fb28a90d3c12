package exchange

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/paneops/lock"
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
		if _, ok := whereTarget(filepath.Join(root, store.WhereDir), id); ok {
			continue // claimed in the hints of its second (ClaimIDAt)
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

// ClaimIDAt claims a new request id under root for the request seq of session, and records where
// that request is. The claims and hints of one second share one file, .where/STAMP (the id's own
// second), a line "SUFFIX SESSION/NNN-request.md" each, appended under the file's lock by the
// sender that found the suffix free there: at many sends a second, one new file a second instead
// of one per request (a claim file and a link made two; inode allocation was a large part of a
// round trip's CPU). An id claimed by ClaimID's claim file, or by an earlier version's link, is
// not taken either. Where the hints' folder cannot be used, the id is claimed by ClaimID.
func (b *Book) ClaimIDAt(root, session string, seq int) (string, error) {
	dir, err := store.Dir(root, store.WhereDir, true)
	if err != nil {
		// The hints' folder cannot be used (another user's, a symlink): the id is claimed by
		// its claim file, and goes without a hint, as a hint that cannot be written always did.
		return b.ClaimID(root)
	}
	now := b.Now()
	stamp := now.Format(messages.StampLayout)
	f, err := store.OpenFile(filepath.Join(dir, stamp), os.O_RDWR|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, store.FileMode)
	if err != nil {
		return b.ClaimID(root)
	}
	defer f.Close()
	if err := flockFile(f, b.LockTimeout); err != nil {
		return "", fmt.Errorf("claim a request id in %s: %w", dir, err)
	}
	taken, ok := whereData(f)
	if !ok {
		return b.ClaimID(root) // not a hints file of this tool's: left alone
	}
	claims := filepath.Join(root, store.IDsDir)
	target := session + "/" + messages.SeqFileName(seq, messages.KindRequest)
	for attempt := 0; attempt < 64; attempt++ {
		id, err := messages.NewID(now, b.Rand)
		if err != nil {
			return "", err
		}
		suffix := id[len(stamp)+1:]
		if _, dup := whereLookup(taken, suffix); dup {
			continue
		}
		if _, err := os.Lstat(filepath.Join(claims, id)); err == nil {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, id)); err == nil {
			continue // an earlier version's link
		}
		if _, err := f.Write([]byte(suffix + " " + target + "\n")); err != nil {
			return "", fmt.Errorf("claim id %s: %w", id, err)
		}
		return id, nil
	}
	return "", fmt.Errorf("no free request id this second under %s; try again", root)
}

// maxWhereFile bounds a second's hints file: 65,536 ids of about 60 bytes each fit.
const maxWhereFile = 8 << 20

// whereData reads a second's hints file (ClaimIDAt) from its start: lines of "SUFFIX TARGET".
// ok is false when it is not one (too large, unreadable).
func whereData(f *os.File) ([]byte, bool) {
	st, err := f.Stat()
	if err != nil || st.Size() > maxWhereFile || !st.Mode().IsRegular() {
		return nil, false
	}
	data := make([]byte, st.Size())
	n, err := f.ReadAt(data, 0)
	if err != nil && n < len(data) {
		return nil, false
	}
	return data[:n], true
}

// whereLookup is the target of suffix's line in a hints file's data (whereData). It scans
// rather than index every line: the file of a busy second holds hundreds of lines, read at
// every id claimed in that second, and a map of them cost about 1 % of a sending server's CPU
// (measured over 8 pairs).
func whereLookup(data []byte, suffix string) (string, bool) {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) > len(suffix) && line[len(suffix)] == ' ' && string(line[:len(suffix)]) == suffix {
			return string(line[len(suffix)+1:]), true
		}
	}
	return "", false
}

// flockFile takes f's exclusive lock, waiting up to timeout (0: a default of seconds): the lock
// is held for a read and an append, so a wait is short.
func flockFile(f *os.File, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return lock.Flock(ctx, f, syscall.LOCK_EX, nil)
}

// whereTarget is the hint of id: its earlier version's link, else its line in the file of its
// second.
func whereTarget(dir, id string) (string, bool) {
	if target, err := os.Readlink(filepath.Join(dir, id)); err == nil {
		return target, true
	}
	n := len(messages.StampLayout)
	if len(id) <= n+1 {
		return "", false
	}
	f, err := store.OpenFile(filepath.Join(dir, id[:n]), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	data, ok := whereData(f)
	if !ok {
		return "", false
	}
	return whereLookup(data, id[n+1:])
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
	target, ok := whereTarget(dir, id)
	if !ok {
		return nil
	}
	return loadWhere(root, id, target)
}

// IDClaimedHere is IDWhere for an id claimed by its line in the hints of its second
// (ClaimIDAt) alone: nil for any other (a link, a relayed send's claim, none). An id claimed so
// is a plain send's to a pane of this machine's: ClaimID (a relayed send's) and ClaimIDAt each
// skip an id the other holds, and a mirror of a relayed one is hinted by a link (RecordID). An
// await of it has nothing to ask of the relay. Its response is not looked at: the await looks
// at it itself (Status is pending, or what the delivery log says went wrong).
func IDClaimedHere(root, id string) *Exchange {
	n := len(messages.StampLayout)
	if messages.ValidID(id) != nil || len(id) <= n+1 {
		return nil
	}
	if x := sentHere(root, id); x != nil {
		return x
	}
	dir, err := store.Dir(root, store.WhereDir, false)
	if err != nil {
		return nil
	}
	f, err := store.OpenFile(filepath.Join(dir, id[:n]), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil
	}
	data, ok := whereData(f)
	f.Close()
	target, found := whereLookup(data, id[n+1:])
	if !ok || !found {
		return nil
	}
	return loadWhereAs(root, id, target, &fileReads{plain: true, keep: true, noResponse: true})
}

// loadWhere loads the exchange an id's hint target names, checking the request's own header;
// nil when it does not hold.
func loadWhere(root, id, target string) *Exchange {
	return loadWhereAs(root, id, target, &fileReads{plain: true, keep: true})
}

// loadWhereAs is loadWhere reading through r.
func loadWhereAs(root, id, target string, r *fileReads) *Exchange {
	if len(target) > 256 {
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
	dir := filepath.Join(root, session)
	x := loadExchange(dir, seq, false, false, r)
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
