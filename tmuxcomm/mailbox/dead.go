package mailbox

// Dead letters: mail that ended without reaching its pane (its time to live passed, or the pane
// could not take it). Each outbox keeps what became of its mail for a week (done/); this lists
// the dead ones of every pane, for the answer channels to tell a person, who may re-send them.

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// DeadLetter is one message that never reached its pane.
type DeadLetter struct {
	ID        string            `json:"id"`
	Kind      messages.MailKind `json:"kind"`
	Pane      messages.PaneID   `json:"pane"`
	From      messages.PaneID   `json:"from,omitempty"`
	Exchange  string            `json:"exchange,omitempty"`
	Questions []string          `json:"questions,omitempty"`
	// State is messages.MailExpired or messages.MailUndeliverable; Detail says why. It is "held"
	// for the first request a loop cap held of a chain or pair (held.go): the person is told of
	// that once, with ID the id of that first held mail.
	State  string    `json:"state"`
	At     time.Time `json:"at"`
	Detail string    `json:"detail,omitempty"`
	// Next, when not "", is what a person may do, said by the room that made a notice of another
	// kind (a pane not restarted again, tmuxcomm/lifecycle): Detail then says the whole of it.
	Next string `json:"next,omitempty"`
}

// DeadLetters lists the mail of every outbox under the root that ended expired or undeliverable
// at or after since, oldest first. An outcome file that does not read is a problem, not an
// error; no root or no outbox is an empty list. Only outcome files written since then are read.
func (of *Office) DeadLetters(since time.Time) ([]DeadLetter, []string) {
	root, found, err := of.ReadRoot()
	if err != nil {
		return nil, []string{err.Error()}
	}
	if !found {
		return nil, nil
	}
	boxes, err := os.ReadDir(filepath.Join(root, store.OutboxDir))
	if err != nil {
		return nil, nil
	}
	out, problems := heldNotices(filepath.Join(root, store.ToldDir), since, of.Now())
	for _, box := range boxes {
		if !box.IsDir() {
			continue
		}
		done := filepath.Join(root, store.OutboxDir, box.Name(), store.OutboxDoneDir)
		ents, err := os.ReadDir(done)
		if err != nil {
			continue
		}
		for _, ent := range ents {
			id, ok := strings.CutSuffix(ent.Name(), mailSuffix)
			if !ok || !ent.Type().IsRegular() || messages.ValidMailID(id) != nil {
				continue
			}
			if info, err := ent.Info(); err != nil || info.ModTime().Before(since) {
				continue // written before since: no outcome in it is newer
			}
			path := filepath.Join(done, ent.Name())
			data, err := store.ReadFile(path)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			o, err := messages.ParseMailOutcome(data)
			if err != nil {
				problems = append(problems, path+":1: "+err.Error())
				continue
			}
			if (o.State != messages.MailExpired && o.State != messages.MailUndeliverable) || o.At.Before(since) {
				continue
			}
			m := o.Mail
			out = append(out, DeadLetter{ID: m.ID, Kind: m.Kind, Pane: m.Pane, From: m.From, Exchange: m.Exchange,
				Questions: m.Question, State: o.State, At: o.At, Detail: o.Detail})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, problems
}

// heldNotices lists the notices of the root's told folder claimed at or after since: one per
// chain or pair held, each the first request held of it. A claim older than a week goes, as
// outcomes do.
func heldNotices(dir string, since, now time.Time) ([]DeadLetter, []string) {
	ns, problems := store.ReadNotices(dir, mailSuffix, since, now, outcomeKeepFor)
	var out []DeadLetter
	for _, n := range ns {
		m, err := messages.ParseMail(n.Data)
		if err != nil {
			problems = append(problems, n.Path+":1: "+err.Error())
			continue
		}
		out = append(out, DeadLetter{ID: m.ID, Kind: m.Kind, Pane: m.Pane, From: m.From, Exchange: m.Exchange,
			State: exchange.StateHeld, At: m.QueuedAt, Detail: m.Held})
	}
	return out, problems
}
