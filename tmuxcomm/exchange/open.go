package exchange

import (
	"context"
	"os"
	"path/filepath"
	"sort"

	"github.com/wcomm/wcomm/messages"
)

// OpenToWorker lists the ids of the requests addressed to the caller's pane that still wait for
// its response, newest first, leaving out except: what a notify without --id tells its worker
// is still open besides the request it answered. A request with a response file is closed
// without reading it, so a folder of hundreds of answered exchanges costs a stat each.
func (b *Book) OpenToWorker(ctx context.Context, except string) ([]string, error) {
	root, found, err := b.ReadRoot()
	if err != nil || !found {
		return nil, err
	}
	dirs, err := b.paneDirs(ctx, root, RoleWorker)
	if err != nil {
		return nil, err
	}
	var open []*Exchange
	for _, dir := range dirs {
		files, _, err := ListSeq(dir)
		if err != nil {
			continue
		}
		for _, f := range files {
			if f.Kind != messages.KindRequest {
				continue
			}
			if _, err := os.Lstat(filepath.Join(dir, messages.SeqFileName(f.N+1, messages.KindResponse))); err == nil {
				continue
			}
			if x := LoadExchange(dir, f.N, false); x.Status == StatusPending && x.ID != except {
				open = append(open, x)
			}
		}
	}
	sort.SliceStable(open, func(i, j int) bool { return open[i].SentAt.After(open[j].SentAt) })
	ids := make([]string, 0, len(open))
	for _, x := range open {
		ids = append(ids, orDashID(x.ID, x.RequestPath))
	}
	return ids, nil
}

// orDashID names an exchange by its id, or by its request's path when it has none (a seed's).
func orDashID(id, path string) string {
	if id != "" {
		return id
	}
	return path
}
