package settings

import (
	"fmt"
	"strings"

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

// applyGroups lays a file's groups over the groups so far: a group replaces the one of the same
// name whole. A group runs nothing and names only targets its sender could name with --to, so a
// project's applies untrusted, but not one that reaches a declared host: a request sent there
// goes over ssh with the user's keys, and which hosts are reached is the user's to say (hosts
// themselves need trust). So an untrusted file's group that names a declared host, or that
// would replace the user's group that does (sending its requests elsewhere), is ignored and
// named in Ignored, and the user's group stands.
func (s *Values) applyGroups(groups map[string][]string, trusted bool) {
	merged := make(map[string][]string, len(s.Groups)+len(groups))
	for name, g := range s.Groups {
		merged[name] = g
	}
	for _, name := range SortedKeys(groups) {
		if !trusted {
			if h := s.hostIn(groups[name]); h != "" {
				s.Ignored = append(s.Ignored, fmt.Sprintf("group %s (it reaches host %s)", name, h))
				continue
			}
			if h := s.hostIn(s.Groups[name]); h != "" {
				s.Ignored = append(s.Ignored, fmt.Sprintf("group %s (it would replace your group %s, which reaches host %s)", name, name, h))
				continue
			}
		}
		merged[name] = groups[name]
	}
	s.Groups = merged
}

// hostIn returns the first declared host a member of a group reaches (HOST:TARGET, as a send
// reads it), "" when every member is local.
func (s *Values) hostIn(members []string) string {
	for _, m := range members {
		if name, _, found := strings.Cut(m, ":"); found {
			if _, ok := s.Hosts[name]; ok {
				return name
			}
		}
	}
	return ""
}
