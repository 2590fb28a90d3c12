package mailbox

// Held mail: a request over a loop cap (the loops room decides) waits in its pane's outbox, in
// held/ID.json beside the queue, where no deliverer, hook or inbox takes it: only a person's
// release (Release) moves it into the queue, and its sender may withdraw it (Cancel). It is never
// dropped: it has no time to live while held. The first held request of each chain or pair of
// panes claims ROOT/.told/KEY.json, which DeadLetters lists, so the answer channels tell the person
// once of each, whichever pane's outbox the next ones of that chain are held in.

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// Held is a request held in a pane's outbox.
type Held struct {
	Mail messages.Mail
	// Told: this hold claimed its chain's or pair's notice (the person is told of it).
	Told bool
}

// Hold writes m to the held folder of its pane's outbox with why it is held, and records "held"
// in its exchange's log. key names the chain or pair it was held for; the first hold of a key
// claims the notice the answer channels tell. The file is synced: a held request is never lost.
func (o *Office) Hold(root string, m messages.Mail, why, key string) (*Held, error) {
	now := o.Now()
	id, err := messages.NewMailID(now, rand.Reader)
	if err != nil {
		return nil, err
	}
	m.ID, m.QueuedAt, m.Expires = id, now.UTC(), now.UTC().Add(o.mailTTL())
	m.Held, m.HeldKey = why, key
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("hold mail: %w", err)
	}
	ob, err := OpenOutbox(root, m.Server, m.Pane, true)
	if err != nil {
		return nil, err
	}
	if err := store.EnsureDir(ob.Path(store.OutboxHeldDir), true); err != nil {
		return nil, err
	}
	if err := store.WriteExclusive(ob.Path(store.OutboxHeldDir, m.ID+mailSuffix), messages.FormatMail(m)); err != nil {
		return nil, fmt.Errorf("hold request %s in the outbox of pane %s: %w", m.Exchange, m.Pane, err)
	}
	h := &Held{Mail: m}
	if told, err := store.Dir(root, store.ToldDir, true); err == nil && validKey(key) {
		err := store.WriteExclusive(filepath.Join(told, key+mailSuffix), messages.FormatMail(m))
		h.Told = err == nil
	}
	if err := o.logHeld(root, m, exchange.StateHeld, map[string]string{"pane": string(m.Pane), "mail": m.ID, "reason": why, "key": key}); err != nil {
		return h, fmt.Errorf("held in the outbox of pane %s, but %w", m.Pane, err)
	}
	return h, nil
}

// validKey reports whether key may name a file: a hold's key is made of ids and pane numbers.
func validKey(key string) bool {
	if key == "" || len(key) > 80 {
		return false
	}
	for _, r := range key {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r == '-') {
			return false
		}
	}
	return true
}

// logHeld records a step of a held request in its exchange's log.
func (o *Office) logHeld(root string, m messages.Mail, state string, detail map[string]string) error {
	dir, err := sessionDir(root, m)
	if err != nil {
		return err
	}
	if err := exchange.LogEvent(dir, m.Seq, state, detail, o.Now()); err != nil {
		return fmt.Errorf("%w: record %s of %s: %w", store.ErrNotRecorded, state, m.Exchange, err)
	}
	return nil
}

// held lists the held mail of an outbox, oldest first. A file whose mail is also queued or ended
// (a release or cancel stopped half way) is the clean-up that process did not finish.
func (ob *outbox) held() ([]messages.Mail, []string) {
	names, err := mailNames(ob.Path(store.OutboxHeldDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []string{err.Error()}
	}
	var mail []messages.Mail
	var problems []string
	for _, id := range names {
		path := ob.Path(store.OutboxHeldDir, id+mailSuffix)
		if _, err := os.Lstat(ob.Path(store.OutboxQueueDir, id+mailSuffix)); err == nil || ob.ended(id) {
			os.Remove(path)
			continue
		}
		m, problem, ok := ob.readMail(path, id)
		if problem != "" {
			problems = append(problems, problem)
		}
		if ok {
			mail = append(mail, m)
		}
	}
	return mail, problems
}

// HeldMail lists the held requests of every outbox under the root, oldest first per pane.
func (o *Office) HeldMail(root string) ([]messages.Mail, []string) {
	boxes, err := os.ReadDir(filepath.Join(root, store.OutboxDir))
	if err != nil {
		return nil, nil
	}
	var out []messages.Mail
	var problems []string
	for _, box := range boxes {
		i := strings.LastIndex(box.Name(), "-p") // SERVERKEY-pN: the key holds dashes, N none
		if i < 0 || !box.IsDir() {
			continue
		}
		server, num := box.Name()[:i], box.Name()[i+2:]
		ob, err := OpenOutbox(root, server, messages.PaneID("%"+num), false)
		if err != nil {
			continue
		}
		mail, probs := ob.held()
		out = append(out, mail...)
		problems = append(problems, probs...)
	}
	return out, problems
}

// Release moves held request m into its outbox's queue, with a new time to live, and starts the
// pane's deliverer: it is then delivered as any queued request, once. A request released or
// cancelled meanwhile is an error (store.ErrNotFound).
func (o *Office) Release(root string, m messages.Mail) (*core.Posted, error) {
	ob, err := OpenOutbox(root, m.Server, m.Pane, false)
	if err != nil {
		return nil, err
	}
	unlock, err := ob.lockDrain(o.LockTimeout)
	if err != nil {
		return nil, err
	}
	defer unlock()
	path := ob.Path(store.OutboxHeldDir, m.ID+mailSuffix)
	if _, err := os.Lstat(path); err != nil || ob.ended(m.ID) {
		return nil, fmt.Errorf("request %s is not held in the outbox of pane %s any more (released or cancelled already): %w", m.Exchange, m.Pane, store.ErrNotFound)
	}
	q := m
	q.Held, q.HeldKey = "", ""
	q.Expires = o.Now().UTC().Add(o.mailTTL())
	if err := ob.put(q); errors.Is(err, store.ErrExists) {
		return nil, fmt.Errorf("request %s was released already: %w", m.Exchange, store.ErrNotFound)
	} else if err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	p := &core.Posted{Mail: q, Queued: true, Reason: "released from hold"}
	rerr := o.recordMail(root, []messages.Mail{q}, evQueued, map[string]string{"pane": string(q.Pane), "mail": q.ID, "reason": "released from hold: " + m.Held}, o.Now())
	if err := o.EnsureDeliverer(ob, q.Socket); err != nil {
		p.Reason += "; " + err.Error()
	}
	if rerr != nil {
		return p, fmt.Errorf("released into the outbox of pane %s, but %w", q.Pane, rerr)
	}
	return p, nil
}

// ErrDelivered: the request has already reached its pane, so it cannot be withdrawn.
var ErrDelivered = errors.New("already delivered")

// Cancel withdraws request seq of session from the outbox of pane on server, queued or held,
// before any delivery: its outcome is recorded "cancelled" (synced) and its exchange's log says
// so, so no deliverer, hook or inbox ever hands it over. found is false when the outbox holds no
// such request (never queued, or ended already: the caller tells which from the exchange).
func (of *Office) Cancel(root, server string, pane messages.PaneID, session string, seq int) (found bool, err error) {
	ob, err := OpenOutbox(root, server, pane, false)
	if err != nil {
		return false, nil
	}
	unlock, err := ob.lockDrain(of.LockTimeout)
	if err != nil {
		return false, err
	}
	defer unlock()
	match := func(m messages.Mail) bool {
		return m.Kind == messages.MailRequest && m.Session == session && m.Seq == seq
	}
	var m messages.Mail
	from := ""
	held, _ := ob.held()
	pend, _ := ob.Pending()
	for _, c := range []struct {
		dir  string
		mail []messages.Mail
	}{{store.OutboxHeldDir, held}, {store.OutboxQueueDir, pend}} {
		for _, h := range c.mail {
			if match(h) && from == "" {
				m, from = h, c.dir
			}
		}
	}
	if from == "" {
		return false, nil
	}
	if f, err := ob.readInflight(); err == nil && f != nil {
		for _, id := range f.IDs {
			if id == m.ID {
				// A delivery stopped between its paste and its Enter: the text may be in the
				// pane already, and recovery finishes it.
				return true, fmt.Errorf("request %s is being typed into pane %s now: %w", m.Exchange, pane, ErrDelivered)
			}
		}
	}
	o := messages.MailOutcome{Mail: m, State: messages.MailCancelled, At: of.Now().UTC(), Detail: "withdrawn by its sender (wcomm cancel)"}
	if err := store.WriteExclusive(ob.Path(store.OutboxDoneDir, m.ID+mailSuffix), messages.FormatMailOutcome(o)); err != nil {
		if errors.Is(err, store.ErrExists) {
			return false, nil // ended meanwhile
		}
		return true, fmt.Errorf("cancel request %s: %w", m.Exchange, err)
	}
	if err := os.Remove(ob.Path(from, m.ID+mailSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return true, err
	}
	return true, of.logHeld(root, m, exchange.StateCancelled, map[string]string{"pane": string(pane), "mail": m.ID, "reason": o.Detail})
}
