package cli

// `wcomm help`: one command's help, or a topic of the reference. The topics are the markdown
// files of the docs package (docs/NAME.md), embedded in the binary, plus "commands", which is
// generated from the command registry so that it lists every command this binary has. A topic is
// added by adding a file; the README's "read more" names them, and a test keeps it honest.

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/wcomm/wcomm/docs"
	"github.com/wcomm/wcomm/messages"
)

// reference is every topic: docs' files and "commands", made from this binary's registry.
var reference = &docs.Reference{Generated: []func() docs.Topic{commandsTopic}}

// printTopics lists the topics, for `wcomm help`.
func printTopics(w io.Writer) {
	ts, err := reference.All()
	if err != nil {
		fmt.Fprintf(w, "topics: unreadable (%v)\n", err)
		return
	}
	fmt.Fprintln(w, "topics (wcomm help TOPIC):")
	for _, t := range ts {
		fmt.Fprintf(w, "  %-14s %s\n", t.Name, t.Title)
	}
}

// commandsTopic is every visible command's help, one after the other: the command reference.
func commandsTopic() docs.Topic {
	var b bytes.Buffer
	b.WriteString("# Commands: every command's help, one after the other\n\n")
	b.WriteString(globalFlagsText)
	for _, n := range commandNames() {
		cmd := commands[n]
		fmt.Fprintf(&b, "\n## wcomm %s\n\n", n)
		var h bytes.Buffer
		(&cli{}).printCommandHelp(&h, cmd, commandFlags(cmd))
		// The exit codes close every command's help; here they are said once, by exit-codes.
		b.WriteString(strings.TrimSuffix(h.String(), "\n"+exitCodesText))
	}
	b.WriteString("\nExit codes: wcomm help exit-codes\n")
	return docs.Topic{Name: "commands", Title: "Commands: every command's help, one after the other", Body: b.String()}
}

// globalFlagsText opens the command reference: what every command takes.
const globalFlagsText = `Every command takes -L NAME / -S PATH (the tmux server, as tmux takes them; inside a pane, the
pane's server is the default), --root DIR (default /tmp/worker-comm, env WCOMM_ROOT) and --json;
these may also stand before the command, as tmux's do (wcomm -L work send ...). Flags may stand
before or after positional arguments. Results go to stdout, diagnostics to stderr. A .wcomm.yaml
with a misspelt key stops every command that works with exchanges or questions (file:line, exit 1).
`

// helpCommand runs `wcomm help [NAME]`: the usage and topic list, a command's help (followed by the
// topic of the same name, if there is one), or a topic.
func (c *cli) helpCommand(args []string) error {
	switch {
	case len(args) == 0 && c.json:
		return c.printJSON(helpIndex())
	case len(args) == 0:
		c.printUsage(c.stdout)
		return nil
	case len(args) > 1:
		return usagef("help takes at most one COMMAND or TOPIC")
	}
	name := args[0]
	cmd, isCmd := commands[strings.ToLower(name)]
	if isCmd && cmd.Hidden {
		isCmd = false
	}
	t, isTopic := reference.Find(name)
	if !isCmd && !isTopic {
		return &exitErr{code: exitUsage, err: fmt.Errorf("no command or topic %q; %s",
			messages.SanitizeField(name), didYouMean(name, append(commandNames(), reference.Names()...)))}
	}
	if c.json {
		page := helpPage{Name: strings.ToLower(name)}
		if isCmd {
			var b bytes.Buffer
			c.printCommandHelp(&b, cmd, commandFlags(cmd))
			page.Command = b.String()
		}
		if isTopic {
			page.Name, page.Title, page.Text = t.Name, t.Title, t.Body
		}
		return c.printJSON(page)
	}
	if isCmd {
		c.printCommandHelp(c.stdout, cmd, commandFlags(cmd))
		if !isTopic {
			return nil
		}
		fmt.Fprintf(c.stdout, "\n---\n\n")
	}
	_, err := io.WriteString(c.stdout, ensureNL(t.Body))
	return err
}

// helpPage is `wcomm help NAME --json`: a command's help, a topic, or both.
type helpPage struct {
	Name    string `json:"name"`
	Command string `json:"command_help,omitempty"`
	Title   string `json:"title,omitempty"`
	Text    string `json:"text,omitempty"`
}

// helpEntry is one line of `wcomm help --json`.
type helpEntry struct {
	Name    string `json:"name"`
	Args    string `json:"args,omitempty"`
	Summary string `json:"summary"`
}

// helpIndex is `wcomm help --json`: the commands and the topics.
func helpIndex() map[string][]helpEntry {
	idx := map[string][]helpEntry{"commands": {}, "topics": {}}
	for _, n := range commandNames() {
		idx["commands"] = append(idx["commands"], helpEntry{Name: n, Args: commands[n].Args, Summary: commands[n].Summary})
	}
	ts, _ := reference.All()
	for _, t := range ts {
		idx["topics"] = append(idx["topics"], helpEntry{Name: t.Name, Summary: t.Title})
	}
	return idx
}

func init() {
	register(&command{
		Name: "help", Args: "[COMMAND | TOPIC]", Role: "admin",
		Summary: "show the command list, one command's help, or a topic of the reference",
		Help: `Without an argument: the commands and the topics. With a command: its flags and an example
(wcomm COMMAND --help shows the same), followed by the topic of that name if there is one. With a
topic: that page of the reference (the files of docs/ in wcomm's source, embedded in the binary);
'wcomm help commands' is every command's help, 'wcomm help exit-codes' the exit codes.`,
		Example: "wcomm help\nwcomm help send\nwcomm help mailbox\nwcomm help exit-codes\nwcomm help --json",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			return c.helpCommand
		},
	})
}
