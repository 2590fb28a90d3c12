package bridge

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// Engine is what the bridge needs of the protocol engine (tmuxcomm.Engine).
type Engine interface {
	Questions(ctx context.Context, o questions.QuestionsOptions) ([]*questions.QuestionStatus, []string, error)
	Answer(ctx context.Context, o questions.AnswerOptions) (*questions.AnswerResult, error)
	Actions(ctx context.Context, o actions.ActionsOptions) ([]*actions.ActionStatus, []string, error)
	DeadLetters(since time.Time) ([]mailbox.DeadLetter, []string)
	// Follow is the watch room's feed of the root, from which the bridge hears of a question's
	// change (watch.Lookout.Follow).
	Follow(ctx context.Context, o watch.WatchOptions) (*watch.Follower, error)
}

// Hub is the bridge: it watches the root for questions, has each channel post the new ones and
// mark the decided ones, and takes the channels' answers to the engine.
type Hub struct {
	Engine Engine
	Root   string
	// Channels is the key of the channel configuration this bridge runs
	// (messages.ChannelsConfig.Key): it posts, and takes answers to, only the questions asked
	// where that configuration applied, and keeps its state in that key's folder. "" serves
	// every question of the root (a bridge a test builds).
	Channels string
	// Unrecorded makes the bridge also serve the questions that record no key (asked by an
	// older wcomm, written by hand) and tell of dead letters: set when its configuration is the
	// user's own, never a project's.
	Unrecorded bool
	// Logf receives the diagnostics (refused senders, a service down, backoff); never a secret.
	Logf func(format string, a ...any)
	// IdleExit, when more than 0, ends Run once nothing has been pending for that long (the
	// bridge an ask starts); 0 runs until ctx ends.
	IdleExit time.Duration
	// Rescan is how often the bridge makes a full look at the questions, judging staleness
	// (default 2s); a question's change is heard at once from the engine's feed (Follow).
	Rescan time.Duration
	// Backoff bounds the wait before a channel that failed is tried again (default 1s to 1m).
	BackoffMin, BackoffMax time.Duration
	Now                    func() time.Time

	st      *store
	mu      sync.Mutex
	byID    map[string]*questions.QuestionStatus
	order   []string
	dead    []mailbox.DeadLetter // since the state began, oldest first (notice.go)
	pokeCh  chan struct{}
	started time.Time
	// posting is held by a channel's outbound while it posts and records a post, so an answer
	// that replies to the new post at once waits until the post is known.
	posting map[string]*sync.RWMutex
}

func (h *Hub) postLock(channel string) *sync.RWMutex {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.posting == nil {
		h.posting = map[string]*sync.RWMutex{}
	}
	if h.posting[channel] == nil {
		h.posting[channel] = &sync.RWMutex{}
	}
	return h.posting[channel]
}

func (h *Hub) logf(format string, a ...any) {
	if h.Logf != nil {
		h.Logf(format, a...)
	}
}

func (h *Hub) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// Open loads the bridge's state from the root; Run calls it, and so may a test that builds the
// channels before running them.
func (h *Hub) Open() error {
	if h.st != nil {
		return nil
	}
	st, err := openStore(Dir(h.Root, h.Channels))
	if err != nil {
		return err
	}
	h.st = st
	h.pokeCh = make(chan struct{}, 1)
	h.byID = map[string]*questions.QuestionStatus{}
	h.started = h.now()
	return nil
}

// poke asks for a new look at the questions now (an answer was just given).
func (h *Hub) poke() {
	select {
	case h.pokeCh <- struct{}{}:
	default:
	}
}

// Run runs the channels until ctx ends (or, with IdleExit, until nothing is pending). The
// caller holds the root's bridge lock (Lock).
func (h *Hub) Run(ctx context.Context, chans []Channel) error {
	if err := h.Open(); err != nil {
		return err
	}
	if h.Rescan <= 0 {
		h.Rescan = 2 * time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Know the questions before the first answer comes in: a reply to a post of an earlier run
	// must find its question.
	if _, err := h.scan(ctx, true); err != nil {
		h.logf("list questions: %v", err)
	}
	var wg sync.WaitGroup
	outs := make([]*outbound, len(chans))
	for i, c := range chans {
		outs[i] = &outbound{h: h, c: c, wake: make(chan struct{}, 1)}
		wg.Add(2)
		go func() { defer wg.Done(); outs[i].loop(ctx) }()
		go func() { defer wg.Done(); h.receiveLoop(ctx, c) }()
	}
	defer wg.Wait()
	defer cancel()
	// A question's change is heard from the watch room's feed of the root (file events, with its
	// own safety rescan), so a new question is posted at once; the bridge itself only looks again
	// every tick (the root gone, idle) and makes a full look every Rescan.
	var changed <-chan struct{}
	if fl, err := h.Engine.Follow(ctx, watch.WatchOptions{Questions: true, Rescan: max(h.Rescan, watch.MinRescan)}); err == nil {
		changed = fl.Wake()
	} else {
		h.logf("no watch of the root (%v): questions are looked for every %s", err, h.tick())
	}
	lastFull := time.Now()
	idleSince := h.now()
	rootSeen := false
	tick := time.NewTicker(h.tick())
	defer tick.Stop()
	look := true // what was asked before the feed was in place
	for {
		full := time.Since(lastFull) >= h.Rescan
		if look || full || changed == nil {
			// A full look (staleness asks tmux which panes live) every Rescan; in between, a
			// change is read from the files alone.
			if full {
				lastFull = time.Now()
			}
			pending, err := h.scan(ctx, full)
			if err != nil {
				h.logf("list questions: %v", err)
			}
			if full && h.tellsDead() {
				h.scanDead()
			}
			for _, o := range outs {
				o.kick()
			}
			if pending > 0 || h.unclosed() > 0 || h.untold(outs) {
				idleSince = h.now()
			}
		}
		look = false
		// A root that is gone holds nothing to serve (its questions went with it): the bridge ends
		// rather than wait for answers nobody can give.
		if _, err := os.Stat(h.Root); err == nil {
			rootSeen = true
		} else if rootSeen && errors.Is(err, fs.ErrNotExist) {
			h.logf("the root %s is gone: the bridge ends", h.Root)
			return nil
		}
		if h.IdleExit > 0 && h.now().Sub(idleSince) >= h.IdleExit {
			h.logf("nothing pending for %s: the bridge ends", h.IdleExit)
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case _, ok := <-changed:
			look = true
			if !ok {
				h.logf("the watch of the root ended: questions are looked for every %s", h.tick())
				changed = nil
			}
		case <-h.pokeCh:
			look = true
		}
	}
}

// tick is the pause between the bridge's own looks: a second, or Rescan when shorter (a test's).
func (h *Hub) tick() time.Duration { return min(h.Rescan, time.Second) }

// scan reads the bridge's own questions and gives each new one a token; it returns how many
// are pending. Without full, staleness is not judged (no tmux call): the next full look closes
// a question that turned stale.
func (h *Hub) scan(ctx context.Context, full bool) (int, error) {
	all, problems, err := h.Engine.Questions(ctx, questions.QuestionsOptions{FilesOnly: !full})
	if err != nil {
		return 0, err
	}
	list := h.ownPostable(all, problems, full)
	byID := make(map[string]*questions.QuestionStatus, len(list))
	order := make([]string, 0, len(list))
	pending := 0
	var fresh []string
	if !full {
		// Staleness is judged by the full looks only: keep what the last one found.
		h.mu.Lock()
		for i, q := range list {
			if prev := h.byID[q.ID]; prev != nil && prev.State == questions.QuestionStale && q.State == questions.QuestionPending {
				list[i] = prev
			}
		}
		h.mu.Unlock()
	}
	h.st.view(func(s *State) {
		for _, q := range list {
			byID[q.ID] = q
			order = append(order, q.ID)
			if q.State == questions.QuestionPending {
				pending++
				if s.Tokens[q.ID] == "" {
					fresh = append(fresh, q.ID)
				}
			}
		}
	})
	// On a full look, what the state holds of questions no longer under the root (their
	// session folders removed) goes, once their posts say so: the state does not grow for ever.
	var gone []string
	// Not while a post is under way: its question may be gone by now, and its post not yet
	// recorded.
	if full && h.noPosting() {
		h.st.view(func(s *State) {
			for id := range s.Tokens {
				if byID[id] != nil {
					continue
				}
				closed := true
				for _, posts := range s.Posts {
					if p := posts[id]; p != nil && !p.Closed {
						closed = false
					}
				}
				if closed {
					gone = append(gone, id)
				}
			}
		})
	}
	if len(fresh) > 0 || len(gone) > 0 {
		if err := h.st.update(func(s *State) {
			for _, id := range fresh {
				s.Tokens[id] = newToken(s.Tokens, id)
			}
			for _, id := range gone {
				delete(s.Tokens, id)
				for _, posts := range s.Posts {
					delete(posts, id)
				}
			}
		}); err != nil {
			return pending, err
		}
	}
	h.mu.Lock()
	h.byID, h.order = byID, order
	h.mu.Unlock()
	return pending, nil
}

// noPosting reports whether no channel is posting right now.
func (h *Hub) noPosting() bool {
	h.mu.Lock()
	locks := make([]*sync.RWMutex, 0, len(h.posting))
	for _, l := range h.posting {
		locks = append(locks, l)
	}
	h.mu.Unlock()
	for _, l := range locks {
		if !l.TryRLock() {
			return false
		}
		l.RUnlock()
	}
	return true
}

// newToken is the question's tag (4 hex digits) when no other question uses it, else the tag
// with a number: short, and safe in a Telegram command (/yes_a1b2).
func newToken(taken map[string]string, id string) string {
	tag := "q"
	if qid, err := messages.ParseQuestionID(id); err == nil {
		tag = qid.Tag
	}
	used := map[string]bool{}
	for _, t := range taken {
		used[t] = true
	}
	tok := tag
	for n := 2; used[tok]; n++ {
		tok = tag + strconv.Itoa(n)
	}
	return tok
}

// unclosed counts posts that still show a decided or vanished question as open.
func (h *Hub) unclosed() int {
	n := 0
	h.mu.Lock()
	defer h.mu.Unlock()
	h.st.view(func(s *State) {
		for _, posts := range s.Posts {
			for id, p := range posts {
				if p.Closed {
					continue
				}
				if q := h.byID[id]; q == nil || q.State != questions.QuestionPending {
					n++
				}
			}
		}
	})
	return n
}

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

// Status says in one line what waits.
func (h *Hub) Status(ctx context.Context) string {
	pending := h.Pending()
	approvals := 0
	for _, q := range pending {
		if q.Action != "" {
			approvals++
		}
	}
	waiting := h.approvedUnexecuted(ctx)
	return fmt.Sprintf("%d question(s) pending (%d approval(s)); %d approved action(s) wait for 'wcomm actions run'; bridge up %s",
		len(pending), approvals, len(waiting), h.now().Sub(h.started).Round(time.Second))
}

// approvedUnexecuted lists the approved actions of the bridge's own questions not yet run.
func (h *Hub) approvedUnexecuted(ctx context.Context) []*actions.ActionStatus {
	list, _, err := h.Engine.Actions(ctx, actions.ActionsOptions{Getenv: os.Getenv})
	if err != nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*actions.ActionStatus
	for _, a := range list {
		// Another folder's approvals are not this bridge's to show.
		if a.Status == actions.ActionApproved && (h.Channels == "" || h.byID[a.ID] != nil) {
			out = append(out, a)
		}
	}
	return out
}

// ApprovedActions names the approved actions that wait for the dispatcher.
func (h *Hub) ApprovedActions(ctx context.Context) []string {
	var out []string
	for _, a := range h.approvedUnexecuted(ctx) {
		out = append(out, fmt.Sprintf("%s (approved for %s)", a.Action, a.ID))
	}
	return out
}

// Recent lists the last n decided questions, newest first, as "token: answer (source)".
func (h *Hub) Recent(n int) []string {
	h.mu.Lock()
	var sts []*questions.QuestionStatus
	for _, st := range h.byID {
		if st.State != questions.QuestionPending {
			sts = append(sts, st)
		}
	}
	h.mu.Unlock()
	at := func(st *questions.QuestionStatus) time.Time {
		if st.Answer != nil {
			return st.Answer.At
		}
		if st.Resolved != nil {
			return st.Resolved.At
		}
		return st.AskedAt
	}
	sort.Slice(sts, func(i, j int) bool { return at(sts[i]).After(at(sts[j])) })
	var out []string
	for i, st := range sts {
		if i == n {
			break
		}
		o := outcomeOf(st)
		out = append(out, fmt.Sprintf("%s %s — %s", at(st).Local().Format("15:04"), st.ID, o.Words()))
	}
	return out
}

// outcomeOf is how a decided (or vanished: nil) question ended.
func outcomeOf(st *questions.QuestionStatus) Outcome {
	if st == nil {
		return Outcome{State: "gone", Reason: "its files are no longer under the root"}
	}
	o := Outcome{State: st.State, Reason: st.Reason}
	if st.Answer != nil {
		o.Answer, o.Source = st.Answer.Answer, st.Answer.Source
	}
	return o
}

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
