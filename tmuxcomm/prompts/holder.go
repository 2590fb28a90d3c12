package prompts

// Which program shows a dialog. A dialog's rows can stay on screen after the program that drew
// them is gone (it crashed, or quit without clearing, and a shell or another program took the
// pane): the screen alone would have the dialog's key pressed into whatever runs there now. So
// the program is recorded when its dialog is seen, by pid and start time (a pid is reused, a pid
// with its start time is not), and its key is pressed only while that same process is still the
// pane's agent in the foreground.

import (
	"context"
	"fmt"
	"os"

	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/proc"
)

// holder is the process that shows a pane's dialog.
type holder struct {
	PID   int
	Start uint64
	Name  string
}

func (h holder) String() string { return fmt.Sprintf("%s (pid %d)", h.Name, h.PID) }

// holderOf is the process in pane's foreground that detection takes for its agent (else its
// foreground's leader), with its start time.
func (s *Sentry) holderOf(ctx context.Context, pane paneops.Pane) (holder, error) {
	det, err := s.Finder.Detect(ctx, pane, "")
	if err != nil {
		return holder{}, err
	}
	p := det.Matched
	if p == nil {
		p = det.Foreground
	}
	if p == nil {
		return holder{}, fmt.Errorf("no process of pane %s is known to hold its foreground", pane.ID)
	}
	start, err := proc.ProcStart(p.PID)
	if err != nil {
		if _, noProc := os.Stat("/proc/self/stat"); noProc == nil {
			return holder{}, fmt.Errorf("process %d of pane %s: %w", p.PID, pane.ID, err)
		}
		// No /proc (macOS): no start time to read; the pid and its name must do.
		start = 0
	}
	return holder{PID: p.PID, Start: start, Name: p.Comm}, nil
}

// stillHolds reports why the dialog's key must not be pressed now: "" while h is still the
// process detection finds in pane, else what holds it instead.
func (s *Sentry) stillHolds(ctx context.Context, pane paneops.Pane, h holder) string {
	now, err := s.holderOf(ctx, pane)
	switch {
	case err != nil:
		return fmt.Sprintf("the program that showed the dialog, %s, cannot be found in the pane: %v", h, err)
	case now.PID != h.PID || now.Start != h.Start || now.Name != h.Name:
		return fmt.Sprintf("the program that showed the dialog, %s, no longer runs in the pane's foreground (%s does): its rows on screen are no dialog", h, now)
	}
	return ""
}
