package bridge

// Answers given in a channel, taken to the engine as 'wcomm answer' takes them.

import (
	"context"
	"errors"
	"fmt"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// Reply is what became of an answer given in a channel.
type Reply struct {
	Accepted bool
	Stale    bool
	Invalid  bool
	Answer   string // the accepted answer; when Stale, the answer that stands (if any)
	Source   string // when Stale, where the answer that stands came from
	Next     string // who acts next: the worker, and how it learns
	Again    bool   // Accepted: the same event gave this answer before the bridge restarted
	Err      error
}

// AnswerEvent is Answer for an answer carried by event (a name unique in channel, as a Telegram
// update id is): the event is recorded before the engine is asked, so when the service sends it
// again to a bridge that was stopped before confirming it, and the answer that stands came from
// this channel, the person is told their answer is recorded, not that it is too late.
func (h *Hub) AnswerEvent(ctx context.Context, channel, event, id, raw string) Reply {
	again := false
	h.st.view(func(s *State) { again = s.Applying != nil && s.Applying.Event == event && s.Applying.ID == id })
	if !again {
		if err := h.st.update(func(s *State) { s.Applying = &Applying{Event: event, ID: id} }); err != nil {
			h.logf("save state: %v", err)
		}
	}
	r := h.Answer(ctx, channel, id, raw)
	if again && r.Stale && r.Source == channel && r.Answer != "" {
		return Reply{Accepted: true, Again: true, Answer: r.Answer, Next: "recorded before the bridge restarted"}
	}
	return r
}

// Answer gives raw as the answer to question id from channel, through the engine's Answer (the
// path 'wcomm answer' takes): the first valid answer from anywhere wins.
func (h *Hub) Answer(ctx context.Context, channel, id, raw string) Reply {
	res, err := h.Engine.Answer(ctx, questions.AnswerOptions{ID: id, Raw: raw, Source: channel})
	h.poke()
	switch {
	case err == nil:
		r := Reply{Accepted: true}
		if res != nil && res.Question != nil && res.Question.Answer != nil {
			r.Answer = res.Question.Answer.Answer
			r.Next = fmt.Sprintf("worker %s", res.Question.Worker)
			if how := res.Say(); how != "" {
				r.Next += ": " + how
			}
			if res.Question.Action != "" {
				r.Next += "; approval recorded as intent: 'wcomm actions run' executes it while its fingerprint holds"
			}
		}
		return r
	case errors.Is(err, tmuxcomm.ErrStale):
		r := Reply{Stale: true, Err: err}
		if res != nil && res.Question != nil && res.Question.Answer != nil {
			r.Answer, r.Source = res.Question.Answer.Answer, res.Question.Answer.Source
		}
		return r
	case errors.Is(err, messages.ErrInvalidAnswer):
		return Reply{Invalid: true, Err: err}
	}
	return Reply{Err: err}
}
