package actions

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wcomm/wcomm/messages"
)

// WriteList prints intents and the problems met reading them, for a person: a table, then each
// intent's reasons.
func WriteList(w io.Writer, list []*ActionStatus, problems []string) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no approved-action intents")
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tACTION\tSTATUS\tAGE\tSOURCE\tTARGETS")
		for _, a := range list {
			age := a.Age.Round(time.Second).String()
			if a.Old {
				age += " (advisory: over 48h)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Action, a.Status, age, orDash(answerSource(a)), orDash(targetList(a)))
		}
		tw.Flush()
		for _, a := range list {
			for _, r := range a.Reasons {
				fmt.Fprintf(w, "  %s: %s: %s\n", a.ID, a.Status, messages.SanitizeField(r))
			}
		}
	}
	for _, p := range problems {
		fmt.Fprintf(w, "! %s\n", messages.SanitizeField(p))
	}
}

// WriteRuns prints what a dispatcher did (or, dry, would do) with each intent, for a person.
func WriteRuns(w io.Writer, runs []*ActionRun, dry bool) {
	if len(runs) == 0 {
		fmt.Fprintln(w, "no approved-action intents")
		return
	}
	for _, r := range runs {
		if dry {
			stale := "no"
			if r.Stale {
				stale = "yes"
			}
			would := "nothing"
			switch r.Status {
			case ActionApproved:
				would = "run"
			case ActionStale:
				would = "block"
			}
			fmt.Fprintf(w, "%s: action %s (%s), question %s, targets %s, approval %s, status %s, stale %s, would %s\n",
				r.ID, r.Action, messages.SanitizeField(strings.Join(r.Definition.Run, " ")), r.QuestionID, orDash(targetList(r.ActionStatus)),
				orDash(answerSource(r.ActionStatus)), r.Status, stale, would)
			for _, reason := range r.Reasons {
				fmt.Fprintf(w, "  reason: %s\n", messages.SanitizeField(reason))
			}
			continue
		}
		switch r.Did {
		case DidRun:
			fmt.Fprintf(w, "%s: %s %s (exit %d), output %s\n", r.ID, r.Action, r.Status, r.Result.ExitCode, r.Output)
		case DidBlock:
			fmt.Fprintf(w, "%s: %s blocked\n", r.ID, r.Action)
			for _, reason := range r.Reasons {
				fmt.Fprintf(w, "  reason: %s\n", messages.SanitizeField(reason))
			}
		default:
			fmt.Fprintf(w, "%s: %s %s: nothing done (%s)\n", r.ID, r.Action, r.Status, messages.SanitizeField(r.Note))
		}
	}
}

// answerSource says who approved or denied, and when.
func answerSource(a *ActionStatus) string {
	if a.Answer == nil {
		return ""
	}
	return fmt.Sprintf("%s by %s at %s", a.Answer.Answer, messages.SanitizeField(a.Answer.Source), a.Answer.At.Local().Format(time.RFC3339))
}

func targetList(a *ActionStatus) string {
	var out []string
	for _, t := range a.Targets {
		out = append(out, messages.SanitizeField(t.Path))
	}
	return strings.Join(out, ",")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
