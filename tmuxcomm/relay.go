package tmuxcomm

// How questions and answers reach a pane: the QUESTION block to the orchestrator, the ANSWER
// block to a worker whose ask no longer waits.

import (
	"context"
	"fmt"
	"strings"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
)

// relayQuestions pastes the QUESTION blocks, each with how to answer it, into the orchestrator's
// pane and submits them.
func (e *Engine) relayQuestions(ctx context.Context, root string, p *place, sts []*QuestionStatus) error {
	var b strings.Builder
	fmt.Fprintf(&b, "[QUESTION from worker %s]", e.Self)
	for _, st := range sts {
		b.WriteString("\n" + messages.FormatQuestionBlock(st.Question) + "\n" + messages.AnswerHint(st.Question, e.Command))
		if st.Git != nil {
			b.WriteString("\n(bound to the git state of " + st.Git.Dir + ": an answer after it changes is refused as stale)")
		}
	}
	srv, err := e.Tmux.ServerInfo(ctx)
	if err == nil && srv.Key() != p.server {
		err = fmt.Errorf("the tmux server changed while asking")
	}
	if err == nil {
		summary := fmt.Sprintf("[QUESTION from worker %s] %s: run: %s questions --pending", e.Self, ids(sts), e.Command)
		err = e.pasteText(ctx, srv, p.orch, p.dir, b.String(), summary)
	}
	if err != nil {
		return fmt.Errorf("could not paste the question into orchestrator pane %s: %w", p.orch, err)
	}
	return nil
}

// pasteAnswer pastes the ANSWER block into the worker's pane and submits it, when the pane still
// belongs to the server the question came through.
func (e *Engine) pasteAnswer(ctx context.Context, st *QuestionStatus) error {
	srv, err := e.Tmux.ServerInfo(ctx)
	if err != nil {
		return err
	}
	if st.Server != "" && st.Server != srv.Key() {
		return fmt.Errorf("the tmux server the question came through has restarted")
	}
	block := st.AnswerBlock()
	if block == nil {
		return fmt.Errorf("no answer to paste")
	}
	summary := fmt.Sprintf("[ANSWER %s] %s: run: %s ask --wait %s", st.ID, block.DecidedBy, e.Command, st.ID)
	return e.pasteText(ctx, srv, st.Worker, st.Dir, messages.FormatAnswerBlock(*block), summary)
}

// ResolveQuestion closes a question without an answer (seed 003's resolve-stale): the reason is

// pasteText delivers text (a QUESTION or ANSWER block) into a pane the way its profile wants, under
// the same guards as a request: an interactive shell gets only summary, as an inert comment line,
// since the block's lines would run as commands; a person's half-typed input is not pasted into.
// dir is the session folder the text belongs to.
func (e *Engine) pasteText(ctx context.Context, srv paneops.ServerInfo, pane messages.PaneID, dir, text, summary string) error {
	p, err := e.Tmux.Pane(ctx, string(pane))
	if err != nil {
		return err
	}
	if p.Dead {
		return fmt.Errorf("pane %s is dead: %w", pane, paneops.ErrRefused)
	}
	det, err := e.Detect(ctx, p, "")
	if err != nil {
		return err
	}
	content := strings.TrimRight(messages.Sanitize(text, true), "\n")
	if det.Profile != nil && det.Profile.Kind == paneops.KindShell {
		content = ShellLine(messages.SanitizeField(summary))
	}
	_, err = e.Tmux.Deliver(ctx, e.delivery(p, content, det, dir, srv))
	return err
}
