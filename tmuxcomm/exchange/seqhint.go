package exchange

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
)

// seqHintName is the hidden symlink in a session folder whose target text is the number of the
// newest request claimed there ("123"). It saves send a listing of the folder: an orchestrator
// and a worker that trade hundreds of exchanges fill one folder with thousands of files, and
// listing them took a millisecond per send at 600 exchanges, growing with each. Like the id hints
// (RecordID) it is a link for its text, never followed, and only a hint: a missing, damaged or
// stale one costs the listing, never a wrong number.
// Its name is store.SeqHintName.

// maxHintProbe bounds how far past the hint probing goes before the listing is cheaper.
const maxHintProbe = 64

// hintFreeRun is how many numbers in a row without a file end the probe. wcomm leaves at most one
// free (a response not written yet); a seed sender numbers its request after a count of the
// folder's .md files, which can skip a few more when other .md files lie there.
const hintFreeRun = 8

// readSeqHint returns the number the folder's hint names.
func readSeqHint(dir string) (int, bool) {
	// A hint is a link this user made; one another user planted is no hint (see storeDir).
	if st, err := os.Lstat(filepath.Join(dir, store.SeqHintName)); err != nil || store.CheckOwned(filepath.Join(dir, store.SeqHintName), st) != nil {
		return 0, false
	}
	target, err := os.Readlink(filepath.Join(dir, store.SeqHintName))
	if err != nil || len(target) > 12 {
		return 0, false
	}
	n, err := strconv.Atoi(target)
	return n, err == nil && n >= 1
}

// writeSeqHint records n as the newest request number claimed in dir. Best effort: the link is
// made under a temporary name and renamed over the old one, so a reader sees one whole hint.
func writeSeqHint(dir string, n int) {
	tmp := filepath.Join(dir, fmt.Sprintf("%s.%d-%d", store.SeqHintName, os.Getpid(), n))
	if err := os.Symlink(strconv.Itoa(n), tmp); err != nil {
		return
	}
	if err := os.Rename(tmp, filepath.Join(dir, store.SeqHintName)); err != nil {
		os.Remove(tmp)
	}
}

// nextFromHint finds the next request number of dir from hint h, the way nextRequestNumber finds
// it from a listing, by looking only at the numbers from h up: the request h must exist, and the
// newest numbered file is the last one before hintFreeRun numbers in a row that have none. ok is
// false whenever that cannot be told this way, and the caller lists the folder.
//
// What it cannot see, the listing would: a foreign file numbered past a longer run of free
// numbers, or with other zero padding than SeqFileName's. The number it gives is still claimed
// with an exclusive create, so it never takes an existing exchange's place; it may only sort
// before that foreign file, and the next claim, probing past it from the new hint, goes above it.
func nextFromHint(dir string, h int) (int, bool) {
	has := func(n int, k messages.Kind) (bool, bool) {
		_, err := os.Lstat(filepath.Join(dir, messages.SeqFileName(n, k)))
		if err == nil {
			return true, true
		}
		return false, errors.Is(err, fs.ErrNotExist)
	}
	if req, ok := has(h, messages.KindRequest); !ok || !req {
		return 0, false
	}
	last, lastKind := h, messages.KindRequest
	for n, free := h+1, 0; free < hintFreeRun; n++ {
		if n-h > maxHintProbe {
			return 0, false
		}
		req, ok1 := has(n, messages.KindRequest)
		resp, ok2 := has(n, messages.KindResponse)
		switch {
		case !ok1 || !ok2:
			return 0, false
		case req:
			last, lastKind, free = n, messages.KindRequest, 0
		case resp:
			last, lastKind, free = n, messages.KindResponse, 0
		default:
			free++
		}
	}
	if lastKind == messages.KindRequest {
		return last + 2, true
	}
	return last + 1, true
}
