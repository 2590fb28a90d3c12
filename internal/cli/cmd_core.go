package cli

// What the exchange commands share: printing a response, an exchange, a history session and
// panes, and checking an exchange reference.

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wcomm/wcomm/internal/safeout"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
)

// maxParseInput bounds what parse reads: a screen capture with a RESPONSE line in it.
const maxParseInput = 16 << 20

// DefaultAwaitTimeout bounds an await without --timeout, so a forgotten worker never hangs an
// orchestrator for ever; --timeout 0 waits without limit.
const DefaultAwaitTimeout = 30 * time.Minute

// printResponse prints an awaited response: its body, or with --json the whole exchange. Problems
// (an id or integrity mismatch) go to stderr.
func (c *cli) printResponse(x *exchange.Exchange) error {
	for _, p := range x.Problems {
		fmt.Fprintf(c.stderr, "wcomm: warning: %s\n", p)
	}
	if c.json {
		return c.printJSON(x)
	}
	body := x.ResponseBody
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	_, err := io.WriteString(c.stdout, body)
	return err
}

func printPanes(w io.Writer, panes []fleet.PaneInfo) {
	// Buffered: the tabwriter writes each cell and its padding apart, a system call each (500 for
	// 40 panes) where w is not buffered already (a find's "what runs where" on stderr).
	w, flush := safeout.Buffered(w)
	defer flush()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PANE\tNAME\tTARGET\tPID\tAGENT\tPROGRAMS")
	for _, p := range panes {
		progs := strings.Join(p.Programs, ", ")
		if p.Dead {
			progs = "(dead) " + progs
		}
		if p.Route == exchange.ViaSocket || p.AgentStatus != "" {
			// The agent's door and its own word on its state (mailbox/route.go).
			progs += "  [" + strings.Join(nonEmpty(p.Route, p.AgentStatus), ", ") + "]"
		}
		if p.Self {
			progs += "  (you)"
		}
		if p.Waits != "" {
			progs += "  waits: " + p.Waits
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", p.ID, orDash(p.Name), messages.SanitizeField(p.Target()), p.PID, orDash(p.Agent), messages.SanitizeField(progs))
	}
	tw.Flush()
}

// printHistorySession prints the i-th session of a history listing.
func printHistorySession(w io.Writer, i int, s exchange.SessionSummary, now time.Time) {
	if i > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%s  (orchestrator %s, worker %s)\n", s.Name, s.Orchestrator, s.Worker)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(s.Exchanges) > 0 {
		// Each session's table has its own columns (streamed, one tabwriter each): its own header.
		fmt.Fprintf(tw, "  SEQ\tID\tSTATUS\tDELIVERY\tAGE\tREQUEST\n")
	}
	for _, x := range s.Exchanges {
		age := ""
		if !x.SentAt.IsZero() {
			age = exchange.Age(now, x.SentAt)
		}
		state := stateText(x, 60)
		fmt.Fprintf(tw, "  %03d\t%s\t%s\t%s\t%s\t%s\n", x.Seq, orDash(x.ID), x.Status, state, age, x.Summary)
	}
	tw.Flush()
	for _, p := range allProblems(s) {
		fmt.Fprintf(w, "  ! %s\n", p)
	}
}

// printHistoryEnd ends a history listing of n sessions: "no exchanges" when there were none
// (first in the output, as it has always been: nothing came before it), then the foreign names.
func printHistoryEnd(w io.Writer, n int, foreign []string) {
	if n == 0 {
		fmt.Fprintln(w, "no exchanges")
	}
	for _, f := range foreign {
		fmt.Fprintf(w, "! not a session folder: %s\n", messages.SanitizeField(f))
	}
}

func allProblems(s exchange.SessionSummary) []string {
	out := append([]string(nil), s.Problems...)
	for _, x := range s.Exchanges {
		out = append(out, x.Problems...)
	}
	for _, f := range s.Foreign {
		out = append(out, "foreign file: "+messages.SanitizeField(f))
	}
	for _, f := range s.Orphans {
		out = append(out, "response without a request: "+f)
	}
	return out
}

// stateText is a delivery state with its evidence: "submitted, verified (input box empty after
// Enter)"; width > 0 shortens the evidence for a table.
func stateText(x *exchange.Exchange, width int) string {
	state, ev := x.DeliveryState()
	if ev == "" {
		return state
	}
	if r := []rune(ev); width > 0 && len(r) > width {
		ev = string(r[:width-3]) + "..."
	}
	return state + " (" + ev + ")"
}

// warnIntegrity says on stderr when an exchange's files differ from what was sent.
func warnIntegrity(c *cli, x *exchange.Exchange) {
	if x.Integrity != "mismatch" {
		return
	}
	fmt.Fprintf(c.stderr, "wcomm: warning: integrity mismatch: the request file of %s changed after it was sent\n", orDash(x.ID))
	for _, p := range x.Problems {
		fmt.Fprintf(c.stderr, "wcomm: warning: %s\n", p)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func printExchange(w io.Writer, x *exchange.Exchange) {
	fmt.Fprintf(w, "id:            %s\n", orDash(x.ID))
	fmt.Fprintf(w, "session:       %s\n", x.Session)
	fmt.Fprintf(w, "seq:           %03d\n", x.Seq)
	worker := string(x.Worker)
	if x.Host != "" {
		worker = x.Host + ":" + worker + " (on host " + x.Host + ")"
	}
	fmt.Fprintf(w, "orchestrator:  %s\nworker:        %s\n", x.Orchestrator, worker)
	fmt.Fprintf(w, "capability:    %s\n", orDash(x.Capability))
	// The delivery's state in the status line, its evidence on a line of its own: the evidence
	// has parentheses of its own, and nested in the status line's they read as a puzzle.
	state, evidence := x.DeliveryState()
	if state != x.Status {
		fmt.Fprintf(w, "status:        %s (%s)\n", x.Status, state)
	} else {
		fmt.Fprintf(w, "status:        %s\n", x.Status) // answered, and nothing more to say
	}
	if evidence != "" {
		fmt.Fprintf(w, "evidence:      %s\n", evidence)
	}
	if x.Form != "" {
		how := x.Form
		if x.Profile != "" {
			how += " to a " + x.Profile + " pane"
		}
		switch x.Via {
		case "":
		case exchange.ViaTyped:
			how += ", typed"
		default:
			how += ", via " + x.Via
		}
		fmt.Fprintf(w, "delivered as:  %s\n", how)
	}
	switch x.Integrity {
	case "":
	case "mismatch":
		fmt.Fprintf(w, "integrity:     MISMATCH: the request on disk is not what was sent (see below)\n")
	default:
		fmt.Fprintf(w, "integrity:     %s\n", x.Integrity)
	}
	fmt.Fprintf(w, "request:       %s\n", x.RequestPath)
	fmt.Fprintf(w, "response:      %s\n", x.ResponsePath)
	if !x.SentAt.IsZero() {
		fmt.Fprintf(w, "sent:          %s\n", x.SentAt.Local().Format(time.RFC3339))
	}
	if x.AnsweredAt != nil {
		fmt.Fprintf(w, "answered:      %s\n", x.AnsweredAt.Local().Format(time.RFC3339))
	}
	for _, ev := range x.Events {
		var kv []string
		for _, k := range []string{"pane", "profile", "form", "bytes", "before", "waited", "shown_after", "enter_delay", "enters", "verified", "via", "agent_status", "evidence", "buffer", "error", "signal"} {
			if v, ok := ev.Detail[k]; ok && v != "" {
				kv = append(kv, k+"="+v)
			}
		}
		fmt.Fprintf(w, "  %s  %-12s %s\n", ev.At.Local().Format("15:04:05.000"), ev.State, messages.SanitizeField(strings.Join(kv, " ")))
	}
	for _, p := range x.Problems {
		fmt.Fprintf(w, "! %s\n", p)
	}
	if x.Delta != nil {
		fmt.Fprintf(w, "delta:         changes=%d risks=%d alternatives=%d needs_consult=%v\n",
			len(x.Delta.Changes), len(x.Delta.Risks), len(x.Delta.Alternatives), x.Delta.NeedsConsult)
	}
	fmt.Fprintf(w, "\n--- request\n%s", ensureNL(x.RequestBody))
	if x.Response() != nil {
		fmt.Fprintf(w, "--- response\n%s", ensureNL(x.ResponseBody))
	}
}

func ensureNL(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// nonEmpty is the strings that are not "".
func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
