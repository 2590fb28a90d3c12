package watch

// The watch feed's reading of a session folder and of its exchanges: a request, the new
// lines of its delivery log, its response.

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wcomm/wcomm/paneops/lease"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

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
// the resolution. With named, only the questions whose files it names are read again: a folder
// of a pane's permission prompts holds hundreds, and one event concerns one.
func (f *feed) scanSession(s *feedSession, named ...string) {
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
		if num, ok := strings.CutSuffix(name, "-delivery.jsonl"); ok && exchange.IsSidecar(name) {
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
	if f.questionsOnly {
		nums = nil
	}
	for _, n := range nums {
		if f.quiet || !f.before(s, n, exchanges[n], responses) {
			f.scanExchange(s, n, exchanges[n], responses)
			continue
		}
		// Nothing of it falls in the replay: its state is recorded as a start without replay
		// records it (a stat of its log, not a read), which on a root of 10,000 exchanges saves
		// reading and parsing every delivery log (seconds of CPU) at each console start.
		f.quiet = true
		f.scanExchange(s, n, exchanges[n], responses)
		f.quiet = false
	}
	keys := make([]string, 0, len(questions))
	for k := range questions {
		keys = append(keys, k)
	}
	if named != nil {
		keys = keys[:0]
		for _, name := range named {
			if task, seq, _, ok := messages.ParseQuestionFileName(name); ok {
				if k := messages.QuestionStem(task, seq); questions[k] != nil && !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		f.scanQuestion(s, k, questions[k])
	}
}

// before reports whether, during a first look with a replay, every file of exchange n was last
// written well before the replay's cutoff, so that none of its events can be replayed. An event's
// time is taken before its line is written, and a file's time comes from the kernel's coarse
// clock, a few ms behind: the margin covers both.
func (f *feed) before(s *feedSession, n int, p *exchangeParts, responses map[string]bool) bool {
	if !f.initial || f.cutoff.IsZero() || !p.request {
		return false
	}
	// An exchange without its usual response file may be open, or answered under the name its
	// request gives: read it as usual (such exchanges are few).
	resp := messages.SeqFileName(n+1, messages.KindResponse)
	if !responses[resp] {
		return false
	}
	limit := f.cutoff.Add(-replayMargin)
	names := []string{messages.SeqFileName(n, messages.KindRequest), resp}
	if p.log {
		names = append(names, exchange.LogName(n))
	}
	for _, name := range names {
		st, err := os.Lstat(filepath.Join(s.dir, name))
		if err != nil || !st.ModTime().Before(limit) {
			return false
		}
	}
	return true
}

// replayMargin is how far before the replay's cutoff an exchange's files must have been written
// for the exchange to be recorded without reading it.
const replayMargin = time.Second

func (f *feed) scanExchange(s *feedSession, n int, p *exchangeParts, responses map[string]bool) {
	x := s.ex[n]
	if x == nil {
		x = &feedExchange{respName: messages.SeqFileName(n+1, messages.KindResponse), last: s.born}
		s.ex[n] = x
	}
	reqPath := filepath.Join(s.dir, messages.SeqFileName(n, messages.KindRequest))
	ev := func(name string, at time.Time, detail map[string]string, path string) {
		if x.unread && !f.quiet {
			x.unread = false
			f.loadRequest(x, reqPath) // recorded without reading it: the id is in its header
		}
		f.add(&x.last, WatchEvent{At: at, Session: s.name, Kind: FeedExchange, Seq: n, ID: x.id, Event: name, Detail: detail, Path: path})
	}
	if p.request && !x.request {
		if f.quiet {
			// Before the feed began: only the response's name matters, and only while unanswered.
			x.request = true
			if !responses[x.respName] {
				f.loadRequest(x, reqPath)
			} else {
				x.unread = true // its id is read when an event of it comes
			}
			x.answered = responses[x.respName]
		} else if detail, at, ok := f.loadRequest(x, reqPath); ok {
			x.request = true
			ev(EventRequest, at, detail, reqPath)
		}
	}
	if p.log {
		logPath := filepath.Join(s.dir, exchange.LogName(n))
		if f.quiet {
			if st, err := os.Stat(logPath); err == nil {
				x.logOff = st.Size()
			}
		} else {
			x.logOff = readNewLines(logPath, x.logOff, func(line []byte) {
				var le exchange.Event
				if json.Unmarshal(line, &le) != nil || le.State == "" {
					return
				}
				detail := le.Detail
				switch le.State {
				case exchange.StateWritten:
					if x.request {
						// Reported from the request's header, which does not name a broadcast:
						// its log does, so a member of one says so once, for the feeds that
						// group a broadcast's exchanges.
						if detail["broadcast"] != "" && !x.broadcast {
							x.broadcast = true
							ev(EventBroadcast, le.At, detail, reqPath)
						}
						return
					}
					x.broadcast = detail["broadcast"] != ""
					x.request = true
					if x.id == "" {
						x.id = detail["id"]
					}
					ev(EventRequest, le.At, detail, reqPath)
				case exchange.StateAnswered:
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
		if done, _ := exchange.ResponseComplete(respPath, false); done {
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
	data, err := store.ReadFile(path)
	if err != nil {
		return map[string]string{"error": err.Error()}, st.ModTime(), true
	}
	req, err := messages.ParseRequest(data)
	if err != nil {
		if len(data) == 0 || lease.OpenForWriting(path) {
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
		"summary":      exchange.FirstLine(req.Body),
	}, st.ModTime(), true
}

// responseDetail describes a response for the feed: its first line, or why it cannot be read.
func responseDetail(path string, detail map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range detail {
		out[k] = v
	}
	data, err := store.ReadFile(path)
	if err != nil {
		out["error"] = err.Error()
		return out
	}
	resp, err := messages.ParseResponse(data)
	if err != nil {
		out["error"] = "damaged response: " + err.Error()
		return out
	}
	out["summary"] = exchange.FirstLine(resp.Body)
	return out
}
