package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"sort"
	"strings"
	"time"

	"github.com/wcomm/wcomm/internal/ui"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

//go:embed assets
var assets embed.FS

var tmpl = template.Must(template.ParseFS(assets, "assets/page.html"))

// page is what the template draws: the model in words, every string from another process
// already made harmless (messages' sanitizers; the template escapes it for HTML).
type page struct {
	Title     string
	Token     string
	ReadOnly  bool
	Version   int
	Panes     []paneView
	Questions []questionView
	Feed      []feedView
	Problems  []string
	Loaded    bool
}

type paneView struct {
	ID, Name, Agent, State, Why, Session string
	Queued, Open, Asking                 int
	Waiting                              string // the age of the oldest thing waiting on it
	Latest                               []string
	Urgent                               bool
}

type questionView struct {
	ID, Worker, Kind, Title, Text, Context, Age string
	Blocking                                    bool
	Options                                     []optionView
	Freeform                                    bool
	Deny                                        bool // a deny may carry a message for the model
}

type optionView struct{ Label, Raw, Detail string }

type feedView struct{ At, What, ID, Event, Detail string }

// one cleans a field from another process for one line.
func one(s string) string { return messages.SanitizeField(s) }

// many cleans text from another process that may span lines.
func many(s string) string { return messages.SanitizeTerminal(s) }

// build turns a snapshot into the page's words.
func build(s snapshot, cfg Config, token string, now time.Time) page {
	p := page{Title: one(cfg.Title), Token: token, ReadOnly: cfg.ReadOnly, Version: s.version, Loaded: s.loaded}
	if p.Title == "" {
		p.Title = "wcomm"
	}
	if s.panesErr != "" {
		p.Problems = append(p.Problems, "tmux: "+one(s.panesErr))
	}
	if s.filesErr != "" {
		p.Problems = append(p.Problems, "files: "+one(s.filesErr))
	}
	for _, pr := range s.files.Problems {
		p.Problems = append(p.Problems, one(pr))
	}
	latest := map[messages.PaneID][]string{}
	for _, x := range s.recent {
		line := fmt.Sprintf("#%d %s→%s%s %s: %s", x.Seq, x.Orchestrator, x.Worker, hostOf(x), orDash(x.State), x.Summary)
		for _, id := range []messages.PaneID{x.Worker, x.Orchestrator} {
			if len(latest[id]) < 3 {
				latest[id] = append(latest[id], one(line))
			}
		}
	}
	rows := ui.Rows(s.panes, s.files)
	sort.SliceStable(rows, func(i, j int) bool { return urgency(rows[i]) > urgency(rows[j]) })
	for _, r := range rows {
		v := paneView{ID: string(r.ID), Name: orDash(one(r.Name)), Agent: orDash(one(r.Agent)), State: one(r.State),
			Why: one(r.Evidence), Session: one(r.Session), Queued: r.Queued, Open: r.Open, Asking: r.Asking,
			Latest: latest[r.ID], Urgent: urgency(r) >= 2}
		if w := one(r.Waits); w != "" && (r.State == fleet.PanePermission || r.State == fleet.PaneAnswer || v.Why == "") {
			v.Why = w
		}
		if !r.Oldest.IsZero() {
			v.Waiting = exchange.Age(now, r.Oldest)
		}
		p.Panes = append(p.Panes, v)
	}
	for _, q := range ui.PendingQuestions(s.files) {
		p.Questions = append(p.Questions, questionOf(q, now))
	}
	for _, ev := range s.feed {
		p.Feed = append(p.Feed, feedView{At: ev.At.Local().Format("15:04:05"), What: one(ev.Kind), ID: one(ev.ID), Event: one(ev.Event), Detail: one(ev.Say())})
	}
	return p
}

// urgency orders the panes: waiting on a person first, then gone, then the rest.
func urgency(r ui.Row) int {
	switch r.State {
	case fleet.PanePermission, fleet.PaneAnswer:
		return 3
	case fleet.PaneGone:
		return 0
	}
	if r.Asking > 0 || r.Queued > 0 {
		return 2
	}
	return 1
}

func hostOf(x *exchange.Exchange) string {
	if x.Host == "" {
		return ""
	}
	return " on " + x.Host
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// questionOf is a pending question as the page shows it, with its answers as buttons: the
// raw answer each sends is the one the console sends for its key.
func questionOf(q *questions.QuestionStatus, now time.Time) questionView {
	v := questionView{ID: one(q.ID), Worker: string(q.Worker), Text: many(q.Text), Context: many(q.Context),
		Age: exchange.Age(now, q.AskedAt), Blocking: q.Urgency == messages.Blocking, Kind: "question"}
	v.Title = "question from " + string(q.Worker)
	switch {
	case q.Permission != nil:
		v.Kind = "permission"
		v.Title = fmt.Sprintf("%s in %s asks to run %s", orDash(one(q.Permission.Agent)), q.Worker, one(q.Permission.Tool))
		v.Text = many(q.Permission.Subject)
		for _, o := range q.Options {
			v.Options = append(v.Options, optionView{Label: one(o), Raw: o})
			if o == messages.PermDeny {
				v.Deny = true
			}
		}
		return v
	case q.Action != "":
		v.Kind = "approval"
		v.Title = "approval " + one(q.Action) + " from " + string(q.Worker)
	}
	if q.Type == messages.Freeform {
		v.Freeform = true
		return v
	}
	for i, o := range q.Options {
		raw := o
		if q.Type == messages.Numbered {
			raw = messages.OptionLetter(i)
		}
		ov := optionView{Label: messages.OptionLetter(i) + " " + one(o), Raw: raw}
		if i < len(q.Details) {
			ov.Detail = one(q.Details[i])
		}
		v.Options = append(v.Options, ov)
	}
	return v
}

// render draws one named part of the page.
func render(name string, p page) (string, error) {
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, name, p); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}
