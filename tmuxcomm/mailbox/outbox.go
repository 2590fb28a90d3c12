package mailbox

// The outbox of one pane: the durable queue of everything wcomm is to type into that pane. A
// message is a file queue/ID.json, written once (ids sort by time, so name order is arrival
// order); what became of it is a file done/ID.json, claimed with writeExclusive, so however many
// processes race, a message ends once. Delivering takes drain.lock, so one process at a time
// types from an outbox, and writes inflight.json before it pastes: a deliverer killed mid-way
// leaves that file, and the pane's own marks (paneops.Delivery.Mark) say how far it got. The
// deliverer holds deliverer.lock for its whole life, so at most one runs per pane.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
)

// mailSuffix ends a message's file name in an outbox (the folders' names are the store's).
const mailSuffix = ".json"

// outcomeKeepFor is how long an ended message's record is kept (for inbox --all).
const outcomeKeepFor = 7 * 24 * time.Hour

// outbox is one pane's outbox folder: ROOT/.outbox/SERVERKEY-pN.
type outbox struct {
	Dir    string
	server string
	pane   messages.PaneID
	// direct is the id of the mail this process is delivering without a queue record (Post's
	// direct path): its delivery log is its record, and no outcome file is written for it.
	direct string
	// noInflight: recoverInflight found no in-flight record, under the drain lock still held, so
	// the next deliverGroup need not read it again (no other process writes it under that lock).
	noInflight bool
}

// outboxName is the folder name of a pane's outbox on a server.
func outboxName(server string, pane messages.PaneID) (string, error) {
	n, err := messages.ParsePaneID(string(pane))
	if err != nil {
		return "", err
	}
	for _, r := range server {
		if !(r >= '0' && r <= '9' || r == '-') {
			return "", fmt.Errorf("server key %q is not PID-STARTTIME", messages.SanitizeField(server))
		}
	}
	if server == "" {
		return "", fmt.Errorf("empty server key")
	}
	return server + "-p" + fmt.Sprint(n.Num()), nil
}

// OpenOutbox returns the outbox of pane on server, creating its folders (0700, never through a
// symlink) when create is set.
func OpenOutbox(root, server string, pane messages.PaneID, create bool) (*outbox, error) {
	name, err := outboxName(server, pane)
	if err != nil {
		return nil, err
	}
	if _, err := store.Dir(root, store.OutboxDir, create); err != nil {
		return nil, err
	}
	ob := &outbox{Dir: filepath.Join(root, store.OutboxDir, name), server: server, pane: pane}
	for _, d := range []string{ob.Dir, ob.Path(store.OutboxQueueDir), ob.Path(store.OutboxDoneDir)} {
		if err := store.EnsureDir(d, create); err != nil {
			return nil, err
		}
	}
	return ob, nil
}

func (ob *outbox) Path(parts ...string) string {
	return filepath.Join(append([]string{ob.Dir}, parts...)...)
}

// put queues m.
func (ob *outbox) put(m messages.Mail) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("queue mail: %w", err)
	}
	return store.WriteExclusiveNoSync(ob.Path(store.OutboxQueueDir, m.ID+mailSuffix), messages.FormatMail(m))
}

// Pending lists the mail not yet ended, oldest first. A damaged file is named in problems and
// left alone.
func (ob *outbox) Pending() (mail []messages.Mail, problems []string) {
	names, err := mailNames(ob.Path(store.OutboxQueueDir))
	if err != nil {
		return nil, []string{err.Error()}
	}
	for _, id := range names {
		if ob.ended(id) {
			// Ended by a process that died before removing it: finish the clean-up.
			os.Remove(ob.Path(store.OutboxQueueDir, id+mailSuffix))
			continue
		}
		path := ob.Path(store.OutboxQueueDir, id+mailSuffix)
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

// mailNames lists the ids of the mail files in a folder, in name (time) order.
func mailNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, ent := range entries {
		id, ok := strings.CutSuffix(ent.Name(), mailSuffix)
		if ok && ent.Type().IsRegular() && messages.ValidMailID(id) == nil {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// emptyQueues remembers the queues this process found empty (store.DirMemo): a sender to a
// ready pane looks at its queue at each send, and a stat tells it is still empty.
var emptyQueues store.DirMemo[bool]

// queueEmpty reports whether no mail waits in the outbox's queue.
func (ob *outbox) queueEmpty() (bool, error) {
	dir := ob.Path(store.OutboxQueueDir)
	return emptyQueues.Get(dir, dir, func() (bool, error) {
		names, err := mailNames(dir)
		return len(names) == 0, err
	})
}

// ended reports whether mail id has an outcome.
func (ob *outbox) ended(id string) bool {
	_, err := os.Lstat(ob.Path(store.OutboxDoneDir, id+mailSuffix))
	return err == nil
}

// finish records the outcome of one piece of mail and removes it from the queue. It fails with
// ErrExists when the mail had already ended: the first outcome stands.
func (ob *outbox) finish(o messages.MailOutcome) error {
	if err := store.WriteExclusiveNoSync(ob.Path(store.OutboxDoneDir, o.Mail.ID+mailSuffix), messages.FormatMailOutcome(o)); err != nil {
		return err
	}
	if err := os.Remove(ob.Path(store.OutboxQueueDir, o.Mail.ID+mailSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Outcome reads the outcome of mail id.
func (ob *outbox) Outcome(id string) (messages.MailOutcome, error) {
	path := ob.Path(store.OutboxDoneDir, id+mailSuffix)
	data, err := store.ReadFile(path)
	if err != nil {
		return messages.MailOutcome{}, err
	}
	o, err := messages.ParseMailOutcome(data)
	if err != nil {
		return o, fmt.Errorf("%s:1: %w", path, err)
	}
	return o, nil
}

// outcomes lists the outcomes kept, oldest first, and prunes those older than outcomeKeepFor.
func (ob *outbox) outcomes(now time.Time) ([]messages.MailOutcome, []string) {
	names, err := mailNames(ob.Path(store.OutboxDoneDir))
	if err != nil {
		return nil, []string{err.Error()}
	}
	var out []messages.MailOutcome
	var problems []string
	for _, id := range names {
		path := ob.Path(store.OutboxDoneDir, id+mailSuffix)
		data, err := store.ReadFile(path)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", path, err))
			continue
		}
		o, err := messages.ParseMailOutcome(data)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s:1: %v", path, err))
			continue
		}
		if now.Sub(o.At) > outcomeKeepFor && !o.At.IsZero() {
			os.Remove(path)
			continue
		}
		out = append(out, o)
	}
	return out, problems
}

// Inflight is what a deliverer is about to type: the mark it records in the pane and the mail.
type Inflight struct {
	Mark string    `json:"mark"`
	IDs  []string  `json:"ids"`
	PID  int       `json:"pid"`
	At   time.Time `json:"at"`
	// Route is "socket" for a write through the agent's door (route.go), "" for typing.
	Route string `json:"route,omitempty"`
	// Mail is the mail of the delivery that has no queue record (the direct path of Post), so
	// that recovery can finish it as it would a queued one.
	Mail []messages.Mail `json:"mail,omitempty"`
}

// SetInflight records a delivery about to start; clearInflight empties the record. Like the
// rest of the outbox it is written whole but not synced (see writeExclusiveNoSync). The file is
// kept and swapped with a spare rather than replaced and removed (store.WriteSwapNoSync): one is
// written for every message, and a freed inode slows every later file creation on ext4 without a
// journal. Only the holder of the drain lock writes it.
func (ob *outbox) SetInflight(f Inflight) error {
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return store.WriteSwapNoSync(ob.Path(store.InflightName), ob.Path(store.InflightSpareName), append(data, '\n'))
}

func (ob *outbox) clearInflight() {
	_ = store.EmptyBySwap(ob.Path(store.InflightName), ob.Path(store.InflightSpareName))
}

// inflightLeft is the in-flight record a delivery about to type finds (nil: none, or one that
// cannot be read, which recovery has cleared), read unless recoverInflight found none just now.
func (ob *outbox) inflightLeft() *Inflight {
	if ob.noInflight {
		ob.noInflight = false
		return nil
	}
	if f, err := ob.readInflight(); err == nil {
		return f
	}
	return nil
}

// readInflight returns the record of an interrupted delivery, if any.
func (ob *outbox) readInflight() (*Inflight, error) {
	// One lstat tells the usual case, no record (missing, or emptied by clearInflight), where
	// reading it took an open, fstat, read and close on every delivery. A record is swapped in
	// whole (SetInflight), never grown in place, so one of size 0 is none; anything else (a
	// record, a symlink, a folder) is read below, which refuses what is not a regular file.
	if st, err := os.Lstat(ob.Path(store.InflightName)); errors.Is(err, fs.ErrNotExist) || err == nil && st.Mode().IsRegular() && st.Size() == 0 {
		return nil, nil
	}
	data, err := store.ReadFile(ob.Path(store.InflightName))
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(data) == 0 {
		return nil, nil // none, or emptied by clearInflight
	}
	if err != nil {
		return nil, err
	}
	var f Inflight
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", ob.Path(store.InflightName), err)
	}
	return &f, nil
}

// fencedMail is the mail the in-flight record carries (a delivery of the direct path, which
// has no queue record) that has not ended and is not in pend.
func (ob *outbox) fencedMail(pend []messages.Mail) []messages.Mail {
	f, err := ob.readInflight()
	if err != nil || f == nil {
		return nil
	}
	var out []messages.Mail
	for _, m := range f.Mail {
		if !slices.ContainsFunc(pend, func(p messages.Mail) bool { return p.ID == m.ID }) && !ob.ended(m.ID) {
			out = append(out, m)
		}
	}
	return out
}

// lockDrain takes the outbox's drain lock, waiting up to timeout.
func (ob *outbox) lockDrain(timeout time.Duration) (func(), error) {
	unlock, err := lock.File(ob.Path(store.DrainLockName), syscall.LOCK_EX, timeout)
	if err != nil {
		return nil, fmt.Errorf("lock the outbox of pane %s: %w", ob.pane, err)
	}
	return unlock, nil
}

// delivererRunning reports whether a deliverer holds this outbox.
func (ob *outbox) delivererRunning() bool {
	return lock.IsLocked(ob.Path(store.DelivererLockName))
}

// Pending is the mail waiting in pane's outbox on server, oldest first: none when the pane has no
// outbox or it does not read.
func (o *Office) Pending(root, server string, pane messages.PaneID) []messages.Mail {
	ob, err := OpenOutbox(root, server, pane, false)
	if err != nil {
		return nil
	}
	pend, _ := ob.Pending()
	return pend
}

// readMail reads the mail file path of id (queued or held): the mail, or a problem that names the
// file ("" for one gone meanwhile, which another reader took), and whether it is this outbox's.
func (ob *outbox) readMail(path, id string) (messages.Mail, string, bool) {
	data, err := store.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return messages.Mail{}, "", false
		}
		return messages.Mail{}, fmt.Sprintf("%s: %v", path, err), false
	}
	m, err := messages.ParseMail(data)
	if err != nil {
		return messages.Mail{}, fmt.Sprintf("%s:1: %v", path, err), false
	}
	if m.ID != id || m.Pane != ob.pane || m.Server != ob.server {
		return messages.Mail{}, fmt.Sprintf("%s: it is mail %s for pane %s of server %s, not of this outbox", path, m.ID, m.Pane, m.Server), false
	}
	return m, "", true
}
