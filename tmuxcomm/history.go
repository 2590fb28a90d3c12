package tmuxcomm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/wcomm/wcomm/messages"
)

// Parse reads a RESPONSE line (with any text around it, as a prompt shows it) and returns the
// exchange it names with both bodies. The path must lie inside the root: a notification is text a
// worker controls, and following it elsewhere would read any file.
func (e *Engine) Parse(ctx context.Context, text string) (*Exchange, error) {
	n, err := messages.FindNotification(text)
	if err != nil {
		return nil, err
	}
	root, err := e.root(false)
	if err != nil {
		return nil, err
	}
	x, err := e.byPath(root, n.Path)
	if err != nil {
		return nil, err
	}
	x = loadExchange(x.Dir, x.Seq, true)
	if x.StartedAt != n.StartedAt || x.Orchestrator != n.Orchestrator || x.Worker != n.Worker {
		x.Problems = append(x.Problems, fmt.Sprintf("the line says started_at=%s orchestrator=%s worker=%s; the files say started_at=%s orchestrator=%s worker=%s",
			n.StartedAt, n.Orchestrator, n.Worker, x.StartedAt, x.Orchestrator, x.Worker))
	}
	return x, nil
}

// Show returns one exchange whole, by id or path.
func (e *Engine) Show(ctx context.Context, ref string) (*Exchange, error) {
	if ref == "" {
		return nil, fmt.Errorf("name the exchange by id or path")
	}
	x, err := e.Locate(ctx, ref, roleOrchestrator)
	if err != nil {
		return nil, err
	}
	return loadExchange(x.Dir, x.Seq, true), nil
}

// SessionSummary is one session folder with its exchanges.
type SessionSummary struct {
	Name         string          `json:"session"`
	Dir          string          `json:"dir"`
	StartedAt    string          `json:"started_at"`
	Orchestrator messages.PaneID `json:"orchestrator"`
	Worker       messages.PaneID `json:"worker"`
	Server       string          `json:"server,omitempty"`
	Exchanges    []*Exchange     `json:"exchanges"`
	// Foreign names files in the folder that are not part of the protocol.
	Foreign []string `json:"foreign,omitempty"`
	// Orphans are response files without a request.
	Orphans  []string `json:"orphans,omitempty"`
	Problems []string `json:"problems,omitempty"`
}

// HistoryOptions filter History.
type HistoryOptions struct {
	Session string // a session folder name; "" = all
	Pending bool   // only exchanges without a response (delivered or not)
}

// History lists the sessions under the root with their exchanges, oldest first. Damaged and
// foreign files are named, never fatal.
func (e *Engine) History(ctx context.Context, o HistoryOptions) ([]SessionSummary, []string, error) {
	root, err := e.root(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil // no root yet: no exchanges, truly
	}
	if err != nil {
		return nil, nil, err
	}
	var dirs, foreign []string
	if o.Session != "" {
		if _, err := messages.ParseSessionName(o.Session); err != nil {
			return nil, nil, fmt.Errorf("session %q: %w", messages.SanitizeField(o.Session), err)
		}
		dirs = []string{filepath.Join(root, o.Session)}
	} else {
		dirs, foreign, err = sessionDirs(root)
		if err != nil {
			return nil, nil, err
		}
	}
	var out []SessionSummary
	for _, dir := range dirs {
		s := e.summarize(dir, o.Pending)
		if o.Session != "" && len(s.Problems) > 0 && len(s.Exchanges) == 0 {
			return nil, nil, fmt.Errorf("session %s: %s: %w", o.Session, s.Problems[0], ErrNotFound)
		}
		if o.Pending && len(s.Exchanges) == 0 {
			continue
		}
		out = append(out, s)
	}
	return out, foreign, nil
}

func (e *Engine) summarize(dir string, pending bool) SessionSummary {
	name := filepath.Base(dir)
	s := SessionSummary{Name: name, Dir: dir}
	if sn, err := messages.ParseSessionName(name); err == nil {
		s.StartedAt, s.Orchestrator, s.Worker = sn.StartedAt, sn.Orchestrator, sn.Worker
	}
	if m, err := readMeta(dir); err == nil {
		s.Server = m.Server
	}
	files, other, err := listSeq(dir)
	if err != nil {
		s.Problems = append(s.Problems, err.Error())
		return s
	}
	s.Foreign = other
	claimed := map[string]bool{}
	for _, f := range files {
		if f.Kind != messages.KindRequest {
			continue
		}
		x := loadExchange(dir, f.N, false)
		claimed[filepath.Base(x.ResponsePath)] = true
		// Pending: everything without a response, refused, undelivered, queued and expired
		// requests included (they can be sent again with send --resend).
		if pending && x.Status != StatusPending && x.Status != StatusUndelivered {
			continue
		}
		s.Exchanges = append(s.Exchanges, x)
	}
	for _, f := range files {
		if f.Kind == messages.KindResponse && !claimed[f.Name] {
			s.Orphans = append(s.Orphans, f.Name)
		}
	}
	return s
}

// Age formats how long ago t was, for listings: "4s", "3m", "2h", "5d".
func Age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}

var _ = context.Background
