package cli

import "flag"

// flagGiven reports whether the call set the flag name, even to its default value: a flag that
// only means something beside another one must not be dropped without a word.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			given = true
		}
	})
	return given
}
