package bridge

// The channels' two directions in goroutines of their own, so that a channel that is down delays no
// other: outbound posts and closes, receiveLoop takes answers in; both back off after a failure.

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// receiveLoop runs a channel's Receive, again after a failure, with backoff.
func (h *Hub) receiveLoop(ctx context.Context, c Channel) {
	b := h.newBackoff()
	for {
		err := c.Receive(ctx)
		if ctx.Err() != nil || err == nil {
			return
		}
		d := b.next(retryAfter(err))
		h.logf("%s: receiving failed: %v; trying again in %s", c.Name(), err, d)
		if !sleepCtx(ctx, d) {
			return
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// backoff doubles from min to max; a service's retry_after takes precedence when longer.
type backoff struct {
	min, max, cur time.Duration
}

func (h *Hub) newBackoff() *backoff {
	b := &backoff{min: h.BackoffMin, max: h.BackoffMax}
	if b.min <= 0 {
		b.min = time.Second
	}
	if b.max <= 0 {
		b.max = time.Minute
	}
	return b
}

func (b *backoff) next(after time.Duration) time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	} else if b.cur *= 2; b.cur > b.max {
		b.cur = b.max
	}
	if after > b.cur {
		return after
	}
	return b.cur
}

func (b *backoff) reset() { b.cur = 0 }

// outbound posts one channel's new questions, closes its decided ones and tells it of dead
// letters, in its own goroutine so that a channel that is down delays no other.
type outbound struct {
	h    *Hub
	c    Channel
	wake chan struct{}
}

func (o *outbound) kick() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

func (o *outbound) loop(ctx context.Context) {
	b := o.h.newBackoff()
	for {
		select {
		case <-ctx.Done():
			return
		case <-o.wake:
		}
		err := o.sync(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			b.reset()
			continue
		}
		d := b.next(retryAfter(err))
		o.h.logf("%s: %v; trying again in %s (questions are still answered locally)", o.c.Name(), err, d)
		if !sleepCtx(ctx, d) {
			return
		}
		o.kick()
	}
}

// post posts q and records the post, under the channel's posting lock.
func (o *outbound) post(ctx context.Context, q Question) error {
	name := o.c.Name()
	l := o.h.postLock(name)
	l.Lock()
	defer l.Unlock()
	// A post under way is finished and recorded even when the bridge is stopped meanwhile:
	// cut off, it could have reached the chat without being recorded, and be posted again by
	// the next bridge. Each channel bounds its own calls.
	ref, err := o.c.Post(context.WithoutCancel(ctx), q)
	if isRefused(err) {
		// Recorded as decided there, so that it is neither posted again nor closed.
		reason := messages.SanitizeField(err.Error())
		o.h.logf("%s refused question %s for good (%s): it is not posted there; it can still be answered with 'wcomm answer %s ANSWER'", name, q.ID, reason, q.ID)
		return o.h.st.update(func(s *State) {
			if s.Posts[name] == nil {
				s.Posts[name] = map[string]*Post{}
			}
			s.Posts[name][q.ID] = &Post{Channel: name, ID: q.ID, Refused: reason, Closed: true, PostedAt: o.h.now().UTC()}
		})
	}
	if err != nil {
		return fmt.Errorf("post %s: %w", q.ID, err)
	}
	return o.h.st.update(func(s *State) {
		if s.Posts[name] == nil {
			s.Posts[name] = map[string]*Post{}
		}
		s.Posts[name][q.ID] = &Post{Channel: name, ID: q.ID, Ref: ref, PostedAt: o.h.now().UTC()}
	})
}

// sync posts what is pending and not yet posted here, closes posts of decided questions and
// tells of dead letters. It stops at the first failure, for the loop to back off.
func (o *outbound) sync(ctx context.Context) error {
	if err := o.questions(ctx); err != nil {
		return err
	}
	return o.notify(ctx)
}

func (o *outbound) questions(ctx context.Context) error {
	name := o.c.Name()
	for _, q := range o.h.Pending() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if o.h.posted(name, q.ID) {
			continue
		}
		if err := o.post(ctx, q); err != nil {
			return err
		}
	}
	type open struct {
		id, ref string
	}
	var opens []open
	o.h.st.view(func(s *State) {
		for id, p := range s.Posts[name] {
			if !p.Closed {
				opens = append(opens, open{id, p.Ref})
			}
		}
	})
	sort.Slice(opens, func(i, j int) bool { return opens[i].id < opens[j].id })
	for _, p := range opens {
		o.h.mu.Lock()
		st := o.h.byID[p.id]
		o.h.mu.Unlock()
		if st != nil && st.State == questions.QuestionPending {
			continue
		}
		q, _, _ := o.h.view(p.id)
		if q.ID == "" {
			q = Question{ID: p.id}
			o.h.st.view(func(s *State) { q.Token = s.Tokens[p.id] })
		}
		if err := o.c.Close(ctx, q, p.ref, outcomeOf(st)); isRefused(err) {
			o.h.logf("%s refused the edit that marks %s decided, for good (%s); it is left as it is", name, p.id, messages.SanitizeField(err.Error()))
		} else if err != nil {
			return fmt.Errorf("mark %s decided: %w", p.id, err)
		}
		if err := o.h.st.update(func(s *State) { s.Posts[name][p.id].Closed = true }); err != nil {
			return err
		}
	}
	return nil
}
