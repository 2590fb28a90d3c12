package broadcast

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// Awaited is what an await of several exchanges found: the answers, in the order they came, and
// the exchanges still without one.
type Awaited struct {
	// Broadcasts are the broadcast ids the await was given.
	Broadcasts []string  `json:"broadcasts,omitempty"`
	Answered   []Answer  `json:"answered"`
	Missing    []Missing `json:"missing,omitempty"`
}

// Answer is one response, labelled with its worker's pane.
type Answer struct {
	Pane     string             `json:"pane"`
	Exchange *exchange.Exchange `json:"exchange"`
}

// Missing is an exchange that has no answer: the wait for it ended first (TimedOut), or it
// cannot have one (never delivered, not found, never sent: Error says).
type Missing struct {
	Pane         string `json:"pane"`
	ID           string `json:"id,omitempty"`
	ResponsePath string `json:"response_path,omitempty"`
	TimedOut     bool   `json:"timed_out,omitempty"`
	Error        string `json:"error"`
	err          error
}

// wanted is one exchange an await waits for: the reference it is awaited by and its label.
type wanted struct {
	ref, label string
	// err is set for a broadcast's member that was never sent: there is nothing to wait for.
	err error
}

// Label is how output names an exchange's worker: its pane, with its host for one on another host.
func Label(x *exchange.Exchange) string {
	if x.Host != "" {
		return x.Host + ":" + string(x.Worker)
	}
	return string(x.Worker)
}

// AwaitAll waits for the responses of every exchange refs name (ids, request or response paths,
// broadcast ids: a broadcast's every member) at once, within one timeout (0: until ctx ends), and
// hands each to out as it comes, one at a time, with its pane's label. Each response is recorded
// as read only once out returned without error, as one await does. When any exchange is left
// without an answer, the error says which answered and which did not; it wraps ErrTimeout when
// the wait ended first (exit 3).
func (c *Caster) AwaitAll(ctx context.Context, refs []string, timeout time.Duration, out func(pane string, x *exchange.Exchange) error) (*Awaited, error) {
	res := &Awaited{Answered: []Answer{}}
	var ws []wanted
	seen := map[string]bool{}
	for _, ref := range refs {
		if !messages.IsBroadcastID(ref) {
			if !seen[ref] {
				seen[ref] = true
				ws = append(ws, wanted{ref: ref, label: ref})
			}
			continue
		}
		rec, err := c.Record(ctx, ref)
		if err != nil {
			return nil, err
		}
		res.Broadcasts = append(res.Broadcasts, ref)
		root, _, _ := c.ReadRoot()
		for _, m := range rec.Members {
			w := wanted{ref: m.Exchange, label: m.Label()}
			switch {
			case m.Exchange == "":
				w.ref, w.err = m.Target, fmt.Errorf("never sent: %s", orNone(m.Error))
				if m.Label() == "" {
					w.label = m.Target
				}
			case m.Session != "":
				// By path, not by id: ids have 16 random bits a second, and another exchange
				// with the same id would be found first.
				w.ref = filepath.Join(root, m.Session, messages.SeqFileName(m.Seq+1, messages.KindResponse))
			}
			if !seen[w.ref] {
				seen[w.ref] = true
				ws = append(ws, w)
			}
		}
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var mu sync.Mutex // one out at a time, and res
	var wg sync.WaitGroup
	for _, w := range ws {
		if w.err != nil {
			res.Missing = append(res.Missing, Missing{Pane: w.label, Error: w.err.Error(), err: store.Kindf(store.ErrUndelivered, "%w", w.err)})
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			x, err := c.Sender.AwaitThen(ctx, w.ref, timeout, func(x *exchange.Exchange) error {
				mu.Lock()
				defer mu.Unlock()
				if err := out(Label(x), x); err != nil {
					return err
				}
				res.Answered = append(res.Answered, Answer{Pane: Label(x), Exchange: x})
				return nil
			})
			if err == nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			// Interrupted is a wait that ended first too: an answer may still come.
			waited := errors.Is(err, store.ErrTimeout) || errors.Is(err, context.Canceled)
			m := Missing{Pane: w.label, Error: err.Error(), TimedOut: waited, err: err}
			if x != nil {
				m.Pane, m.ID, m.ResponsePath = Label(x), x.ID, x.ResponsePath
			}
			res.Missing = append(res.Missing, m)
		}()
	}
	wg.Wait()
	return res, res.err(timeout, ctx.Err())
}

// err is the await's error when an exchange is left without an answer, naming who answered and
// who did not; the class is a timeout's when any wait ran out.
func (a *Awaited) err(timeout time.Duration, ctxErr error) error {
	if len(a.Missing) == 0 {
		return nil
	}
	answered := make([]string, len(a.Answered))
	for i, an := range a.Answered {
		answered[i] = an.Pane
	}
	var timedOut, failed []string
	var errs []error
	for _, m := range a.Missing {
		if m.TimedOut {
			timedOut = append(timedOut, m.Pane)
		} else {
			failed = append(failed, m.Pane+" ("+m.Error+")")
			errs = append(errs, m.err)
		}
	}
	total := len(a.Answered) + len(a.Missing)
	msg := fmt.Sprintf("%d of %d answered (%s)", len(a.Answered), total, orNone(strings.Join(answered, ", ")))
	if len(failed) > 0 {
		msg += "; no answer can come from " + strings.Join(failed, ", ")
	}
	if len(timedOut) == 0 {
		// The class is the failures' own: an id that names no exchange is not found (exit 4).
		return &failedAwait{msg: msg, errs: errs}
	}
	again := "wcomm await " + strings.Join(a.Broadcasts, " ")
	if len(a.Broadcasts) == 0 {
		var ids []string
		for _, m := range a.Missing {
			if m.TimedOut && m.ID != "" {
				ids = append(ids, m.ID)
			}
		}
		again = "wcomm await " + strings.Join(ids, " ")
	}
	if errors.Is(ctxErr, context.Canceled) {
		return store.Kindf(ctxErr, "%s; interrupted while waiting for %s", msg, strings.Join(timedOut, ", "))
	}
	return store.Kindf(store.ErrTimeout, "%s; no response yet from %s after %s (%s waits again)", msg, strings.Join(timedOut, ", "), messages.DurationText(timeout), again)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// failedAwait is an await of several exchanges some of which can never be answered: its words
// name them all, and it unwraps to each one's error for the class.
type failedAwait struct {
	msg  string
	errs []error
}

func (f *failedAwait) Error() string   { return f.msg }
func (f *failedAwait) Unwrap() []error { return f.errs }
