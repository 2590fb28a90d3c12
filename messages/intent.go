package messages

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// The records of an approved action, each a JSON file beside its question: the intent (what a
// yes authorizes, bound to a fingerprint of the state at ask time), the dispatch (one
// dispatcher's claim: run it, or block it with reasons) and the result (exit code, times,
// output). Each is written once and never rewritten, so the folder is the whole history.

// Action file suffixes beside a question's own ("{task}.q{seq}.{suffix}").
const (
	SuffixIntent   = "intent"   // the intent (JSON), written with the question
	SuffixDispatch = "dispatch" // a dispatcher's claim and decision (JSON), claimed once
	SuffixResult   = "result"   // what the execution did (JSON), written once
	SuffixOutput   = "output"   // the command's stdout and stderr
)

// Dispatch decisions.
const (
	DecisionRun   = "run"
	DecisionBlock = "block"
)

// Target kinds.
const (
	TargetFile = "file"
	TargetDir  = "dir"
)

// MaxActionNameLen bounds an action's name: it is printed and logged.
const MaxActionNameLen = 64

var (
	actionNameRe = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	sha256HexRe  = regexp.MustCompile(`^[0-9a-f]{64}$`)
	gitHeadRe    = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})?$`)
)

// ValidActionName checks an action's name: letters, digits, '_' and '-', at most 64.
func ValidActionName(s string) error {
	if s == "" || len(s) > MaxActionNameLen || !actionNameRe.MatchString(s) {
		return syntaxf("action name %s: use 1 to %d letters, digits, '_' or '-'", quote(s), MaxActionNameLen)
	}
	return nil
}

// ActionDef is an action as the settings file registers it: an argv (never a shell string), the
// files or folders whose content is part of the fingerprint, and where it runs.
type ActionDef struct {
	Run     []string `json:"run"`
	Targets []string `json:"targets,omitempty"`
	// Dir is the folder the command runs in, absolute (resolved against the settings file).
	Dir string `json:"dir"`
}

// Hash is the sha256 of the definition's canonical JSON: any change to the argv, the targets or
// the folder changes it, and so makes an approval of the old definition stale.
func (d ActionDef) Hash() string {
	data, _ := json.Marshal(ActionDef{Run: d.Run, Targets: d.Targets, Dir: d.Dir})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Target is one fingerprinted file or folder: its path relative to the action's folder (or
// absolute), its kind and the sha256 of its content (a folder's: of every entry below it).
type Target struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	SHA256 string `json:"sha256"`
}

// GitState is HEAD and `git status` of the action's folder when the question was asked.
type GitState struct {
	Dir  string `json:"dir"`
	Head string `json:"head"` // "" before the first commit
	// StatusSHA256 is the sha256 of `git status --porcelain=v1 -z --untracked-files=all`.
	StatusSHA256 string `json:"status_sha256"`
	Changed      int    `json:"changed_paths"`
}

// Intent is the {task}.q{seq}.intent file: a yes to question QuestionID authorizes running
// Action as Definition, only while the targets, the git state and the definition still hash
// as they did at CreatedAt.
type Intent struct {
	QuestionID     string    `json:"question_id"`
	RequestID      string    `json:"request_id,omitempty"` // the request the question was about
	RunID          string    `json:"run_id,omitempty"`     // the asker's run ($WCOMM_RUN_ID)
	Action         string    `json:"action"`
	Definition     ActionDef `json:"definition"`
	DefinitionHash string    `json:"definition_hash"`
	Config         string    `json:"config"` // the settings file that registered the action
	Targets        []Target  `json:"targets"`
	Git            GitState  `json:"git"`
	CreatedAt      time.Time `json:"created_at"`
}

// Dispatch is the {task}.q{seq}.dispatch file: the one dispatcher that claimed the intent, and
// what it decided. Claimed with link(2), so of two dispatchers at once exactly one decides.
type Dispatch struct {
	Decision string    `json:"decision"`          // run or block
	Reasons  []string  `json:"reasons,omitempty"` // why it was blocked
	PID      int       `json:"pid"`
	Host     string    `json:"host,omitempty"`
	At       time.Time `json:"at"`
}

// ActionResult is the {task}.q{seq}.result file: what running the action did.
type ActionResult struct {
	ExitCode  int       `json:"exit_code"` // -1 when it could not start or was killed
	Error     string    `json:"error,omitempty"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	Output    string    `json:"output"` // the output file's name, beside the intent
}

// maxRecord bounds an action record: anything bigger is not one.
const maxRecord = 1 << 20

// decodeStrict decodes one JSON object into v, refusing unknown fields and trailing data.
func decodeStrict(what string, data []byte, v any) error {
	if len(data) > maxRecord {
		return syntaxf("%s: %d bytes, more than a record holds", what, len(data))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return syntaxf("%s: %s", what, strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return syntaxf("%s: data after the record", what)
	}
	return nil
}

func formatRecord(v any) []byte {
	data, _ := json.MarshalIndent(v, "", "  ")
	return append(data, '\n')
}

// FormatIntent returns the intent file's content.
func FormatIntent(in Intent) []byte { return formatRecord(in) }

// ParseIntent reads an intent file and checks its fields.
func ParseIntent(data []byte) (Intent, error) {
	var in Intent
	if err := decodeStrict("intent", data, &in); err != nil {
		return Intent{}, err
	}
	if _, err := ParseQuestionID(in.QuestionID); err != nil {
		return Intent{}, syntaxf("intent: question_id %s", quote(in.QuestionID))
	}
	if err := ValidActionName(in.Action); err != nil {
		return Intent{}, syntaxf("intent: %s", err.Error())
	}
	if err := in.Definition.check(); err != nil {
		return Intent{}, err
	}
	if !sha256HexRe.MatchString(in.DefinitionHash) {
		return Intent{}, syntaxf("intent: definition_hash %s is not a sha256", quote(in.DefinitionHash))
	}
	for i, t := range in.Targets {
		if t.Path == "" || strings.ContainsRune(t.Path, 0) || (t.Kind != TargetFile && t.Kind != TargetDir) || !sha256HexRe.MatchString(t.SHA256) {
			return Intent{}, syntaxf("intent: targets[%d] needs a path, kind file or dir and a sha256", i)
		}
	}
	if in.Git.Dir == "" || !gitHeadRe.MatchString(in.Git.Head) || !sha256HexRe.MatchString(in.Git.StatusSHA256) || in.Git.Changed < 0 {
		return Intent{}, syntaxf("intent: git needs a dir, a commit id or none, and a status sha256")
	}
	if in.CreatedAt.IsZero() {
		return Intent{}, syntaxf("intent: created_at is missing")
	}
	return in, nil
}

func (d ActionDef) check() error {
	if len(d.Run) == 0 || d.Run[0] == "" {
		return syntaxf("intent: definition.run is empty")
	}
	for _, a := range d.Run {
		if strings.ContainsRune(a, 0) {
			return syntaxf("intent: definition.run holds a NUL byte")
		}
	}
	if d.Dir == "" || d.Dir[0] != '/' || strings.ContainsRune(d.Dir, 0) {
		return syntaxf("intent: definition.dir %s is not an absolute folder", quote(d.Dir))
	}
	return nil
}

// FormatDispatch returns the dispatch file's content.
func FormatDispatch(d Dispatch) []byte { return formatRecord(d) }

// ParseDispatch reads a dispatch file.
func ParseDispatch(data []byte) (Dispatch, error) {
	var d Dispatch
	if err := decodeStrict("dispatch", data, &d); err != nil {
		return Dispatch{}, err
	}
	if d.Decision != DecisionRun && d.Decision != DecisionBlock {
		return Dispatch{}, syntaxf("dispatch: decision %s is not run or block", quote(d.Decision))
	}
	if d.PID <= 0 || d.At.IsZero() {
		return Dispatch{}, syntaxf("dispatch: needs a pid and a time")
	}
	return d, nil
}

// FormatActionResult returns the result file's content.
func FormatActionResult(r ActionResult) []byte { return formatRecord(r) }

// ParseActionResult reads a result file.
func ParseActionResult(data []byte) (ActionResult, error) {
	var r ActionResult
	if err := decodeStrict("result", data, &r); err != nil {
		return ActionResult{}, err
	}
	if r.StartedAt.IsZero() || r.EndedAt.IsZero() || r.ExitCode < -1 {
		return ActionResult{}, syntaxf("result: needs an exit code and start and end times")
	}
	if r.Output != "" {
		if _, _, suffix, ok := ParseQuestionFileName(r.Output); !ok || suffix != SuffixOutput {
			return ActionResult{}, syntaxf("result: output %s is not an output file's name", quote(r.Output))
		}
	}
	return r, nil
}

// TrustEntry is one trusted settings file: its absolute path and the sha256 of the exact
// content trusted.
type TrustEntry struct {
	Path   string    `json:"path"`
	SHA256 string    `json:"sha256"`
	At     time.Time `json:"at"`
}

// TrustList is the user's list of trusted project settings files.
type TrustList struct {
	Trusted []TrustEntry `json:"trusted"`
}

// FormatTrustList returns the trust list file's content.
func FormatTrustList(l TrustList) []byte {
	if l.Trusted == nil {
		l.Trusted = []TrustEntry{}
	}
	return formatRecord(l)
}

// ParseTrustList reads the trust list file.
func ParseTrustList(data []byte) (TrustList, error) {
	var l TrustList
	if err := decodeStrict("trust list", data, &l); err != nil {
		return TrustList{}, err
	}
	for i, e := range l.Trusted {
		if e.Path == "" || e.Path[0] != '/' || strings.ContainsRune(e.Path, 0) || !sha256HexRe.MatchString(e.SHA256) {
			return TrustList{}, syntaxf("trust list: trusted[%d] needs an absolute path and a sha256", i)
		}
	}
	return l, nil
}

// Trusts reports whether the list trusts exactly this content of the file at path.
func (l TrustList) Trusts(path, sha string) bool {
	for _, e := range l.Trusted {
		if e.Path == path && e.SHA256 == sha {
			return true
		}
	}
	return false
}

// With returns the list with path trusted at sha (replacing an older entry for path).
func (l TrustList) With(path, sha string, at time.Time) TrustList {
	out := TrustList{Trusted: []TrustEntry{}}
	for _, e := range l.Trusted {
		if e.Path != path {
			out.Trusted = append(out.Trusted, e)
		}
	}
	out.Trusted = append(out.Trusted, TrustEntry{Path: path, SHA256: sha, At: at.UTC()})
	return out
}

// ContentSHA256 is the hex sha256 of data, as the trust list keeps it.
func ContentSHA256(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// String names a dispatch for a listing.
func (d Dispatch) String() string {
	return fmt.Sprintf("%s by pid %d at %s", d.Decision, d.PID, d.At.Format(time.RFC3339))
}
