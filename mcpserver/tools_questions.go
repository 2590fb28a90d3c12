package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

type askIn struct {
	Question   string   `json:"question,omitempty" jsonschema:"the question, one sentence"`
	Task       string   `json:"task,omitempty" jsonschema:"the task the question is about, ^[a-zA-Z0-9_-]+$"`
	Context    string   `json:"context,omitempty" jsonschema:"one or two sentences: what you found and why it blocks (at most 500 characters)"`
	Options    []string `json:"options,omitempty" jsonschema:"the choices; numbered and fixed need 2 or more, and on timeout the first is taken"`
	Type       string   `json:"type,omitempty" jsonschema:"numbered (default), yes-no, fixed or freeform"`
	Pattern    string   `json:"pattern,omitempty" jsonschema:"freeform only: a regular expression the whole answer must match"`
	Urgency    string   `json:"urgency,omitempty" jsonschema:"blocking (default: wait for the answer) or non-blocking (return the id at once; fetch the answer later with wait_ids)"`
	Timeout    *float64 `json:"timeout_seconds,omitempty" jsonschema:"how long the question waits for an answer before auto-answer (default from the settings, 180; 0: no limit)"`
	AutoAnswer *bool    `json:"auto_answer,omitempty" jsonschema:"on timeout take the first option (default from the settings, true)"`
	Exchange   string   `json:"exchange,omitempty" jsonschema:"the request (id or path) the question is about (default: the newest one addressed to this pane)"`
	To         string   `json:"to,omitempty" jsonschema:"the orchestrator's pane, when no request ties the question to one"`
	BindGit    bool     `json:"bind_git,omitempty" jsonschema:"refuse answers given after HEAD or git status of the working folder change"`
	WaitIDs    []string `json:"wait_ids,omitempty" jsonschema:"instead of asking: wait for the answers of questions asked before (their ids)"`
}

type askOut struct {
	Status    string                      `json:"status" jsonschema:"answered: every question is decided (answers holds the ANSWER blocks); pending: asked non-blocking; waiting: not decided within this call, call ask again with wait_ids; relay_off: nothing was asked, decide yourself"`
	Answers   []string                    `json:"answers,omitempty" jsonschema:"the ANSWER blocks: ANSWER, TASK, DECIDED_BY, ID"`
	Questions []*questions.QuestionStatus `json:"questions,omitempty" jsonschema:"each question with its state"`
	WaitIDs   []string                    `json:"wait_ids,omitempty" jsonschema:"the ids to pass as wait_ids to fetch answers still open"`
	Delivered bool                        `json:"delivered,omitempty" jsonschema:"the QUESTION block reached the orchestrator's pane"`
	Warnings  []string                    `json:"warnings,omitempty"`
	Next      string                      `json:"next,omitempty" jsonschema:"what to do next"`
}

func (s *server) askTool() tool {
	return typed(s, mcp.Tool{
		Name:  "ask",
		Title: "Ask your orchestrator a question (worker)",
		Description: `As a worker that cannot decide alone: puts a structured question (QUESTION, TASK, OPTIONS, CONTEXT)
into your orchestrator's pane and waits for its answer, returned as an ANSWER block; continue your
task from there. Blocking asks wait up to the settings' timeout (180 s) and then take the first
option (DECIDED_BY auto-timeout). This call itself waits at most 600 s: when that passes first the
result is status "waiting" with wait_ids; call ask again with wait_ids to go on waiting. At most 3
questions per task. A question is never a blocker: whenever ask ends without an answer, continue on
your best judgment and mark the choice "assumed — needs review".`,
	}, s.ask)
}

func (s *server) ask(ctx context.Context, _ *mcp.CallToolRequest, in askIn) (askOut, string, error) {
	e, _, err := s.engine()
	if err != nil {
		return askOut{}, "", tmuxcomm.Judged(err)
	}
	// What the arguments leave unset the door takes from the settings.
	var timeout *time.Duration
	if in.Timeout != nil {
		if *in.Timeout < 0 || math.IsNaN(*in.Timeout) || math.IsInf(*in.Timeout, 0) {
			return askOut{}, "", tmuxcomm.Judged(usagef("timeout_seconds must be 0 (no limit) or positive"))
		}
		d := seconds(*in.Timeout)
		timeout = &d
	}
	// The call's own bound: the question's deadline when it comes first, else MaxAwaitTimeout, when
	// the ask stops as a killed ask does and the question stays pending for wait_ids.
	bctx, cancel := context.WithTimeout(ctx, MaxAwaitTimeout)
	defer cancel()

	if len(in.WaitIDs) > 0 {
		if in.Question != "" || in.Task != "" || len(in.Options) > 0 || in.Context != "" || in.Exchange != "" || in.To != "" {
			return askOut{}, "", tmuxcomm.Judged(usagef("wait_ids picks up questions asked before; give no question, task, options, context, exchange or to"))
		}
		res, _, err := e.Ask(bctx, tmuxcomm.Asking{Again: &tmuxcomm.Waiting{IDs: in.WaitIDs, Timeout: timeout, AutoAnswer: in.AutoAnswer}})
		return askResult(ctx, bctx, res, err)
	}

	task, err := e.Task(ctx, in.Task, in.Exchange, tmuxcomm.Choices{})
	if err != nil {
		return askOut{}, "", tmuxcomm.Judged(err)
	}
	if in.Urgency == "" {
		in.Urgency = string(messages.Blocking)
	}
	u, err := messages.ParseUrgency(in.Urgency)
	if err != nil {
		return askOut{}, "", tmuxcomm.Judged(usagef("urgency: %v", err))
	}
	if strings.TrimSpace(in.Question) == "" {
		return askOut{}, "", tmuxcomm.Judged(usagef("ask needs the question text"))
	}
	if in.Type == "" {
		in.Type = "numbered"
	}
	t, err := messages.ParseQuestionType(in.Type)
	if err != nil {
		return askOut{}, "", tmuxcomm.Judged(usagef("type: %v", err))
	}
	q := messages.Question{Text: in.Question, Task: task, Urgency: u, Type: t,
		Options: in.Options, Pattern: in.Pattern, Context: in.Context}.Normalized()
	if err := q.Validate(); err != nil {
		return askOut{}, "", tmuxcomm.Judged(usagef("%v", err))
	}
	res, off, err := e.Ask(bctx, tmuxcomm.Asking{Questions: []messages.Question{q}, Exchange: in.Exchange, To: in.To,
		Wait: u == messages.Blocking, Timeout: timeout, AutoAnswer: in.AutoAnswer, BindGit: in.BindGit})
	if off != nil {
		block := messages.FormatAnswerBlock(off[0])
		return askOut{Status: "relay_off", Answers: []string{block}}, block, nil
	}
	return askResult(ctx, bctx, res, err)
}

// askResult turns what an ask or a wait got into the tool's result: answered, pending
// (non-blocking), waiting (the call's bound passed first) or the ask's error.
func askResult(ctx, bctx context.Context, res *questions.AskResult, err error) (askOut, string, error) {
	if res == nil {
		return askOut{}, "", tmuxcomm.Judged(err)
	}
	out := askOut{Questions: res.Questions, Delivered: res.Delivered, Warnings: res.Warnings}
	var open []string
	for _, st := range res.Questions {
		if b := st.AnswerBlock(); b != nil {
			out.Answers = append(out.Answers, messages.FormatAnswerBlock(*b))
		} else {
			open = append(open, st.ID)
		}
	}
	switch {
	case err != nil && ctx.Err() == nil && errors.Is(bctx.Err(), context.DeadlineExceeded) && len(open) > 0:
		out.Status, out.WaitIDs = "waiting", open
		out.Next = fmt.Sprintf("no answer within this call's %s; call ask again with wait_ids %q to go on waiting", MaxAwaitTimeout, open)
	case err != nil:
		return askOut{}, "", tmuxcomm.Judged(err)
	case len(open) > 0:
		out.Status, out.WaitIDs = "pending", open
		out.Next = fmt.Sprintf("asked; keep working and fetch the answer with ask and wait_ids %q (an answer that comes while no ask waits is pasted into your pane)", open)
	default:
		out.Status = "answered"
	}
	text := strings.Join(out.Answers, "\n\n")
	if out.Next != "" {
		text = strings.TrimSpace(text + "\n" + out.Next)
	}
	for _, st := range res.Questions {
		if note := st.AutoNote(); note != "" {
			text += "\n" + note
		}
	}
	return out, text, nil
}

type answerIn struct {
	ID      string `json:"id" jsonschema:"the question's id, from its QUESTION block (ID: task-3.q1-a1b2)"`
	Answer  string `json:"answer" jsonschema:"numbered: the option's number, letter or exact text; yes-no: yes or no; fixed: one option exactly; freeform: any text"`
	Source  string `json:"source,omitempty" jsonschema:"who or which channel answers (default mcp)"`
	Message string `json:"message,omitempty" jsonschema:"a permission question's deny: what the model is told"`
}

func (s *server) answerTool() tool {
	return typed(s, mcp.Tool{
		Name:  "answer",
		Title: "Answer a worker's question",
		Description: `Answers a worker's question (a QUESTION block in your input, or one listed by the questions tool).
The answer is checked against the question's type; an invalid one is refused with the accepted
forms (class usage) and the question stays open. The first valid answer wins and wakes the worker's
waiting ask, or is pasted into its pane; a later one fails as stale. A permission question (an
agent's permission prompt) is the person's to answer: refused here unless the settings name you.`,
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in answerIn) (*questions.AnswerResult, string, error) {
		if in.ID == "" || strings.TrimSpace(in.Answer) == "" {
			return nil, "", usagef("answer takes the question ID and the ANSWER")
		}
		if err := questions.CheckQuestionRef(in.ID); err != nil {
			return nil, "", err // refused before any engine is needed
		}
		e, _, err := s.engine()
		if err != nil {
			return nil, "", err
		}
		if in.Source == "" {
			in.Source = "mcp"
		}
		res, err := e.Answer(ctx, tmuxcomm.AnswerOptions{AnswerOptions: questions.AnswerOptions{ID: in.ID, Raw: in.Answer, Source: in.Source, Message: in.Message, Agent: true}})
		if err != nil {
			return nil, "", err
		}
		text := res.Line()
		if res.Warning != "" {
			text += "\nwarning: " + res.Warning
		}
		return res, text, nil
	})
}

type questionsIn struct {
	Pending bool   `json:"pending,omitempty" jsonschema:"only questions still waiting for an answer"`
	Resolve string `json:"resolve,omitempty" jsonschema:"instead of listing: close this question (id) without an answer"`
	Reason  string `json:"reason,omitempty" jsonschema:"with resolve: why it is closed without an answer"`
}

type questionsOut struct {
	Questions []*questions.QuestionStatus `json:"questions" jsonschema:"every question: id, state (pending, answered, auto-answered, cap-exceeded, stale, resolved), task, worker, request, the question and its answer"`
	Problems  []string                    `json:"problems,omitempty" jsonschema:"files that could not be read"`
}

func (s *server) questionsTool() tool {
	return typed(s, mcp.Tool{
		Name:  "questions",
		Title: "List workers' questions",
		Description: `Lists every question under the root with its state (pending, answered, auto-answered,
cap-exceeded, stale, resolved), task, worker pane, request and text; pending: only those still
waiting. resolve with reason closes an abandoned question without inventing an answer: a waiting
ask ends and tells its worker to continue on its best judgment.`,
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in questionsIn) (questionsOut, string, error) {
		e, _, err := s.engine()
		if err != nil {
			return questionsOut{}, "", err
		}
		if in.Resolve != "" {
			if strings.TrimSpace(in.Reason) == "" {
				return questionsOut{}, "", usagef("resolve needs reason: say why it is closed without an answer")
			}
			sts, _, err := e.Questions(ctx, questions.QuestionsOptions{IDs: []string{in.Resolve}, Resolve: in.Reason})
			if err != nil {
				return questionsOut{}, "", err
			}
			return questionsOut{Questions: sts}, fmt.Sprintf("%s resolved: %s", sts[0].ID, sts[0].Reason), nil
		}
		if in.Reason != "" {
			return questionsOut{}, "", usagef("reason goes with resolve")
		}
		list, problems, err := e.Questions(ctx, questions.QuestionsOptions{Pending: in.Pending})
		if err != nil {
			return questionsOut{}, "", err
		}
		if list == nil {
			list = []*questions.QuestionStatus{}
		}
		return questionsOut{Questions: list, Problems: problems}, messages.Plural(len(list), "question"), nil
	})
}
