package bridge

// Which questions a bridge serves: those asked where its channel configuration applied (the key
// each question records), and of those only the ones that are fit to post. A question file that
// does not load or is not valid is recorded in the state and told once in the log, never posted.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// own reports whether the bridge serves q.
func (h *Hub) own(q *questions.QuestionStatus) bool {
	switch {
	case h.Channels == "":
		return true
	case q.Channels == "":
		return h.Unrecorded
	}
	return q.Channels == h.Channels
}

// tellsDead reports whether the bridge tells of dead letters: they belong to no project, so the
// user's own channels tell them, never a project's.
func (h *Hub) tellsDead() bool { return h.Channels == "" || h.Unrecorded }

// postable checks what a question file holds before any of it is posted: an ask wrote it within
// its limits, but a file written by hand was checked by no one. Only what a post shows is
// checked, against ask's own limits; the rules of a well-formed question are the engine's.
func postable(q *questions.QuestionStatus) error {
	if _, err := messages.ParseQuestionID(q.ID); err != nil {
		return err
	}
	if strings.TrimSpace(q.Text) == "" {
		return fmt.Errorf("its question is empty")
	}
	if err := within("question", q.Text, messages.MaxQuestionLen); err != nil {
		return err
	}
	if err := within("context", q.Context, messages.MaxContextLen); err != nil {
		return err
	}
	if len(q.Options) > messages.MaxOptions {
		return fmt.Errorf("it has %d options; an ask takes at most %d", len(q.Options), messages.MaxOptions)
	}
	for i, o := range q.Options {
		if err := within("option "+messages.OptionLetter(i), o, messages.MaxOptionLen); err != nil {
			return err
		}
	}
	if _, err := messages.ParsePaneID(string(q.Worker)); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	if len(q.Exchange) > 128 || len(q.Action) > 128 {
		return fmt.Errorf("its request or action name is longer than 128 bytes")
	}
	return nil
}

func within(what, s string, max int) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("its %s is not UTF-8", what)
	}
	if n := utf8.RuneCountInString(s); n > max {
		return fmt.Errorf("its %s has %d characters; an ask writes at most %d", what, n, max)
	}
	return nil
}

// ownPostable keeps the bridge's own questions that are fit to post; the others of its own, and
// the files that did not load (problems), are recorded as unpostable and told once. On a full
// look, what no longer is so is forgotten.
func (h *Hub) ownPostable(all []*questions.QuestionStatus, problems []string, full bool) []*questions.QuestionStatus {
	var out []*questions.QuestionStatus
	bad := map[string]string{}
	for _, p := range problems {
		bad[p] = "the question file does not load"
	}
	for _, q := range all {
		if !h.own(q) {
			continue
		}
		if err := postable(q); err != nil {
			bad[q.ID] = messages.SanitizeField(err.Error())
			continue
		}
		out = append(out, q)
	}
	var fresh, gone []string
	h.st.view(func(s *State) {
		for k := range bad {
			if _, ok := s.Unpostable[k]; !ok {
				fresh = append(fresh, k)
			}
		}
		if full {
			for k := range s.Unpostable {
				if _, ok := bad[k]; !ok {
					gone = append(gone, k)
				}
			}
		}
	})
	if len(fresh) == 0 && len(gone) == 0 {
		return out
	}
	sort.Strings(fresh)
	for _, k := range fresh {
		if bad[k] == "the question file does not load" {
			h.logf("a question file is posted nowhere: %s", messages.SanitizeField(k))
		} else {
			h.logf("question %s is posted nowhere: %s", k, bad[k])
		}
	}
	if err := h.st.update(func(s *State) {
		for _, k := range fresh {
			s.Unpostable[k] = bad[k]
		}
		for _, k := range gone {
			delete(s.Unpostable, k)
		}
	}); err != nil {
		h.logf("save state: %v", err)
	}
	return out
}

// Refusals are doctor's lines on the pending questions of the bridge of root's channels named
// key that no post carries: refused for good by a service, or not fit to post. A question
// decided since needs no word.
func Refusals(ctx context.Context, eng Engine, root, key string) []Check {
	s, err := ReadState(root, key)
	if err != nil {
		return []Check{{Channel: "bridge", What: "state", Detail: err.Error()}}
	}
	list, _, err := eng.Questions(ctx, questions.QuestionsOptions{Pending: true, FilesOnly: true})
	if err != nil {
		return nil
	}
	var out []Check
	for _, q := range list {
		if reason, ok := s.Unpostable[q.ID]; ok {
			out = append(out, Check{Channel: "bridge", What: "question " + q.ID, Detail: "posted nowhere: " + reason})
		}
		for _, ch := range sortedKeys(s.Posts) {
			if p := s.Posts[ch][q.ID]; p != nil && p.Refused != "" {
				out = append(out, Check{Channel: ch, What: "question " + q.ID,
					Detail: "refused for good: " + p.Refused + "; answer it with 'wcomm answer " + q.ID + " ANSWER'"})
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
