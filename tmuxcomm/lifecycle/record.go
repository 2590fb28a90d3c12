package lifecycle

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// Dir is the root's store of the records, one per pane a spawn started (SERVERKEY-pN.json, 0600).
const Dir = store.LifecycleDir

// Record is what wcomm knows of a pane it started: enough to start the same program in the same
// pane again, with its conversation, and to remove what the spawn made.
type Record struct {
	Pane   messages.PaneID `json:"pane"`
	Server string          `json:"server"`
	Socket string          `json:"socket,omitempty"`
	Name   string          `json:"name,omitempty"`
	// Agent is the profile the program runs ("" for a plain program).
	Agent string `json:"agent,omitempty"`
	// Argv is the command as given, without the conversation's words (Start), which each start
	// adds anew.
	Argv []string `json:"argv"`
	Dir  string   `json:"dir"`
	Env  []string `json:"env,omitempty"`
	// Worktree and Branch are what --worktree made, in repository Repo.
	Worktree string `json:"worktree,omitempty"`
	Branch   string `json:"branch,omitempty"`
	Repo     string `json:"repo,omitempty"`
	// Conversation is the agent's conversation id (Claude Code's session id, Codex's thread).
	Conversation string `json:"conversation,omitempty"`
	// Restart is the restart policy ("on-failure" or ""); Restarts the times of the restarts.
	Restart   string      `json:"restart,omitempty"`
	Restarts  []time.Time `json:"restarts,omitempty"`
	StartedAt time.Time   `json:"started_at"`
}

// recordPath is the record of pane on server.
func recordPath(root, server string, pane messages.PaneID) (string, error) {
	d, err := store.Dir(root, Dir, true)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, store.LifecycleRecordName(server, pane.Num())), nil
}

// save writes the record atomically (0600): before the pane is reported, so a restart finds it.
func (r *Room) save(rec *Record) error {
	root, err := store.EnsureRoot(r.Root, true)
	if err != nil {
		return err
	}
	path, err := recordPath(root, rec.Server, rec.Pane)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := store.WriteAtomic(path, append(data, '\n')); err != nil {
		return fmt.Errorf("record pane %s: %w", rec.Pane, err)
	}
	return nil
}

// load reads the record of pane on server; a pane no spawn started has none (ErrNotFound).
func (r *Room) load(server string, pane messages.PaneID) (*Record, error) {
	root, err := store.EnsureRoot(r.Root, false)
	if err != nil {
		return nil, err
	}
	path, err := recordPath(root, server, pane)
	if err != nil {
		return nil, err
	}
	data, err := store.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("pane %s was not started by 'wcomm spawn', so wcomm does not know its command: %w", pane, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("record %s: %w: %w", path, err, store.ErrDamaged)
	}
	return &rec, nil
}

// drop removes the record of pane on server (the pane is gone).
func (r *Room) drop(server string, pane messages.PaneID) {
	root, err := store.EnsureRoot(r.Root, false)
	if err != nil {
		return
	}
	if path, err := recordPath(root, server, pane); err == nil {
		_ = os.Remove(path)
	}
}
