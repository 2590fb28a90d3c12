package lifecycle

// A pane the on-failure policy gave up on: the watcher writes a notice of it (one file, written
// once) and starts the bridge, so the person's channels are told once, as of a dead letter, and
// can restart it by hand.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// StateNotRestarted is the state of a notice of a pane not restarted again.
const StateNotRestarted = "not-restarted"

// noticesDir is the folder in Dir of the notices, ID.json each.
const noticesDir = "told"

// noticeKeep is how long a notice is kept: a week, as the outboxes keep their outcomes.
const noticeKeep = 7 * 24 * time.Hour

// GaveUp is a pane whose program the on-failure policy does not start again.
type GaveUp struct {
	ID       string          `json:"id"`
	Pane     messages.PaneID `json:"pane"`
	Server   string          `json:"server"`
	Name     string          `json:"name,omitempty"`
	Argv     []string        `json:"argv"`
	Status   int             `json:"status"`
	Restarts int             `json:"restarts"`
	At       time.Time       `json:"at"`
}

// Words says what happened in one line; the command is cleaned (a process chose it).
func (g GaveUp) Words() string {
	who := "pane " + string(g.Pane)
	if g.Name != "" {
		who += " (" + g.Name + ")"
	}
	return messages.SanitizeField(fmt.Sprintf("%s running %q ended %s after %d restarts in %s; it is not restarted again",
		who, strings.Join(g.Argv, " "), endedWith(g.Status), g.Restarts, restartWindow))
}

// endedWith says how a program ended: its exit status, or that tmux recorded none (-1: the pane
// was seen dead in three looks in a row with no status; tmux 3.3a now and then records none for a
// program that exits at once after a respawn).
func endedWith(status int) string {
	if status < 0 {
		return "with no exit status recorded"
	}
	return "with status " + strconv.Itoa(status)
}

// Next says what a person may do about it.
func (g GaveUp) Next() string {
	target := string(g.Pane)
	if g.Name != "" {
		target = g.Name
	}
	return "look at why it ends ('wcomm doctor --pane " + target + "'), then restart it by hand with 'wcomm restart " + target + "'"
}

// tellGaveUp writes the notice of rec's pane given up on (synced, before the bridge is started)
// and starts the bridge.
func (r *Room) tellGaveUp(rec *Record, status int) error {
	root, err := store.EnsureRoot(r.Root, true)
	if err != nil {
		return err
	}
	d, err := store.Dir(root, Dir, true)
	if err != nil {
		return err
	}
	dir := filepath.Join(d, noticesDir)
	if err := store.EnsureDir(dir, true); err != nil {
		return err
	}
	now := r.now().UTC()
	g := GaveUp{ID: fmt.Sprintf("restart-%s-p%d-%d", rec.Server, rec.Pane.Num(), now.UnixNano()), Pane: rec.Pane, Server: rec.Server,
		Name: rec.Name, Argv: rec.Argv, Status: status, Restarts: len(rec.Restarts), At: now}
	data, err := json.Marshal(g)
	if err != nil {
		return err
	}
	if err := store.WriteExclusive(filepath.Join(dir, g.ID+".json"), append(data, '\n')); err != nil {
		return fmt.Errorf("record that pane %s is not restarted again: %w", rec.Pane, err)
	}
	if r.Tell != nil {
		return r.Tell()
	}
	return nil
}

// GaveUpSince lists the notices of panes given up on written at or after since, oldest first;
// one older than a week goes. A notice that does not read is a problem.
func GaveUpSince(root string, since, now time.Time) ([]GaveUp, []string) {
	dir := filepath.Join(root, Dir, noticesDir)
	ns, problems := store.ReadNotices(dir, ".json", since, now, noticeKeep)
	var out []GaveUp
	for _, n := range ns {
		var g GaveUp
		if err := json.Unmarshal(n.Data, &g); err != nil || g.ID+".json" != n.Name {
			problems = append(problems, n.Path+": not a notice of a pane given up on")
			continue
		}
		out = append(out, g)
	}
	return out, problems
}
