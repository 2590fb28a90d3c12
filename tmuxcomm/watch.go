package tmuxcomm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
)

// The feed's kinds of subject.
const (
	FeedSession  = "session"  // a session folder appeared
	FeedExchange = "exchange" // a request and its response
	FeedQuestion = "question" // a question and its answer
)

// Feed event names. An exchange's delivery states (StatePasted, StateSubmitted, StateRefused,
// StateUndelivered, StateAnswered, StateNotified, StateAwaitWoken, StateNotifyLost) are event
// names as they are; "written" is reported as EventRequest.
const (
	EventSession       = "session"
	EventRequest       = "request"
	EventAsked         = "asked"
	EventAnswered      = "answered"
	EventAutoAnswered  = "auto-answered"
	EventCapExceeded   = "cap-exceeded"
	EventStale         = "stale"
	EventResolved      = "resolved"
	EventAnswerInvalid = "answer-invalid" // an answer attempt was refused; the question stays open
	EventAnswerLate    = "answer-stale"   // an answer came after the question was closed
)

// WatchEvent is one thing that happened under the root.
type WatchEvent struct {
	At      time.Time `json:"at"`
	Session string    `json:"session"`
	Kind    string    `json:"kind"`
	// Seq is the request's number for an exchange, the question's number for a question.
	Seq int `json:"seq,omitempty"`
	// ID is the request id of an exchange, "{task}.q{seq}" for a question.
	ID     string            `json:"id,omitempty"`
	Event  string            `json:"event"`
	Detail map[string]string `json:"detail,omitempty"`
	Path   string            `json:"path,omitempty"`
}

// WatchOptions filter and start a Watch.
type WatchOptions struct {
	// Session is one session folder's name; "" watches every session.
	Session string
	// Since replays, at the start, the events of the last Since found on disk; 0 reports only
	// what happens from now on.
	Since time.Duration

	// started, when set, is called once the watches are in place and the replay is done (tests).
	started func()
}

// ErrStopWatch may be returned by a Watch callback to end the watch without an error.
var ErrStopWatch = errors.New("stop watching")

// Watch reports events under the root as they happen, by file events (one inotify instance for
// the root and every session folder), until ctx ends or emit returns an error: ErrStopWatch ends
// it with a nil error, any other error is returned. Memory grows with the number of files under
// the root, never with the time watched or the size of a log: logs are read from where the last
// read stopped, a bounded chunk at a time.
func (e *Engine) Watch(ctx context.Context, o WatchOptions, emit func(WatchEvent) error) error {
	root, err := e.root(true)
	if err != nil {
		return err
	}
	if o.Session != "" {
		if _, err := messages.ParseSessionName(o.Session); err != nil {
			return fmt.Errorf("session %q is not a session folder name such as 20260117-120000-o6-w7: %w",
				messages.SanitizeField(o.Session), err)
		}
		// A session folder is made by the first send between two panes, never later under the
		// same name (its stamp is that send's time): one that is not there will not come.
		if _, err := os.Lstat(filepath.Join(root, o.Session)); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no session folder %s under %s; run 'wcomm history' to list them: %w", o.Session, root, ErrNotFound)
		}
	}
	tw, err := newTreeWatcher()
	if err != nil {
		return err
	}
	defer tw.Close()
	if err := tw.Add(root); err != nil {
		return err
	}
	f := &feed{root: root, only: o.Session, tw: tw, sessions: map[string]*feedSession{}}

	// The watches are in place before the first look, so nothing that happens in between is lost;
	// what the look and a later event both see is reported once, as the state remembers it.
	f.quiet, f.initial = o.Since <= 0, true
	f.rescanRoot()
	f.quiet, f.initial = false, false
	if o.Since > 0 {
		cutoff := e.Now().Add(-o.Since)
		var keep []keyedEvent
		for _, k := range f.out {
			if !k.ev.At.Before(cutoff) {
				keep = append(keep, k)
			}
		}
		f.out = keep
	}
	stop := func(err error) error {
		if errors.Is(err, ErrStopWatch) {
			return nil
		}
		return err
	}
	if err := f.flush(emit); err != nil {
		return stop(err)
	}
	if o.started != nil {
		o.started()
	}
	for {
		evs, err := tw.Next(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return fmt.Errorf("watch %s: %w", root, err)
		}
		f.handle(evs)
		if err := f.flush(emit); err != nil {
			return stop(err)
		}
	}
}

// feed is the state of one Watch: what it has reported, per session folder.
type feed struct {
	root     string
	only     string
	tw       *treeWatcher
	sessions map[string]*feedSession
	quiet    bool // record what exists without reporting it (the start without replay)
	initial  bool // the first look, at the start
	out      []keyedEvent
}

type feedSession struct {
	name string
	dir  string
	born time.Time // sort key of the session's own event: its files' events come after it
	ex   map[int]*feedExchange
	qs   map[string]*feedQuestion
}

type feedExchange struct {
	request  bool // reported (or there before the feed began)
	answered bool
	id       string
	respName string // the response file's name, from the request's instructions
	logOff   int64
	last     time.Time // sort key of the last event: keeps the exchange's events in order
}

type feedQuestion struct {
	id      string // the question's id from its file, else "{task}.q{seq}"
	asked   bool
	decided bool
	closed  bool
	logOff  int64
	last    time.Time
}

// keyedEvent orders events of one batch: by time, except that an exchange's or a question's own
// events never swap. File times come from the kernel's coarse clock (a few ms behind), log times
// from the writer's clock, so time alone could put an answer before its submit.
type keyedEvent struct {
	key time.Time
	ev  WatchEvent
}

func (f *feed) add(last *time.Time, ev WatchEvent) {
	if f.quiet {
		return
	}
	key := ev.At
	if key.Before(*last) {
		key = *last
	}
	*last = key
	f.out = append(f.out, keyedEvent{key: key, ev: ev})
}

func (f *feed) flush(emit func(WatchEvent) error) error {
	out := f.out
	f.out = nil
	sort.SliceStable(out, func(i, j int) bool { return out[i].key.Before(out[j].key) })
	for _, k := range out {
		if err := emit(k.ev); err != nil {
			return err
		}
	}
	return nil
}

// handle looks again at the folders the events name, each once, in the order first named.
func (f *feed) handle(evs []treeEvent) {
	var dirs []string
	seen := map[string]bool{}
	for _, ev := range evs {
		if ev.Overflow {
			f.rescanRoot()
			return
		}
		if ev.Dir == f.root {
			if ev.Name != "" {
				f.newEntry(ev.Name)
			}
			continue
		}
		if !seen[ev.Dir] {
			seen[ev.Dir] = true
			dirs = append(dirs, ev.Dir)
		}
	}
	for _, dir := range dirs {
		if s := f.sessions[filepath.Base(dir)]; s != nil && s.dir == dir {
			f.scanSession(s)
		}
	}
}

// rescanRoot looks at every session folder: at the start, and after lost events.
func (f *feed) rescanRoot() {
	entries, err := os.ReadDir(f.root)
	if err != nil {
		return
	}
	for _, ent := range entries {
		f.newEntry(ent.Name())
	}
	for _, s := range f.sortedSessions() {
		f.scanSession(s)
	}
}

func (f *feed) sortedSessions() []*feedSession {
	out := make([]*feedSession, 0, len(f.sessions))
	for _, s := range f.sessions {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// newEntry takes up an entry of the root when it is a session folder (of the filter) not yet
// watched: it is watched, reported, and looked at.
func (f *feed) newEntry(name string) {
	if _, known := f.sessions[name]; known || strings.HasPrefix(name, ".") || (f.only != "" && name != f.only) {
		return
	}
	sn, err := messages.ParseSessionName(name)
	if err != nil {
		return
	}
	dir := filepath.Join(f.root, name)
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() {
		return
	}
	if err := f.tw.Add(dir); err != nil {
		return
	}
	s := &feedSession{name: name, dir: dir, ex: map[int]*feedExchange{}, qs: map[string]*feedQuestion{}}
	f.sessions[name] = s
	detail := map[string]string{"orchestrator": string(sn.Orchestrator), "worker": string(sn.Worker)}
	// The folder's birth: its metadata's time; else, while the folder is new, now; else its
	// name's stamp.
	at := time.Now()
	if m, err := readMeta(dir); err == nil && !m.Created.IsZero() {
		at = m.Created
	} else if f.initial {
		at, _ = time.ParseInLocation(messages.StampLayout, sn.StartedAt, time.Local)
	}
	f.add(&s.born, WatchEvent{At: at, Session: name, Kind: FeedSession, Event: EventSession, Detail: detail, Path: dir})
	if !f.quiet {
		f.scanSession(s)
	}
}

// exchangeParts and questionParts say which files of one exchange or question a folder holds.
type exchangeParts struct {
	request, log bool
}

type questionParts struct {
	task                            string
	seq                             int
	question, answer, log, resolved bool
}

// scanSession reports what is new in one session folder: per exchange, its request, new lines of
// its delivery log, its response; per question, the question, new answer attempts, the answer,
// the resolution.
func (f *feed) scanSession(s *feedSession) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			delete(f.sessions, s.name) // removed: forget it, so memory follows the disk
		}
		return
	}
	exchanges := map[int]*exchangeParts{}
	part := func(n int) *exchangeParts {
		p := exchanges[n]
		if p == nil {
			p = &exchangeParts{}
			exchanges[n] = p
		}
		return p
	}
	responses := map[string]bool{}
	questions := map[string]*questionParts{}
	for _, ent := range entries {
		name := ent.Name()
		if !ent.Type().IsRegular() {
			continue
		}
		if n, k, ok := messages.ParseSeqFileName(name); ok {
			if k == messages.KindRequest {
				part(n).request = true
			} else {
				responses[name] = true
			}
			continue
		}
		if num, ok := strings.CutSuffix(name, "-delivery.jsonl"); ok && isSidecar(name) {
			n, _ := strconv.Atoi(num)
			part(n).log = true
			continue
		}
		if task, seq, suffix, ok := messages.ParseQuestionFileName(name); ok {
			key := messages.QuestionStem(task, seq)
			q := questions[key]
			if q == nil {
				q = &questionParts{task: task, seq: seq}
				questions[key] = q
			}
			switch suffix {
			case messages.SuffixQuestion:
				q.question = true
			case messages.SuffixAnswer:
				q.answer = true
			case messages.SuffixLog:
				q.log = true
			case messages.SuffixResolved:
				q.resolved = true
			}
		}
	}
	nums := make([]int, 0, len(exchanges))
	for n := range exchanges {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	for _, n := range nums {
		f.scanExchange(s, n, exchanges[n], responses)
	}
	keys := make([]string, 0, len(questions))
	for k := range questions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f.scanQuestion(s, k, questions[k])
	}
}

func (f *feed) scanExchange(s *feedSession, n int, p *exchangeParts, responses map[string]bool) {
	x := s.ex[n]
	if x == nil {
		x = &feedExchange{respName: messages.SeqFileName(n+1, messages.KindResponse), last: s.born}
		s.ex[n] = x
	}
	reqPath := filepath.Join(s.dir, messages.SeqFileName(n, messages.KindRequest))
	ev := func(name string, at time.Time, detail map[string]string, path string) {
		f.add(&x.last, WatchEvent{At: at, Session: s.name, Kind: FeedExchange, Seq: n, ID: x.id, Event: name, Detail: detail, Path: path})
	}
	if p.request && !x.request {
		if f.quiet {
			// Before the feed began: only the response's name matters, and only while unanswered.
			x.request = true
			if !responses[x.respName] {
				f.loadRequest(x, reqPath)
			}
			x.answered = responses[x.respName]
		} else if detail, at, ok := f.loadRequest(x, reqPath); ok {
			x.request = true
			ev(EventRequest, at, detail, reqPath)
		}
	}
	if p.log {
		logPath := filepath.Join(s.dir, logName(n))
		if f.quiet {
			if st, err := os.Stat(logPath); err == nil {
				x.logOff = st.Size()
			}
		} else {
			x.logOff = readNewLines(logPath, x.logOff, func(line []byte) {
				var le Event
				if json.Unmarshal(line, &le) != nil || le.State == "" {
					return
				}
				detail := le.Detail
				switch le.State {
				case StateWritten:
					if x.request {
						return
					}
					x.request = true
					if x.id == "" {
						x.id = detail["id"]
					}
					ev(EventRequest, le.At, detail, reqPath)
				case StateAnswered:
					if x.answered {
						return
					}
					x.answered = true
					respPath := filepath.Join(s.dir, x.respName)
					ev(EventAnswered, le.At, responseDetail(respPath, detail), respPath)
				default:
					ev(le.State, le.At, detail, "")
				}
			})
		}
	}
	if !x.answered && responses[x.respName] {
		respPath := filepath.Join(s.dir, x.respName)
		if done, _ := responseComplete(respPath, false); done {
			x.answered = true
			at := time.Now()
			if st, err := os.Lstat(respPath); err == nil {
				at = st.ModTime()
			}
			ev(EventAnswered, at, responseDetail(respPath, nil), respPath)
		}
	}
}

// loadRequest reads a request's header for the feed; ok is false while the file is still being
// written by a plain writer (the seed's cat > file), so a later event reports it whole.
func (f *feed) loadRequest(x *feedExchange, path string) (map[string]string, time.Time, bool) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, time.Time{}, false
	}
	data, err := readFile(path)
	if err != nil {
		return map[string]string{"error": err.Error()}, st.ModTime(), true
	}
	req, err := messages.ParseRequest(data)
	if err != nil {
		if len(data) == 0 || paneops.OpenForWriting(path) {
			return nil, time.Time{}, false
		}
		return map[string]string{"error": "damaged request: " + err.Error()}, st.ModTime(), true
	}
	h := req.Header
	x.id = h.ID
	if rp := req.Instructions.ResponsePath; rp != "" && filepath.Dir(filepath.Clean(rp)) == filepath.Dir(path) {
		x.respName = filepath.Base(rp)
	}
	return map[string]string{
		"capability":   string(h.Capability),
		"orchestrator": string(h.Orchestrator),
		"worker":       string(h.Worker),
		"summary":      firstLine(req.Body),
	}, st.ModTime(), true
}

// responseDetail describes a response for the feed: its first line, or why it cannot be read.
func responseDetail(path string, detail map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range detail {
		out[k] = v
	}
	data, err := readFile(path)
	if err != nil {
		out["error"] = err.Error()
		return out
	}
	resp, err := messages.ParseResponse(data)
	if err != nil {
		out["error"] = "damaged response: " + err.Error()
		return out
	}
	out["summary"] = firstLine(resp.Body)
	return out
}

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
			if rec, _, _, ok := readRecord[QuestionRecord](file(messages.SuffixQuestion)); ok {
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
		if rec, at, bad, ok := readRecord[QuestionRecord](path); ok {
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
		if rec, at, bad, ok := readRecord[AnswerRecord](path); ok {
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
		if rec, at, bad, ok := readRecord[ResolvedRecord](path); ok {
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
			var le Event
			if json.Unmarshal(line, &le) != nil || le.State == "" {
				return
			}
			// The files tell asked, answered and resolved whole; their log lines say when, so
			// the file is reported in the log's order.
			switch le.State {
			case qAsked:
				asked()
			case qAccepted:
				decided()
			case qResolvedEvent:
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

// logEventName is the watch's name for a question log's state: refused and late answer attempts
// are named for what they were; other states keep the names the log gives them.
func logEventName(state string) string {
	switch state {
	case qInvalid:
		return EventAnswerInvalid
	case qStale:
		return EventAnswerLate
	}
	return state
}

// logDetail is an event's detail from a question log line's: the attempt's text as typed, why it
// was refused, who gave it and where.
func logDetail(d map[string]string) map[string]string {
	answer := d["raw"]
	if answer == "" {
		answer = d["answer"]
	}
	reason := d["reason"]
	if reason == "" {
		reason = d["error"]
	}
	return details("answer", answer, "reason", reason, "by", d["decided_by"], "source", d["source"], "pane", d["pane"])
}

// details builds an event's detail from name, value pairs, each value made one short, sanitized
// line; empty values are left out.
func details(kv ...string) map[string]string {
	out := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		if v := firstLine(kv[i+1]); v != "" {
			out[kv[i]] = v
		}
	}
	return out
}

// questionID returns the valid question id a question record holds, else def.
func questionID(rec QuestionRecord, def string) string {
	if _, err := messages.ParseQuestionID(rec.ID); err == nil {
		return rec.ID
	}
	return def
}

func timeOr(t, def time.Time) time.Time {
	if t.IsZero() {
		return def
	}
	return t
}

// readRecord decodes a question file into the record type its writer wrote (files are written
// atomically, so one that exists is whole). A file that does not decode is still reported, with
// bad saying why, rather than silently skipped; ok is false only when there is no file to report.
func readRecord[T any](path string) (rec T, mtime time.Time, bad string, ok bool) {
	st, err := os.Lstat(path)
	if err != nil {
		return rec, time.Time{}, "", false
	}
	data, err := readFile(path)
	if err != nil {
		return rec, st.ModTime(), err.Error(), true
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return rec, time.Time{}, "", false
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, st.ModTime(), fmt.Sprintf("not a valid %s file: %v", filepath.Ext(path)[1:], err), true
	}
	return rec, st.ModTime(), "", true
}

// readNewLines calls fn with each complete line of path from off on and returns the offset after
// the last complete line: a line still being appended is read next time. A line longer than the
// read buffer (64 KiB; log lines are a few hundred bytes) is skipped whole. A file shorter than off
// was replaced, and is read again from its start.
func readNewLines(path string, off int64, fn func([]byte)) int64 {
	fl, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return off
	}
	defer fl.Close()
	st, err := fl.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return off
	}
	if st.Size() < off {
		off = 0
	}
	if _, err := fl.Seek(off, io.SeekStart); err != nil {
		return off
	}
	r := bufio.NewReaderSize(fl, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			skipped := int64(len(line))
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				skipped += int64(len(line))
			}
			if err != nil {
				return off // the long line is still being written
			}
			off += skipped
			continue
		}
		if err != nil {
			return off
		}
		off += int64(len(line))
		if l := bytes.TrimSpace(line); len(l) > 0 {
			fn(l)
		}
	}
}
