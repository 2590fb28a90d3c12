package bridge

// What the hub tells of itself when a channel asks: what waits, the approved actions, the latest
// decisions.

import (
	"context"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

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
