package kit

import (
	"flag"
	"strings"
)

// Command is one of the command line's commands as the kit reads it.
type Command struct {
	Name    string
	Summary string // one line
	Example string // one or more example lines
	Role    string // "orchestrator", "worker", "both", "admin": who uses it
	// Flags returns the command's flags, declared as the command line declares them.
	Flags func() *flag.FlagSet
}

// Book is what the kit reads of the command line that links it: the prompts and the completion
// scripts are generated from it.
type Book struct {
	Commands  []Command // the visible commands, by name
	Topics    []string  // the topics 'wcomm help TOPIC' takes
	ExitCodes string    // the exit codes' text, as --help prints it
	Version   string
}

// command returns the visible command called name.
func (b Book) command(name string) (Command, bool) {
	for _, c := range b.Commands {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// names lists the visible commands, by name.
func (b Book) names() []string {
	out := make([]string, len(b.Commands))
	for i, c := range b.Commands {
		out[i] = c.Name
	}
	return out
}

// ExampleLines splits an Example into its command lines; a line ending in a backslash goes on in
// the next, as in a shell, and stays one entry with its line breaks.
func ExampleLines(example string) []string {
	var out []string
	var cur []string
	for _, l := range strings.Split(strings.TrimSpace(example), "\n") {
		cur = append(cur, l)
		if strings.HasSuffix(l, "\\") {
			continue
		}
		out = append(out, strings.Join(cur, "\n"))
		cur = nil
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, "\n"))
	}
	return out
}

// FirstExample is an Example's first command line, continuation lines included.
func FirstExample(example string) string {
	if ex := ExampleLines(example); len(ex) > 0 {
		return ex[0]
	}
	return ""
}

// Indent puts pre before every line of s.
func Indent(s, pre string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = pre + l
	}
	return strings.Join(lines, "\n")
}
