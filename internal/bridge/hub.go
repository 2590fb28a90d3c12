package bridge

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"time"

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
	// change (watch.Follow over the door's Watch).
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
	// PanesChanged, when set, tells of a change in tmux's panes (paneops.Control.Changes): the
	// bridge then judges staleness when a pane changed and a question waits, and otherwise makes
	// its full look only every Safety, so that a bridge beside idle agents sleeps all day. Unset,
	// the full look comes every Rescan, tmux asked each time.
	PanesChanged <-chan struct{}
	// Safety is the full looks' interval with PanesChanged and a watch of the root, against
	// events lost (default 30s).
	Safety time.Duration
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
	// every tick (the root gone, idle) and makes a full look every Rescan. Told of the panes'
	// changes (PanesChanged), it sleeps instead: a full look follows a pane's change while a
	// question waits, dead letters and the root are looked at every deadEvery, and the rest
	// waits for Safety.
	if h.Safety <= 0 {
		h.Safety = 30 * time.Second
	}
	sleeps := h.PanesChanged != nil
	var changed <-chan struct{}
	wo := watch.WatchOptions{Questions: true}
	if sleeps {
		wo.Rescan = h.Safety
	}
	if fl, err := h.Engine.Follow(ctx, wo); err == nil {
		changed = fl.Wake()
	} else {
		h.logf("no watch of the root (%v): questions are looked for every %s", err, h.tick())
	}
	lastFull, lastDead := time.Now(), time.Now()
	idleSince := h.now()
	rootSeen := false
	look := true       // what was asked before the feed was in place
	first := true      // the first look
	panesDirty := true // a pane changed since the last full look
	pending := 0
	for {
		// Asleep (PanesChanged and the feed): staleness needs a full look only when a pane
		// changed while a question waits, at most every Rescan; and every Safety besides.
		asleep := sleeps && changed != nil
		due := lastFull.Add(h.Rescan)
		if asleep {
			due = lastFull.Add(h.Safety)
			if panesDirty && pending > 0 {
				due = lastFull.Add(h.Rescan)
			}
		}
		full := !time.Now().Before(due)
		if look || full || changed == nil {
			// A full look (staleness asks tmux which panes live) every Rescan; in between, a
			// change is read from the files alone.
			if full {
				lastFull = time.Now()
				panesDirty = false
			}
			var err error
			pending, err = h.scan(ctx, full)
			if err != nil {
				h.logf("list questions: %v", err)
			}
			// A bridge started to tell a notice (a restart given up, a dead letter) tells it at
			// its first look: it may be one that ends when idle sooner than deadEvery.
			if (full || first) && h.tellsDead() {
				h.scanDead()
				lastDead = time.Now()
			}
			first = false
			for _, o := range outs {
				o.kick()
			}
			if pending > 0 || h.unclosed() > 0 || h.untold(outs) {
				idleSince = h.now()
			}
		}
		look = false
		if asleep && !full && time.Since(lastDead) >= deadEvery {
			// The mail's outcomes are files only (no tmux call): read more often than the
			// full look, so a dead letter is told within seconds. The root is looked at
			// then too: its removal is not heard from its watch while a file under it is open
			// (the bridge's own locks): inotify tells of a folder gone once nothing holds it.
			lastDead = time.Now()
			if h.tellsDead() {
				h.scanDead()
				if h.untold(outs) {
					for _, o := range outs {
						o.kick()
					}
				}
			}
		}
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
		// The next wake-up without news: a tick while no feed tells of changes, else the full
		// look that is due, or the idle exit.
		wait := h.tick()
		if asleep {
			wait = time.Until(lastFull.Add(h.Safety))
			if panesDirty && pending > 0 {
				wait = time.Until(lastFull.Add(h.Rescan))
			}
			wait = min(wait, time.Until(lastDead.Add(deadEvery)))
			if h.IdleExit > 0 {
				wait = min(wait, h.IdleExit-h.now().Sub(idleSince))
			}
			wait = max(wait, 0)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		case <-h.PanesChanged:
			panesDirty = true
		case _, ok := <-changed:
			look = true
			if !ok {
				h.logf("the watch of the root ended: questions are looked for every %s", h.tick())
				changed = nil
			}
		case <-h.pokeCh:
			look = true
		}
		timer.Stop()
	}
}

// deadEvery is how often a bridge told of the panes' changes looks for dead letters, and whether
// its root is still there, between its full looks.
const deadEvery = 5 * time.Second

// tick is the pause between the bridge's own looks: a second, or Rescan when shorter (a test's).
func (h *Hub) tick() time.Duration { return min(h.Rescan, time.Second) }
