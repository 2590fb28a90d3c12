// Package suggest finds the names nearest a mistyped one, by edit distance, so that an unknown
// command, flag or settings key is answered with what to type instead: one rule for the command
// line and the settings file alike.
package suggest

import (
	"fmt"
	"sort"
	"strings"
)

// Nearest returns the candidates closest to name (at most three, best first): those within a
// third of the name's length in edit distance (at least one edit, at most three), and those that
// start with a name of three letters or more. Case is ignored.
func Nearest(name string, candidates []string) []string {
	name = strings.ToLower(name)
	if name == "" {
		return nil
	}
	limit := min(max(len([]rune(name))/3, 1), 3)
	type scored struct {
		name string
		d    int
	}
	var found []scored
	seen := map[string]bool{}
	for _, c := range candidates {
		if seen[c] {
			continue
		}
		seen[c] = true
		lc := strings.ToLower(c)
		d := EditDistance(name, lc)
		switch {
		case d <= limit:
		case len(name) >= 3 && strings.HasPrefix(lc, name):
			d = limit + 1 // a prefix ranks after every near miss
		default:
			continue
		}
		found = append(found, scored{c, d})
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].d != found[j].d {
			return found[i].d < found[j].d
		}
		return found[i].name < found[j].name
	})
	var out []string
	for i, f := range found {
		if i == 3 || f.d > found[0].d {
			break
		}
		out = append(out, f.name)
	}
	return out
}

// EditDistance is the Damerau-Levenshtein distance (optimal string alignment) of a and b, in
// runes: insertions, deletions, substitutions and swaps of two neighbours cost one each, so
// "sned" is one edit from "send".
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// Phrase words the nearest names found, each quoted, and where the whole list is: the end of an
// "unknown NAME" error ("did you mean "send"? (run 'wcomm help' for the list)"); the list alone
// when none is near.
func Phrase(near []string, list string) string {
	switch len(near) {
	case 0:
		return list
	case 1:
		return fmt.Sprintf("did you mean %q? (%s)", near[0], list)
	}
	quoted := make([]string, len(near))
	for i, n := range near {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	return fmt.Sprintf("did you mean %s or %s? (%s)", strings.Join(quoted[:len(quoted)-1], ", "), quoted[len(quoted)-1], list)
}
