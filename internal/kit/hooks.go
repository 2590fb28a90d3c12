package kit

// The agents' own hooks, installed by install-skill: at a turn boundary (a prompt submitted, a turn
// ending) the agent runs 'wcomm hook', which hands the model what waits in its pane's outbox, so
// nothing needs to be typed into the pane; at a permission prompt (Claude Code's PermissionRequest)
// it relays the prompt to the person and hands back the answer. The settings files are the agents' own JSON; wcomm adds
// its two entries and keeps everything else.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/wcomm/wcomm/paneops/profile"
)

// hookTarget is one agent's hook settings file and the events wcomm hooks there (its record's).
type hookTarget struct {
	Path  string
	Agent string
	Hooks *profile.Hooks
}

// hookTargets returns the hook settings files of the agents: in the project folder, or the user's.
func hookTargets(dir, home string, agents []string) []hookTarget {
	base := dir
	if home != "" {
		base = home
	}
	var out []hookTarget
	for _, name := range agents {
		if a := profile.HookAgent(name); a != nil {
			out = append(out, hookTarget{Path: filepath.Join(base, filepath.FromSlash(a.Hooks.File)), Agent: a.Name, Hooks: a.Hooks})
		}
	}
	return out
}

// hookCommand is the command an agent's hook runs: bin, "wcomm" or the person's path (self.go).
func hookCommand(bin, agent string) string { return shellWord(bin) + " hook --agent " + agent }

// installHooks adds wcomm's hook to each event of t's settings file, once: an entry that already
// runs 'wcomm hook' is brought up to date, not duplicated. A file that is not a JSON object is
// left alone and reported.
func installHooks(t hookTarget, bin string) (Result, error) {
	r := Result{Path: t.Path, Agent: t.Agent}
	real, old, mode, err := readTarget(t.Path)
	if err != nil {
		return r, err
	}
	settings := map[string]any{}
	if len(bytes.TrimSpace(old)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(old))
		dec.UseNumber()
		if err := dec.Decode(&settings); err != nil {
			r.Status, r.Note = Kept, fmt.Sprintf("not a JSON object (%v): fix it, then run again", err)
			return r, nil
		}
	}
	hooks, ok := settings["hooks"].(map[string]any)
	if settings["hooks"] != nil && !ok {
		r.Status, r.Note = Kept, `its "hooks" is not an object: fix it, then run again`
		return r, nil
	}
	if hooks == nil {
		hooks = map[string]any{}
	}
	changed := false
	for _, ev := range t.Hooks.Events() {
		groups, _ := hooks[ev].([]any)
		if hooks[ev] != nil && groups == nil {
			r.Status, r.Note = Kept, fmt.Sprintf(`its "hooks.%s" is not a list: fix it, then run again`, ev)
			return r, nil
		}
		if c := setHookCommand(groups, bin, hookCommand(bin, t.Agent), t.Hooks.Timeout(ev)); c != nil {
			changed = changed || *c
			continue
		}
		h := map[string]any{"type": "command", "command": hookCommand(bin, t.Agent)}
		if n := t.Hooks.Timeout(ev); n > 0 {
			h["timeout"] = n
		}
		hooks[ev] = append(groups, map[string]any{"hooks": []any{h}})
		changed = true
	}
	if !changed {
		r.Status = Unchanged
		return r, nil
	}
	settings["hooks"] = hooks
	data, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return r, err
	}
	if len(old) == 0 {
		r.Status, mode = Created, 0o644
	} else {
		r.Status = Updated
	}
	r.Note = t.Hooks.Note
	return r, writeTarget(real, append(data, '\n'), mode)
}

// setHookCommand looks for a hook that runs 'wcomm hook' among an event's groups: nil when there
// is none; else whether it had to be changed to run want (with timeout seconds, when not 0).
func setHookCommand(groups []any, bin, want string, timeout int) *bool {
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		hs, _ := gm["hooks"].([]any)
		for _, h := range hs {
			hm, _ := h.(map[string]any)
			cmd, _ := hm["command"].(string)
			if isHookCommand(cmd, bin) {
				changed := cmd != want
				hm["command"] = want
				if timeout > 0 && fmt.Sprint(hm["timeout"]) != fmt.Sprint(timeout) {
					hm["timeout"] = timeout
					changed = true
				}
				return &changed
			}
		}
	}
	return nil
}
