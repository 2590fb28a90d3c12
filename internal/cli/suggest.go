package cli

// "Did you mean": a mistyped command, help topic or flag is answered with the nearest names, by edit
// distance, so that 'wcomm sned' says what to type instead of only that it is wrong.

import (
	"flag"
	"fmt"

	"github.com/wcomm/wcomm/messages/suggest"
)

// didYouMean is the end of an "unknown NAME" error: the nearest candidates, else the list command.
func didYouMean(name string, candidates []string) string {
	return suggest.Phrase(suggest.Nearest(name, candidates), "run 'wcomm help' for the list")
}

// didYouMeanFlag is the end of an "unknown flag" error of command cmd: the nearest of the flags
// fs declares, spelt as they are typed (--to), else where the flags are listed.
func didYouMeanFlag(name, cmd string, fs *flag.FlagSet) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name != "h" {
			names = append(names, f.Name)
		}
	})
	near := suggest.Nearest(name, names)
	for i, n := range near {
		near[i] = flagSpelling(n)
	}
	return suggest.Phrase(near, fmt.Sprintf("run 'wcomm %s --help' for its flags", cmd))
}

// flagSpelling is how a flag is typed: -L and -S with one dash, the others with two.
func flagSpelling(name string) string {
	if len([]rune(name)) == 1 {
		return "-" + name
	}
	return "--" + name
}
