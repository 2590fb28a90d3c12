package bridge

// Notices: what a person should hear of besides questions. A dead letter: a message that never
// reached its pane (its time to live passed, or the pane could not take it), which only a person
// can re-send or drop; a loop held: the first request a loop cap held of a chain or a pair of
// panes (the mailbox's held mail), which only a person can release; and a pane the on-failure
// policy gave up restarting (tmuxcomm/lifecycle), which only a person can restart. Approvals need
// no notice of their own: an approval is a question and is posted as one. A channel that can tell
// implements Notifier; each notice goes once per channel (the state records it), and only of what
// ended since the bridge's state began (less a minute: the notice that started it), so a first
// run does not flood the chat with a week of old news.

import (
	"context"
	"fmt"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
)

// Notifier is a channel that tells of notices.
type Notifier interface {
	Notify(ctx context.Context, n Notice) error
}

// Notice is one dead letter as a channel tells it.
type Notice struct {
	Event     string            `json:"event"` // "dead-letter", "held", "not-restarted"
	ID        string            `json:"id"`    // the mail's id
	Kind      messages.MailKind `json:"kind"`  // request, response, question, answer
	Pane      string            `json:"pane"`
	From      string            `json:"from,omitempty"`
	Exchange  string            `json:"exchange,omitempty"`
	Questions []string          `json:"questions,omitempty"`
	State     string            `json:"state"` // expired, undeliverable or held
	Reason    string            `json:"reason,omitempty"`
	At        time.Time         `json:"at"`
	// Next says what a person may do about it.
	Next string `json:"next"`
}

func noticeOf(d mailbox.DeadLetter) Notice {
	n := Notice{Event: "dead-letter", ID: d.ID, Kind: d.Kind, Pane: string(d.Pane), From: string(d.From), Exchange: d.Exchange,
		Questions: d.Questions, State: d.State, Reason: clip(d.Detail, 500), At: d.At}
	switch {
	case d.Next != "":
		n.Event, n.Next = d.State, d.Next // another room's notice: Detail says it whole
	case d.State == exchange.StateHeld:
		n.Event = "held"
		n.Next = "agents may be messaging each other in a loop; release it with 'wcomm release " + d.Exchange +
			"', or all held for that pane with 'wcomm release --all --to " + string(d.Pane) + "' (more held of it are not told again)"
	case d.Kind == messages.MailRequest && d.Exchange != "":
		n.Next = "re-send it with 'wcomm send --resend " + d.Exchange + "'"
	case d.Kind == messages.MailResponse && d.Exchange != "":
		n.Next = "the response is on disk: 'wcomm show " + d.Exchange + "'"
	default:
		n.Next = "see 'wcomm questions' and 'wcomm inbox --all' in that pane"
	}
	return n
}

// Words says the notice in one line, for a chat.
func (n Notice) Words() string {
	what := string(n.Kind)
	if n.Exchange != "" {
		what += " " + n.Exchange
	} else if len(n.Questions) > 0 {
		what += " " + n.Questions[0]
	}
	if n.Event != "dead-letter" && n.Event != "held" {
		return n.Reason + "; " + n.Next
	}
	s := fmt.Sprintf("not delivered (%s): %s for pane %s", n.State, what, n.Pane)
	if n.State == exchange.StateHeld {
		s = fmt.Sprintf("held: %s for pane %s", what, n.Pane)
	}
	if n.From != "" {
		s += " from " + n.From
	}
	if n.Reason != "" {
		s += ": " + n.Reason
	}
	return s + "; " + n.Next
}

// notify tells the channel of each dead letter it was not told of, recording each before the
// next; it stops at the first failure, for the loop to back off.
func (o *outbound) notify(ctx context.Context) error {
	nf, ok := o.c.(Notifier)
	if !ok {
		return nil
	}
	name := o.c.Name()
	o.h.mu.Lock()
	dead := o.h.dead
	o.h.mu.Unlock()
	for _, d := range dead {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		told := false
		o.h.st.view(func(s *State) { _, told = s.Notices[name][d.ID] })
		if told {
			continue
		}
		// As a post: one under way is finished and recorded even when the bridge stops.
		if err := nf.Notify(context.WithoutCancel(ctx), noticeOf(d)); isRefused(err) {
			o.h.logf("%s refused the notice of dead letter %s for good (%s); it is not told there", name, d.ID, messages.SanitizeField(err.Error()))
		} else if err != nil {
			return fmt.Errorf("tell of dead letter %s: %w", d.ID, err)
		}
		if err := o.h.st.update(func(s *State) {
			if s.Notices[name] == nil {
				s.Notices[name] = map[string]time.Time{}
			}
			s.Notices[name][d.ID] = o.h.now().UTC()
		}); err != nil {
			return err
		}
	}
	return nil
}

// scanDead reads the dead letters since the state began; what the state holds of notices no
// longer listed (their records pruned after a week) goes.
func (h *Hub) scanDead() {
	var since time.Time
	h.st.view(func(s *State) { since = s.NoticesSince })
	dead, problems := h.Engine.DeadLetters(since)
	for _, p := range problems {
		h.logf("dead letters: %s", p)
	}
	listed := map[string]bool{}
	for _, d := range dead {
		listed[d.ID] = true
	}
	h.mu.Lock()
	h.dead = dead
	h.mu.Unlock()
	var gone bool
	h.st.view(func(s *State) {
		for _, ids := range s.Notices {
			for id := range ids {
				if !listed[id] {
					gone = true
				}
			}
		}
	})
	if gone && len(problems) == 0 {
		if err := h.st.update(func(s *State) {
			for _, ids := range s.Notices {
				for id := range ids {
					if !listed[id] {
						delete(ids, id)
					}
				}
			}
		}); err != nil {
			h.logf("save state: %v", err)
		}
	}
}

// untold says whether a notice listed is not yet told on a channel that tells notices: a bridge
// that ends when idle waits for it.
func (h *Hub) untold(outs []*outbound) bool {
	h.mu.Lock()
	dead := h.dead
	h.mu.Unlock()
	for _, o := range outs {
		if _, ok := o.c.(Notifier); !ok {
			continue
		}
		name := o.c.Name()
		for _, d := range dead {
			told := false
			h.st.view(func(s *State) { _, told = s.Notices[name][d.ID] })
			if !told {
				return true
			}
		}
	}
	return false
}
