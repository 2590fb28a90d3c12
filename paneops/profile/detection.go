package profile

import (
	"fmt"
	"strings"

	"github.com/wcomm/wcomm/paneops/proc"
)

// Detection is the profile chosen for a pane, and why.
type Detection struct {
	Profile *Profile `json:"-"`
	Name    string   `json:"profile"`
	Reason  string   `json:"reason"`
	// Foreground is the leader of the pane's foreground process group, when known.
	Foreground *proc.Process `json:"foreground,omitempty"`
	// Matched is the process the profile was chosen by, when it was a process.
	Matched *proc.Process `json:"matched,omitempty"`
	// TTYMode is the pane terminal's mode when it was read: "cooked", "raw" or "".
	TTYMode string `json:"tty_mode,omitempty"`
	// Job, when set, says that the pane's own interactive shell runs a foreground job that is not
	// reading the terminal ("bash (pid 12) runs sleep (pid 40)"): a line typed now would wait in the
	// terminal and be RUN by the shell when the job ends, so nothing is typed until it does.
	Job    string `json:"job,omitempty"`
	Forced bool   `json:"forced,omitempty"`
}

// Force returns the detection for a profile named by the user (--agent NAME).
func (s *Set) Force(name string) (Detection, error) {
	p := s.Lookup(name)
	if p == nil {
		return Detection{}, fmt.Errorf("unknown agent profile %q: choose one of %s", name, strings.Join(s.Names(), ", "))
	}
	return Detection{Profile: p, Name: p.Name, Reason: "chosen with --agent", Forced: true}, nil
}

// First returns the set's first profile of a kind, nil when it has none.
func (s *Set) First(kind string) *Profile {
	for _, p := range s.Profiles {
		if p.Kind == kind {
			return p
		}
	}
	return nil
}
