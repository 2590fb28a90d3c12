package prompts

// The screen route: an agent without a hook of wcomm's (Gemini CLI, Copilot CLI, OpenCode, a
// Claude Code whose hook is not installed) shows its permission dialog and waits. A dialog its
// profile recognises (profile.DialogSpec) becomes a permission question at once, or, for a
// program whose own hook may bring it (its hook_grace_ms), once it has shown that long without a
// hook's question for the pane; the first answer presses the dialog's key, only while the same
// dialog still shows and the process that showed it still runs there (holder.go), under the pane's
// send lock (so it never lands between a delivery's paste and its Enter), and the dialog is checked
// closed afterwards. Nothing but that
// one key ever reaches the pane: never Enter, never text (a dialog takes any typed Enter as yes).

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// hookSlack is how much before its dialog was first seen a hook's question may have been asked
// and still be that dialog's (the hook fires as the dialog renders, and the screen is looked at
// only now and then).
const hookSlack = time.Second

// closeWait bounds the look for the dialog to close after its key was pressed.
const closeWait = 3 * time.Second

// keyReady is how long a dialog has shown before its key is pressed.
const keyReady = 250 * time.Millisecond

// Events of a screen question's log.
const (
	QKeyPressed  = "key-pressed"     // the answer's key was pressed and the dialog closed
	QKeyNotShown = "key-not-pressed" // the dialog was gone or changed: nothing was pressed
	QKeyNoEffect = "key-no-effect"   // the key was pressed and the dialog still shows
	QToldAgent   = "told-agent"      // a deny's message was handed to the agent
)

// screenWatches are the dialogs seen on the panes' screens.
type screenWatches struct {
	mu     sync.Mutex
	seen   map[messages.PaneID]*seenDialog
	asking map[messages.PaneID]bool // a question of the sentry's waits for the pane's dialog
}

// seenDialog is the dialog a pane shows: since when, and whether it is taken (a question of the
// sentry's is open for it, or a hook's was: either way it is not asked again while it shows).
type seenDialog struct {
	fp    string
	at    time.Time
	taken bool
	by    holder // the program that showed it
}

// lookScreens opens a question for each dialog a profile recognises on a pane's screen. soon
// says a dialog seen waits for its hook's grace: it is looked at again after it, changed or not.
func (s *Sentry) lookScreens(ctx context.Context, panes []fleet.FleetPane) (soon bool) {
	w := &s.screen
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen == nil {
		w.seen, w.asking = map[messages.PaneID]*seenDialog{}, map[messages.PaneID]bool{}
	}
	live := map[messages.PaneID]bool{}
	for _, p := range panes {
		prof := s.profile(p.Agent)
		// The fleet's state is the cheap filter: a dialog hides the input box.
		if prof == nil || len(prof.Dialogs) == 0 || p.State != fleet.PanePermission {
			continue
		}
		sc, err := s.Tmux.Screen(ctx, p.ID)
		if err != nil {
			soon = true
			continue
		}
		d, ok := prof.Dialog(sc)
		if !ok {
			continue
		}
		live[p.ID] = true
		sd := w.seen[p.ID]
		if sd == nil || sd.fp != d.Fingerprint {
			by, err := s.holderOf(ctx, p.Pane)
			if err != nil {
				// Without the program that shows it, its key could reach another: not asked.
				s.logf("prompts: pane %s: its dialog is not asked: %v", p.ID, err)
				soon = true
				continue
			}
			sd = &seenDialog{fp: d.Fingerprint, at: time.Now(), by: by}
			w.seen[p.ID] = sd
		}
		grace := time.Duration(d.Spec.HookGraceMS) * time.Millisecond
		if !sd.taken && time.Since(sd.at) < grace {
			soon = true
		}
		if sd.taken || time.Since(sd.at) < grace {
			continue
		}
		sd.taken = true
		if grace > 0 && s.hookAsked(ctx, p.ID, sd.at) {
			s.logf("prompts: pane %s: its dialog is its hook's question", p.ID)
			continue
		}
		pane, shown, by := p.Pane, sd.at, sd.by
		// The denied rows beside the dialog: what a denial at the terminal adds one to, even when
		// the question's own looks come only after the person answered (a loaded machine).
		denials, known := prof.Denials(d, sc)
		if !known {
			denials = -1
		}
		w.asking[pane.ID] = true
		s.spawn(func() {
			s.askScreen(ctx, pane, by, prof, d, shown, denials)
			w.mu.Lock()
			delete(w.asking, pane.ID)
			w.mu.Unlock()
		})
	}
	for id := range w.seen {
		// A dialog no longer on screen is forgotten, unless its question still waits: its own
		// wait ends it (answered at the terminal), and the same dialog is not asked twice.
		if !live[id] && !w.asking[id] {
			delete(w.seen, id)
		}
	}
	return soon
}

// profile is the profile named name, nil when none is.
func (s *Sentry) profile(name string) *profile.Profile {
	set := s.Finder.Profiles
	if set == nil {
		set = profile.Defaults()
	}
	return set.Lookup(name)
}

// hookAsked reports whether a hook recorded a permission question of pane since about when its
// dialog showed.
func (s *Sentry) hookAsked(ctx context.Context, pane messages.PaneID, since time.Time) bool {
	sts, _, err := s.Asker.Questions(ctx, questions.QuestionsOptions{FilesOnly: true})
	if err != nil {
		return false
	}
	for _, st := range sts {
		p := st.Permission
		if p != nil && st.Worker == pane && (p.Via == "" || p.Via == messages.ViaHook) && !st.AskedAt.Before(since.Add(-hookSlack)) {
			return true
		}
	}
	return false
}

// askScreen asks the person about dialog d of pane and applies the first answer. denials is the
// count of denied rows on the screen d was found on.
func (s *Sentry) askScreen(ctx context.Context, p paneops.Pane, by holder, prof *profile.Profile, d profile.Dialog, shown time.Time, denials int) {
	pane := p.ID
	answers := []string{messages.PermAllow, messages.PermDeny}
	if d.Spec.Always != "" {
		answers = messages.PermissionOptions()
	}
	tool := d.Tool
	if tool == "" {
		tool = "a tool"
	}
	// The dialog's lines whole: a command of several lines without a description reads like a
	// description and a command, and a question never shows part of a command as all of it.
	subject, about := d.Body, ""
	if subject == "" {
		subject = "(the dialog names nothing more)"
	}
	if d.Description != "" {
		about = "The dialog's lines are shown whole: its first may be the tool's description, or the command's first line."
	}
	req := messages.PermissionRequest{Agent: prof.Name, Tool: tool, Subject: subject, Description: about,
		Via: messages.ViaScreen, Answers: answers}
	w, err := s.Asker.AskPermissionIn(ctx, pane, req)
	if err != nil {
		s.logf("prompts: pane %s: could not ask about its dialog: %v", pane, err)
		return
	}
	defer w.Close()
	term := &screenTerminal{s: s, ctx: ctx, pane: pane, prof: prof, d: d, denials: denials}
	out, err := w.Await(ctx, questions.AwaitOptions{Terminal: term, Poll: 100 * time.Millisecond,
		Ended: "the sentry that watched its dialog stopped (the bridge or the console ended); the dialog stays for the terminal"})
	if err != nil {
		s.logf("prompts: pane %s: waiting for the answer: %v", pane, err)
		return
	}
	st := out.Question
	if out.Decision == nil || st.Answer == nil {
		return // answered at the terminal, or ended otherwise: nothing to press
	}
	key := d.Spec.Deny
	switch st.Answer.Answer {
	case messages.PermAllow:
		key = d.Spec.Allow
	case messages.PermAlways:
		key = d.Spec.Always
	}
	if err := s.press(ctx, w, p, by, prof, d.Fingerprint, key, shown); err != nil {
		s.logf("prompts: pane %s: %v", pane, err)
		return
	}
	if st.Answer.Answer == messages.PermDeny && st.Answer.Message != "" {
		// The dialog carries no message to the model; the person's words follow as a message of
		// their own, through the pane's outbox (exactly once, when the agent takes input again).
		text := fmt.Sprintf("I denied %s %s. %s", tool, messages.SanitizeField(d.Subject), st.Answer.Message)
		queued, err := w.Tell(ctx, text)
		if err != nil {
			w.Log(QToldAgent, map[string]string{"error": err.Error()})
			s.logf("prompts: pane %s: the deny's message was not handed over: %v", pane, err)
			return
		}
		w.Log(QToldAgent, map[string]string{"queued": fmt.Sprint(queued)})
	}
}

// press presses key in pane while dialog fp (first seen at shownAt) still shows and the program
// that showed it (by) still runs there, under the pane's send lock, and checks the dialog closed.
// What happened is recorded in the question's log.
func (s *Sentry) press(ctx context.Context, w *questions.PermissionWait, p paneops.Pane, by holder, prof *profile.Profile, fp, key string, shownAt time.Time) error {
	pane := p.ID
	root, err := s.Finder.RootDir(false)
	if err != nil {
		return err
	}
	si, err := s.Finder.Tmux.ServerInfo(ctx)
	if err != nil {
		return err
	}
	unlock, err := lock.Pane(ctx, store.LockDir(root), si.Key(), pane, s.Finder.LockTimeout)
	if err != nil {
		w.Log(QKeyNotShown, map[string]string{"error": err.Error()})
		return fmt.Errorf("the pane's send lock: %w; nothing was pressed", err)
	}
	defer unlock()
	if !s.showsAgain(ctx, pane, prof, fp) {
		w.Log(QKeyNotShown, map[string]string{"reason": "the dialog was no longer on screen"})
		return fmt.Errorf("the dialog closed before its answer's key: nothing was pressed")
	}
	// Claude Code drops a key that comes within about 0.1 s of its dialog's drawing
	// (measured on Claude Code 2.1.332); a person's answer comes later than that, an auto-answer may not.
	if wait := time.Until(shownAt.Add(keyReady)); wait > 0 {
		time.Sleep(wait)
	}
	// The screen is not the program: rows of a dialog outlive the program that drew them.
	if why := s.stillHolds(ctx, p, by); why != "" {
		w.Log(QKeyNotShown, map[string]string{"reason": why})
		return fmt.Errorf("%s; nothing was pressed", why)
	}
	if err := s.Tmux.PressKey(ctx, pane, key); err != nil {
		w.Log(QKeyNotShown, map[string]string{"error": err.Error()})
		return fmt.Errorf("press %s: %w", key, err)
	}
	end := time.Now().Add(closeWait)
	for s.shows(ctx, pane, prof, fp) {
		if time.Now().After(end) {
			w.Log(QKeyNoEffect, map[string]string{"key": key})
			return fmt.Errorf("pressed %s, and the dialog still shows after %s", key, closeWait)
		}
		time.Sleep(50 * time.Millisecond) // polling the screen: tmux tells no one when it changes
	}
	w.Log(QKeyPressed, map[string]string{"key": key})
	return nil
}

// showsAgain reports whether pane shows the dialog of fingerprint fp now, or again within
// goneSettle: a redraw takes it off the screen for a moment.
func (s *Sentry) showsAgain(ctx context.Context, pane messages.PaneID, prof *profile.Profile, fp string) bool {
	end := time.Now().Add(goneSettle)
	for !s.shows(ctx, pane, prof, fp) {
		if time.Now().After(end) || ctx.Err() != nil {
			return false
		}
		time.Sleep(100 * time.Millisecond) // polling the screen: tmux tells no one when it changes
	}
	return true
}

// shows reports whether pane shows the dialog of fingerprint fp now.
func (s *Sentry) shows(ctx context.Context, pane messages.PaneID, prof *profile.Profile, fp string) bool {
	sc, err := s.Tmux.Screen(ctx, pane)
	if err != nil {
		return false
	}
	d, ok := prof.Dialog(sc)
	return ok && d.Fingerprint == fp
}

// screenTerminal is the dialog on screen as the question's wait reads the terminal: "waiting"
// while it shows; once it is gone without a key of the sentry's, the person answered in the pane:
// "busy" for allowed (the tool runs), "idle" for denied. Which, the profile's denied rows tell (one
// more of them than while the dialog showed); without them, whether the agent works on.
type screenTerminal struct {
	s    *Sentry
	ctx  context.Context
	pane messages.PaneID
	prof *profile.Profile
	d    profile.Dialog
	// denials is the denied rows on screen while the dialog showed: at first those of the screen
	// it was found on, then of each look that shows it (-1: none known). A look only after the
	// person's Escape (the question's looks began late) otherwise had nothing to count from, and
	// took the denial for an allow.
	denials int
	n       int64
	gone    goneFor // since when, and for how many looks, the dialog has not shown
}

// Status says "waiting" while the dialog shows, and until it has been gone for goneSettle and
// goneLooks looks: a program redrawing its screen clears the dialog for a moment, and the same
// dialog back is the same question, not one answered at the terminal and another asked.
func (t *screenTerminal) Status() (string, int64, error) {
	sc, err := t.s.Tmux.Screen(t.ctx, t.pane)
	if err != nil {
		return "", 0, err
	}
	n, known := t.prof.Denials(t.d, sc)
	if d, ok := t.prof.Dialog(sc); ok && d.Fingerprint == t.d.Fingerprint {
		t.denials = n
		t.gone.reset()
		return questions.StatusWaiting, t.n, nil
	}
	if !t.gone.settled(time.Now()) {
		return questions.StatusWaiting, t.n, nil
	}
	t.n++
	switch {
	case known && t.denials >= 0 && n > t.denials:
		return "idle", t.n, nil
	case known:
		return "busy", t.n, nil
	case t.prof.Inspect(sc).Busy:
		return "busy", t.n, nil
	}
	return "idle", t.n, nil
}

// How long, and for how many looks, a dialog must be gone before it counts as answered at the
// terminal: longer than a redraw keeps it off the screen.
const (
	goneSettle = 1500 * time.Millisecond
	goneLooks  = 3
)

// goneFor counts how long a dialog has been off the screen.
type goneFor struct {
	since time.Time
	looks int
}

func (g *goneFor) reset() { *g = goneFor{} }

// settled records one look without the dialog at now, and reports whether it has been gone
// long enough.
func (g *goneFor) settled(now time.Time) bool {
	if g.looks == 0 {
		g.since = now
	}
	g.looks++
	return g.looks >= goneLooks && now.Sub(g.since) >= goneSettle
}
