package door

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
)

// StatusWaiting is the state a Claude Code session records while a permission dialog waits
// for the person ("waitingFor": "permission prompt").
const StatusWaiting = "waiting"

// StateFile is the session file of the Claude Code session a hook runs for: the hook reads the
// session's state from it while it waits (has the person answered the dialog in the pane?).
type StateFile struct {
	Path string
	PID  int
	f    Finder
}

// SessionFile finds the session file of the session whose id the hook was given, among the
// hook's ancestors (pids, nearest first): the agent runs its hooks as its descendants. The file
// must name that pid and that session id.
func (f Finder) SessionFile(sessionID string, pids []int) (StateFile, error) {
	if sessionID == "" {
		return StateFile{}, fmt.Errorf("the hook was given no session id")
	}
	for _, pid := range pids {
		dir, err := f.sessionsDir(pid)
		if err != nil {
			continue
		}
		path := filepath.Join(dir, strconv.Itoa(pid)+".json")
		data, err := f.readOwn(path)
		if err != nil {
			continue
		}
		var s Session
		if json.Unmarshal(data, &s) != nil || s.PID != pid || s.SessionID != sessionID {
			continue
		}
		return StateFile{Path: path, PID: pid, f: f}, nil
	}
	return StateFile{}, fmt.Errorf("no Claude Code session file of session %s names a process above this hook", sessionID)
}

// Status reads the session's state and when it was recorded.
func (s StateFile) Status() (string, int64, error) {
	data, err := s.f.readOwn(s.Path)
	if err != nil {
		return "", 0, err
	}
	var ses Session
	if err := json.Unmarshal(data, &ses); err != nil {
		return "", 0, fmt.Errorf("%s: %w", s.Path, err)
	}
	return ses.Status, ses.StatusUpdatedAt, nil
}
