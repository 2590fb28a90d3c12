package settings

import (
	"fmt"

	"github.com/wcomm/wcomm/messages"
)

// maxGroupMembers bounds one group: a list longer than any fleet is a mistake in the file.
const maxGroupMembers = 64

// checkGroups checks the groups block: each name is a group name (messages.ValidGroupName), each
// member a target a send takes (a pane id, a tmux target, an agent name or HOST:TARGET), never
// another group: a group is the list its sender reads in the file, with nothing behind it.
func checkGroups(groups map[string][]string) error {
	for _, name := range SortedKeys(groups) {
		if err := messages.ValidGroupName(name); err != nil {
			return err
		}
		members := groups[name]
		if len(members) == 0 {
			return fmt.Errorf("group %s is empty; list its targets, such as [codex, \"%%3\"]", name)
		}
		if len(members) > maxGroupMembers {
			return fmt.Errorf("group %s has %d members; at most %d", name, len(members), maxGroupMembers)
		}
		for i, m := range members {
			one, err := messages.SplitTargets([]string{m})
			switch {
			case err != nil:
				return fmt.Errorf("group %s, member %d: %w", name, i+1, err)
			case len(one) != 1:
				return fmt.Errorf("group %s, member %d: %q holds several targets; give each as an item of the list", name, i+1, messages.SanitizeField(m))
			}
			if _, isGroup := messages.GroupName(one[0]); isGroup {
				return fmt.Errorf("group %s, member %d: %q names a group; a group lists targets only", name, i+1, messages.SanitizeField(m))
			}
		}
	}
	return nil
}
