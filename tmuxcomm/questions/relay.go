package questions

// How questions and answers reach a pane: the QUESTION block to the orchestrator, the ANSWER
// block to a worker whose ask no longer waits. Both go through the pane's outbox (package mailbox), so
// a busy pane or a person's half-typed text delays them and loses nothing.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
)

// relayQuestions hands the QUESTION blocks, each with how to answer it, to the orchestrator's
// pane, and says in res whether they were delivered now or queued. The question log records each
// step.
func (d *Desk) relayQuestions(ctx context.Context, root string, p *place, sts []*QuestionStatus, res *AskResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "[QUESTION from worker %s]", d.Self)
	for _, st := range sts {
		b.WriteString("\n" + messages.FormatQuestionBlock(st.Question) + "\n" + messages.AnswerHint(st.Question, d.Command))
		if st.Git != nil {
			b.WriteString("\n(bound to the git state of " + st.Git.Dir + ": an answer after it changes is refused as stale)")
		}
	}
	qids := make([]string, len(sts))
	for i, st := range sts {
		qids[i] = st.ID
	}
	summary := fmt.Sprintf("[QUESTION from worker %s] %s: run: %s questions %s", d.Self, ids(sts), d.Command, strings.Join(qids, " "))
	m := messages.Mail{Kind: messages.MailQuestion, Pane: p.orch, Server: p.server, Socket: p.socket, From: d.Self,
		Session: filepath.Base(p.dir), Question: qids, Text: b.String(), Summary: summary}
	posted, err := d.postTo(ctx, root, m)
	if err != nil {
		if posted == nil {
			for _, st := range sts {
				d.LogQ(st, QUndelivered, map[string]string{"pane": string(p.orch), "error": err.Error()})
			}
		}
		return fmt.Errorf("could not paste the question into orchestrator pane %s: %w", p.orch, err)
	}
	res.Queued = posted.Queued
	res.Delivered = !posted.Queued
	return nil
}

// pasteAnswer hands the ANSWER block to the worker's pane, when the pane still belongs to the
// server the question came through, and returns SignalPasted or SignalQueued, with the route of
// a delivery made now (ViaSocket or ViaTyped).
func (d *Desk) pasteAnswer(ctx context.Context, st *QuestionStatus) (core.Signal, string, error) {
	block := st.AnswerBlock()
	if block == nil {
		return "", "", fmt.Errorf("no answer to paste")
	}
	summary := fmt.Sprintf("[ANSWER %s] %s: run: %s ask --wait %s", st.ID, block.DecidedBy, d.Command, st.ID)
	text := messages.FormatAnswerBlock(*block)
	if st.Idle != nil {
		// The reply to an idle notice is the person's next instruction: the agent gets it as
		// the person's own words, as if typed in its box.
		text = st.Answer.Answer
		summary = fmt.Sprintf("[message from the person, via %s] %s", st.Answer.Source, messages.SanitizeField(text))
		if who := st.Answer.NotPerson; who != "" {
			// Not the person's words: the agent reads who sent them.
			text = fmt.Sprintf("[message from %s, via %s, not from the person] %s", messages.SanitizeField(who), st.Answer.Source, text)
			summary = fmt.Sprintf("[message from %s, via %s] %s", messages.SanitizeField(who), st.Answer.Source, messages.SanitizeField(st.Answer.Answer))
		}
	}
	m := messages.Mail{Kind: messages.MailAnswer, Pane: st.Worker, Server: st.Server, Socket: st.Socket, From: st.Orchestrator,
		Session: filepath.Base(st.Dir), Question: []string{st.ID}, Text: text, Summary: summary}
	posted, err := d.postTo(ctx, filepath.Dir(st.Dir), m)
	if err != nil {
		if posted == nil {
			d.LogQ(st, QAnswerLost, map[string]string{"pane": string(st.Worker), "error": err.Error()})
		}
		return "", "", err
	}
	if posted.Queued {
		return core.SignalQueued, "", nil
	}
	return core.SignalPasted, posted.Via, nil
}

// postTo posts m to its pane after checking that the pane's server is still the one m names and
// the pane is alive. A nil Posted with the error means nothing was queued.
func (d *Desk) postTo(ctx context.Context, root string, m messages.Mail) (*core.Posted, error) {
	p, srv, err := d.Reach(ctx, root, m.Pane, m.Server, "", false)
	if err != nil {
		return nil, err
	}
	if m.Server == "" {
		m.Server, m.Socket = srv.Key(), srv.Socket
	}
	return d.Post(ctx, root, m, p, srv)
}
