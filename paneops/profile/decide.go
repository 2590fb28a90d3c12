package profile

// The decisions of a delivery, each from one inspection of the input box: paste now or wait,
// whether the paste shows, whether the Enter submitted it.

import (
	"strconv"
	"strings"

	"github.com/wcomm/wcomm/messages"
)

// Action is what a delivery does next, decided from one inspection.
type Action int

// The actions of a delivery.
const (
	ActPaste          Action = iota // before: go ahead and paste
	ActWait                         // look again soon
	ActRefuseHuman                  // before, at the deadline: the box holds text wcomm did not put there
	ActRefuseNotReady               // before, at the deadline: no input box on screen
	ActEnter                        // between paste and Enter: the paste shows; press Enter
	ActSubmitted                    // after Enter: the message was taken (Verified says how sure)
	ActRetry                        // after Enter: the box still holds what wcomm pasted; press Enter again
	ActWatch                        // after Enter: the paste never seen, the box empty or away; watch on without an Enter
	ActGiveUp                       // stop: pasted but not submitted (Evidence says why)
)

var actionNames = [...]string{"paste", "wait", "refuse-human-text", "refuse-not-ready", "enter", "submitted", "retry", "watch", "give-up"}

func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "action(" + strconv.Itoa(int(a)) + ")"
}

// Decision is an action with its evidence.
type Decision struct {
	Action   Action
	Verified bool
	Evidence string
	// Busy: a paste decided at the deadline although the agent is busy or still starting.
	Busy bool
	// Holds: the box still holds the paste (a watch that ends with it is not a submission).
	Holds bool
}

// DecideBefore decides, from the box before any paste, whether to paste now. deadline says the
// wait for a usable box is over. A box holding text wcomm did not put there is never pasted into:
// the paste would mix with a person's half-written prompt, and the Enter would send both. A busy
// agent is waited for, then pasted into anyway at the deadline: agents queue a message submitted
// while they work.
func DecideBefore(p *Profile, in Inspection, deadline bool) Decision {
	switch {
	case !p.HasBox():
		return Decision{Action: ActPaste, Evidence: "no input box to check (" + p.Kind + ")"}
	case !in.Found:
		if deadline {
			return Decision{Action: ActRefuseNotReady, Evidence: "input box not on screen"}
		}
		return Decision{Action: ActWait, Evidence: "input box not on screen yet"}
	case len(in.Lines) > 0:
		if deadline {
			return Decision{Action: ActRefuseHuman, Evidence: "input box holds " + quoteRows(in.Lines)}
		}
		return Decision{Action: ActWait, Evidence: "input box holds text"}
	case in.Busy:
		if deadline {
			return Decision{Action: ActPaste, Busy: true, Evidence: "input box empty, agent still busy: the message queues"}
		}
		return Decision{Action: ActWait, Evidence: "agent busy"}
	case in.Starting:
		if deadline {
			return Decision{Action: ActPaste, Busy: true, Evidence: "input box empty, agent seems to be still starting: the message may queue"}
		}
		return Decision{Action: ActWait, Evidence: "agent still starting"}
	}
	return Decision{Action: ActPaste, Evidence: "input box empty"}
}

// DecideShown decides, between paste and Enter, whether the paste shows in the box. final says
// the wait for it is over: Enter is pressed anyway when the box shows nothing foreign (an Enter
// on an empty box does nothing), and never when text wcomm did not paste appeared.
func DecideShown(p *Profile, in Inspection, content string, final bool) Decision {
	if !p.HasBox() {
		return Decision{Action: ActEnter, Evidence: "no input box to check"}
	}
	a := p.Attribute(in, content)
	switch {
	case a.Foreign > 0:
		if final {
			return Decision{Action: ActGiveUp, Evidence: "text wcomm did not paste is in the input box with the message: not pressing Enter on it: " + quoteRows(in.Lines)}
		}
		return Decision{Action: ActWait, Evidence: "input box holds other text"}
	case a.Ours > 0:
		return Decision{Action: ActEnter, Verified: true, Evidence: "paste shown in the input box"}
	case final:
		return Decision{Action: ActEnter, Evidence: "paste not seen in the input box (" + in.State() + ")"}
	}
	return Decision{Action: ActWait, Evidence: "paste not shown yet"}
}

// DecideAfter decides, from the box after the enters-th Enter, whether the message was submitted.
// final says this Enter's watch window is over; last that no Enter is left. Enter is pressed again
// only while the box holds nothing but what wcomm pasted.
func DecideAfter(p *Profile, in Inspection, content string, shown bool, final, last bool, enters int) Decision {
	if !p.HasBox() {
		ev := "Enter sent; nothing on screen to check"
		if p.Kind == KindReader {
			ev = "cooked reader: Enter sent"
		}
		return Decision{Action: ActSubmitted, Evidence: ev}
	}
	// A paste that never showed is watched, past this window and without an Enter, before the
	// Enter is taken as having submitted it: an agent whose event loop was held up reads the
	// paste and the Enter in one go, takes the Enter as part of the paste, and shows the paste
	// in its box seconds later (measured: Gemini CLI 0.61 on a loaded machine). ActWatch carries
	// the evidence the delivery ends with once the caller has watched long enough; an Enter is
	// pressed again only once the box shows what wcomm pasted.
	if !in.Found {
		switch {
		case !final:
			return Decision{Action: ActWait}
		case !shown:
			return Decision{Action: ActWatch, Evidence: "input box not on screen after Enter"}
		}
		return Decision{Action: ActSubmitted, Evidence: "input box not on screen after Enter"}
	}
	a := p.Attribute(in, content)
	switch {
	case len(in.Lines) == 0:
		ev := "input box empty after Enter"
		if p.Input.CursorLine {
			ev = "shell prompt empty after Enter"
		}
		if in.Busy {
			ev += ", agent busy"
		}
		if enters > 1 {
			ev += " (Enter pressed " + strconv.Itoa(enters) + " times)"
		}
		if !shown {
			if !final {
				return Decision{Action: ActWait}
			}
			return Decision{Action: ActWatch, Evidence: ev + "; the paste was never seen in it"}
		}
		return Decision{Action: ActSubmitted, Verified: true, Evidence: ev}
	case !final:
		return Decision{Action: ActWait}
	case a.Foreign == 0:
		if last {
			return Decision{Action: ActGiveUp, Evidence: "input box still holds the message after " + strconv.Itoa(enters) + " Enter(s)"}
		}
		return Decision{Action: ActRetry, Evidence: "input box still holds the message"}
	case a.Ours > 0:
		return Decision{Action: ActGiveUp, Evidence: "input box holds the message mixed with text wcomm did not paste: not pressing Enter on it: " + quoteRows(in.Lines)}
	}
	return Decision{Action: ActSubmitted, Evidence: "the message left the input box; it now holds other text: " + quoteRows(in.Lines)}
}

// quoteRows shows box rows in an error, short and without control characters.
func quoteRows(rows []string) string {
	s := strings.Join(rows, " / ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:77]) + "..."
	}
	return strconv.Quote(messages.SanitizeField(s))
}
