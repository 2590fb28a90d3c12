package exchange

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// maxListed bounds the ids an ambiguous tail lists: enough to pick from, never a screenful.
const maxListed = 10

// ExchangeID returns the request id ref names under the engine's root (ResolveID).
func (b *Book) ExchangeID(ref string) (string, error) {
	if messages.ValidID(ref) == nil {
		return ref, nil
	}
	if !messages.IsIDSuffix(ref) {
		return "", notAnID(ref)
	}
	root, found, err := b.ReadRoot()
	if err != nil {
		return "", err
	}
	if !found {
		return "", store.Kindf(store.ErrNotFound, "no exchanges yet (no root %s)", root)
	}
	return ResolveID(root, ref)
}

// ResolveID returns the request id ref names under root: ref itself when it is a whole id, else
// the one id that ends with ref, so a person types "a1b2" for 20260117-120000-a1b2. No id ending
// so is ErrNotFound, several ErrAmbiguous naming them (both exit 4); what can be no id's tail is
// a usage error. Every session folder's requests are read (their headers say their ids), so a
// tail is matched against every exchange, not only those wcomm recorded.
func ResolveID(root, ref string) (string, error) {
	if messages.ValidID(ref) == nil {
		return ref, nil
	}
	if !messages.IsIDSuffix(ref) {
		return "", notAnID(ref)
	}
	ids, err := IDsEnding(root, ref)
	if err != nil {
		return "", err
	}
	return OneOf("request", ref, ids, "wcomm history")
}

func notAnID(ref string) error {
	return core.Usagef("%q is neither a request id (YYYYMMDD-HHMMSS-xxxx) nor its unique end (a1b2)", messages.SanitizeField(ref))
}

// IDsEnding lists the ids of the requests under root that end with tail, once each.
func IDsEnding(root, tail string) ([]string, error) {
	dirs, _, err := SessionDirs(root)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, dir := range dirs {
		files, _, err := ListSeq(dir)
		if err != nil {
			continue
		}
		for _, f := range files {
			if f.Kind != messages.KindRequest {
				continue
			}
			line, err := store.ReadFirstLine(filepath.Join(dir, f.Name))
			if err != nil || !strings.Contains(line, tail) {
				continue
			}
			if h, err := messages.ParseRequestHeader(line); err == nil && strings.HasSuffix(h.ID, tail) {
				seen[h.ID] = true
			}
		}
	}
	return sortedSet(seen), nil
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// OneOf is the one id of ids that tail names, or the error that says there is none or several:
// what (request, question) names the kind, list the command that lists them. The questions'
// room uses it too, so both say it alike.
func OneOf(what, tail string, ids []string, list string) (string, error) {
	switch len(ids) {
	case 1:
		return ids[0], nil
	case 0:
		return "", store.Kindf(store.ErrNotFound, "no %s id ends with %s; run '%s' to list them", what, tail, list)
	}
	shown := ids
	more := ""
	if len(shown) > maxListed {
		shown, more = shown[len(shown)-maxListed:], fmt.Sprintf(" and %d more", len(ids)-maxListed)
	}
	return "", store.Kindf(store.ErrAmbiguous, "%d %s ids end with %s: %s%s; give more of the id", len(ids), what, tail, strings.Join(shown, ", "), more)
}
