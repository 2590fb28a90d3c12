package watch

// The watch feed's reading of a question: the question, new answer attempts, the answer, the
// resolution.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

func (f *feed) scanQuestion(s *feedSession, key string, p *questionParts) {
	q := s.qs[key]
	if q == nil {
		q = &feedQuestion{id: key, last: s.born}
		s.qs[key] = q
	}
	file := func(suffix string) string {
		return filepath.Join(s.dir, messages.QuestionFileName(p.task, p.seq, suffix))
	}
	ev := func(name string, at time.Time, detail map[string]string, path string) {
		if detail == nil {
			detail = map[string]string{}
		}
		detail["task"] = p.task
		f.add(&q.last, WatchEvent{At: at, Session: s.name, Kind: FeedQuestion, Seq: p.seq, ID: q.id, Event: name, Detail: detail, Path: path})
	}
	if f.quiet {
		q.asked, q.decided, q.closed = p.question, p.answer, p.resolved
		if p.question && !p.answer && !p.resolved {
			// Still open: its later events should carry its id.
			if rec, _, _, ok := readRecord[questions.QuestionRecord](file(messages.SuffixQuestion)); ok {
				q.id = questionID(rec, q.id)
			}
		}
		if p.log {
			if st, err := os.Stat(file(messages.SuffixLog)); err == nil {
				q.logOff = st.Size()
			}
		}
		return
	}
	asked := func() {
		path := file(messages.SuffixQuestion)
		if q.asked {
			return
		}
		if rec, at, bad, ok := readRecord[questions.QuestionRecord](path); ok {
			q.asked = true
			q.id = questionID(rec, q.id)
			ev(EventAsked, timeOr(rec.AskedAt, at), details(
				"question", rec.Text,
				"urgency", string(rec.Urgency),
				"options", strings.Join(rec.Options, " | "),
				"asker", string(rec.Worker),
				"error", bad), path)
		}
	}
	decided := func() {
		path := file(messages.SuffixAnswer)
		if q.decided {
			return
		}
		if rec, at, bad, ok := readRecord[questions.AnswerRecord](path); ok {
			q.decided = true
			name := EventAnswered
			switch rec.DecidedBy {
			case messages.DecidedByCap:
				name = EventCapExceeded
			case messages.DecidedByTimeout:
				name = EventAutoAnswered
			}
			ev(name, timeOr(rec.At, at), details(
				"answer", rec.Answer,
				"by", rec.DecidedBy,
				"source", rec.Source,
				"error", bad), path)
		}
	}
	closed := func() {
		path := file(messages.SuffixResolved)
		if q.closed {
			return
		}
		if rec, at, bad, ok := readRecord[questions.ResolvedRecord](path); ok {
			q.closed = true
			ev(EventResolved, timeOr(rec.At, at), details(
				"reason", rec.Reason,
				"by", string(rec.Pane),
				"error", bad), path)
		}
	}
	if p.question {
		asked()
	}
	if p.log {
		logPath := file(messages.SuffixLog)
		// A line without its own time gets the log's: the time of its last append.
		logTime := time.Now()
		if st, err := os.Lstat(logPath); err == nil {
			logTime = st.ModTime()
		}
		q.logOff = readNewLines(logPath, q.logOff, func(line []byte) {
			var le exchange.Event
			if json.Unmarshal(line, &le) != nil || le.State == "" {
				return
			}
			// The files tell asked, answered and resolved whole; their log lines say when, so
			// the file is reported in the log's order.
			switch le.State {
			case questions.QAsked:
				asked()
			case questions.QAccepted:
				decided()
			case questions.QResolvedEvent:
				closed()
			default:
				ev(logEventName(le.State), timeOr(le.At, logTime), logDetail(le.Detail), logPath)
			}
		})
	}
	if p.answer {
		decided()
	}
	if p.resolved {
		closed()
	}
}
