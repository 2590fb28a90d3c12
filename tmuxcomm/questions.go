package tmuxcomm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
)

// The question relay (seeds 000-003). A worker's question lives as files in the session folder of
// the pair it belongs to: {task}.q{seq}.question (the question, JSON), {task}.q{seq}.answer (the
// first valid answer, claimed with link(2)), {task}.q{seq}.resolved (closed without an answer),
// {task}.q{seq}.answers.jsonl (every answer attempt and delivery event) and
// .{task}.q{seq}.wait.lock (held by a waiting ask). Nothing lives only in memory: a killed ask
// leaves a pending question that can still be answered and waited for.

// Question states, derived from the files (and, for stale, from the world).
const (
	QuestionPending      = "pending"
	QuestionAnswered     = "answered"
	QuestionAutoAnswered = "auto-answered"
	QuestionCapExceeded  = "cap-exceeded"
	QuestionStale        = "stale"
	QuestionResolved     = "resolved"
)

// BestJudgment ends every message of an ask that ends without an answer: a question is an
// optimization, never a blocker (seed 001).
const BestJudgment = `continue on your best judgment and mark the choice "assumed — needs review"`

// RelayOffAnswer is the ANSWER a worker gets for a question on task when the question relay is
// off: nothing is asked, and the worker decides alone.
func RelayOffAnswer(task string) messages.Answer {
	return messages.Answer{Task: task, DecidedBy: messages.DecidedByDisabled,
		Text: "The question relay is off. Make the decision yourself and mark it \"assumed — needs review\" in your report."}
}

var (
	// ErrStale: the answer came too late (already answered, resolved, or the question no longer
	// applies); it was recorded as stale and changed nothing.
	ErrStale = errors.New("stale")
	// ErrNoAnswer: the ask ended without an answer (the question was resolved or became stale).
	ErrNoAnswer = errors.New("no answer")
	// ErrUnrelayed: the question is stored but reached nobody (no pane took the paste, no hook ran).
	ErrUnrelayed = errors.New("question not relayed")
)

// JudgedError is an ask's failure whose message already ends with BestJudgment; Unwrap gives the
// sentinel (ErrTimeout, ErrNoAnswer, ErrUnrelayed, a context error) for the exit code.
type JudgedError struct {
	Msg string
	Err error
}

func (e *JudgedError) Error() string { return e.Msg }

// Unwrap returns the sentinel.
func (e *JudgedError) Unwrap() error { return e.Err }

func judgedf(sentinel error, format string, a ...any) error {
	return &JudgedError{Msg: fmt.Sprintf(format, a...) + "; " + BestJudgment, Err: sentinel}
}

// Events of a question's log.
const (
	qAsked         = "asked"
	qDelivered     = "delivered"   // the QUESTION block reached the orchestrator's pane
	qUndelivered   = "undelivered" // it did not
	qHookRan       = "hook-ran"
	qHookFailed    = "hook-failed"
	qAccepted      = "accepted"
	qInvalid       = "invalid"
	qStale         = "stale"
	qAskWoken      = "ask-woken"     // a waiting ask took the answer
	qAnswerPasted  = "answer-pasted" // no ask waited: the ANSWER block went into the worker's pane
	qAnswerLost    = "answer-paste-failed"
	qResolvedEvent = "resolved"
	qTimedOut      = "timeout"
)

// GitBinding ties a question to the state of a git work tree (seed 003): an answer given after
// the state changed is stale.
type GitBinding struct {
	Dir         string `json:"dir"`
	Head        string `json:"head"`          // commit id, "" before the first commit
	Changed     int    `json:"changed_paths"` // lines of `git status --porcelain`
	Fingerprint string `json:"fingerprint"`   // sha256 of HEAD and the status
}

// QuestionRecord is the {task}.q{seq}.question file. Its question fields keep seed 000's names
// (task_id, question, urgency, options, context, seq).
type QuestionRecord struct {
	messages.Question
	Seq          int             `json:"seq"`
	Worker       messages.PaneID `json:"worker"`
	Orchestrator messages.PaneID `json:"orchestrator"`
	Session      string          `json:"session"`
	Server       string          `json:"server,omitempty"`
	Socket       string          `json:"socket,omitempty"`
	Exchange     string          `json:"exchange,omitempty"` // id of the request the question is about
	ExchangeSeq  int             `json:"exchange_seq,omitempty"`
	AskedAt      time.Time       `json:"asked_at"`
	// TimeoutSeconds is how long the asker meant to wait; 0 = no limit.
	TimeoutSeconds float64     `json:"timeout_seconds"`
	AutoAnswer     bool        `json:"auto_answer_on_timeout"`
	MaxQuestions   int         `json:"max_questions_per_worker"`
	Git            *GitBinding `json:"git,omitempty"`
}

// deadline is when an ask of this question gives up; zero for none.
func (r *QuestionRecord) deadline() time.Time {
	if r.TimeoutSeconds <= 0 {
		return time.Time{}
	}
	return r.AskedAt.Add(time.Duration(r.TimeoutSeconds * float64(time.Second)))
}

// AnswerRecord is the {task}.q{seq}.answer file: the accepted answer (seed 003's fields).
type AnswerRecord struct {
	ID        string                `json:"id"`
	TaskID    string                `json:"task_id"`
	Seq       int                   `json:"seq"`
	Answer    string                `json:"answer"`
	Raw       string                `json:"raw"`
	DecidedBy string                `json:"decided_by"`
	Source    string                `json:"source"`
	Type      messages.QuestionType `json:"type"`
	Form      string                `json:"form"`
	Option    int                   `json:"option,omitempty"`
	Pane      messages.PaneID       `json:"pane,omitempty"` // where the answer was given, if in a pane
	At        time.Time             `json:"at"`
}

// ResolvedRecord is the {task}.q{seq}.resolved file.
type ResolvedRecord struct {
	ID     string          `json:"id"`
	Reason string          `json:"reason"`
	Pane   messages.PaneID `json:"pane,omitempty"`
	At     time.Time       `json:"at"`
}

// QuestionStatus is a question with its state, as the files and the world say.
type QuestionStatus struct {
	QuestionRecord
	State    string          `json:"state"`
	Reason   string          `json:"reason,omitempty"` // why stale or resolved
	Answer   *AnswerRecord   `json:"answer,omitempty"`
	Resolved *ResolvedRecord `json:"resolved,omitempty"`
	Dir      string          `json:"dir"`
	Path     string          `json:"path"`

	// deadline is when this ask stops waiting (zero: never), limit how long it meant to wait.
	deadline time.Time
	limit    time.Duration
	timedOut bool
}

// AnswerBlock is what the worker reads for a decided question, nil while it has no answer.
func (st *QuestionStatus) AnswerBlock() *messages.Answer {
	if st.Answer == nil {
		return nil
	}
	return &messages.Answer{Text: st.Answer.Answer, Task: st.Task, DecidedBy: st.Answer.DecidedBy, ID: st.ID}
}

// TimedOut reports whether the ask that returned this status gave up waiting for it.
func (st *QuestionStatus) TimedOut() bool { return st.timedOut }

func (st *QuestionStatus) file(suffix string) string {
	return filepath.Join(st.Dir, messages.QuestionFileName(st.Task, st.Seq, suffix))
}

func (st *QuestionStatus) waitLock() string {
	return filepath.Join(st.Dir, messages.WaitLockName(st.Task, st.Seq))
}

// logQ appends one event to the question's log; a failed log write never fails the operation.
func (e *Engine) logQ(st *QuestionStatus, state string, detail map[string]string) error {
	line, err := json.Marshal(Event{State: state, At: e.Now().UTC(), Detail: detail})
	if err != nil {
		return err
	}
	return appendLine(st.file(messages.SuffixLog), line)
}

// QuestionEvents reads a question's log.
func QuestionEvents(st *QuestionStatus) []Event {
	data, err := readFile(st.file(messages.SuffixLog))
	if err != nil {
		return nil
	}
	var evs []Event
	for _, l := range strings.Split(string(data), "\n") {
		var ev Event
		if strings.TrimSpace(l) != "" && json.Unmarshal([]byte(l), &ev) == nil {
			evs = append(evs, ev)
		}
	}
	return evs
}

// IsQuestionFile reports whether name is one of the question relay's files in a session folder,
// so exchange listings need not count it as foreign.
func IsQuestionFile(name string) bool {
	_, _, _, ok := messages.ParseQuestionFileName(name)
	return ok
}

// loadQuestion reads a question's files and derives its state from them alone (pending,
// answered, auto-answered, cap-exceeded, resolved); staleness is judged separately.
func loadQuestion(dir, task string, seq int) (*QuestionStatus, error) {
	path := filepath.Join(dir, messages.QuestionFileName(task, seq, messages.SuffixQuestion))
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	st := &QuestionStatus{Dir: dir, Path: path}
	if err := json.Unmarshal(data, &st.QuestionRecord); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// The file name is the truth for task and seq (seed 000: validate before building paths).
	if st.Task != task || st.Seq != seq {
		return nil, fmt.Errorf("%s: it says task %q seq %d", path, messages.SanitizeTaskID(st.Task), st.Seq)
	}
	id, err := messages.ParseQuestionID(st.ID)
	if err != nil || id.Task != task || id.Seq != seq {
		return nil, fmt.Errorf("%s: id %q does not match its file name", path, messages.SanitizeTaskID(st.ID))
	}
	st.deadline = st.QuestionRecord.deadline()
	st.limit = time.Duration(st.TimeoutSeconds * float64(time.Second))
	st.refresh()
	return st, nil
}

// refresh re-reads the answer and resolved files.
func (st *QuestionStatus) refresh() {
	st.State = QuestionPending
	if data, err := readFile(st.file(messages.SuffixAnswer)); err == nil {
		var a AnswerRecord
		if json.Unmarshal(data, &a) == nil {
			st.Answer = &a
			switch a.DecidedBy {
			case messages.DecidedByTimeout:
				st.State = QuestionAutoAnswered
			case messages.DecidedByCap:
				st.State = QuestionCapExceeded
			default:
				st.State = QuestionAnswered
			}
			return
		}
	}
	if data, err := readFile(st.file(messages.SuffixResolved)); err == nil {
		var r ResolvedRecord
		if json.Unmarshal(data, &r) == nil {
			st.Resolved = &r
			st.State = QuestionResolved
			st.Reason = r.Reason
		}
	}
}

// decided reports whether the question needs nothing more: answered in any way, or resolved.
func (st *QuestionStatus) decided() bool { return st.State != QuestionPending }

// qref names one question file.
type qref struct {
	dir  string
	task string
	seq  int
}

// questionRefs lists every question file under root, in folder and name order.
func questionRefs(root string) ([]qref, error) {
	dirs, _, err := sessionDirs(root)
	if err != nil {
		return nil, err
	}
	var out []qref
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, ent := range entries {
			task, seq, suffix, ok := messages.ParseQuestionFileName(ent.Name())
			if ok && suffix == messages.SuffixQuestion {
				out = append(out, qref{dir: dir, task: task, seq: seq})
			}
		}
	}
	return out, nil
}

// findQuestion loads the question with id from anywhere under root.
func findQuestion(root, id string) (*QuestionStatus, error) {
	qid, err := messages.ParseQuestionID(strings.TrimSpace(id))
	if err != nil {
		return nil, err
	}
	dirs, _, err := sessionDirs(root)
	if err != nil {
		return nil, err
	}
	name := messages.QuestionFileName(qid.Task, qid.Seq, messages.SuffixQuestion)
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Lstat(filepath.Join(dirs[i], name)); err != nil {
			continue
		}
		st, err := loadQuestion(dirs[i], qid.Task, qid.Seq)
		if err == nil && st.ID == qid.String() {
			return st, nil
		}
	}
	return nil, fmt.Errorf("no question %s under %s; run 'wcomm questions' to list them: %w", qid, root, ErrNotFound)
}

// nextQuestionSeq is one more than the highest sequence number of task's files in dir.
func nextQuestionSeq(dir, task string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	max := 0
	for _, ent := range entries {
		if t, seq, _, ok := messages.ParseQuestionFileName(ent.Name()); ok && t == task && seq > max {
			max = seq
		}
	}
	if max >= messages.MaxQuestionSeq {
		return 0, fmt.Errorf("task %s has used every question number in %s", task, dir)
	}
	return max + 1, nil
}

// AskOptions are the inputs of one ask.
type AskOptions struct {
	Questions []messages.Question
	// Exchange ties the questions to this request (id or path). "" = the newest unanswered request
	// addressed to the caller's pane, or, when there is none, the pair's folder with To.
	Exchange string
	// To names the orchestrator (pane id, target or agent) when no request ties the question.
	To    string
	Scope paneops.Scope
	// Wait makes the ask block until every question is decided or Timeout passes.
	Wait         bool
	Timeout      time.Duration // 0: no limit
	AutoAnswer   bool          // on timeout, take the first option
	MaxQuestions int           // per worker pane per task
	BindGit      bool
	Dir          string // the worker's working folder (git binding, hook)
	Hook         []string
	HookTimeout  time.Duration
}

// AskResult is what an ask did.
type AskResult struct {
	Questions []*QuestionStatus `json:"questions"`
	// Delivered is true when the QUESTION blocks reached the orchestrator's pane.
	Delivered bool `json:"delivered"`
	// Queued is true when they wait in the orchestrator's outbox for its pane to be ready.
	Queued   bool     `json:"queued,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// place is where a question lives and whom it goes to.
type place struct {
	dir    string
	sess   messages.Session
	orch   messages.PaneID
	x      *Exchange
	server string
	socket string
}

// questionPlace finds the session folder of the caller's questions: the tied exchange's, or the
// pair's (created as send creates it).
func (e *Engine) questionPlace(ctx context.Context, root string, o AskOptions) (*place, error) {
	srv, err := e.Tmux.ServerInfo(ctx)
	if err != nil {
		return nil, fmt.Errorf("no tmux server to relay the question through: %w", err)
	}
	fromExchange := func(x *Exchange) (*place, error) {
		if x.Worker != e.Self {
			return nil, fmt.Errorf("request %s is addressed to pane %s, not to your pane %s; ask from the worker's pane", x.ID, x.Worker, e.Self)
		}
		if x.Status == StatusAnswered {
			return nil, fmt.Errorf("request %s is already answered; a question about it would be stale: %w", x.ID, ErrStale)
		}
		p := &place{dir: x.Dir, orch: x.Orchestrator, x: x, server: srv.Key(), socket: srv.Socket}
		p.sess, _ = messages.ParseSessionName(filepath.Base(x.Dir))
		if m, err := readMeta(x.Dir); err == nil {
			p.server, p.socket = m.Server, m.Socket
		}
		if p.server != srv.Key() {
			return nil, fmt.Errorf("request %s came through a tmux server that has since restarted; its orchestrator pane %s is gone: %w", x.ID, x.Orchestrator, ErrStale)
		}
		return p, nil
	}
	if o.Exchange != "" {
		x, err := e.Locate(ctx, o.Exchange, roleWorker)
		if err != nil {
			return nil, err
		}
		return fromExchange(x)
	}
	var orch paneops.Pane
	if o.To != "" {
		orch, err = e.Resolve(ctx, o.To, o.Scope, false)
		if err != nil {
			return nil, err
		}
		if orch.ID == e.Self {
			return nil, fmt.Errorf("--to %s is your own pane; name the orchestrator's pane", orch.ID)
		}
	}
	x, err := e.Locate(ctx, "", roleWorker)
	switch {
	case err == nil && (o.To == "" || x.Orchestrator == orch.ID):
		return fromExchange(x)
	case err != nil && !errors.Is(err, ErrNotFound):
		return nil, err
	case o.To == "":
		return nil, fmt.Errorf("no unanswered request is addressed to pane %s, so there is no orchestrator to ask; pass --to ORCHESTRATOR-PANE or --exchange ID: %w", e.Self, ErrNotFound)
	}
	dir, sess, err := e.openSession(root, orch.ID, e.Self, srv.Key(), srv.Socket)
	if err != nil {
		return nil, err
	}
	return &place{dir: dir, sess: sess, orch: orch.ID, server: srv.Key(), socket: srv.Socket}, nil
}

// Ask stores the questions in the session folder, pastes their QUESTION blocks into the
// orchestrator's pane, runs the on_question hook and, with Wait, waits for the answers. The
// result lists every question with its state; the error says why some have no answer (it wraps
// ErrTimeout, ErrNoAnswer or ErrUndelivered) and ends with BestJudgment.
func (e *Engine) Ask(ctx context.Context, o AskOptions) (*AskResult, error) {
	root, err := e.root(true)
	if err != nil {
		return nil, err
	}
	if e.Self == "" {
		return nil, fmt.Errorf("not inside a tmux pane: ask from the worker's pane, or pass --from %%N")
	}
	if _, err := messages.ParsePaneID(string(e.Self)); err != nil {
		return nil, fmt.Errorf("own pane %q: %w", messages.SanitizeField(string(e.Self)), err)
	}
	if len(o.Questions) == 0 {
		return nil, fmt.Errorf("no question to ask")
	}
	qs := make([]messages.Question, len(o.Questions))
	for i, q := range o.Questions {
		q = q.Normalized()
		q.ID = ""
		if err := q.Validate(); err != nil {
			return nil, err
		}
		qs[i] = q
	}
	if o.MaxQuestions <= 0 {
		o.MaxQuestions = DefaultMaxQuestions
	}
	var git *GitBinding
	if o.BindGit {
		dir := o.Dir
		if dir == "" {
			dir, _ = os.Getwd()
		}
		g, err := gitFingerprint(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("--bind-git: %w", err)
		}
		git = &g
	}
	p, err := e.questionPlace(ctx, root, o)
	if err != nil {
		return nil, err
	}
	base := QuestionRecord{Worker: e.Self, Orchestrator: p.orch, Session: filepath.Base(p.dir), Server: p.server,
		Socket: p.socket, AskedAt: e.Now().UTC(), TimeoutSeconds: o.Timeout.Seconds(), AutoAnswer: o.AutoAnswer,
		MaxQuestions: o.MaxQuestions, Git: git}
	if p.x != nil {
		base.Exchange, base.ExchangeSeq = p.x.ID, p.x.Seq
	}
	// The wait locks are taken as each question is created, before anyone can learn its id, so
	// an answer that comes at once wakes this ask instead of being pasted into the pane.
	locks := &lockSet{}
	defer locks.release()
	sts, err := e.createQuestions(root, p.dir, base, qs, func(st *QuestionStatus) error {
		if !o.Wait {
			return nil
		}
		return locks.take(st.waitLock(), e.LockTimeout)
	})
	if err != nil {
		return nil, err
	}
	res := &AskResult{Questions: sts}
	var relayed []*QuestionStatus
	for _, st := range sts {
		st.deadline = st.QuestionRecord.deadline()
		st.limit = o.Timeout
		if st.State == QuestionPending {
			relayed = append(relayed, st)
		}
	}
	if len(relayed) == 0 {
		return res, nil
	}
	derr := e.relayQuestions(ctx, root, p, relayed, res)
	reached := derr == nil
	if derr != nil {
		res.Warnings = append(res.Warnings, derr.Error())
	}
	if len(o.Hook) > 0 {
		for _, st := range relayed {
			if herr := e.runHook(ctx, o.Hook, o.HookTimeout, o.Dir, st); herr != nil {
				e.logQ(st, qHookFailed, map[string]string{"error": herr.Error()})
				res.Warnings = append(res.Warnings, fmt.Sprintf("on_question for %s failed: %v", st.ID, herr))
			} else {
				e.logQ(st, qHookRan, map[string]string{"command": o.Hook[0]})
				reached = true
			}
		}
	}
	if !reached {
		return res, judgedf(ErrUnrelayed, "question %s is saved but reached nobody (%v); it stays pending and can still be answered with '%s answer %s ...'",
			ids(relayed), derr, e.Command, relayed[0].ID)
	}
	if !o.Wait {
		return res, nil
	}
	err = e.waitAnswers(ctx, relayed, nil)
	return res, e.settle(relayed, locks, err)
}

func ids(sts []*QuestionStatus) string {
	s := make([]string, len(sts))
	for i, st := range sts {
		s[i] = st.ID
	}
	return strings.Join(s, ", ")
}

// lockSet holds the wait locks of one ask.
type lockSet struct{ unlocks []func() }

func (l *lockSet) take(path string, timeout time.Duration) error {
	u, err := flock(path, syscall.LOCK_SH, timeout)
	if err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	l.unlocks = append(l.unlocks, u)
	return nil
}

func (l *lockSet) release() {
	for _, u := range l.unlocks {
		u()
	}
	l.unlocks = nil
}

// createQuestions stores the questions under the root lock: the per-worker cap is counted, the
// sequence number claimed with link(2) and a question over the cap answered at once with
// DECIDED_BY cap-exceeded. onCreate runs for each stored question before the lock is released.
func (e *Engine) createQuestions(root, dir string, base QuestionRecord, qs []messages.Question, onCreate func(*QuestionStatus) error) ([]*QuestionStatus, error) {
	unlock, err := flock(filepath.Join(root, rootLockName), syscall.LOCK_EX, e.LockTimeout)
	if err != nil {
		return nil, fmt.Errorf("lock root %s: %w", root, err)
	}
	defer unlock()
	asked := map[string]int{}
	var out []*QuestionStatus
	for _, q := range qs {
		if _, ok := asked[q.Task]; !ok {
			asked[q.Task] = countAsked(root, base.Worker, base.Server, q.Task)
		}
		rec := base
		rec.Question = q
		st, err := e.claimQuestion(root, dir, rec)
		if err != nil {
			return out, err
		}
		if err := onCreate(st); err != nil {
			return out, err
		}
		if asked[q.Task] >= base.MaxQuestions {
			a := AnswerRecord{ID: st.ID, TaskID: st.Task, Seq: st.Seq, DecidedBy: messages.DecidedByCap, Source: "wcomm",
				Answer: fmt.Sprintf("Question cap exceeded (at most %d questions per worker per task). Make the decision yourself and mark it \"assumed — needs review\" in your report.", base.MaxQuestions),
				Type:   st.Type, Form: "cap", At: e.Now().UTC()}
			if err := writeJSONExclusive(st.file(messages.SuffixAnswer), a); err != nil {
				return out, err
			}
			e.logQ(st, qAccepted, map[string]string{"decided_by": messages.DecidedByCap})
			st.refresh()
		} else {
			asked[q.Task]++
			e.logQ(st, qAsked, map[string]string{"worker": string(base.Worker), "orchestrator": string(base.Orchestrator)})
		}
		out = append(out, st)
	}
	return out, nil
}

// claimQuestion writes the next question file of rec's task in dir with link(2), so two askers
// never share a number, and gives it an id whose tag no other folder's question of that
// number uses.
func (e *Engine) claimQuestion(root, dir string, rec QuestionRecord) (*QuestionStatus, error) {
	for attempt := 0; attempt < 100; attempt++ {
		seq, err := nextQuestionSeq(dir, rec.Task)
		if err != nil {
			return nil, err
		}
		taken := tagsInUse(root, rec.Task, seq)
		var tag string
		for i := 0; i < 64; i++ {
			if tag, err = messages.NewQuestionTag(e.Rand); err != nil {
				return nil, err
			}
			if !taken[tag] {
				break
			}
		}
		rec.Seq = seq
		rec.ID = messages.QuestionID{Task: rec.Task, Seq: seq, Tag: tag}.String()
		path := filepath.Join(dir, messages.QuestionFileName(rec.Task, seq, messages.SuffixQuestion))
		err = writeJSONExclusive(path, rec)
		if errors.Is(err, ErrExists) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &QuestionStatus{QuestionRecord: rec, State: QuestionPending, Dir: dir, Path: path}, nil
	}
	return nil, fmt.Errorf("could not claim a question number for task %s in %s", rec.Task, dir)
}

func writeJSONExclusive(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeExclusive(path, append(data, '\n'))
}

// tagsInUse returns the tags of the questions numbered seq of task anywhere under root.
func tagsInUse(root, task string, seq int) map[string]bool {
	taken := map[string]bool{}
	dirs, _, _ := sessionDirs(root)
	name := messages.QuestionFileName(task, seq, messages.SuffixQuestion)
	for _, dir := range dirs {
		data, err := readFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		var r QuestionRecord
		if json.Unmarshal(data, &r) == nil {
			if id, err := messages.ParseQuestionID(r.ID); err == nil {
				taken[id.Tag] = true
			}
		}
	}
	return taken
}

// countAsked counts the questions a worker pane of a server has asked for a task anywhere under
// root, not counting those refused by the cap.
func countAsked(root string, worker messages.PaneID, server, task string) int {
	refs, _ := questionRefs(root)
	n := 0
	for _, r := range refs {
		if r.task != task {
			continue
		}
		st, err := loadQuestion(r.dir, r.task, r.seq)
		if err != nil || st.Worker != worker || st.Server != server || st.State == QuestionCapExceeded {
			continue
		}
		n++
	}
	return n
}

// question with auto-answer and options gets its first option (DECIDED_BY auto-timeout); one
// without is marked timed out. autoOverride, when set, replaces each question's own auto-answer
// setting. It wakes on file events in the questions' folders, with a safety tick.
func (e *Engine) waitAnswers(ctx context.Context, sts []*QuestionStatus, autoOverride *bool) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wake := make(chan struct{}, 1)
	poke := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	dirs := map[string]bool{}
	for _, st := range sts {
		dirs[st.Dir] = true
	}
	for dir := range dirs {
		w, err := newDirWatcher(dir)
		if err != nil {
			// No watcher: a short poll still wakes within tens of milliseconds.
			go func() {
				t := time.NewTicker(20 * time.Millisecond)
				defer t.Stop()
				for {
					select {
					case <-wctx.Done():
						return
					case <-t.C:
						poke()
					}
				}
			}()
			continue
		}
		go func() {
			defer w.Close()
			for {
				_, err := w.Next(wctx)
				if wctx.Err() != nil {
					return
				}
				if err != nil {
					time.Sleep(20 * time.Millisecond)
				}
				poke()
			}
		}()
	}
	for {
		now := e.Now()
		var next time.Time
		open := 0
		for _, st := range sts {
			if st.decided() || st.timedOut {
				continue
			}
			st.refresh()
			if st.decided() {
				continue
			}
			if !st.deadline.IsZero() && !now.Before(st.deadline) {
				auto := st.AutoAnswer
				if autoOverride != nil {
					auto = *autoOverride
				}
				if auto && len(st.Options) > 0 {
					if err := e.autoAnswer(st); err != nil {
						return err
					}
				} else {
					st.timedOut = true
					e.logQ(st, qTimedOut, nil)
				}
				continue
			}
			open++
			if !st.deadline.IsZero() && (next.IsZero() || st.deadline.Before(next)) {
				next = st.deadline
			}
		}
		if open == 0 {
			return nil
		}
		var timer <-chan time.Time
		var t *time.Timer
		if !next.IsZero() {
			t = time.NewTimer(next.Sub(now))
			timer = t.C
		}
		stop := func() {
			if t != nil {
				t.Stop()
			}
		}
		select {
		case <-ctx.Done():
			stop()
			return judgedf(ctx.Err(), "interrupted while waiting for %s; the question stays pending (%s ask --wait %s picks it up again)",
				ids(sts), e.Command, sts[0].ID)
		case <-wake:
		case <-timer:
		}
		stop()
	}
}

// autoAnswer records the first option as the answer, unless an answer or a resolution got there
// first, under the root lock that also orders answer and resolve.
func (e *Engine) autoAnswer(st *QuestionStatus) error {
	root := filepath.Dir(st.Dir)
	unlock, err := flock(filepath.Join(root, rootLockName), syscall.LOCK_EX, e.LockTimeout)
	if err != nil {
		return fmt.Errorf("lock root %s: %w", root, err)
	}
	defer unlock()
	if st.refresh(); st.decided() {
		return nil
	}
	a := AnswerRecord{ID: st.ID, TaskID: st.Task, Seq: st.Seq, Answer: st.Options[0], DecidedBy: messages.DecidedByTimeout,
		Source: "timeout", Type: st.Type, Form: "auto", Option: 1, At: e.Now().UTC()}
	if err := writeJSONExclusive(st.file(messages.SuffixAnswer), a); err != nil && !errors.Is(err, ErrExists) {
		return err
	}
	e.logQ(st, qAccepted, map[string]string{"decided_by": messages.DecidedByTimeout, "answer": a.Answer})
	st.refresh()
	return nil
}

// settle turns the end of a wait into the ask's error. The wait locks are released under the
// root lock, under which an answer also decides whether an ask waits for it (see Answer): so an
// answer recorded before the release was left to this ask, which looks once more and prints it,
// and one recorded after it is pasted into the worker's pane. None falls between the two.
func (e *Engine) settle(sts []*QuestionStatus, locks *lockSet, werr error) error {
	if len(sts) > 0 {
		root := filepath.Dir(sts[0].Dir)
		if unlock, err := flock(filepath.Join(root, rootLockName), syscall.LOCK_EX, e.LockTimeout); err == nil {
			locks.release()
			for _, st := range sts {
				if !st.decided() {
					st.refresh()
				}
			}
			unlock()
		}
	}
	locks.release()
	var timedOut, closed []*QuestionStatus
	for _, st := range sts {
		if st.Answer != nil && werr == nil && answerQueued(st) {
			// The worker has it now: the ANSWER block still waiting for its pane is not typed.
			e.logQ(st, qAnswerRead, nil)
		}
		if st.timedOut {
			if st.refresh(); st.decided() {
				st.timedOut = false
			}
		}
		switch {
		case st.timedOut || st.State == QuestionPending:
			timedOut = append(timedOut, st)
		case st.State == QuestionResolved || st.State == QuestionStale:
			closed = append(closed, st)
		}
	}
	if werr != nil {
		return werr
	}
	if len(timedOut) > 0 {
		st := timedOut[0]
		return judgedf(ErrTimeout, "no answer to %s within %s; the question stays pending: '%s ask --wait %s' fetches the answer later, and an answer that comes while no ask waits is pasted into this pane",
			ids(timedOut), st.limit.Round(time.Millisecond), e.Command, st.ID)
	}
	if len(closed) > 0 {
		st := closed[0]
		return judgedf(ErrNoAnswer, "question %s was closed without an answer (%s)", st.ID, st.Reason)
	}
	return nil
}

// WaitOptions are the inputs of `ask --wait`.
type WaitOptions struct {
	IDs []string
	// Timeout, when TimeoutSet, replaces the questions' own deadlines (asked_at + timeout);
	// 0 then waits without limit.
	Timeout    time.Duration
	TimeoutSet bool
	// AutoAnswer, when set, replaces the questions' own auto-answer settings.
	AutoAnswer *bool
}

// WaitQuestions picks up questions asked earlier (by a non-blocking ask, or an ask that was
// killed) and waits for their answers as Ask does.
func (e *Engine) WaitQuestions(ctx context.Context, o WaitOptions) (*AskResult, error) {
	root, err := e.root(false)
	if err != nil {
		return nil, fmt.Errorf("no questions yet (%v): %w", err, ErrNotFound)
	}
	if len(o.IDs) == 0 {
		return nil, fmt.Errorf("no question id to wait for")
	}
	res := &AskResult{}
	locks := &lockSet{}
	defer locks.release()
	for _, id := range o.IDs {
		st, err := findQuestion(root, id)
		if err != nil {
			return nil, err
		}
		if err := locks.take(st.waitLock(), e.LockTimeout); err != nil {
			return nil, err
		}
		if o.TimeoutSet {
			st.deadline, st.limit = time.Time{}, o.Timeout
			if o.Timeout > 0 {
				st.deadline = e.Now().Add(o.Timeout)
			}
		}
		res.Questions = append(res.Questions, st)
	}
	err = e.waitAnswers(ctx, res.Questions, o.AutoAnswer)
	return res, e.settle(res.Questions, locks, err)
}

// AnswerOptions are the inputs of one answer.
type AnswerOptions struct {
	ID     string
	Raw    string
	Source string // who answers: "local" (default), "telegram", a name
}

// AnswerResult says what an answer did.
type AnswerResult struct {
	Question *QuestionStatus `json:"question"`
	// Signal is how the worker learns the answer: "ask" (its waiting ask woke on the file) or
	// "pasted" (no ask waited: the ANSWER block went into its pane), "queued" (its pane was not
	// ready: the block waits in its outbox); "" when none of these worked.
	Signal  string `json:"signal"`
	Warning string `json:"warning,omitempty"`
}

// Answer validates raw against the question's type and records it when it is the first valid
// answer. An invalid answer wraps messages.ErrInvalidAnswer and leaves the question open; an
// answer to a question that is decided or no longer applies wraps ErrStale. Every attempt is
// logged. The accepted answer wakes a waiting ask, or else is pasted into the worker's pane.
func (e *Engine) Answer(ctx context.Context, o AnswerOptions) (*AnswerResult, error) {
	root, err := e.root(false)
	if err != nil {
		return nil, fmt.Errorf("no questions yet (%v): %w", err, ErrNotFound)
	}
	st, err := findQuestion(root, o.ID)
	if err != nil {
		return nil, err
	}
	source := strings.TrimSpace(o.Source)
	if source == "" {
		source = "local"
	}
	attempt := map[string]string{"raw": o.Raw, "source": source}
	if e.Self != "" {
		attempt["pane"] = string(e.Self)
	}
	stale := func(reason string) (*AnswerResult, error) {
		d := map[string]string{"reason": reason}
		for k, v := range attempt {
			d[k] = v
		}
		e.logQ(st, qStale, d)
		return &AnswerResult{Question: st}, fmt.Errorf("question %s: %s; your answer was recorded as stale and changed nothing: %w", st.ID, reason, ErrStale)
	}
	if why := decidedReason(st); why != "" {
		return stale(why)
	}
	e.judgeStale(ctx, st, e.liveness(ctx))
	if st.State == QuestionStale {
		return stale(st.Reason)
	}
	m, err := messages.MatchAnswer(st.Question, o.Raw)
	if err != nil {
		d := map[string]string{"error": err.Error()}
		for k, v := range attempt {
			d[k] = v
		}
		e.logQ(st, qInvalid, d)
		return &AnswerResult{Question: st}, fmt.Errorf("question %s: %w; the question stays open", st.ID, err)
	}
	a := AnswerRecord{ID: st.ID, TaskID: st.Task, Seq: st.Seq, Answer: m.Value, Raw: o.Raw, DecidedBy: messages.DecidedByUser,
		Source: source, Type: st.Type, Form: m.Form, Option: m.Option, Pane: e.Self, At: e.Now().UTC()}
	unlock, err := flock(filepath.Join(root, rootLockName), syscall.LOCK_EX, e.LockTimeout)
	if err != nil {
		return nil, fmt.Errorf("lock root %s: %w", root, err)
	}
	st.refresh()
	if why := decidedReason(st); why != "" {
		unlock()
		return stale(why)
	}
	// Whether an ask waits is decided here, under the root lock that an ask also holds to stop
	// waiting (settle): after the answer is published, a woken ask may exit at once.
	waiting := isLocked(st.waitLock())
	err = writeJSONExclusive(st.file(messages.SuffixAnswer), a)
	unlock()
	if errors.Is(err, ErrExists) {
		st.refresh()
		return stale(decidedReason(st))
	}
	if err != nil {
		return nil, err
	}
	d := map[string]string{"answer": a.Answer, "form": a.Form}
	for k, v := range attempt {
		d[k] = v
	}
	e.logQ(st, qAccepted, d)
	st.refresh()
	res := &AnswerResult{Question: st}
	if waiting {
		res.Signal = "ask"
		e.logQ(st, qAskWoken, nil)
		return res, nil
	}
	if res.Signal, err = e.pasteAnswer(ctx, st); err != nil {
		res.Warning = fmt.Sprintf("the answer is recorded, but no ask was waiting and pasting it into worker pane %s failed: %v; the worker gets it with 'wcomm ask --wait %s'", st.Worker, err, st.ID)
		return res, nil
	}
	return res, nil
}

// decidedReason says why a question takes no more answers, "" when it does.
func decidedReason(st *QuestionStatus) string {
	switch {
	case st.Answer != nil:
		a := st.Answer
		return fmt.Sprintf("already answered %q (decided by %s, source %s, at %s); the first answer stands",
			a.Answer, a.DecidedBy, a.Source, a.At.Local().Format(time.RFC3339))
	case st.Resolved != nil:
		return fmt.Sprintf("it was resolved without an answer at %s (%s)", st.Resolved.At.Local().Format(time.RFC3339), st.Resolved.Reason)
	}
	return ""
}

func (e *Engine) ResolveQuestion(ctx context.Context, id, reason string) (*QuestionStatus, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return nil, fmt.Errorf("resolve needs --reason TEXT: say why the question is closed without an answer")
	}
	if len(reason) > 1000 {
		return nil, fmt.Errorf("--reason is %d bytes; keep it under 1000", len(reason))
	}
	root, err := e.root(false)
	if err != nil {
		return nil, fmt.Errorf("no questions yet (%v): %w", err, ErrNotFound)
	}
	st, err := findQuestion(root, id)
	if err != nil {
		return nil, err
	}
	unlock, err := flock(filepath.Join(root, rootLockName), syscall.LOCK_EX, e.LockTimeout)
	if err != nil {
		return nil, fmt.Errorf("lock root %s: %w", root, err)
	}
	defer unlock()
	if st.refresh(); st.decided() {
		return st, fmt.Errorf("question %s: %s; nothing to resolve: %w", st.ID, decidedReason(st), ErrAnswered)
	}
	r := ResolvedRecord{ID: st.ID, Reason: reason, Pane: e.Self, At: e.Now().UTC()}
	if err := writeJSONExclusive(st.file(messages.SuffixResolved), r); err != nil {
		if errors.Is(err, ErrExists) {
			st.refresh()
			return st, fmt.Errorf("question %s is already resolved: %w", st.ID, ErrAnswered)
		}
		return nil, err
	}
	e.logQ(st, qResolvedEvent, map[string]string{"reason": reason})
	st.refresh()
	return st, nil
}

// QuestionsOptions filter Questions.
type QuestionsOptions struct {
	Pending bool // only questions still waiting for an answer (stale ones are not surfaced)
}

// Questions lists every question under the root with its state, oldest first, and names the
// question files it could not read.
func (e *Engine) Questions(ctx context.Context, o QuestionsOptions) ([]*QuestionStatus, []string, error) {
	root, err := e.root(false)
	if err != nil {
		return nil, nil, nil
	}
	refs, err := questionRefs(root)
	if err != nil {
		return nil, nil, err
	}
	var out []*QuestionStatus
	var problems []string
	var live *liveness
	for _, r := range refs {
		st, err := loadQuestion(r.dir, r.task, r.seq)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if st.State == QuestionPending {
			if live == nil {
				live = e.liveness(ctx)
			}
			e.judgeStale(ctx, st, live)
		}
		if o.Pending && st.State != QuestionPending {
			continue
		}
		out = append(out, st)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].AskedAt.Equal(out[j].AskedAt) {
			return out[i].AskedAt.Before(out[j].AskedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, problems, nil
}

// liveness is one look at the tmux server: which panes exist.
type liveness struct {
	srv   paneops.ServerInfo
	err   error
	panes map[messages.PaneID]bool // pane id -> dead
}

func (e *Engine) liveness(ctx context.Context) *liveness {
	l := &liveness{}
	if e.Tmux == nil {
		l.err = errors.New("no tmux")
		return l
	}
	l.srv, l.err = e.Tmux.ServerInfo(ctx)
	if l.err != nil {
		return l
	}
	panes, err := e.Tmux.Panes(ctx, paneops.Scope{All: true})
	if err != nil {
		l.err = err
		return l
	}
	l.panes = map[messages.PaneID]bool{}
	for _, p := range panes {
		l.panes[p.ID] = p.Dead
	}
	return l
}

// workerGone says whether the question's worker pane is known to be gone. When the server we
// reach is not the question's, and not on its socket either, nothing is known.
func (l *liveness) workerGone(r *QuestionRecord) (bool, string) {
	if l == nil || l.err != nil {
		return false, ""
	}
	if r.Server != "" && r.Server != l.srv.Key() {
		if r.Socket != "" && r.Socket == l.srv.Socket {
			return true, fmt.Sprintf("the tmux server restarted since the question; worker pane %s is gone", r.Worker)
		}
		return false, ""
	}
	dead, ok := l.panes[r.Worker]
	switch {
	case !ok:
		return true, fmt.Sprintf("worker pane %s is gone", r.Worker)
	case dead:
		return true, fmt.Sprintf("worker pane %s is dead", r.Worker)
	}
	return false, ""
}

// judgeStale marks a pending question stale when it no longer applies: its exchange got its
// response, its worker pane is gone, or its git binding no longer holds.
func (e *Engine) judgeStale(ctx context.Context, st *QuestionStatus, live *liveness) {
	if st.State != QuestionPending {
		return
	}
	mark := func(reason string) {
		st.State, st.Reason = QuestionStale, reason
	}
	if st.ExchangeSeq > 0 {
		if x := loadExchange(st.Dir, st.ExchangeSeq, false); x.Status == StatusAnswered {
			mark(fmt.Sprintf("request %s was answered after the question was asked", orUnknown(st.Exchange)))
			return
		}
	}
	if gone, why := live.workerGone(&st.QuestionRecord); gone {
		mark(why)
		return
	}
	if st.Git != nil {
		now, err := gitFingerprint(ctx, st.Git.Dir)
		switch {
		case err != nil:
			mark(fmt.Sprintf("the git state it is bound to cannot be read (%v)", err))
		case now.Fingerprint != st.Git.Fingerprint:
			mark(gitChange(*st.Git, now))
		}
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown id)"
	}
	return s
}

// gitChange says how the git state moved from then to now.
func gitChange(then, now GitBinding) string {
	short := func(s string) string {
		if s == "" {
			return "(no commit)"
		}
		if len(s) > 12 {
			return s[:12]
		}
		return s
	}
	if then.Head != now.Head {
		return fmt.Sprintf("the git state of %s changed since the question: HEAD moved from %s to %s", then.Dir, short(then.Head), short(now.Head))
	}
	return fmt.Sprintf("the git state of %s changed since the question: the work tree differs (git status lists %d changed paths, then %d)", then.Dir, now.Changed, then.Changed)
}

// gitFingerprint reads HEAD and `git status --porcelain` in dir (argv, no shell) and hashes them.
func gitFingerprint(ctx context.Context, dir string) (GitBinding, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return GitBinding{}, err
	}
	run := func(args ...string) (string, int, error) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "git", append([]string{"--no-optional-locks", "-C", abs}, args...)...)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), ee.ExitCode(), fmt.Errorf("git %s in %s: %s", strings.Join(args, " "), abs, strings.TrimSpace(stderr.String()))
		}
		return out.String(), 0, err
	}
	if _, _, err := run("rev-parse", "--show-toplevel"); err != nil {
		return GitBinding{}, fmt.Errorf("%s is not inside a git work tree: %w", abs, err)
	}
	head, code, err := run("rev-parse", "--verify", "-q", "HEAD")
	if err != nil && code != 1 {
		return GitBinding{}, err
	}
	status, _, err := run("status", "--porcelain=v1", "-z", "--untracked-files=all")
	if err != nil {
		return GitBinding{}, err
	}
	head = strings.TrimSpace(head)
	sum := sha256.Sum256([]byte(head + "\x00\x00" + status))
	changed := 0
	for _, rec := range strings.Split(status, "\x00") {
		if len(rec) > 3 && rec[2] == ' ' {
			changed++
		}
	}
	return GitBinding{Dir: abs, Head: head, Changed: changed, Fingerprint: hex.EncodeToString(sum[:16])}, nil
}

// runHook runs the on_question command for one question: argv without a shell, the question's
// JSON on stdin, WCOMM_QUESTION_ID and WCOMM_QUESTION_FILE in its environment, bounded by
// timeout (its whole process group is killed then).
func (e *Engine) runHook(ctx context.Context, argv []string, timeout time.Duration, dir string, st *QuestionStatus) error {
	if timeout <= 0 {
		timeout = DefaultOnQuestionTimeout
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(append(data, '\n'))
	cmd.Env = append(os.Environ(), "WCOMM_QUESTION_ID="+st.ID, "WCOMM_QUESTION_FILE="+st.Path)
	var out limitedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// Its own process group, so a timeout ends whatever the hook started as well.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("%s did not finish within %s and was killed", argv[0], timeout)
	}
	if err != nil {
		if tail := strings.TrimSpace(out.String()); tail != "" {
			return fmt.Errorf("%s: %w: %s", argv[0], err, messages.SanitizeField(tail))
		}
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	return nil
}

// limitedBuffer keeps the last 2 KiB written to it: enough to say why a hook failed.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.b = append(l.b, p...)
	if len(l.b) > 2048 {
		l.b = l.b[len(l.b)-2048:]
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }
