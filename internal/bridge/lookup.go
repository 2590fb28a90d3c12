package bridge

// What the channels read of the hub: a question as they show it, found by its token, a button's
// data or their own post.

import (
	"strconv"
	"strings"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// view is the question with id as channels see it; ok false when unknown.
func (h *Hub) view(id string) (Question, *questions.QuestionStatus, bool) {
	h.mu.Lock()
	st := h.byID[id]
	h.mu.Unlock()
	if st == nil {
		return Question{}, nil, false
	}
	var tok string
	h.st.view(func(s *State) { tok = s.Tokens[id] })
	q := Question{ID: st.ID, Token: tok, Text: st.Text, Context: st.Context, Type: st.Type, Options: st.Options,
		Task: st.Task, Worker: string(st.Worker), Request: st.Exchange, Action: st.Action, AskedAt: st.AskedAt,
		Accepted: messages.AcceptedForms(st.Question)}
	if p := st.Permission; p != nil {
		q.Permission = &Permission{Agent: p.Agent, Pane: string(st.Worker), Tool: p.Tool, Subject: p.Subject}
		var always []string
		for _, u := range p.Always {
			always = append(always, u.Words())
		}
		q.Permission.Always = strings.Join(always, "; ")
	}
	return q, st, true
}

// pending reports whether question id is one of the bridge's and pending.
func (h *Hub) pending(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.byID[id]
	return st != nil && st.State == questions.QuestionPending
}

// Pending lists the open questions, oldest first.
func (h *Hub) Pending() []Question {
	h.mu.Lock()
	order := append([]string(nil), h.order...)
	h.mu.Unlock()
	var out []Question
	for _, id := range order {
		if q, st, ok := h.view(id); ok && st.State == questions.QuestionPending {
			out = append(out, q)
		}
	}
	return out
}

// answerData is what a button carries (Telegram's callback_data, a Slack button's value):
// "a:TOKEN:N", option N (1-based) of the question with TOKEN. At most 64 bytes, as Telegram wants.
func answerData(tok string, n int) string { return "a:" + tok + ":" + strconv.Itoa(n) }

// pressed is the question and option number a button's data names; ok false when it names no
// known question or no option of it.
func (h *Hub) pressed(data string) (q Question, n int, ok bool) {
	parts := strings.Split(data, ":")
	if len(parts) != 3 || parts[0] != "a" {
		return Question{}, 0, false
	}
	n, err := strconv.Atoi(parts[2])
	if err != nil {
		return Question{}, 0, false
	}
	q, ok = h.ByToken(parts[1])
	if !ok || n < 1 || n > len(q.Options) {
		return Question{}, 0, false
	}
	return q, n, true
}

// ByToken finds a question by its token, open or not.
func (h *Hub) ByToken(tok string) (Question, bool) {
	var id string
	h.st.view(func(s *State) {
		for qid, t := range s.Tokens {
			if t == tok {
				id = qid
			}
		}
	})
	if id == "" {
		return Question{}, false
	}
	q, _, ok := h.view(id)
	return q, ok
}

// ByRef finds the question a channel posted as ref.
func (h *Hub) ByRef(channel, ref string) (Question, bool) {
	l := h.postLock(channel)
	l.RLock()
	defer l.RUnlock()
	var id string
	h.st.view(func(s *State) {
		for qid, p := range s.Posts[channel] {
			if p.Ref == ref {
				id = qid
			}
		}
	})
	if id == "" {
		return Question{}, false
	}
	q, _, ok := h.view(id)
	return q, ok
}

// posted reports whether q was posted on channel, or refused there for good.
func (h *Hub) posted(channel, id string) bool {
	var ok bool
	h.st.view(func(s *State) { ok = s.Posts[channel][id] != nil })
	return ok
}

// PostRef is the reference of q's post on channel, "" when it was not posted there.
func (h *Hub) PostRef(channel, id string) string {
	var ref string
	h.st.view(func(s *State) {
		if p := s.Posts[channel][id]; p != nil {
			ref = p.Ref
		}
	})
	return ref
}
