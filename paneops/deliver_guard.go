package paneops

// The tmux calls of a delivery, built as argv: the guarded paste (the server itself refuses a
// dead, input-off or busy pane in the paste's own call), the guarded Enter, their refusal marks,
// buffer names, and the marks a delivery leaves on its pane.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/paneops/profile"
)

const defaultLockTimeout = 30 * time.Second

// cleanupTimeout bounds the delete-buffer call that runs after a failure, even when the caller's
// context has already been cancelled.
const cleanupTimeout = 5 * time.Second

// guardCondition is true for the panes a paste must never reach: a dead pane (paste-buffer into it
// crashes tmux 3.3a, as measured) and one whose input is off (the paste would be dropped
// silently). tmux evaluates it server-side, in the same call as the paste.
const guardCondition = "#{||:#{pane_dead},#{pane_input_off}}"

// bufferSeq makes buffer names unique within the process; the pid and random part make them
// unique across processes. Sharing a name between senders sent messages to the wrong pane
// (measured on tmux 3.3a).
var bufferSeq atomic.Uint64

// newBufferName returns "wcomm-PID-COUNTER-RANDHEX"; only [A-Za-z0-9-], because the name is also
// spliced into the command strings of guardArgs.
func newBufferName() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+); the counter keeps names unique anyway
	return "wcomm-" + strconv.Itoa(proc.SelfPID()) + "-" + strconv.FormatUint(bufferSeq.Add(1), 10) + "-" + hex.EncodeToString(b[:])
}

// refusedMark is what the guarded call prints when it refuses. It names the unique buffer, so it
// cannot be mistaken for anything else: nothing a pane prints reaches the client's stdout, and the
// other commands of the call print nothing.
func refusedMark(buffer string) string { return "wcomm-refused-" + buffer }

// strictGuardCondition adds a pane in a mode (copy mode: a person is reading it) to what a
// strict delivery never pastes into. Checked by the server in the paste's own call, it costs no
// extra tmux call and no moment passes between the look and the paste.
const strictGuardCondition = "#{||:#{pane_dead},#{||:#{pane_input_off},#{pane_in_mode}}}"

// guardArgs is the one tmux call of a delivery (see Deliver). pane and buffer must be generated
// ids (%N, newBufferName): the two command strings go through tmux's command parser. strict
// refuses a pane in a mode too, and the refusal then names the pane's state (see refusal).
func guardArgs(pane messages.PaneID, buffer, mark string, strict bool) []string {
	return guardArgsEnter(pane, buffer, mark, strict, false, "")
}

// guardArgsEnter is guardArgs that, with enter, also presses Enter after the paste in the same
// call, and records the Enter's mark with the paste's (see enterWithPaste). expect, with strict,
// is Identity.guardValue: the call refuses a pane whose "#{pane_pid}-#{pid}" differs, and its
// refusal prints a fourth digit, 1 when they match.
func guardArgsEnter(pane messages.PaneID, buffer, mark string, strict, enter bool, expect string) []string {
	p := string(pane)
	paste := "copy-mode -q -t " + p + " ; paste-buffer -d -p -b " + buffer + " -t " + p
	if enter {
		// One record for both: an Enter recorded means its paste was made (Marks).
		paste += " ; send-keys -t " + p + " Enter"
		if mark != "" {
			paste += " ; " + setRecord(markEntered, pane, mark)
		}
	} else if mark != "" {
		paste += " ; " + setRecord(markPasted, pane, mark)
	}
	cond, refuse := guardCondition, "delete-buffer -b "+buffer+" ; display -p "+refusedMark(buffer)
	if strict {
		cond = strictGuardCondition
		bits := "#{pane_dead}#{pane_input_off}#{pane_in_mode}"
		if expect != "" {
			same := "#{==:#{pane_pid}-#{pid}," + expect + "}"
			cond = "#{||:" + strictGuardCondition + ",#{!=:#{pane_pid}-#{pid}," + expect + "}}"
			bits += same
		}
		refuse = "delete-buffer -b " + buffer + " ; display -p -t " + p + " '" + refusedMark(buffer) + "-" + bits + "'"
	}
	return []string{
		"load-buffer", "-b", buffer, "-", ";",
		"if-shell", "-F", "-t", p, cond, refuse,
		// copy-mode -q leaves copy mode first: a pane in a mode drops the paste brackets and
		// swallows keys (measured on tmux 3.3a).
		paste,
	}
}

// enterWithPaste reports whether the Enter can go in the paste's own call: only for a program
// reading lines in cooked mode, when no delay is asked for. There the terminal's line discipline,
// not the program, takes the line, so the moment the Enter arrives cannot matter; it saves one
// tmux client (a process start and a round trip to the server, about 2 ms). Programs that read
// raw keys (agents, shells with line editing, anything unknown) are known to drop an Enter that
// comes with a paste (measured on tmux 3.3a), so they keep the separate call.
func enterWithPaste(d Delivery, delay time.Duration) bool {
	return d.Submit && delay == 0 && !d.LiteralEnter && d.Profile != nil && d.Profile.Kind == profile.KindReader && !d.Profile.HasBox() &&
		screenRefusal(d.Profile, false) == ""
}

// refusal reads what the guarded call printed: "" when it pasted; refused when the guard
// refused; inMode when a strict guard refused only because the pane is in a mode.
func refusal(out, buffer string) (refused, inMode, ok bool) {
	refused, inMode, _, ok = refusalOf(out, buffer)
	return refused, inMode, ok
}

// refusalOf is refusal that also reads the identity digit of a guard with an expected identity:
// changed when the pane's process or its server is not the one expected. A dead pane or one
// with its input off is reported as such first; a changed pane comes before copy mode.
func refusalOf(out, buffer string) (refused, inMode, changed, ok bool) {
	out = strings.TrimSpace(out)
	mark := refusedMark(buffer)
	switch {
	case out == "":
		return false, false, false, true
	case out == mark:
		return true, false, false, true
	}
	bits, found := strings.CutPrefix(out, mark+"-")
	if !found || (len(bits) != 3 && len(bits) != 4) || strings.Trim(bits, "01") != "" {
		return false, false, false, false
	}
	if bits[0] == '1' || bits[1] == '1' {
		return true, false, false, true
	}
	if len(bits) == 4 && bits[3] == '0' {
		return true, false, true, true
	}
	return true, bits[2] == '1', false, true
}

// enterArgs presses Enter in the pane, a call of its own (measured on tmux 3.3a), guarded like
// the paste: tmux checks in the same call, with nothing between the look and the key, that the
// pane is still alive and takes input, so a pane that died between paste and Enter is reported
// instead of logged as submitted. A pane in copy mode would swallow the Enter (measured on tmux
// 3.3a), and the next paste would join the line: strict refuses it then, printing
// enterRefused+"-mode" (a person is reading; the Enter waits for them), and otherwise the pane
// is taken out of the mode first, in the same call, as the paste did. expect, with strict, also
// refuses a pane whose "#{pane_pid}-#{pid}" is not that (Identity.guardValue). literal sends the
// carriage return as a literal key instead of the named key Enter. A mark is recorded in the same
// command, so it says only what tmux did. pane and mark must be generated ids: the branches go
// through tmux's command parser.
func enterArgs(pane messages.PaneID, literal bool, mark string, strict bool, expect string) []string {
	return enterArgsScreen(pane, literal, mark, strict, expect, "")
}

// enterArgsScreen is enterArgs that also refuses while screen holds (screenRefusal: a dialog on
// screen, the input box gone), printing enterRefused+"-screen" when nothing else refused.
func enterArgsScreen(pane messages.PaneID, literal bool, mark string, strict bool, expect, screen string) []string {
	p := string(pane)
	enter := "send-keys -t " + p + " Enter"
	if literal {
		enter = "send-keys -t " + p + ` -l "\r"`
	}
	if mark != "" {
		enter += " ; " + setRecord(markEntered, pane, mark)
	}
	withScreen := func(cond string) string {
		if screen == "" {
			return cond
		}
		return "#{||:" + cond + "," + screen + "}"
	}
	if !strict {
		refuse := "display -p " + enterRefused
		if screen != "" {
			// What refused is told from what else could have: the screen's format is not
			// repeated in this branch, which goes through tmux's command parser.
			refuse = "display -p -t " + p + " '" + enterRefused + "#{?#{||:#{pane_dead},#{pane_input_off}},,-screen}'"
		}
		return []string{"if-shell", "-F", "-t", p, withScreen(guardCondition), refuse, "copy-mode -q -t " + p + " ; " + enter}
	}
	cond := strictGuardCondition
	dead := "#{||:#{pane_dead},#{pane_input_off}}"
	if expect != "" {
		cond = "#{||:" + strictGuardCondition + ",#{!=:#{pane_pid}-#{pid}," + expect + "}}"
		dead = "#{||:" + dead + ",#{!=:#{pane_pid}-#{pid}," + expect + "}}"
	}
	// A dead pane, input off or another process is refused as such; only a pane in a mode and
	// nothing else is the "-mode" refusal, that waits, and the screen after it.
	other := ""
	if screen != "" {
		other = "-screen"
	}
	refuse := "display -p -t " + p + " '" + enterRefused + "#{?" + dead + ",," + "#{?#{pane_in_mode},-mode," + other + "}}'"
	return []string{"if-shell", "-F", "-t", p, withScreen(cond), refuse, enter}
}

// enterRefused is what the guarded Enter prints when the pane can no longer take it; with
// "-mode" after it, when it only waits for the pane to leave copy mode.
const enterRefused = "wcomm-enter-refused"

// The records of a delivery's Mark: hidden variables of the server's global environment, one
// of each per pane (recordName), not pane options. Every set-option makes tmux recompute the
// sizes of every window and redraw every attached client (options_push_changes in tmux 3.3a):
// with two people's terminals attached, a paste that recorded its mark in a pane option cost the
// server 0.44 ms instead of 0.21 (measured on tmux 3.3a), and more with each client and session.
// set-environment changes nothing else; a hidden variable (-h) is not passed to the processes
// tmux starts; the global environment, unlike a session's, stays with the pane when the pane
// moves to another session; pane ids are not reused while the server runs.
const (
	markPasted  = "WCOMM_PASTED_"
	markEntered = "WCOMM_ENTERED_"
)

// recordName is the name of the record kind (markPasted, markEntered, fenceDone) of pane.
func recordName(kind string, pane messages.PaneID) string {
	return kind + strings.TrimPrefix(string(pane), "%")
}

// setRecord is the command that records value as the record kind of pane.
func setRecord(kind string, pane messages.PaneID, value string) string {
	return "set-environment -g -h " + recordName(kind, pane) + " " + value
}

// readRecord reads the record kind of pane, "" when none was ever made. The environment is not
// a format's to read, so the read is a call of its own: show-environment prints NAME=VALUE, and
// fails for a variable that is not there.
func (c *Client) readRecord(ctx context.Context, kind string, pane messages.PaneID) (string, error) {
	name := recordName(kind, pane)
	out, err := c.Run(ctx, nil, "show-environment", "-g", "-h", name)
	if err != nil {
		var te *Error
		if errors.As(err, &te) && te.ExitCode == 1 && strings.Contains(te.Stderr, "unknown variable") {
			return "", nil
		}
		return "", err
	}
	v, ok := strings.CutPrefix(strings.TrimRight(out, "\n"), name+"=")
	if !ok {
		return "", fmt.Errorf("unexpected output %q from tmux for %s", out, name)
	}
	return v, nil
}

// validMark reports whether a mark can be spliced into a tmux command string.
func validMark(m string) bool {
	if len(m) == 0 || len(m) > 64 {
		return false
	}
	for _, r := range m {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// Marks reads the marks of the last marked delivery into a pane: the mark of the last paste and
// of the last Enter ("" when none). With mark (the delivery whose outcome recovery asks about),
// the same call fences what the pane does not record of it yet: its paste, when not recorded,
// and its Enter, when not recorded, never run after this call (see deliver_fence.go); a paste or
// an Enter made after it does.
func (c *Client) Marks(ctx context.Context, pane messages.PaneID, mark string) (pasted, entered string, err error) {
	if _, err := paneNum(pane); err != nil {
		return "", "", err
	}
	if mark != "" && !validMark(mark) {
		return "", "", fmt.Errorf("read the marks of pane %s: mark %q is not [a-z0-9-]", pane, mark)
	}
	p := string(pane)
	// The pane is named first, so that a pane that is gone is an error, as before.
	args := []string{"display-message", "-p", "-t", p, ""}
	if mark != "" {
		// Fenced whether recorded or not: a call already made is not undone by its fence, and
		// the records read after it cannot change for this mark any more.
		now := strconv.FormatInt(time.Now().UnixMicro(), 10)
		args = []string{"set-option", "-p", "-t", p, fencePaste + mark, now, ";", "set-option", "-p", "-t", p, fenceEnter + mark, now}
	}
	if _, err := c.Run(ctx, nil, args...); err != nil {
		return "", "", err
	}
	if pasted, err = c.readRecord(ctx, markPasted, pane); err != nil {
		return "", "", err
	}
	if entered, err = c.readRecord(ctx, markEntered, pane); err != nil {
		return "", "", err
	}
	pasted, entered = markOf(pasted), markOf(entered)
	if entered != "" && entered == mark {
		pasted = mark // the paste and its Enter in one call record only the Enter
	}
	return pasted, entered, nil
}

// markOf is the mark of a mark option's value: what is before the token a fenced call adds.
func markOf(v string) string {
	m, _, _ := strings.Cut(v, ".")
	return m
}
