package actions

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

func TestWriteList(t *testing.T) {
	var b bytes.Buffer
	WriteList(&b, nil, []string{"bad\x1b[2J file"})
	assert.Equal(t, "no approved-action intents\n! bad file\n", b.String(), "a problem's control bytes never reach the terminal")

	at := time.Date(2026, 1, 17, 12, 0, 0, 0, time.UTC)
	a := &ActionStatus{ID: "t.q1-ab", Status: ActionStale, Age: 49 * time.Hour, Old: true, Reasons: []string{"HEAD moved"},
		Intent: messages.Intent{Action: "publish", Targets: []messages.Target{{Path: "a.txt"}, {Path: "b.txt"}}},
		Answer: &questions.AnswerRecord{Answer: "yes", Source: "telegram", At: at}}
	b.Reset()
	WriteList(&b, []*ActionStatus{a, {ID: "t.q2-cd", Status: ActionPending, Intent: messages.Intent{Action: "lint"}}}, nil)
	out := b.String()
	assert.Contains(t, out, "ID       ACTION   STATUS   AGE")
	assert.Contains(t, out, "49h0m0s (advisory: over 48h)")
	assert.Contains(t, out, "yes by telegram at "+at.Local().Format(time.RFC3339))
	assert.Contains(t, out, "a.txt,b.txt")
	assert.Contains(t, out, "  t.q1-ab: stale: HEAD moved\n")
	assert.Regexp(t, `t\.q2-cd +lint +pending +0s +- +-`, out, "no source nor targets: a dash")
}

func TestWriteRuns(t *testing.T) {
	var b bytes.Buffer
	WriteRuns(&b, nil, false)
	assert.Equal(t, "no approved-action intents\n", b.String())

	st := func(id, status string, reasons ...string) *ActionStatus {
		return &ActionStatus{ID: id, Status: status, Reasons: reasons, Intent: messages.Intent{QuestionID: id, Action: "publish",
			Definition: messages.ActionDef{Run: []string{"make", "publish"}}}}
	}
	runs := []*ActionRun{
		{ActionStatus: st("q1", ActionApproved)},
		{ActionStatus: st("q2", ActionStale, "HEAD moved")},
		{ActionStatus: st("q3", ActionDenied)},
	}
	b.Reset()
	WriteRuns(&b, runs, true)
	assert.Equal(t, "q1: action publish (make publish), question q1, targets -, approval -, status approved, stale no, would run\n"+
		"q2: action publish (make publish), question q2, targets -, approval -, status stale, stale no, would block\n"+
		"  reason: HEAD moved\n"+
		"q3: action publish (make publish), question q3, targets -, approval -, status denied, stale no, would nothing\n", b.String())

	ran := st("q1", ActionExecuted)
	ran.Result, ran.Output = &messages.ActionResult{ExitCode: 0}, "/r/q1.out"
	runs = []*ActionRun{
		{ActionStatus: ran, Did: DidRun},
		{ActionStatus: st("q2", ActionBlocked, "HEAD moved"), Did: DidBlock},
		{ActionStatus: st("q3", ActionDenied), Did: DidNothing, Note: "denied"},
	}
	b.Reset()
	WriteRuns(&b, runs, false)
	assert.Equal(t, "q1: publish executed (exit 0), output /r/q1.out\nq2: publish blocked\n  reason: HEAD moved\nq3: publish denied: nothing done (denied)\n", b.String())
}
