package tmuxcomm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
