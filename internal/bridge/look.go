package bridge

// The hub's looks at the root: the bridge's own questions read through the engine, each new one
// given a token, and what its state holds of questions gone let go.

import (
	"context"
	"strconv"
	"sync"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

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
