package loops

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// Action is what becomes of a request.
type Action int

// The actions.
const (
	Accept Action = iota // delivered as usual
	Hold                 // written, and held in the receiver's outbox for a person to release
	Refuse               // not written: the sender gets an error
)

// Verdict is a decision and its reason.
type Verdict struct {
	Action Action
	// Why says it in words for the sender, the inbox and the person ("" when accepted).
	Why string
	// Key names what the request was held for, so the person hears once of each: "chain-ID",
	// "pair-pN-pM" (from pane N to pane M), "source-pN-pM".
	Key string
}

// Policy returns the first inbound rule that matches one of the sender's names (its pane id, its
// session:window.pane, its agent; "relayed:%N" for a request relayed from another host), as a
// verdict: refuse, hold, or accept (also when none matches). from and to name the pair in the
// verdict's key.
func Policy(l settings.Loops, from, to messages.PaneID, names ...string) Verdict {
	for _, r := range l.Inbound {
		for _, n := range names {
			if ok, _ := path.Match(r.From, n); !ok || n == "" {
				continue
			}
			switch r.Policy {
			case settings.PolicyRefuse:
				return Verdict{Action: Refuse, Why: fmt.Sprintf("the settings refuse requests from %s (loops.inbound: from %q, policy refuse)", n, r.From)}
			case settings.PolicyHold:
				return Verdict{Action: Hold, Key: fmt.Sprintf("source-p%d-p%d", from.Num(), to.Num()),
					Why: fmt.Sprintf("the settings hold requests from %s for you to release (loops.inbound: from %q, policy hold)", n, r.From)}
			}
			return Verdict{}
		}
	}
	return Verdict{}
}

// Decide says whether a request at depth of chain, from pane from to pane to, which from has
// already sent recent chained requests in the window, is over a cap. A request that begins its
// chain (depth 1) is never held: it is the person's own dispatch, not an agent answering one.
func Decide(l settings.Loops, from, to messages.PaneID, chain string, depth, recent int) Verdict {
	if depth < 2 {
		return Verdict{}
	}
	if l.ChainDepth > 0 && depth > l.ChainDepth {
		return Verdict{Action: Hold, Key: "chain-" + chain,
			Why: fmt.Sprintf("request chain %s is %d requests deep, past loops.chain_depth %d: agents may be answering each other in a loop", chain, depth, l.ChainDepth)}
	}
	if l.Rate > 0 && recent >= l.Rate {
		return Verdict{Action: Hold, Key: fmt.Sprintf("pair-p%d-p%d", from.Num(), to.Num()),
			Why: fmt.Sprintf("%d chained requests to this pane in %s already, loops.rate %d/%s: agents may be answering each other in a loop", recent, l.Per, l.Rate, l.Per)}
	}
	return Verdict{}
}

// Recent counts the chained requests (depth 2 and more) of a session folder written at or after
// since: newest first, so only the window's files are read.
func Recent(dir string, since time.Time) int {
	files, _, err := exchange.ListSeq(dir)
	if err != nil {
		return 0
	}
	n := 0
	for i := len(files) - 1; i >= 0; i-- {
		f := files[i]
		if f.Kind != messages.KindRequest {
			continue
		}
		p := filepath.Join(dir, f.Name)
		st, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if st.ModTime().Before(since) {
			break
		}
		line, err := store.ReadFirstLine(p)
		if err != nil {
			continue
		}
		if h, err := messages.ParseRequestHeader(line); err == nil && h.Chain != "" {
			n++
		}
	}
	return n
}

// workerFolders remembers, per root and pane, the names of the session folders whose worker the
// pane is (store.DirMemo): a sender looks for the request it handles at each send, and the root,
// which may hold thousands of folders, is listed again only once it changed.
var workerFolders store.DirMemo[[]string]

// Parent is the request the pane self is handling, whose chain a request it sends continues:
// the newest request addressed to it that is open (not held, cancelled or undelivered), or was
// answered at or after since (a worker that answers and then asks again is still in the same
// conversation). server, when not "", keeps to session folders of that tmux server. nil: none.
func Parent(root string, self messages.PaneID, server string, since time.Time) *exchange.Exchange {
	// Names first: a root may hold thousands of session folders, and only those whose worker is
	// self are read (SessionDirs would stat each one).
	names, err := workerFolders.Get(root, root+"\x00"+string(self), func() ([]string, error) {
		d, err := os.Open(root)
		if err != nil {
			return nil, err
		}
		all, _ := d.Readdirnames(-1)
		d.Close()
		var names []string
		for _, name := range all {
			if s, err := messages.ParseSessionName(name); err == nil && s.Worker == self && s.Orchestrator != self {
				names = append(names, name)
			}
		}
		return names, nil
	})
	if err != nil {
		return nil
	}
	var best *exchange.Exchange
	for _, name := range names {
		dir := filepath.Join(root, name)
		// A session folder another user planted is never read: its files could say anything.
		if st, err := os.Lstat(dir); err != nil || !st.IsDir() || store.CheckOwned(dir, st) != nil {
			continue
		}
		if m, err := exchange.ReadMeta(dir); err == nil && server != "" && m.Server != server {
			continue
		}
		files, _, err := exchange.ListSeq(dir)
		if err != nil {
			continue
		}
		// Newest first, and the first that counts in each folder: numbers are claimed in
		// sending order. One answered before the window ends the look: the worker was done
		// with that conversation, and an older request left open is not what it handles now
		// (nor are the hundreds before it read on every send).
		for i := len(files) - 1; i >= 0; i-- {
			f := files[i]
			if f.Kind != messages.KindRequest {
				continue
			}
			x := exchange.LoadExchange(dir, f.N, false)
			if x.AnsweredAt != nil && x.AnsweredAt.Before(since) {
				break
			}
			if !handling(x, since) {
				continue
			}
			if best == nil || x.SentAt.After(best.SentAt) {
				best = x
			}
			break
		}
	}
	return best
}

// handling reports whether x is open for its worker, or was answered at or after since.
func handling(x *exchange.Exchange, since time.Time) bool {
	if x.Request() == nil {
		return false
	}
	if x.AnsweredAt != nil {
		return !x.AnsweredAt.Before(since)
	}
	// Open, and not kept from it: a program reads a paste before the Enter that submits it, so
	// "written" and "queued" count too (a delivery is recorded once its Enter is pressed).
	return x.Status == exchange.StatusPending && x.State != exchange.StateHeld && x.State != exchange.StateCancelled
}

// Child is the chain and depth of a request sent while handling parent (nil: none).
func Child(parent *exchange.Exchange) (chain string, depth int) {
	if parent == nil || parent.Request() == nil {
		return "", 0
	}
	h := parent.Request().Header
	return h.ChainID(), h.ChainDepth() + 1
}
