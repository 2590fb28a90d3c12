package questions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// QuestionRecord is the {task}.q{seq}.question file. Its question fields keep the names the plain
// question relay uses (task_id, question, urgency, options, context, seq), so its tools read ours.
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
	// Action names the registered action a yes approves; its intent is the .intent file beside.
	Action string `json:"action,omitempty"`
	// Channels is the key of the answer channels that applied where the question was asked
	// (messages.ChannelsConfig.Key), AskedIn that folder: only a bridge of those channels posts
	// it. A question without a key (an older wcomm's, one written by hand) goes to the user's
	// own channels.
	Channels string `json:"channels,omitempty"`
	AskedIn  string `json:"asked_in,omitempty"`
	// Permission is what the agent in the worker pane asks leave for, on a permission question
	// (asked by its hook, which waits for the answer; permission.go).
	Permission *messages.PermissionRequest `json:"permission,omitempty"`
	// Idle is set on the notice that the agent in the worker pane ended its turn and waits for
	// its next instruction (idle.go): an answer is delivered to it as the person's message.
	Idle *IdleNotice `json:"idle,omitempty"`
}

// IdleNotice is what an idle notice records of the agent.
type IdleNotice struct {
	Agent string `json:"agent"`
	// Last is the agent's last message of the turn, whole.
	Last string `json:"last,omitempty"`
}

// deadline is when an ask of this question gives up; zero for none.
func (r *QuestionRecord) deadline() time.Time {
	if r.TimeoutSeconds <= 0 {
		return time.Time{}
	}
	return r.AskedAt.Add(time.Duration(r.TimeoutSeconds * float64(time.Second)))
}

// AnswerRecord is the {task}.q{seq}.answer file: the accepted answer, with who decided it, from
// where and when, so a late or disputed answer can be told from the one that stood.
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
	// Message is a permission deny's message for the model.
	Message string `json:"message,omitempty"`
	// NotPerson names who answered an idle notice when it was not the person (an agent, an
	// agent's tool, a program with no terminal of a person): its reply is handed to the agent
	// under that name, never as the person's words.
	NotPerson string    `json:"not_person,omitempty"`
	At        time.Time `json:"at"`
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
	// Waits says, while the question is pending, what its worker waits on a person for:
	// "permission: Bash touch x" (an agent's permission prompt), "answer: <the question>".
	Waits string `json:"waits,omitempty"`

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

func (st *QuestionStatus) File(suffix string) string {
	return filepath.Join(st.Dir, messages.QuestionFileName(st.Task, st.Seq, suffix))
}

func (st *QuestionStatus) WaitLock() string {
	return filepath.Join(st.Dir, messages.WaitLockName(st.Task, st.Seq))
}

// LogQ appends one event to the question's log; a failed log write never fails the operation.
func (d *Desk) LogQ(st *QuestionStatus, state string, detail map[string]string) error {
	line, err := json.Marshal(exchange.Event{State: state, At: d.Now().UTC(), Detail: detail})
	if err != nil {
		return err
	}
	return store.AppendLine(st.File(messages.SuffixLog), line)
}

// QuestionEvents reads a question's log.
func QuestionEvents(st *QuestionStatus) []exchange.Event {
	data, err := store.ReadFile(st.File(messages.SuffixLog))
	if err != nil {
		return nil
	}
	var evs []exchange.Event
	for _, l := range strings.Split(string(data), "\n") {
		var ev exchange.Event
		if strings.TrimSpace(l) != "" && json.Unmarshal([]byte(l), &ev) == nil {
			evs = append(evs, ev)
		}
	}
	return evs
}

// LoadQuestion reads a question's files and derives its state from them alone (pending,
// answered, auto-answered, cap-exceeded, resolved); staleness is judged separately.
func LoadQuestion(dir, task string, seq int) (*QuestionStatus, error) {
	path := filepath.Join(dir, messages.QuestionFileName(task, seq, messages.SuffixQuestion))
	data, err := readQuestionFile(path)
	if err != nil {
		return nil, err
	}
	st := &QuestionStatus{Dir: dir, Path: path}
	if err := json.Unmarshal(data, &st.QuestionRecord); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// The file name is the truth for task and seq: a record that names others could lead a path
	// built from it outside this folder.
	if st.Task != task || st.Seq != seq {
		return nil, fmt.Errorf("%s: it says task %q seq %d", path, messages.SanitizeTaskID(st.Task), st.Seq)
	}
	id, err := messages.ParseQuestionID(st.ID)
	if err != nil || id.Task != task || id.Seq != seq {
		return nil, fmt.Errorf("%s: id %q does not match its file name", path, messages.SanitizeTaskID(st.ID))
	}
	st.deadline = st.QuestionRecord.deadline()
	st.limit = time.Duration(st.TimeoutSeconds * float64(time.Second))
	st.Refresh()
	return st, nil
}

// Refresh re-reads the answer and resolved files.
func (st *QuestionStatus) Refresh() {
	st.State = QuestionPending
	st.Waits = st.waits()
	defer func() {
		if st.State != QuestionPending {
			st.Waits = ""
		}
	}()
	if data, err := store.ReadFile(st.File(messages.SuffixAnswer)); err == nil {
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
	if data, err := store.ReadFile(st.File(messages.SuffixResolved)); err == nil {
		var r ResolvedRecord
		if json.Unmarshal(data, &r) == nil {
			st.Resolved = &r
			st.State = QuestionResolved
			st.Reason = r.Reason
		}
	}
}

// Decided reports whether the question needs nothing more: answered in any way, or resolved.
func (st *QuestionStatus) Decided() bool { return st.State != QuestionPending }

// Qref names one question file.
type Qref struct {
	Dir  string
	Task string
	Seq  int
}

// QuestionRefs lists every question file under root, in folder and name order.
func QuestionRefs(root string) ([]Qref, error) {
	dirs, _, err := exchange.SessionDirs(root)
	if err != nil {
		return nil, err
	}
	var out []Qref
	for _, dir := range dirs {
		// Names only, unsorted, and a suffix test before the pattern: most entries are
		// requests, responses and logs, and a root of thousands of exchanges holds tens of
		// thousands of them. The few question files are sorted, as os.ReadDir would have.
		names, err := readNames(dir)
		if err != nil {
			continue
		}
		var qs []string
		for _, name := range names {
			if strings.HasSuffix(name, "."+messages.SuffixQuestion) {
				qs = append(qs, name)
			}
		}
		sort.Strings(qs)
		for _, name := range qs {
			task, seq, suffix, ok := messages.ParseQuestionFileName(name)
			if ok && suffix == messages.SuffixQuestion {
				out = append(out, Qref{Dir: dir, Task: task, Seq: seq})
			}
		}
	}
	return out, nil
}

// readNames lists the names in dir, in no order.
func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// FindQuestion loads the question with id from anywhere under root.
func FindQuestion(root, id string) (*QuestionStatus, error) {
	qid, err := messages.ParseQuestionID(strings.TrimSpace(id))
	if err != nil {
		return nil, err
	}
	dirs, _, err := exchange.SessionDirs(root)
	if err != nil {
		return nil, err
	}
	name := messages.QuestionFileName(qid.Task, qid.Seq, messages.SuffixQuestion)
	var tooLarge error
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Lstat(filepath.Join(dirs[i], name)); err != nil {
			continue
		}
		st, err := LoadQuestion(dirs[i], qid.Task, qid.Seq)
		if err == nil && st.ID == qid.String() {
			return st, nil
		}
		if errors.Is(err, store.ErrTooLarge) && tooLarge == nil {
			tooLarge = err // the file is there, and says why it cannot be read
		}
	}
	if tooLarge != nil {
		return nil, tooLarge
	}
	return nil, store.Kindf(store.ErrNotFound, "no question %s under %s; run 'wcomm questions' to list them", qid, root)
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

// claimQuestion writes the next question file of rec's task in dir with link(2), so two askers
// never share a number, and gives it an id whose tag no other folder's question of that
// number uses.
func (d *Desk) claimQuestion(root, dir string, rec QuestionRecord) (*QuestionStatus, error) {
	for attempt := 0; attempt < 100; attempt++ {
		seq, err := nextQuestionSeq(dir, rec.Task)
		if err != nil {
			return nil, err
		}
		taken := tagsInUse(root, rec.Task, seq)
		var tag string
		for i := 0; i < 64; i++ {
			if tag, err = messages.NewQuestionTag(d.Rand); err != nil {
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
		if errors.Is(err, store.ErrExists) {
			continue
		}
		if err != nil {
			return nil, err
		}
		st := &QuestionStatus{QuestionRecord: rec, State: QuestionPending, Dir: dir, Path: path}
		st.Waits = st.waits()
		return st, nil
	}
	return nil, fmt.Errorf("could not claim a question number for task %s in %s", rec.Task, dir)
}

func writeJSONExclusive(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return store.WriteExclusive(path, append(data, '\n'))
}

// tagsInUse returns the tags of the questions numbered seq of task anywhere under root.
func tagsInUse(root, task string, seq int) map[string]bool {
	taken := map[string]bool{}
	dirs, _, _ := exchange.SessionDirs(root)
	name := messages.QuestionFileName(task, seq, messages.SuffixQuestion)
	for _, dir := range dirs {
		data, err := readQuestionFile(filepath.Join(dir, name))
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
	refs, _ := QuestionRefs(root)
	n := 0
	for _, r := range refs {
		if r.Task != task {
			continue
		}
		st, err := LoadQuestion(r.Dir, r.Task, r.Seq)
		if err != nil || st.Worker != worker || st.Server != server || st.State == QuestionCapExceeded {
			continue
		}
		n++
	}
	return n
}

// QuestionsOptions filter Questions.
type QuestionsOptions struct {
	Pending bool // only questions still waiting for an answer (stale ones are not surfaced)
	// FilesOnly reads the states the files hold and judges no staleness, which asks tmux: for
	// a caller that looks often and judges staleness now and then (the bridge).
	FilesOnly bool
	// IDs selects these questions instead, in this order, each a whole id or the end of one
	// (QuestionID); one that names no question is an error.
	IDs []string
	// Resolve closes the one question IDs names without an answer, for this reason
	// (ResolveQuestion), and returns it as it is then.
	Resolve string
}

// Questions lists every question under the root with its state, oldest first, and names the
// question files it could not read; with IDs, the questions they name (resolved, with Resolve).
func (d *Desk) Questions(ctx context.Context, o QuestionsOptions) ([]*QuestionStatus, []string, error) {
	if len(o.IDs) > 0 || o.Resolve != "" {
		list, err := d.questionsByID(ctx, o)
		return list, nil, err
	}
	root, found, err := d.ReadRoot()
	if err != nil || !found {
		return nil, nil, err
	}
	refs, err := QuestionRefs(root)
	if err != nil {
		return nil, nil, err
	}
	var out []*QuestionStatus
	var problems []string
	var live *liveness
	for _, r := range refs {
		st, err := LoadQuestion(r.Dir, r.Task, r.Seq)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if st.State == QuestionPending && !o.FilesOnly {
			if live == nil {
				live = d.liveness(ctx)
			}
			d.judgeStale(ctx, st, live)
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

// answerQueued reports whether an ANSWER block of st was queued and not yet read by an ask.
func answerQueued(st *QuestionStatus) bool {
	queued := false
	for _, ev := range QuestionEvents(st) {
		switch ev.State {
		case QAnswerQueued:
			queued = true
		case QAnswerRead:
			queued = false
		}
	}
	return queued
}

// writeIntent stores the intent of a just-created question, naming it.
func writeIntent(st *QuestionStatus, in messages.Intent) error {
	in.QuestionID = st.ID
	in.RequestID = st.Exchange
	return store.WriteExclusive(st.File(messages.SuffixIntent), messages.FormatIntent(in))
}

// waits is what a pending question's worker waits on a person for, in a few words.
func (st *QuestionStatus) waits() string {
	if p := st.Permission; p != nil {
		return "permission: " + messages.SanitizeField(p.Summary(80))
	}
	if st.Idle != nil {
		return "idle"
	}
	q := st.Question
	return "answer: " + messages.SanitizeField(clipWords(q.Text, 80))
}

// clipWords is s on one line, at most n runes.
func clipWords(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
