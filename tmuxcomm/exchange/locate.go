package exchange

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
)

type role int

const (
	RoleOrchestrator role = iota
	RoleWorker
)

// SessionDirs returns the session folders of the root in name order (oldest first), and the names
// of anything else found there.
func SessionDirs(root string) (dirs []string, foreign []string, err error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, nil, fmt.Errorf("read root %s: %w", root, err)
	}
	for _, ent := range entries {
		name := ent.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		if _, err := messages.ParseSessionName(name); err != nil || !ent.IsDir() || ent.Type()&os.ModeSymlink != 0 {
			foreign = append(foreign, name)
			continue
		}
		// A session folder another user planted is never read: its files could say anything.
		if st, err := ent.Info(); err != nil || store.CheckOwned(filepath.Join(root, name), st) != nil {
			foreign = append(foreign, name+" (not yours: owned by another user)")
			continue
		}
		dirs = append(dirs, filepath.Join(root, name))
	}
	sort.Strings(dirs)
	return dirs, foreign, nil
}

// WorkingOn returns the request a worker's pane works on: ref (an id or a path) or, for "", the
// newest unanswered request addressed to the caller's pane.
func (b *Book) WorkingOn(ctx context.Context, ref string) (*Exchange, error) {
	return b.Locate(ctx, ref, RoleWorker)
}

// Locate finds one exchange: by id, by the path of its request or response file (inside the
// root), or, for "", the newest unanswered exchange of the caller's pane in the given role on the
// current tmux server.
func (b *Book) Locate(ctx context.Context, ref string, r role) (*Exchange, error) {
	if ref != "" && !strings.ContainsRune(ref, '/') {
		if err := core.CheckRef(ref); err != nil {
			return nil, err
		}
	}
	root, found, err := b.ReadRoot()
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, store.Kindf(store.ErrNotFound, "no exchanges yet (no root %s)", root)
	}
	if messages.IsIDSuffix(ref) {
		// The unique end of an id (a1b2), as a person types it.
		if ref, err = ResolveID(root, ref); err != nil {
			return nil, err
		}
	}
	switch {
	case ref == "":
		return b.newestOpen(ctx, root, r)
	case strings.ContainsRune(ref, '/'):
		return b.byPath(root, ref)
	default:
		return b.ByID(root, ref)
	}
}

// byPath loads the exchange a request or response path belongs to.
func (b *Book) byPath(root, path string) (*Exchange, error) {
	clean, err := store.InRoot(root, path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(clean)
	if filepath.Dir(dir) != root {
		return nil, store.Kindf(store.ErrOutsideRoot, "%s is not a file of a session folder directly under %s", clean, root)
	}
	if _, err := messages.ParseSessionName(filepath.Base(dir)); err != nil {
		return nil, fmt.Errorf("%s is not in a session folder: %w", clean, err)
	}
	n, k, ok := messages.ParseSeqFileName(filepath.Base(clean))
	if !ok {
		return nil, fmt.Errorf("%s is not a request or response file (NNN-request.md, NNN-response.md)", clean)
	}
	if k == messages.KindResponse {
		// The request may name another response file (a seed sender counting files); find the
		// request that points at this one.
		if x := findByResponse(dir, clean); x != nil {
			return x, nil
		}
		n--
	}
	if _, err := os.Lstat(filepath.Join(dir, messages.SeqFileName(n, messages.KindRequest))); err != nil {
		return nil, store.Kindf(store.ErrNotFound, "no request for %s", clean)
	}
	return LoadExchange(dir, n, false), nil
}

func findByResponse(dir, response string) *Exchange {
	// wcomm pairs request N with response N+1: look there before listing the folder.
	if n, _, ok := messages.ParseSeqFileName(filepath.Base(response)); ok && n > 1 {
		if _, err := os.Lstat(filepath.Join(dir, messages.SeqFileName(n-1, messages.KindRequest))); err == nil {
			if x := LoadExchange(dir, n-1, false); x.ResponsePath == response {
				return x
			}
		}
	}
	files, _, err := ListSeq(dir)
	if err != nil {
		return nil
	}
	for i := len(files) - 1; i >= 0; i-- {
		f := files[i]
		if f.Kind != messages.KindRequest {
			continue
		}
		x := LoadExchange(dir, f.N, false)
		if x.ResponsePath == response {
			return x
		}
	}
	return nil
}

// ByID finds an exchange by id: through the id's claim, which says where its request is (so the
// number of other sessions does not matter), else by scanning request headers. Session folders are named by their start stamp and an
// id starts with its send time, so folders named more than maxSessionBump seconds after the id's
// time are skipped (a folder's name may be dated up to that much after its creation).
func (b *Book) ByID(root, id string) (*Exchange, error) {
	// Not an id (a broadcast's, a short or hostile one): no exchange has it. Its stamp is cut
	// from it below and its claim is a file named by it, so it is refused before either.
	if messages.ValidID(id) != nil {
		return nil, store.Kindf(store.ErrNotFound, "no exchange with id %s under %s; run 'wcomm history' to list them", messages.SanitizeField(id), root)
	}
	if x := IDWhere(root, id); x != nil {
		return x, nil
	}
	dirs, _, err := SessionDirs(root)
	if err != nil {
		return nil, err
	}
	latest := ""
	if t, err := time.Parse(messages.StampLayout, id[:len(messages.StampLayout)]); err == nil {
		latest = t.Add(maxSessionBump * time.Second).Format(messages.StampLayout)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		dir := dirs[i]
		if s, err := messages.ParseSessionName(filepath.Base(dir)); err == nil && latest != "" && s.StartedAt > latest {
			continue
		}
		files, _, err := ListSeq(dir)
		if err != nil {
			continue
		}
		for j := len(files) - 1; j >= 0; j-- {
			f := files[j]
			if f.Kind != messages.KindRequest {
				continue
			}
			line, err := store.ReadFirstLine(filepath.Join(dir, f.Name))
			if err != nil || !strings.Contains(line, "id="+id+" ") && !strings.Contains(line, "id="+id+"]") {
				continue
			}
			if h, err := messages.ParseRequestHeader(line); err == nil && h.ID == id {
				return LoadExchange(dir, f.N, false), nil
			}
		}
	}
	return nil, store.Kindf(store.ErrNotFound, "no exchange with id %s under %s; run 'wcomm history' to list them", id, root)
}

// newestOpen finds the newest open exchange where the caller's pane has role r: for a worker, one
// still waiting for its response; for an orchestrator, one whose response no await has returned.
// Only folders of the current server count when wcomm made them (a seed folder has no record).
func (b *Book) newestOpen(ctx context.Context, root string, r role) (*Exchange, error) {
	dirs, err := b.paneDirs(ctx, root, r)
	if err != nil {
		return nil, err
	}
	var best *Exchange
	for _, dir := range dirs {
		files, _, err := ListSeq(dir)
		if err != nil {
			continue
		}
		// Newest first, and only the newest open one of each folder: numbers are claimed in
		// sending order, so a folder of hundreds of closed exchanges is not read whole.
		for i := len(files) - 1; i >= 0; i-- {
			f := files[i]
			if f.Kind != messages.KindRequest {
				continue
			}
			x := LoadExchange(dir, f.N, false)
			// A held request has not reached its worker: it is not the one the worker answers.
			open := x.Status == StatusPending && x.State != StateHeld
			if r == RoleOrchestrator {
				// The orchestrator's default is the newest response it has not read yet.
				open = (x.Status == StatusPending || x.Status == StatusAnswered) && !x.Read
			}
			if !open {
				continue
			}
			if best == nil || x.SentAt.After(best.SentAt) || (x.SentAt.Equal(best.SentAt) && x.Seq > best.Seq) {
				best = x
			}
			break
		}
	}
	if best == nil {
		what := "sent from"
		if r == RoleWorker {
			what = "addressed to"
		}
		return nil, store.Kindf(store.ErrNotFound, "no open request %s pane %s; name one by id or path (wcomm history --pending)", what, b.Self)
	}
	return best, nil
}

// paneDirs lists the session folders where the caller's pane has role r on the current tmux
// server (a seed folder, without wcomm's record of its server, counts).
func (b *Book) paneDirs(ctx context.Context, root string, r role) ([]string, error) {
	if b.Self == "" {
		return nil, fmt.Errorf("not inside a tmux pane: name the exchange by id or path")
	}
	key := ""
	if b.Tmux != nil {
		if srv, err := b.Tmux.ServerInfo(ctx); err == nil {
			key = srv.Key()
		}
	}
	dirs, _, err := SessionDirs(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, dir := range dirs {
		s, _ := messages.ParseSessionName(filepath.Base(dir))
		mine := s.Orchestrator == b.Self
		if r == RoleWorker {
			mine = s.Worker == b.Self
		}
		if !mine {
			continue
		}
		if m, err := ReadMeta(dir); err == nil && key != "" && m.Server != key {
			continue
		}
		out = append(out, dir)
	}
	return out, nil
}
