package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/mcpserver"
)

// oldReadmeSections are the section headings the README had when it was the whole reference, and
// where each subject is now: a topic of `wcomm help`, or a heading the README kept. A subject
// dropped from the README must stay reachable.
var oldReadmeSections = map[string]string{
	"Set up": "README",
	"A request and its response, between two panes": "README",
	"Commands":                          "commands",
	"Exit codes":                        "exit-codes",
	"Questions: ask, answer, questions": "questions",
	"Approved actions: an approval authorizes intent, the dispatcher executes":  "actions",
	"Use with Claude Code / Codex / Gemini CLI":                                 "agents",
	"As MCP tools: `wcomm mcp`":                                                 "mcp",
	"The mailbox: a busy pane never blocks a sender, and never loses a message": "mailbox",
	"Delivery: states, profiles, doctor":                                        "delivery",
	"How it works, and where it is stricter than the plain procedure":           "internals",
	"Under faults: what wcomm guarantees, and how it is tested":                 "faults",
	"Develop": "README",
	"Settings (`.wcomm.yaml`, the environment), part of Questions":                 "settings",
	"Trust of a project's settings file, part of Approved actions":                 "actions",
	"The set-up's PATH in tmux panes (login shells), not in the README before":     "install",
	"Dependencies and why each, part of Develop":                                   "develop",
	"How the CLI's words are tested (testscript, golden prompts), part of Develop": "develop",
}

// readmeMaxBytes is the README's bar: 15,000 bytes, so that the rest lives in the topics it links.
const readmeMaxBytes = 15000

func readme(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	return string(data)
}

// section returns the text under the README heading "## name", up to the next heading of that level.
func section(t *testing.T, doc, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "\n## "+name+"\n")
	require.True(t, ok, "the README has no section %q", name)
	body, _, _ := strings.Cut(rest, "\n## ")
	return body
}

// setupCommands are the commands of the README's Set up block, their comments aside: install and
// run, then the tests.
func setupCommands(t *testing.T, doc string) []string {
	t.Helper()
	setup := section(t, doc, "Set up")
	_, block, ok := strings.Cut(setup, "```sh\n")
	require.True(t, ok, "Set up has a sh block")
	block, _, _ = strings.Cut(block, "```")
	var cmds []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	require.Len(t, cmds, 2, "Set up shows two commands: install and run, then the tests")
	return cmds
}

var helpRef = regexp.MustCompile("`wcomm help ([a-z][a-z0-9-]*)`")

func TestHelpTopics(t *testing.T) {
	doc := readme(t)
	topics, err := reference.All()
	require.NoError(t, err, "every docs/*.md starts with a '# Title' line")

	t.Run("README is a front door", func(t *testing.T) {
		assert.LessOrEqual(t, len(doc), readmeMaxBytes, "README.md is %d bytes: move reference text into a docs/ topic", len(doc))
	})

	t.Run("every topic the README's Read more lists exists", func(t *testing.T) {
		more := section(t, doc, "Read more")
		refs := helpRef.FindAllStringSubmatch(more, -1)
		require.GreaterOrEqual(t, len(refs), 10, "Read more lists the topics as `wcomm help TOPIC`")
		for _, m := range refs {
			_, ok := reference.Find(m[1])
			assert.True(t, ok, "README's Read more names topic %q, which docs/ does not have", m[1])
		}
	})

	t.Run("every wcomm help TOPIC named anywhere exists", func(t *testing.T) {
		texts := map[string]string{"README.md": doc}
		for _, tp := range topics {
			texts["docs/"+tp.Name+".md"] = tp.Body
		}
		for where, text := range texts {
			for _, m := range helpRef.FindAllStringSubmatch(text, -1) {
				_, isTopic := reference.Find(m[1])
				_, isCmd := commands[m[1]]
				assert.True(t, isTopic || isCmd, "%s names `wcomm help %s`: no such topic or command", where, m[1])
			}
		}
	})

	t.Run("every subject of the old README is reachable", func(t *testing.T) {
		for heading, where := range oldReadmeSections {
			if where == "README" {
				assert.Contains(t, doc, "\n## "+heading+"\n", "the README dropped section %q: make it a topic", heading)
				continue
			}
			tp, ok := reference.Find(where)
			if assert.True(t, ok, "subject %q: no topic %q", heading, where) {
				assert.NotEmpty(t, strings.TrimSpace(strings.TrimPrefix(tp.Body, "# "+tp.Title)), "topic %q is empty", where)
				r := runHelp(t, where)
				assert.Equal(t, exitOK, r.code, r.stderr)
				assert.Contains(t, r.stdout, "# "+tp.Title, "wcomm help %s prints the topic", where)
			}
		}
	})

	t.Run("exit-codes carries the text every command's help ends with", func(t *testing.T) {
		tp, ok := reference.Find("exit-codes")
		require.True(t, ok)
		assert.Contains(t, tp.Body, exitCodesText)
	})

	t.Run("the commands topic is the registry", func(t *testing.T) {
		tp, ok := reference.Find("commands")
		require.True(t, ok)
		for _, n := range commandNames() {
			assert.Contains(t, tp.Body, "\n## wcomm "+n+"\n", "command %s", n)
			assert.Contains(t, tp.Body, "usage: wcomm "+n+" ", "command %s", n)
		}
		assert.NotContains(t, tp.Body, "## wcomm __complete", "hidden commands are not listed")
	})

	t.Run("the README's command table names real commands", func(t *testing.T) {
		table := section(t, doc, "The commands")
		for _, m := range regexp.MustCompile("`wcomm ([a-z_-]+)").FindAllStringSubmatch(table, -1) {
			_, ok := commands[m[1]]
			assert.True(t, ok, "the README's command table names wcomm %s, which does not exist", m[1])
		}
	})

	t.Run("CI runs the README's test command", func(t *testing.T) {
		cmds := setupCommands(t, doc)
		// TestE2ENewcomerFirstCommand runs the first in a fresh account's shell.
		assert.True(t, strings.HasPrefix(cmds[0], "make install && "), "%s", cmds[0])
		assert.True(t, strings.HasSuffix(cmds[0], "/wcomm\" help"), "%s", cmds[0])
		ci, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
		require.NoError(t, err)
		assert.Regexp(t, "(?m)^"+regexp.QuoteMeta(cmds[1])+"$", string(ci), ".ci/run runs the README's test command")
	})
}

// The MCP tools the documentation lists are the server's own, in its order: in the mcp topic and
// in 'wcomm mcp --help'.
func TestHelpMCPToolsAreTheServers(t *testing.T) {
	want := mcpserver.ToolNames()
	require.GreaterOrEqual(t, len(want), 11)
	tp, ok := reference.Find("mcp")
	require.True(t, ok)
	line := regexp.MustCompile("(?m)^Tools: (.*)$").FindStringSubmatch(tp.Body)
	require.NotNil(t, line, "docs/mcp.md lists the tools on a line 'Tools: `a`, `b`, ...'")
	var listed []string
	for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(line[1], -1) {
		listed = append(listed, m[1])
	}
	assert.Equal(t, want, listed, "docs/mcp.md's Tools line is not the server's tool list")

	help := strings.Join(strings.Fields(commands["mcp"].Help), " ")
	m := regexp.MustCompile(`gets (.*) as tools`).FindStringSubmatch(help)
	require.NotNil(t, m, "wcomm mcp --help names the tools: 'gets a, b and c as tools'")
	named := regexp.MustCompile(`[a-z_]+`).FindAllString(strings.ReplaceAll(m[1], " and ", ", "), -1)
	assert.Equal(t, want, named, "wcomm mcp --help does not name the server's tools")
}

// A topic named like a command follows that command's help; the command's help alone is what
// COMMAND --help prints.
func TestHelpCommandAndTopic(t *testing.T) {
	r := runHelp(t, "questions")
	require.Equal(t, exitOK, r.code, r.stderr)
	usage := strings.Index(r.stdout, "usage: wcomm questions")
	page := strings.Index(r.stdout, "\n# Questions: ")
	assert.True(t, usage == 0 && page > usage, "command help first, then the topic:\n%s", r.stdout)

	r = runHelp(t, "nosuch-topic")
	assert.Equal(t, exitUsage, r.code)
	assert.Empty(t, r.stdout)
}

type helpResult struct {
	code           int
	stdout, stderr string
}

func runHelp(t *testing.T, args ...string) helpResult {
	t.Helper()
	var out, errOut strings.Builder
	code := Run(Companions{}, append([]string{"help"}, args...), strings.NewReader(""), &out, &errOut)
	return helpResult{code, out.String(), errOut.String()}
}
