package doctor

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wcomm/wcomm/messages"
)

// WriteText prints the report for a person; more prints what the caller checked besides (the
// answer channels), after the root.
func (r *Report) WriteText(w io.Writer, more func(io.Writer)) {
	t := r.Tmux
	fmt.Fprintf(w, "tmux:         %s (client %s)\n", orDash(t.Binary), orDash(t.ClientVersion))
	if t.Running {
		fmt.Fprintf(w, "server:       tmux %s, pid %d, started %s\n", t.Version, t.PID, t.Started)
		fmt.Fprintf(w, "socket:       %s (%s, uid %d)\n", t.Socket, t.SocketMode, t.SocketOwner)
	} else {
		fmt.Fprintln(w, "server:       not running")
	}
	// Not marked '!': wcomm works around each, so none is a problem; '!' marks only problems.
	fmt.Fprintln(w, "known tmux bugs (* = this version has it; wcomm works around each, nothing to do):")
	for _, b := range r.Bugs {
		mark := " "
		if b.Applies {
			mark = "*"
		}
		fmt.Fprintf(w, "  %s %s (%s): %s\n      wcomm: %s\n", mark, b.ID, b.Versions, b.Summary, b.Mitigation)
	}
	fmt.Fprintf(w, "root:         %s: %s\n", r.Root.Path, r.Root.Note)
	if more != nil {
		more(w)
	}
	if p := r.Pane; p != nil {
		d := p.Detection
		fmt.Fprintf(w, "pane:         %s (%s), current command %s, terminal %s\n", p.ID, messages.SanitizeField(p.Target),
			messages.SanitizeField(p.Command), p.TTY)
		fmt.Fprintf(w, "profile:      %s: %s\n", d.Name, messages.SanitizeField(d.Reason))
		if d.Foreground != nil {
			fmt.Fprintf(w, "foreground:   pid %d: %s\n", d.Foreground.PID, messages.SanitizeField(d.Foreground.CommandLine()))
		}
		if d.TTYMode != "" {
			fmt.Fprintf(w, "terminal:     %s mode\n", d.TTYMode)
		}
		fmt.Fprintf(w, "input box:    %s\n", messages.SanitizeField(p.InputNote))
		route := p.Route.Route + ": " + p.Route.Why
		if p.Route.Status != "" {
			route += "; the agent's session says " + p.Route.Status
		}
		fmt.Fprintf(w, "route:        %s\n", messages.SanitizeField(route))
		var delays []string
		for _, d := range p.Delay {
			delays = append(delays, d.Size+": "+d.Delay)
		}
		fmt.Fprintf(w, "enter delay:  %s (the profile's floor, or --enter-delay if longer)\n", strings.Join(delays, ", "))
		prof := p.Profile
		limits := fmt.Sprintf("bracketed paste %v", prof.BracketedPaste)
		if prof.PasteLimit > 0 {
			limits += fmt.Sprintf(", pointer above %d bytes", prof.PasteLimit)
		}
		if prof.LineLimit > 0 {
			limits += fmt.Sprintf(", pointer for lines over %d bytes", prof.LineLimit)
		}
		fmt.Fprintf(w, "delivery:     %s; %s\n", p.Form, limits)
		for i, pr := range p.Probes {
			fmt.Fprintf(w, "probe %d:      marker shown after %s, erased %v\n", i+1, pr.ShownAfter.Round(100*time.Microsecond), pr.Erased)
		}
		if p.Suggested != "" {
			fmt.Fprintf(w, "suggested:    --enter-delay %s for this pane\n", p.Suggested)
		}
	}
	if r.Actions != "" {
		fmt.Fprintf(w, "actions:      %s\n", r.Actions)
	}
	if len(r.Problems) == 0 {
		fmt.Fprintln(w, "problems:     none")
		return
	}
	fmt.Fprintln(w, "problems:")
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  ! %s\n", messages.SanitizeField(p))
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
