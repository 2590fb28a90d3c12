package questions

// An agent at rest, told to the person: with notify_idle, an agent's Stop hook records a notice
// (a freeform question of task "idle" in the pane's own session folder) that the agent ended its
// turn and waits for its next instruction, with its last message. The answer channels post it
// once; a reply is the person's next instruction, handed to the agent's pane through its outbox
// (its door, or typed when the pane is ready), exactly once. A newer turn's end, or a prompt the
// agent takes otherwise, closes the notice, so a pane has at most one open.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// IdleTask is the task of every idle notice.
const IdleTask = "idle"

// NotifyIdle records that the agent in the caller's pane ended its turn, closing any notice of
// the pane still open, and starts the bridge to the answer channels.
func (d *Desk) NotifyIdle(ctx context.Context, agent, last string) (*QuestionStatus, []string, error) {
	root, err := d.RootDir(true)
	if err != nil {
		return nil, nil, err
	}
	if _, err := messages.ParsePaneID(string(d.Self)); err != nil {
		return nil, nil, fmt.Errorf("own pane %q: %w", messages.SanitizeField(string(d.Self)), err)
	}
	srv, err := d.Tmux.ServerInfo(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("no tmux server: %w", err)
	}
	who := agent
	if who == "" {
		who = "the agent"
	}
	summary := strings.TrimSpace(last)
	if summary == "" {
		summary = "It said nothing at the end of its turn."
	}
	if utf8.RuneCountInString(summary) > messages.MaxContextLen {
		summary = string([]rune(summary)[:messages.MaxContextLen-1]) + "…"
	}
	q := messages.Question{Task: IdleTask, Type: messages.Freeform, Urgency: messages.NonBlocking, Context: summary,
		Text: fmt.Sprintf("%s in pane %s ended its turn and waits for your next instruction: reply to give it one", who, d.Self)}.Normalized()
	if err := q.Validate(); err != nil {
		return nil, nil, err
	}
	dir, _, err := d.OpenSession(root, d.Self, d.Self, srv.Key(), srv.Socket)
	if err != nil {
		return nil, nil, err
	}
	base := QuestionRecord{Worker: d.Self, Orchestrator: d.Self, Session: filepath.Base(dir), Server: srv.Key(), Socket: srv.Socket,
		AskedAt: d.Now().UTC(), MaxQuestions: math.MaxInt32, Channels: d.ChannelsKey, AskedIn: d.AskedIn,
		Idle: &IdleNotice{Agent: agent, Last: last}}
	// The older notices are closed under the root lock the new one is made under: turn ends told
	// at once (a Stop hook installed twice runs twice) then leave one notice open, not one each.
	sts, err := d.createQuestions(root, dir, base, []messages.Question{q}, func(st *QuestionStatus) error {
		for _, old := range d.openIdle(root, srv.Key()) {
			if old.Path != st.Path {
				d.resolveIdle(old, "the agent ended another turn")
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return sts[0], d.startBridge(), nil
}

// CloseIdle resolves the open idle notices of the caller's pane: the agent is no longer at rest
// (it took a prompt) or a newer notice replaces them. A pane of the same id on another tmux
// server is another agent, whose notice stays open.
func (d *Desk) CloseIdle(ctx context.Context, reason string) {
	root, err := d.RootDir(false)
	if err != nil || d.Self == "" {
		return
	}
	// Tmux is asked which server this is only when a notice of the pane's id is open.
	if len(d.openIdle(root, "")) == 0 {
		return
	}
	server := ""
	if d.Tmux != nil {
		if srv, err := d.Tmux.ServerInfo(ctx); err == nil {
			server = srv.Key()
		}
	}
	unlock, err := lock.File(filepath.Join(root, store.RootLockName), syscall.LOCK_EX, d.LockTimeout)
	if err != nil {
		return
	}
	defer unlock()
	for _, st := range d.openIdle(root, server) {
		d.resolveIdle(st, reason)
	}
}

// openIdle lists the open idle notices of the caller's pane on server ("": on any server), as
// their files say.
func (d *Desk) openIdle(root, server string) []*QuestionStatus {
	refs, _ := QuestionRefs(root)
	var out []*QuestionStatus
	for _, r := range refs {
		if r.Task != IdleTask {
			continue
		}
		st, err := LoadQuestion(r.Dir, r.Task, r.Seq)
		if err != nil || st.Idle == nil || st.Worker != d.Self || st.Decided() {
			continue
		}
		if server != "" && st.Server != "" && st.Server != server {
			continue
		}
		out = append(out, st)
	}
	return out
}

// resolveIdle closes an open notice for reason; the caller holds the root lock.
func (d *Desk) resolveIdle(st *QuestionStatus, reason string) {
	if st.Refresh(); st.Decided() {
		return
	}
	rec := ResolvedRecord{ID: st.ID, Reason: reason, Pane: d.Self, At: d.Now().UTC()}
	if err := writeJSONExclusive(st.File(messages.SuffixResolved), rec); err == nil || errors.Is(err, store.ErrExists) {
		d.LogQ(st, QResolvedEvent, map[string]string{"reason": reason})
	}
}
