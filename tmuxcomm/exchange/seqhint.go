package exchange

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
)

// seqHintName is the hidden file in a session folder that holds the number of the newest
// request claimed there ("000000000123"). It saves send a listing of the folder: an orchestrator
// and a worker that trade hundreds of exchanges fill one folder with thousands of files, and
// listing them took a millisecond per send at 600 exchanges, growing with each. It is only a
// hint: a missing, damaged or stale one costs the listing, never a wrong number.
// Its name is store.SeqHintName.
//
// It is rewritten in place, at a fixed width, rather than replaced: a replaced file frees an
// inode at every send, and on ext4 without a journal each freed inode slows every file created
// in the next minutes (see store.WriteSwapNoSync). A reader that meets a write half done reads a
// number that is wrong or no number, which costs what any bad hint costs. Earlier versions made
// it a symbolic link whose target was the number; such a link is still read, and replaced once.

// maxHintProbe bounds how far past the hint probing goes before the listing is cheaper.
const maxHintProbe = 64

// hintFreeRun is how many numbers in a row without a file end the probe. wcomm leaves at most one
// free (a response not written yet); a seed sender numbers its request after a count of the
// folder's .md files, which can skip a few more when other .md files lie there.
const hintFreeRun = 8

// seqHintWidth is the hint's digits: every number it holds has the same length, so a rewrite
// covers the old one whole.
const seqHintWidth = 12

// readSeqHint returns the number the folder's hint names.
func readSeqHint(dir string) (int, bool) {
	path := filepath.Join(dir, store.SeqHintName)
	// A hint is a file this user made; one another user planted is no hint (see storeDir).
	st, err := os.Lstat(path)
	if err != nil || store.CheckOwned(path, st) != nil {
		return 0, false
	}
	var text string
	switch {
	case st.Mode()&fs.ModeSymlink != 0: // an earlier version's link, never followed
		if text, err = os.Readlink(path); err != nil {
			return 0, false
		}
	case st.Mode().IsRegular() && st.Size() <= seqHintWidth+1:
		f, err := store.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return 0, false
		}
		var buf [seqHintWidth + 1]byte
		k, _ := io.ReadFull(f, buf[:])
		f.Close()
		text = strings.TrimSuffix(string(buf[:k]), "\n")
	default:
		return 0, false
	}
	if len(text) > seqHintWidth {
		return 0, false
	}
	n, err := strconv.Atoi(text)
	return n, err == nil && n >= 1
}

// writeSeqHint records n as the newest request number claimed in dir. Best effort: written in
// place when the hint is a file already, else made whole under a temporary name and renamed into
// place (the first time, or over an earlier version's link, which O_NOFOLLOW refuses to open).
func writeSeqHint(dir string, n int) {
	text := fmt.Sprintf("%0*d\n", seqHintWidth, n)
	if len(text) != seqHintWidth+1 {
		return
	}
	path := filepath.Join(dir, store.SeqHintName)
	if f, err := store.OpenFile(path, os.O_WRONLY|syscall.O_NOFOLLOW, 0); err == nil {
		_, err = f.WriteAt([]byte(text), 0)
		if err == nil {
			err = f.Truncate(int64(len(text))) // a longer file from elsewhere loses its tail
		}
		f.Close()
		if err == nil {
			return
		}
	}
	_ = store.WriteAtomicNoSync(path, []byte(text))
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
