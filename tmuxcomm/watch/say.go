package watch

// The words of the feed: one short line per event, for wcomm watch and the console alike.

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// deliveredDetail says how a delivery reached its pane, from the event's "via": through the
// agent's messaging socket, typed (pasted, then Enter; a question's delivered event has no via),
// or handed over by the agent's hook or inbox at a turn boundary.
func deliveredDetail(d map[string]string) string {
	switch d["via"] {
	case exchange.ViaSocket:
		return "written to the messaging socket of " + d["pane"] + "'s agent"
	case "", exchange.ViaTyped, "paste":
		s := "pasted into " + orDash(d["pane"])
		if d["form"] != "" {
			s += " as " + d["form"]
		}
		return s
	}
	return "handed to " + orDash(d["pane"]) + " by its " + d["via"]
}

// answeredBy words who gave a question's answer: for one a person gave, the way it came (the
// console, a chat channel, wcomm answer: its recorded source), not the record's "user", which
// names every way at once; else what decided it (auto-timeout, cap-exceeded).
func answeredBy(d map[string]string) string {
	switch {
	case d["by"] == messages.DecidedByUser && d["source"] == "ui":
		return " (from the console)"
	case d["by"] == messages.DecidedByUser && d["source"] != "":
		return " (from " + d["source"] + ")"
	case d["by"] != "":
		return " (by " + d["by"] + ")"
	}
	return ""
}

// Say is the event's short detail for a feed (wcomm watch, the console). Every value may come
// from a file a worker wrote, so each is sanitized before it reaches a terminal.
func (ev WatchEvent) Say() string {
	d := map[string]string{}
	for k, v := range ev.Detail {
		d[k] = messages.SanitizeField(v)
	}
	var s string
	switch ev.Event {
	case EventSession:
		s = d["orchestrator"] + " -> " + d["worker"]
	case EventRequest:
		if d["orchestrator"] != "" {
			s = fmt.Sprintf("%s -> %s %s: %s", d["orchestrator"], d["worker"], d["capability"], d["summary"])
		} else if d["bytes"] != "" {
			s = d["bytes"] + " bytes"
		}
		if d["broadcast"] != "" {
			s = strings.TrimSpace(s + " (broadcast " + d["broadcast"] + ")")
		}
	case EventBroadcast:
		s = "one of broadcast " + d["broadcast"]
	case exchange.StatePasted:
		s = fmt.Sprintf("into %s as %s, %s bytes", d["pane"], orDash(d["form"]), orDash(d["bytes"]))
	case exchange.StateSubmitted:
		s = fmt.Sprintf("Enter into %s after %s", d["pane"], orDash(d["enter_delay"]))
	case exchange.StateRefused, exchange.StateUndelivered:
		s = fmt.Sprintf("pane %s: %s", orDash(d["pane"]), d["error"])
	case exchange.StateNotified:
		s = "RESPONSE line " + deliveredDetail(d)
		if d["coalesced"] != "" {
			s += " (one paste with " + d["coalesced"] + " lines)"
		}
	case exchange.StateQueued, exchange.StateNotifyQueued:
		s = "waits for pane " + d["pane"] + ": " + d["reason"]
	case exchange.StateHeld:
		s = "held for pane " + d["pane"] + " until released: " + d["reason"]
	case exchange.StateExpired, exchange.StateNotifyExpired, exchange.StateCancelled:
		s = d["reason"]
	case exchange.StateUndeliverable, exchange.StateNotifyUndeliverable:
		s = "pane " + orDash(d["pane"]) + ": " + d["error"]
	case exchange.StateDelivered:
		s = deliveredDetail(d)
	case exchange.StateAwaitWoken:
		s = "an await, or a send holding it for one, has the response; no line pasted"
	case EventAsked:
		if d["urgency"] != "" {
			s = "[" + d["urgency"] + "] "
		}
		s += d["question"]
		if d["options"] != "" {
			s += " (" + d["options"] + ")"
		}
	case EventAutoAnswered, EventCapExceeded, EventAnswerInvalid, EventAnswerLate:
		s = d["answer"]
		if d["reason"] != "" {
			s = strings.TrimSpace(s + ": " + d["reason"])
		}
		if d["by"] != "" {
			s += " (by " + d["by"] + ")"
		}
	case EventAnswered:
		s = d["summary"]
		if ev.Kind == FeedQuestion {
			s = d["answer"] + answeredBy(d)
		}
	case EventResolved, EventStale:
		s = d["reason"]
		if d["by"] != "" {
			s += " (by " + d["by"] + ")"
		}
	default:
		var keys []string
		for k := range d {
			if k != "error" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		var kv []string
		for _, k := range keys {
			kv = append(kv, k+"="+d[k])
		}
		s = strings.Join(kv, " ")
	}
	if e := d["error"]; e != "" && !strings.Contains(s, e) {
		s = strings.TrimSpace(s + " error: " + e)
	}
	return truncate(s, 160)
}

// truncate shortens s to at most n bytes, at a rune boundary, marking the cut with "...".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
