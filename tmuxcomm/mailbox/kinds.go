package mailbox

// What differs between the kinds of mail: what is typed, when it is no longer wanted, and where
// its delivery is recorded (a request's and a response's in the exchange's delivery log, a
// question's and an answer's in the question's log).

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// mailEvent is a step of a mail's delivery, recorded in the log of what it carries.
type mailEvent int

const (
	evQueued        mailEvent = iota // waits in the outbox
	evPasted                         // typed into the pane
	evSubmitted                      // and submitted
	evRefused                        // nothing typed: the pane refused or was not ready (fail-fast)
	evUndelivered                    // typed but not submitted, or tmux failed
	evUndeliverable                  // ended without delivery: the pane or server is gone
	evExpired                        // ended without delivery: its time to live passed
	evTaken                          // handed over without typing: an agent's hook, or wcomm inbox
)

// exchangeStates and questionStates name each event per kind; "" records nothing.
var (
	requestStates  = [...]string{exchange.StateQueued, exchange.StatePasted, exchange.StateSubmitted, exchange.StateRefused, exchange.StateUndelivered, exchange.StateUndeliverable, exchange.StateExpired, exchange.StateDelivered}
	responseStates = [...]string{exchange.StateNotifyQueued, "", exchange.StateNotified, exchange.StateNotifyLost, exchange.StateNotifyLost, exchange.StateNotifyUndeliverable, exchange.StateNotifyExpired, exchange.StateNotified}
	questionStates = [...]string{questions.QQueued, "", questions.QDelivered, questions.QUndelivered, questions.QUndelivered, questions.QUndeliverable, questions.QExpired, questions.QDelivered}
	answerStates   = [...]string{questions.QAnswerQueued, "", questions.QAnswerPasted, questions.QAnswerLost, questions.QAnswerLost, questions.QAnswerUndelivrable, questions.QAnswerExpired, questions.QAnswerDelivered}
)

// sessionDir is the session folder a piece of mail names, checked to be a session folder name.
func sessionDir(root string, m messages.Mail) (string, error) {
	if _, err := messages.ParseSessionName(m.Session); err != nil {
		return "", fmt.Errorf("mail %s names session %q: %w", m.ID, messages.SanitizeField(m.Session), err)
	}
	return filepath.Join(root, m.Session), nil
}

// mailQuestions loads the questions a piece of mail names.
func mailQuestions(root string, m messages.Mail) []*questions.QuestionStatus {
	dir, err := sessionDir(root, m)
	if err != nil {
		return nil
	}
	var sts []*questions.QuestionStatus
	for _, id := range m.Question {
		q, err := messages.ParseQuestionID(id)
		if err != nil {
			continue
		}
		if st, err := questions.LoadQuestion(dir, q.Task, q.Seq); err == nil {
			sts = append(sts, st)
		}
	}
	return sts
}

// recordMail records one event of a group of mail in the logs of what each carries. A log that
// cannot be written (a full disk) is an error: the callers that report a state report it only
// once it is recorded.
func (o *Office) recordMail(root string, group []messages.Mail, ev mailEvent, detail map[string]string, at time.Time) error {
	return o.recordMails(root, group, mailRecord{ev, detail, at})
}

// mailRecord is one event recordMails writes.
type mailRecord struct {
	ev     mailEvent
	detail map[string]string
	at     time.Time
}

// recordMails is recordMail of several events in their order: an exchange's log takes them in
// one append (a paste and its Enter, recorded together once both are done).
func (o *Office) recordMails(root string, group []messages.Mail, recs ...mailRecord) error {
	var errs []error
	for _, m := range group {
		switch m.Kind {
		case messages.MailRequest, messages.MailResponse:
			states := requestStates
			if m.Kind == messages.MailResponse {
				states = responseStates
			}
			dir, err := sessionDir(root, m)
			if err != nil {
				continue
			}
			var evs []exchange.Event
			for _, r := range recs {
				if states[r.ev] != "" {
					evs = append(evs, exchange.Event{State: states[r.ev], Detail: r.detail, At: r.at})
				}
			}
			if len(evs) == 0 {
				continue
			}
			if err := exchange.LogEvents(dir, m.Seq, evs...); err != nil {
				errs = append(errs, fmt.Errorf("record %s of %s: %w", evs[0].State, m.ID, err))
			}
		case messages.MailQuestion, messages.MailAnswer:
			states := questionStates
			if m.Kind == messages.MailAnswer {
				states = answerStates
			}
			var sts []*questions.QuestionStatus
			looked := false
			for _, r := range recs {
				if states[r.ev] == "" {
					continue
				}
				if !looked {
					sts, looked = mailQuestions(root, m), true
				}
				for _, st := range sts {
					if err := o.LogQ(st, states[r.ev], r.detail); err != nil {
						errs = append(errs, fmt.Errorf("record %s of %s: %w", states[r.ev], m.ID, err))
					}
				}
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", store.ErrNotRecorded, errors.Join(errs...))
	}
	return nil
}

// unwanted says why a piece of mail need not be delivered any more ("" when it still is): its
// exchange was answered, an await already has the response, its questions were decided, or the
// asking worker already took the answer.
func (o *Office) unwanted(root string, m messages.Mail) string {
	switch m.Kind {
	case messages.MailRequest, messages.MailResponse:
		dir, err := sessionDir(root, m)
		if err != nil {
			return ""
		}
		if m.Kind == messages.MailRequest {
			if exchange.LoadExchange(dir, m.Seq, false).Status == exchange.StatusAnswered {
				return "the exchange was answered before the request reached the pane"
			}
			return ""
		}
		// A RESPONSE line's exchange is answered: its await lock and its log alone say whether an
		// await has the response, without reading the request and the response again.
		return responseTaken(func() bool { return lock.IsLocked(filepath.Join(dir, messages.AwaitLockName(m.Seq))) },
			func() bool { return exchange.WasRead(dir, m.Seq) })
	case messages.MailQuestion:
		sts := mailQuestions(root, m)
		for _, st := range sts {
			if !st.Decided() {
				return ""
			}
		}
		if len(sts) > 0 {
			return "the questions were answered or resolved"
		}
	case messages.MailAnswer:
		for _, st := range mailQuestions(root, m) {
			if lock.IsLocked(st.WaitLock()) {
				return "an ask is waiting for the answer and takes it from the file"
			}
			if slices.ContainsFunc(questions.QuestionEvents(st), func(ev exchange.Event) bool {
				return ev.State == questions.QAnswerRead || ev.State == questions.QAskWoken
			}) {
				return "the asking worker already has the answer"
			}
		}
	}
	return ""
}

// responseTaken says why a RESPONSE line need not be typed ("" when it still is): an await is
// waiting on the exchange (locked) and wakes on the file, or an await returned the response
// (read). The lock is looked at before the log, as notify does: an await records the read before
// it lets go of its lock, so one that returns between the two looks is seen by the second. Looked
// at the other way round, such an await was in neither look, and its response was typed again.
func responseTaken(locked, read func() bool) string {
	if locked() {
		return "an await is waiting on the exchange and wakes on the file"
	}
	if read() {
		return "an await returned the response"
	}
	return ""
}

// mailContent is what is typed for a group of mail into a pane of profile det, and its form.
// Only RESPONSE lines come in groups: one line each.
func (o *Office) mailContent(root string, group []messages.Mail, det profile.Detection) (content, form string, err error) {
	shell := det.Profile != nil && det.Profile.Kind == profile.KindShell
	m := group[0]
	switch m.Kind {
	case messages.MailRequest:
		dir, err := sessionDir(root, m)
		if err != nil {
			return "", "", err
		}
		path := filepath.Join(dir, messages.SeqFileName(m.Seq, messages.KindRequest))
		if m.Request != nil {
			content, form = o.PasteForm(string(m.Request), path, det.Profile)
			return content, form, nil
		}
		return o.PasteFormOfFile(path, det.Profile)
	case messages.MailResponse:
		lines := make([]string, len(group))
		for i, g := range group {
			lines[i] = messages.SanitizeField(g.Text)
			if shell {
				lines[i] = fleet.ShellLine(lines[i])
			}
		}
		form = "line"
		if shell {
			form = fleet.FormComment
		}
		return strings.Join(lines, "\n"), form, nil
	default:
		if shell {
			return fleet.ShellLine(messages.SanitizeField(m.Summary)), fleet.FormComment, nil
		}
		return strings.TrimRight(messages.Sanitize(m.Text, true), "\n"), "block", nil
	}
}

// mailText is what a reader that is handed the mail without typing (a hook, wcomm inbox) gets:
// the RESPONSE line, the QUESTION or ANSWER block, or for a request the line that points at its
// file.
func mailText(root string, m messages.Mail) string {
	if m.Kind != messages.MailRequest {
		return messages.Sanitize(m.Text, true)
	}
	dir, err := sessionDir(root, m)
	if err != nil {
		return messages.Sanitize(m.Text, true)
	}
	path := filepath.Join(dir, messages.SeqFileName(m.Seq, messages.KindRequest))
	data, err := store.ReadFile(path)
	if err != nil {
		return messages.Sanitize(m.Text, true)
	}
	return fleet.PointerLine(string(data), path, "it waited in your inbox")
}

// submittedDetail is the evidence of a submitted event.
func submittedDetail(pane messages.PaneID, form, profile string, res paneops.DeliveryResult) map[string]string {
	d := map[string]string{"pane": string(pane), "form": form, "profile": profile,
		"enter_delay": res.EnterDelay.String(), "enters": strconv.Itoa(res.Enters),
		"verified": strconv.FormatBool(res.Verified), "evidence": res.Evidence}
	if res.ShownAfter > 0 {
		d["shown_after"] = res.ShownAfter.Round(time.Millisecond).String()
	}
	return d
}
