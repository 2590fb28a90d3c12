package exchange

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/paneops/lease"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
)

// Exchange states and statuses.
const (
	StateWritten     = "written"     // the request file exists
	StatePasted      = "pasted"      // the paste reached the worker's pane
	StateSubmitted   = "submitted"   // Enter followed the paste and, where the screen tells, was taken
	StateRefused     = "refused"     // nothing was pasted: dead pane, input off, someone's text in the box, no box
	StateUndelivered = "undelivered" // delivery failed for another reason (pasted but not submitted, tmux failed)
	StateAnswered    = "answered"    // the response file is complete
	StateNotified    = "notified"    // the RESPONSE line reached the orchestrator's pane
	StateAwaitWoken  = "await-woken" // an await was waiting, so no line was pasted
	StateNotifyLost  = "notify-failed"
	StateRead        = "read"      // an await returned the response to the orchestrator
	StateHeld        = "held"      // over a loop cap (the loops room): waits in the outbox for a person's release
	StateCancelled   = "cancelled" // withdrawn by its sender before it was delivered (wcomm cancel)

	StatusPending     = "pending"
	StatusAnswered    = "answered"
	StatusUndelivered = "undelivered"
	StatusDamaged     = "damaged"
	StatusCancelled   = "cancelled"
)

// Event is one line of an exchange's delivery log, NNN-delivery.jsonl beside the request.
type Event struct {
	State  string            `json:"state"`
	At     time.Time         `json:"at"`
	Detail map[string]string `json:"detail,omitempty"`
}

// LogName returns the delivery log's name for request number n.
func LogName(n int) string {
	return strings.TrimSuffix(messages.SeqFileName(n, messages.KindRequest), "-request.md") + "-delivery.jsonl"
}

// IsSidecar reports whether name is a delivery log of ours, which listings do not count as foreign.
func IsSidecar(name string) bool {
	num, ok := strings.CutSuffix(name, "-delivery.jsonl")
	if !ok || len(num) < 3 {
		return false
	}
	_, err := strconv.Atoi(num)
	return err == nil
}

func LogEvent(dir string, n int, state string, detail map[string]string, at time.Time) error {
	_, err := LogEventAs(dir, n, state, detail, at)
	return err
}

// LogEventAs is LogEvent returning the event as the log now holds it.
func LogEventAs(dir string, n int, state string, detail map[string]string, at time.Time) (Event, error) {
	ev := Event{State: state, At: at.UTC(), Detail: detail}
	line, err := json.Marshal(ev)
	if err != nil {
		return ev, err
	}
	return ev, store.AppendLine(filepath.Join(dir, LogName(n)), line)
}

// LogEvents is LogEvent of several events, appended in one write, in their order (each At in
// UTC).
func LogEvents(dir string, n int, evs ...Event) error {
	var lines []byte
	for _, ev := range evs {
		ev.At = ev.At.UTC()
		line, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		if lines != nil {
			lines = append(lines, '\n')
		}
		lines = append(lines, line...)
	}
	return store.AppendLine(filepath.Join(dir, LogName(n)), lines)
}

func readEvents(dir string, n int) ([]Event, []string) {
	return readEventsFrom(dir, n, nil)
}

// readEventsFrom is readEvents through r (see fileReads).
func readEventsFrom(dir string, n int, r *fileReads) ([]Event, []string) {
	path := filepath.Join(dir, LogName(n))
	if r != nil && r.log != nil && r.log.current(path) {
		r.stamps[2] = readStamp{stamp: r.log.stamp, ok: true}
		return append([]Event(nil), r.log.events...), append([]string(nil), r.log.problems...)
	}
	data, err := r.bytes(path, 2)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []string{fmt.Sprintf("%s: %v", path, err)}
	}
	var evs []Event
	var problems []string
	// Split in place: a log is small and whole in memory, and a scanner's buffer per exchange
	// was most of what a history of thousands allocated (measured).
	for i := 1; len(data) > 0; i++ {
		line, rest, _ := bytes.Cut(data, []byte{'\n'})
		data = rest
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if ev, ok := parseEventLine(line); ok {
			evs = append(evs, ev)
			continue
		}
		var ev Event
		if err := json.Unmarshal(line, &ev); err != nil {
			problems = append(problems, fmt.Sprintf("%s:%d: %v", path, i, err))
			continue
		}
		evs = append(evs, ev)
	}
	return evs, problems
}

// detach replaces every string of x that points into a request file's text by a copy of its
// own, so the text itself can be collected: its header, instructions, summary and paths.
func (x *Exchange) detach() {
	small := messages.FormatRequest(messages.Request{Header: x.request.Header, Instructions: x.request.Instructions})
	if r, err := messages.ParseRequestText(strings.Clone(small)); err == nil {
		x.request = &r
	}
	h := x.request.Header
	x.ID, x.StartedAt, x.Orchestrator, x.Worker = h.ID, h.StartedAt, h.Orchestrator, h.Worker
	x.Summary, x.ResponsePath, x.Capability = strings.Clone(x.Summary), strings.Clone(x.ResponsePath), strings.Clone(x.Capability)
	for i := range x.Problems {
		x.Problems[i] = strings.Clone(x.Problems[i])
	}
}

// detachResponse is detach for the response's text: its header and DELTA block are copied.
func (x *Exchange) detachResponse() {
	r := x.response
	r.Body = ""
	r.Header.ID, r.Header.StartedAt, r.Header.RequestSum = strings.Clone(r.Header.ID), strings.Clone(r.Header.StartedAt), strings.Clone(r.Header.RequestSum)
	r.Header.Orchestrator = messages.PaneID(strings.Clone(string(r.Header.Orchestrator)))
	r.Header.Worker = messages.PaneID(strings.Clone(string(r.Header.Worker)))
	if r.Delta != nil {
		d := *r.Delta
		for _, l := range []*[]string{&d.Changes, &d.Risks, &d.Alternatives} {
			c := make([]string, len(*l))
			for i, v := range *l {
				c[i] = strings.Clone(v)
			}
			*l = c
		}
		r.Delta = &d
		x.Delta = &d
	}
}

// WasRead reports whether an await has returned the response of request n: its log says so.
// It reads the log alone, not the request and response, which may be megabytes.
func WasRead(dir string, n int) bool {
	evs, _ := readEvents(dir, n)
	for _, ev := range evs {
		if ev.State == StateRead {
			return true
		}
	}
	return false
}

// SignalOf says how request n's response reached its orchestrator, as its log says: answered
// once a notify recorded the response, read once an await returned it, and signal, the first of
// the RESPONSE line's states logged after the answer: StateAwaitWoken (an await, or a send's hold
// for one, was waiting, so nothing was typed), StateNotified, StateNotifyQueued and the rest of
// the line's, or "" while the notify has not yet said.
func SignalOf(dir string, n int) (answered, read bool, signal string) {
	evs, _ := readEvents(dir, n)
	for _, ev := range evs {
		switch ev.State {
		case StateAnswered:
			answered = true
		case StateRead:
			read = true
		case StateAwaitWoken, StateNotified, StateNotifyLost, StateNotifyQueued, StateNotifyExpired, StateNotifyUndeliverable:
			if answered && signal == "" {
				signal = ev.State
			}
		}
	}
	return answered, read, signal
}

// Exchange is the record of one request and its response, as files on disk say.
type Exchange struct {
	Session      string          `json:"session"`
	Dir          string          `json:"dir"`
	Seq          int             `json:"seq"`
	ID           string          `json:"id"`
	StartedAt    string          `json:"started_at"`
	Orchestrator messages.PaneID `json:"orchestrator"`
	Worker       messages.PaneID `json:"worker"`
	// Host is the declared host the worker is on, for an exchange relayed there (package relay).
	Host string `json:"host,omitempty"`
	// Broadcast is the id of the broadcast this exchange is one member of (its log says so).
	Broadcast  string `json:"broadcast,omitempty"`
	Capability string `json:"capability"`
	Status     string `json:"status"`
	State      string `json:"state"`
	Form       string `json:"form,omitempty"` // paste, pointer or comment
	// Profile is the agent profile the delivery used (claude, codex, shell, reader, generic...).
	Profile string `json:"profile,omitempty"`
	// Via is the request's route into the worker (mailbox/route.go): "socket" (the agent's messaging
	// socket) or "typed" (pasted and submitted); "hook" or "inbox" when handed over unasked.
	Via string `json:"via,omitempty"`
	// Verified: the screen showed the submission; Evidence says what was seen, or why delivery
	// was refused or failed.
	Verified     bool            `json:"verified,omitempty"`
	Evidence     string          `json:"evidence,omitempty"`
	Summary      string          `json:"summary"`
	RequestPath  string          `json:"request_path"`
	ResponsePath string          `json:"response_path"`
	SentAt       time.Time       `json:"sent_at"`
	AnsweredAt   *time.Time      `json:"answered_at,omitempty"`
	RequestBody  string          `json:"request_body,omitempty"`
	ResponseBody string          `json:"response_body,omitempty"`
	Delta        *messages.Delta `json:"delta,omitempty"`
	// Integrity is "ok" when the request body on disk still matches the length and hash its header
	// recorded at send time (and the response's echo, when present), "mismatch" when not, "" when
	// the header carries none (a seed request).
	Integrity string `json:"integrity,omitempty"`
	// Read is set once an await has returned the response to the orchestrator.
	Read     bool     `json:"read,omitempty"`
	Events   []Event  `json:"events,omitempty"`
	Problems []string `json:"problems,omitempty"`

	request  *messages.Request
	response *messages.Response
	// requestText is the request file as read, kept (when small) for a Reload by the same call
	// only when the load was asked to keep it (loadWhere).
	requestText *knownText
	// logRead is the delivery log as the load read it, for a Reload (see knownLog).
	logRead *knownLog
	// raw is the exchange's encoding as the history index keeps it (AppendJSON), nil when the
	// exchange was not listed by a history.
	raw []byte
	// BodyBytes and BodySum are the request body's size and hash as the file holds it now, when
	// its header records them (what a response echoes). No reader of an exchange's JSON needs
	// them (Integrity says whether they match the header), so it leaves them out.
	BodyBytes int    `json:"-"`
	BodySum   string `json:"-"`
}

// Request returns the parsed request, nil when it was damaged. Its Body is empty unless the
// exchange was loaded with its bodies.
func (x *Exchange) Request() *messages.Request { return x.request }

// Response returns the parsed response, nil while pending.
func (x *Exchange) Response() *messages.Response { return x.response }

// LoadExchange reads request n of a session folder and its response n+1 (when complete). With
// bodies set, the bodies are kept in the record. It never fails on a damaged file: the problem is
// named in Problems and the status is "damaged".
func LoadExchange(dir string, n int, bodies bool) *Exchange {
	return LoadExchangeBodies(dir, n, bodies, bodies)
}

// LoadExchangeBodies is loadExchange keeping the request's body and the response's body apart.
func LoadExchangeBodies(dir string, n int, requestBody, responseBody bool) *Exchange {
	return loadExchange(dir, n, requestBody, responseBody, nil)
}

// LoadSent is LoadExchange of request n of dir right after the calling send wrote it with text
// (the file whole): the request is not read back, only its modification time looked up (the
// time it was sent, as a read would give it); the delivery log and the response are read.
func LoadSent(dir string, n int, text []byte) *Exchange {
	path := filepath.Join(dir, messages.SeqFileName(n, messages.KindRequest))
	st, err := os.Lstat(path)
	if text == nil || len(text) >= store.BigFile || err != nil || !st.Mode().IsRegular() || st.Size() != int64(len(text)) {
		return LoadExchange(dir, n, false)
	}
	return loadExchange(dir, n, false, false, &fileReads{plain: true, request: &knownText{data: string(text), mtime: st.ModTime()}})
}

// Reload loads x again, as LoadExchangeBodies does, for the call that loaded it: a request it
// kept as read (see loadWhere) is not read again, nor a delivery log whose stamp has not changed
// since (see knownLog); the response is. A response c carries, read by ResponseCompleteRead, is
// not read again either.
func (x *Exchange) Reload(requestBody, responseBody bool, c *Complete) *Exchange {
	r := &fileReads{plain: true, request: x.requestText, log: x.logRead}
	if c != nil {
		r.response = c.text
	}
	if r.request == nil && r.response == nil && r.log == nil {
		return LoadExchangeBodies(x.Dir, x.Seq, requestBody, responseBody)
	}
	return loadExchange(x.Dir, x.Seq, requestBody, responseBody, r)
}

// loadExchange is LoadExchangeBodies reading through r (see fileReads).
func loadExchange(dir string, n int, requestBody, responseBody bool, r *fileReads) *Exchange {
	bodies := requestBody
	name := filepath.Base(dir)
	x := &Exchange{
		Session:      name,
		Dir:          dir,
		Seq:          n,
		RequestPath:  filepath.Join(dir, messages.SeqFileName(n, messages.KindRequest)),
		ResponsePath: filepath.Join(dir, messages.SeqFileName(n+1, messages.KindResponse)),
		Status:       StatusPending,
	}
	if s, err := messages.ParseSessionName(name); err == nil {
		x.StartedAt, x.Orchestrator, x.Worker = s.StartedAt, s.Orchestrator, s.Worker
	}
	data, mtime, err := r.text(x.RequestPath, 0)
	if !mtime.IsZero() {
		x.SentAt = mtime.UTC()
	}
	if err == nil && r != nil && (r.keep || r.request != nil) && len(data) < store.BigFile {
		x.requestText = &knownText{data: data, mtime: mtime}
	}
	if err != nil {
		x.Status = StatusDamaged
		x.Problems = append(x.Problems, fmt.Sprintf("%s: %v", x.RequestPath, err))
	} else if req, err := messages.ParseRequestText(data); err != nil {
		x.Status = StatusDamaged
		x.Problems = append(x.Problems, fmt.Sprintf("%s:1: %v", x.RequestPath, err))
		x.Summary = FirstLine(data)
	} else {
		x.request = &req
		h := req.Header
		x.ID, x.StartedAt, x.Orchestrator, x.Worker = h.ID, h.StartedAt, h.Orchestrator, h.Worker
		x.Capability = string(h.Capability)
		x.Summary = FirstLine(req.Body)
		if bodies {
			x.RequestBody = req.Body
		}
		if req.Instructions.ResponsePath != "" && filepath.Clean(req.Instructions.ResponsePath) != x.ResponsePath {
			// A seed sender that counted files may name another response file; follow the request,
			// but only inside this folder.
			if filepath.Dir(filepath.Clean(req.Instructions.ResponsePath)) == dir {
				x.ResponsePath = filepath.Clean(req.Instructions.ResponsePath)
			} else {
				x.Problems = append(x.Problems, fmt.Sprintf("%s: response file %q lies outside its session folder; ignored",
					x.RequestPath, messages.SanitizeField(req.Instructions.ResponsePath)))
			}
		}
		if h.Bytes >= 0 {
			n, sum := messages.BodySumText(req.Body)
			x.BodyBytes, x.BodySum = n, sum
			if n == h.Bytes && sum == h.Sum {
				x.Integrity = "ok"
			} else {
				x.Integrity = "mismatch"
				x.Problems = append(x.Problems, fmt.Sprintf("%s: body is %d bytes sha256 %s; header says %d bytes sha256 %s (changed after sending)",
					x.RequestPath, n, sum, h.Bytes, h.Sum))
			}
		}
	}
	if x.request != nil && !bodies {
		// Without bodies, a request of megabytes is not held: what is needed of its body (first
		// line, size and hash) is taken above, and nothing kept may point into the file's text.
		x.request.Body = ""
		if len(data) >= store.BigFile {
			x.detach()
		}
	}
	evs, probs := readEventsFrom(dir, n, r)
	x.Events = evs
	x.Problems = append(x.Problems, probs...)
	if r != nil && r.plain && r.stamps[2].ok {
		// Kept for a Reload, which takes them again while the log is unchanged.
		x.logRead = &knownLog{events: append([]Event(nil), evs...), problems: probs, stamp: r.stamps[2].stamp}
	}
	handled := map[string]bool{}
	for _, ev := range evs {
		if ev.State == StateRead {
			x.Read = true
		}
		if b := ev.Detail["broadcast"]; ev.State == StateWritten && messages.ValidBroadcastID(b) == nil {
			x.Broadcast = b
		}
		if ev.State == StateQueued && handled[ev.Detail["mail"]] {
			// A sender that gave up waiting for another process's delivery logs "queued" after
			// it looked; that process may have delivered this same message first.
			continue
		}
		// A hold is no delivery: the release that follows it queues that same mail.
		if m := ev.Detail["mail"]; m != "" && ev.State != StateQueued && ev.State != StateHeld {
			handled[m] = true
		}
		switch ev.State {
		case StateWritten, StatePasted, StateSubmitted, StateRefused, StateUndelivered,
			StateQueued, StateDelivered, StateExpired, StateUndeliverable, StateHeld, StateCancelled:
			x.State = ev.State
			if f := ev.Detail["form"]; f != "" {
				x.Form = f
			}
			if p := ev.Detail["profile"]; p != "" {
				x.Profile = p
			}
			switch {
			case ev.Detail["via"] != "":
				x.Via = ev.Detail["via"]
			case ev.State == StatePasted || ev.State == StateSubmitted:
				x.Via = ViaTyped
			}
			x.Verified = ev.Detail["verified"] == "true"
			switch ev.State {
			case StateSubmitted:
				x.Evidence = ev.Detail["evidence"]
			case StateRefused, StateUndelivered, StateUndeliverable:
				x.Evidence = ev.Detail["error"]
				if v := ev.Detail["evidence"]; v != "" {
					x.Evidence = v
				}
			case StateQueued, StateExpired, StateHeld, StateCancelled:
				x.Evidence = ev.Detail["reason"]
			case StateDelivered:
				x.Evidence = "handed to the agent by its " + ev.Detail["via"]
			default:
				x.Evidence = ""
			}
		}
	}
	if x.State == StateRefused || x.State == StateUndelivered || x.State == StateExpired || x.State == StateUndeliverable {
		if x.Status == StatusPending {
			x.Status = StatusUndelivered
		}
	}
	if x.State == StateCancelled && x.Status == StatusPending {
		x.Status = StatusCancelled
	}
	if r == nil || !r.noResponse {
		x.loadResponse(responseBody, r)
	}
	return x
}

// loadResponse fills the response part when the response file exists and is complete, reading
// through r (see fileReads).
func (x *Exchange) loadResponse(bodies bool, r *fileReads) {
	data, mtime, err := r.text(x.ResponsePath, 1)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		x.Problems = append(x.Problems, fmt.Sprintf("%s: %v", x.ResponsePath, err))
		return
	}
	x.takeResponse(data, mtime, bodies)
}

// Answered records in x the response its caller has just written whole to x.ResponsePath, as
// text, at mtime (the file's), and the "answered" event it logged: what loading the exchange again
// would find, without reading back the request, the log and the response that call just wrote or
// read. As for LoadExchange without bodies, x.ResponseBody stays empty.
func (x *Exchange) Answered(text string, mtime time.Time, ev Event) {
	x.Events = append(x.Events, ev)
	x.takeResponse(text, mtime, false)
}

// takeResponse fills the response part from the text of a complete response file.
func (x *Exchange) takeResponse(data string, mtime time.Time, bodies bool) {
	resp, err := messages.ParseResponseText(data)
	if err != nil {
		x.Problems = append(x.Problems, fmt.Sprintf("%s:1: %v", x.ResponsePath, err))
		if x.Status != StatusDamaged {
			x.Status = StatusDamaged
		}
		return
	}
	x.response = &resp
	at := mtime.UTC()
	x.AnsweredAt = &at
	if x.Status != StatusDamaged {
		x.Status = StatusAnswered
	}
	x.State = StateAnswered
	if x.Read {
		// The step after answered: the orchestrator has the response, nobody waits on it.
		x.State = StateRead
	}
	x.Delta = resp.Delta
	if bodies {
		x.ResponseBody = resp.Body
	} else if len(data) >= store.BigFile {
		x.detachResponse()
	}
	if x.ID != "" && resp.Header.ID != x.ID {
		x.Problems = append(x.Problems, fmt.Sprintf("%s: response id %s does not match request id %s", x.ResponsePath, resp.Header.ID, x.ID))
	}
	if x.request != nil && (resp.Header.StartedAt != x.StartedAt || resp.Header.Orchestrator != x.Orchestrator || resp.Header.Worker != x.Worker) {
		x.Problems = append(x.Problems, fmt.Sprintf("%s: the response header says started_at=%s orchestrator=%s worker=%s; the request says started_at=%s orchestrator=%s worker=%s",
			x.ResponsePath, resp.Header.StartedAt, resp.Header.Orchestrator, resp.Header.Worker, x.StartedAt, x.Orchestrator, x.Worker))
	}
	if resp.Header.RequestBytes >= 0 && x.request != nil && x.request.Header.Bytes >= 0 &&
		(resp.Header.RequestBytes != x.request.Header.Bytes || resp.Header.RequestSum != x.request.Header.Sum) {
		x.Integrity = "mismatch"
		x.Problems = append(x.Problems, fmt.Sprintf("%s: the worker saw a request of %d bytes sha256 %s; it was sent as %d bytes sha256 %s",
			x.ResponsePath, resp.Header.RequestBytes, resp.Header.RequestSum, x.request.Header.Bytes, x.request.Header.Sum))
	}
}

func FirstLine(s string) string {
	s = strings.TrimLeft(s, "\n")
	line, _, _ := strings.Cut(s, "\n")
	line = messages.SanitizeField(line)
	if r := []rune(line); len(r) > 120 {
		line = string(r[:117]) + "..."
	}
	return line
}

// Exchange log states of the mailbox (beside those of exchange.go).
const (
	StateQueued        = "queued"        // waits in the pane's outbox
	StateDelivered     = "delivered"     // handed to the worker's agent by its hook or its inbox
	StateExpired       = "expired"       // its time to live passed before the pane was ready
	StateUndeliverable = "undeliverable" // the pane or its server went away first

	// The RESPONSE line's own: it waits for the orchestrator's pane, or ended without reaching it.
	StateNotifyQueued        = "notify-queued"
	StateNotifyExpired       = "notify-expired"
	StateNotifyUndeliverable = "notify-undeliverable"
)

// Routes, as the delivery log and show name them.
const (
	ViaSocket = door.RouteSocket
	ViaTyped  = door.RouteTyped
)

// ResponseComplete reports whether a response file is whole. wcomm's own responses appear by
// rename, whole (renamed: a rename into the folder was seen for it). A foreign writer (a `cat > file`
// heredoc) makes the file exist before it is written, so otherwise the file counts only when no
// process holds it open for writing. An empty file is never complete.
func ResponseComplete(path string, renamed bool) (bool, error) {
	done, _, err := ResponseCompleteRead(path, renamed)
	return done, err
}

// Complete is a response ResponseCompleteRead found complete, with its text when the look read
// it: Reload takes the text instead of opening the file again.
type Complete struct {
	text *knownText
}

// answeredLogged reports whether the delivery log beside the response at path says that wcomm's
// notify published it ("answered", only ever logged after the response's rename).
func answeredLogged(path string) bool {
	n, kind, ok := messages.ParseSeqFileName(filepath.Base(path))
	if !ok || kind != messages.KindResponse || n < 2 {
		return false
	}
	evs, _ := readEvents(filepath.Dir(path), n-1)
	for _, ev := range evs {
		if ev.State == StateAnswered && filepath.Base(ev.Detail["response"]) == filepath.Base(path) {
			return true
		}
	}
	return false
}

// ResponseCompleteRead is ResponseComplete that reads the response in the same open as it asks
// the kernel whether a writer holds it (lease.ReadIfUnwritten), when it asks.
func ResponseCompleteRead(path string, renamed bool) (bool, *Complete, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil, nil
	}
	if err != nil {
		return false, nil, err
	}
	if !st.Mode().IsRegular() {
		return false, nil, fmt.Errorf("response %s is not a regular file; refusing it", path)
	}
	if st.Size() == 0 {
		return false, nil, nil
	}
	if renamed {
		return true, &Complete{}, nil
	}
	// A close event alone is not enough: a shell's `> file` opens the file, dup2s it onto the
	// writer's stdout and closes its own descriptor, which fires close-after-write while the writer
	// still holds the file.
	data, mtime, busy := lease.ReadIfUnwritten(path, store.BigFile-1)
	if busy {
		// Held by a writer: a foreign one still writing, or wcomm's notify, whose response is
		// whole since its rename and which holds it for its fsync (about a millisecond), having
		// logged "answered" just after the rename. That log says it is whole.
		if answeredLogged(path) {
			return true, &Complete{}, nil
		}
		return false, nil, nil
	}
	c := &Complete{}
	if len(data) > 0 {
		c.text = &knownText{data: string(data), mtime: mtime}
	}
	return true, c, nil
}
