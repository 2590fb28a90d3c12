//go:build agents

package cli

// The mailbox with the real Claude Code as the orchestrator: a RESPONSE line that arrives while
// it is mid-turn reaches its model exactly once after the turn (through its Stop hook, which
// install-skill put in its settings, or through the deliverer), and notify returns at once; a
// person's half-typed prompt is never typed over, and the line follows once the box is clear.

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/profile"
)

// lastMainRequest returns, as JSON text, the body of the newest request of Claude Code's main
// conversation (the one that carries the Bash tool) in the model's request log.
func lastMainRequest(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	last := ""
	for sc.Scan() {
		var req struct {
			Path string `json:"path"`
			Body struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			} `json:"body"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || !strings.Contains(req.Path, "/messages") {
			continue
		}
		for _, tool := range req.Body.Tools {
			if tool.Name == "Bash" {
				last = sc.Text()
			}
		}
	}
	require.NoError(t, sc.Err())
	return last
}

// userMessagesWith counts the user messages of a logged request that contain sub. Claude Code
// hands a Stop hook's reason to the model as a user message ("Stop hook feedback: ...") and
// mirrors the same output in a system entry of that request; the user messages are the turns.
func userMessagesWith(t *testing.T, request, sub string) int {
	t.Helper()
	var req struct {
		Body struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		} `json:"body"`
	}
	require.NoError(t, json.Unmarshal([]byte(request), &req))
	n := 0
	for _, m := range req.Body.Messages {
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			text = string(m.Content)
		}
		if m.Role == "user" && strings.Contains(text, sub) {
			n++
		}
	}
	return n
}

// around shows each place where sub occurs in s, with some text on either side.
func around(s, sub string) string {
	var parts []string
	for i := 0; ; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			return strings.Join(parts, "\n---\n")
		}
		j += i
		parts = append(parts, s[max(0, j-300):min(len(s), j+len(sub)+100)])
		i = j + len(sub)
	}
}

func TestAgentsClaudeMailbox(t *testing.T) {
	installed := installAgents(t)
	w := newWorld(t)
	m := startModel(t, w.work)
	requests := filepath.Join(w.work, "requests.jsonl")
	// wcomm's hooks go into the project settings of the folder Claude Code works in.
	work := filepath.Join(w.work, "work-claude")
	require.NoError(t, os.MkdirAll(work, 0o700))
	requireCode(t, 0, w.run(call{}, "install-skill", "--dir", work, "--for", "claude", "--bin", w.bin))
	orch := w.agentPane("claude", installed, m)
	// These cases are about typing and hooks; TestAgentsClaudeSocket covers the messaging socket.
	closeDoor(t, w, installed, orch)
	worker := w.catPane()
	prof := profile.Defaults().Lookup("claude")
	client := &paneops.Client{Server: paneops.Server{Socket: w.sock}}
	inspect := func() profile.Inspection {
		s, err := client.Screen(context.Background(), messages.PaneID(orch))
		require.NoError(t, err)
		return prof.Inspect(s)
	}
	idle := func() bool { in := inspect(); return in.Empty() && !in.Busy }

	t.Run("mid-turn", func(t *testing.T) {
		s := w.send(orch, worker, "first task")
		// A person starts a turn that keeps the model busy for a while.
		w.tmux("send-keys", "-t", orch, "-l", "SLEEP: 8")
		w.tmux("send-keys", "-t", orch, "Enter")
		waitFor(t, time.Minute, func() bool {
			for _, p := range m.prompts(t, "claude") {
				if strings.Contains(p.Prompt, "SLEEP: 8") {
					return true
				}
			}
			return false
		}, "the busy turn to start")
		waitFor(t, 10*time.Second, func() bool { return inspect().Busy }, "Claude Code to show busy")

		start := time.Now()
		r := w.in(worker, "notify", "--response", s.Response, "--", "answer one")
		took := time.Since(start)
		requireCode(t, 0, r)
		assert.Contains(t, r.stderr, "queued")
		assert.True(t, inspect().Busy, "notify returned while the turn still ran")
		t.Logf("notify into Claude Code mid-turn returned in %s", took.Round(time.Millisecond))

		waitFor(t, 2*time.Minute, func() bool { return strings.Contains(lastMainRequest(t, requests), s.Response) },
			"the RESPONSE line to reach the model")
		waitNoDeliverer(t, w.root)
		waitFor(t, time.Minute, idle, "Claude Code to be idle again")
		body := lastMainRequest(t, requests)
		assert.Equal(t, 1, userMessagesWith(t, body, s.Response), "the line reached the model exactly once: %s", around(body, s.Response))
		all := w.inboxItems(orch, "--all")
		require.Len(t, all, 1, "%v", all)
		assert.Equal(t, "delivered", all[0]["state"])
		t.Logf("delivered via %v", all[0]["via"])
	})

	t.Run("a person's text", func(t *testing.T) {
		s := w.send(orch, worker, "second task")
		human := "a draft by a person"
		w.tmux("send-keys", "-t", orch, "-l", human)
		waitFor(t, 10*time.Second, func() bool { return strings.Join(inspect().Lines, " ") == human }, "the person's text in the box")
		r := w.in(worker, "notify", "--response", s.Response, "--", "answer two")
		requireCode(t, 0, r)
		assert.Contains(t, r.stderr, "someone else's text")
		items := w.inboxItems(orch, "--peek")
		require.Len(t, items, 1, "%v", items)
		assert.Contains(t, items[0]["text"], s.Response)
		assert.Equal(t, []string{human}, inspect().Lines, "nothing typed over the person's text")
		for _, p := range m.prompts(t, "claude") {
			assert.NotContains(t, p.Prompt, s.Response, "not delivered while the person's text is there")
		}

		// The person clears the box; nobody runs anything, and the line arrives once.
		w.tmux("send-keys", "-t", orch, "-N", "19", "BSpace")
		waitFor(t, time.Minute, func() bool {
			for _, p := range m.prompts(t, "claude") {
				if strings.Contains(p.Prompt, s.Response) {
					return true
				}
			}
			return false
		}, "the RESPONSE line to reach the model")
		waitNoDeliverer(t, w.root)
		waitFor(t, time.Minute, idle, "Claude Code to be idle again")
		n := 0
		for _, p := range m.prompts(t, "claude") {
			n += strings.Count(p.Prompt, s.Response)
		}
		assert.Equal(t, 1, n, "exactly once")
		body := lastMainRequest(t, requests)
		assert.Equal(t, 1, userMessagesWith(t, body, s.Response), "once in the conversation: %s", around(body, s.Response))
	})
}
