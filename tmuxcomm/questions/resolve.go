package questions

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// QuestionID returns the question id ref names under the engine's root (ResolveQuestionID).
func (d *Desk) QuestionID(ref string) (string, error) {
	if _, err := messages.ParseQuestionID(ref); err == nil {
		return ref, nil
	}
	if err := CheckQuestionRef(ref); err != nil {
		return "", err
	}
	root, found, err := d.ReadRoot()
	if err != nil {
		return "", err
	}
	if !found {
		return "", store.Kindf(store.ErrNotFound, "no questions yet (no root %s)", root)
	}
	return ResolveQuestionID(root, ref)
}

// CheckQuestionRef refuses, as a usage error, what can be neither a question id nor its end:
// both faces check an id so before they need an engine.
func CheckQuestionRef(ref string) error {
	_, err := messages.ParseQuestionID(ref)
	if err != nil && !messages.IsQuestionIDSuffix(ref) {
		return core.Usagef("%v, nor its unique end (q1-a1b2)", err)
	}
	return nil
}

// ResolveQuestionID returns the question id ref names under root: ref itself when it is a whole
// id, else the one question id that ends with ref, so a person answers "q1-9232" for
// task-3.q1-9232. None is ErrNotFound, several ErrAmbiguous naming them (exit 4), as the exchange
// room says of request ids.
func ResolveQuestionID(root, ref string) (string, error) {
	if _, err := messages.ParseQuestionID(ref); err == nil {
		return ref, nil
	}
	ids, err := QuestionIDsEnding(root, ref)
	if err != nil {
		return "", err
	}
	return exchange.OneOf("question", ref, ids, "wcomm questions")
}

// QuestionIDsEnding lists the ids of the questions under root that end with tail. A question's
// id is its file's stem, '-' and a tag of 4 hex digits kept in the file: only the files whose stem
// can end the way tail does are read. A question asked in several folders under one id is listed
// once.
func QuestionIDsEnding(root, tail string) ([]string, error) {
	refs, err := QuestionRefs(root)
	if err != nil {
		return nil, err
	}
	// An id is STEM-TAG with a tag of 4: a tail longer than "-TAG" ends with a tail of the stem.
	stemTail := ""
	if len(tail) > 5 {
		stemTail = tail[:len(tail)-5]
	}
	var ids []string
	for _, r := range refs {
		if !strings.HasSuffix(messages.QuestionStem(r.Task, r.Seq), stemTail) {
			continue
		}
		data, err := readQuestionFile(filepath.Join(r.Dir, messages.QuestionFileName(r.Task, r.Seq, messages.SuffixQuestion)))
		if err != nil {
			continue
		}
		var rec struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(data, &rec) != nil {
			continue
		}
		if id, err := messages.ParseQuestionID(rec.ID); err == nil && id.Task == r.Task && id.Seq == r.Seq && strings.HasSuffix(rec.ID, tail) {
			ids = append(ids, rec.ID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// AnyID returns the id ref names where either kind of id is taken (show): ref itself when it is a
// whole id, a path or a broadcast's id, else the one request or question id that ends with ref.
func (d *Desk) AnyID(ref string) (string, error) {
	_, qerr := messages.ParseQuestionID(ref)
	isX, isQ := messages.IsIDSuffix(ref), messages.IsQuestionIDSuffix(ref)
	if qerr == nil || messages.ValidID(ref) == nil || messages.IsBroadcastID(ref) || !isX && !isQ {
		return ref, nil
	}
	root, found, err := d.ReadRoot()
	if err != nil {
		return "", err
	}
	if !found {
		return "", store.Kindf(store.ErrNotFound, "no exchanges yet (no root %s)", root)
	}
	var xs, qs []string
	if isX {
		if xs, err = exchange.IDsEnding(root, ref); err != nil {
			return "", err
		}
	}
	if isQ {
		if qs, err = QuestionIDsEnding(root, ref); err != nil {
			return "", err
		}
	}
	switch {
	case len(qs) == 0 && len(xs) > 0:
		return exchange.OneOf("request", ref, xs, "wcomm history")
	case len(xs) == 0 && len(qs) > 0:
		return exchange.OneOf("question", ref, qs, "wcomm questions")
	}
	return exchange.OneOf("request or question", ref, append(xs, qs...), "wcomm history' or 'wcomm questions")
}
