package bridge

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	files "github.com/wcomm/wcomm/tmuxcomm/store"
)

// watcher wakes the bridge as soon as a file is added under the root (the store's tree watcher on
// the root and each session folder), so a new question is posted without waiting for the next
// look; the looks go on as the fallback. A nil watcher (none could be had) watches nothing.
type watcher struct {
	tw   *files.TreeWatcher
	dirs map[string]bool // the folders watched; add is called by the hub's loop alone
}

func newWatcher() *watcher {
	tw, err := files.NewTreeWatcher()
	if err != nil {
		return nil
	}
	return &watcher{tw: tw, dirs: map[string]bool{}}
}

// add watches root and every session folder in it not yet watched.
func (w *watcher) add(root string) {
	if w == nil {
		return
	}
	if !w.dirs[root] && w.tw.Add(root) == nil {
		w.dirs[root] = true
	}
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		p := filepath.Join(root, e.Name())
		if strings.HasPrefix(e.Name(), ".") || !e.IsDir() || w.dirs[p] {
			continue
		}
		if w.tw.Add(p) == nil {
			w.dirs[p] = true
		}
	}
}

// run calls poke on every batch of events until ctx ends.
func (w *watcher) run(ctx context.Context, poke func()) {
	if w == nil {
		return
	}
	defer w.tw.Close()
	for {
		evs, err := w.tw.Next(ctx)
		if err != nil {
			return
		}
		if len(evs) > 0 {
			poke()
		}
	}
}
