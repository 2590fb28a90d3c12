package cli

// End-to-end tests of an agent's permission prompt relayed to the person, without the agent: the
// real binary runs as the agent's PermissionRequest hook with the hook's JSON on stdin, under a
// stand-in for the agent's process that keeps a session file as Claude Code does, with a private
// tmux server and fake Telegram and Slack services on loopback. The real agent is in
// agents_permission_e2e_test.go.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/bridge"
	"github.com/wcomm/wcomm/internal/bridge/chatfake"
)

// permWorld is a question world whose user settings name a fake Telegram chat and a fake Slack
// channel.
type permWorld struct {
	*qWorld
	workerFifo string // the worker is a host pane: its hooks run in its tree
	tg         *chatfake.Telegram
	sl         *chatfake.Slack
	claude     string // the stand-in agent's CLAUDE_CONFIG_DIR
}

func newPermWorld(t *testing.T) *permWorld {
	t.Helper()
	q := newQWorld(t)
	tg := chatfake.NewTelegram(t)
	sl := chatfake.NewSlack(t)
	xdg := t.TempDir()
	cfg := fmt.Sprintf("channels:\n  telegram:\n    api_url: %s\n    chat_id: %d\n    allowed_users: [777]\n"+
		"  slack:\n    api_url: %s/api/\n    channel: %s\n    allowed_users: [U777]\n", tg.Srv.URL, tg.Chat, sl.Srv.URL, sl.Channel)
	require.NoError(t, os.MkdirAll(filepath.Join(xdg, "wcomm"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(xdg, "wcomm", "config.yaml"), []byte(cfg), 0o600))
	q.env = append(q.env, "XDG_CONFIG_HOME="+xdg, bridge.EnvTelegramToken+"="+tg.Token,
		bridge.EnvSlackBotToken+"="+sl.Bot, bridge.EnvSlackAppToken+"="+sl.App, "WCOMM_BRIDGE_IDLE_EXIT=2s",
		"XDG_RUNTIME_DIR="+runtimeDir(t))
	p := &permWorld{qWorld: q, tg: tg, sl: sl, claude: t.TempDir()}
	// The agent's pane: a recorder of pastes, whose hooks run in its own tree.
	script, err := filepath.Abs(recorderPy)
	require.NoError(t, err)
	p.workerLog = filepath.Join(q.work, "recorder-agent.jsonl")
	p.worker, p.workerFifo = q.hostPane("python3", script, p.workerLog)
	q.waitScreen(p.worker, "RECORDER READY")
	return p
}

// permInputJSON is the hook input Claude Code 2.1.332 gives a PermissionRequest hook (measured).
func permInputJSON(command string) []byte {
	in := map[string]any{"session_id": "sess-1", "transcript_path": "/dev/null", "cwd": "/w", "permission_mode": "default",
		"hook_event_name": "PermissionRequest", "tool_name": "Bash",
		"tool_input":             map[string]string{"command": command, "description": "Run the requested command"},
		"permission_suggestions": []any{map[string]any{"type": "setMode", "mode": "acceptEdits", "destination": "session"}}}
	data, _ := json.Marshal(in)
	return data
}

// hookRun is the hook running under the stand-in agent, and the stand-in's session file.
type hookRun struct {
	*paneRun
	session string
}

// startHook runs 'wcomm hook --agent claude' as the agent in pane runs its hook for a Bash call of
// command.
func (p *permWorld) startHook(pane, command string) hookRun {
	p.t.Helper()
	return p.startHookInput(pane, permInputJSON(command))
}

// startHookInput runs 'wcomm hook --agent claude' with input on stdin as the agent in pane runs
// its hook: in the pane's own process tree, a child of the agent's process (here a bash that
// writes its session file, status waiting, as the dialog shows). pane is the world's worker, a
// host pane (hostPane).
func (p *permWorld) startHookInput(pane string, input []byte) hookRun {
	p.t.Helper()
	require.Equal(p.t, p.worker, pane, "the hook runs in the worker's host pane")
	env := append(append([]string(nil), p.env...), "CLAUDE_CONFIG_DIR="+p.claude)
	prelude := `d=$CLAUDE_CONFIG_DIR/sessions; mkdir -p "$d"; umask 077
printf '{"pid":%d,"sessionId":"sess-1","status":"waiting","statusUpdatedAt":1}' $$ >"$d/$$.json.tmp" && mv "$d/$$.json.tmp" "$d/$$.json"
trap 'rm -f "$d/$$.json"' EXIT`
	// The agent's own environment names its config folder (the door reads it from the process).
	prelude = `[ -n "${CLAUDE_CONFIG_DIR:-}" ] || exec env CLAUDE_CONFIG_DIR=` + shellQuote(p.claude) + ` bash "$0"` + "\n" + prelude
	b := p.runInPane(p.workerFifo, prelude, input, env, p.withSocket([]string{"hook", "--agent", "claude"})...)
	var session string
	waitFor(p.t, 10*time.Second, func() bool {
		m, _ := filepath.Glob(filepath.Join(p.claude, "sessions", "*.json"))
		if len(m) > 0 {
			session = m[0]
		}
		return session != "" || b.exited()
	}, "the stand-in agent's session file")
	return hookRun{paneRun: b, session: session}
}

// setStatus rewrites the stand-in's session file as the agent does when its state changes.
func (h hookRun) setStatus(t *testing.T, status string) {
	t.Helper()
	data, err := os.ReadFile(h.session)
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(data, &s))
	s["status"], s["statusUpdatedAt"] = status, time.Now().UnixMilli()
	out, err := json.Marshal(s)
	require.NoError(t, err)
	tmp := h.session + ".tmp"
	require.NoError(t, os.WriteFile(tmp, out, 0o600))
	require.NoError(t, os.Rename(tmp, h.session))
}

// decision reads the hook's reply to the agent.
func decision(t *testing.T, r result) map[string]any {
	t.Helper()
	requireCode(t, 0, r)
	var out struct {
		Specific struct {
			Event    string         `json:"hookEventName"`
			Decision map[string]any `json:"decision"`
		} `json:"hookSpecificOutput"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), "%s", r)
	assert.Equal(t, "PermissionRequest", out.Specific.Event)
	return out.Specific.Decision
}

// pendingPermission waits until a permission question of command is listed, and returns it.
func (p *permWorld) pendingPermission(h hookRun, command string) qJSON {
	p.t.Helper()
	var found qJSON
	waitFor(p.t, 10*time.Second, func() bool {
		if h.exited() {
			p.t.Fatalf("the hook ended before its question was listed: %s", h.wait(p.t, time.Second))
		}
		var ok bool
		found, ok = p.findPermission(command)
		return ok
	}, "the permission question of %q", command)
	return found
}

// tgPost waits for the Telegram post of the question whose text holds text.
func (p *permWorld) tgPost(text string) chatfake.Msg {
	p.t.Helper()
	var m chatfake.Msg
	p.tg.WaitFor("the permission prompt posted to Telegram", func() bool {
		for _, s := range p.tg.Sent {
			if strings.Contains(s.Text, text) && len(s.Keyboard) > 0 {
				m = *s
				return true
			}
		}
		return false
	})
	return m
}

// slackPost waits for the Slack post whose text holds text.
func (p *permWorld) slackPost(text string) chatfake.SlackPost {
	p.t.Helper()
	var post chatfake.SlackPost
	waitFor(p.t, 10*time.Second, func() bool {
		posts, _, _ := p.sl.Snapshot()
		for _, s := range posts {
			if strings.Contains(s.Text, text) && len(s.Buttons) == 3 {
				post = s
				return true
			}
		}
		return false
	}, "the permission prompt posted to Slack")
	return post
}

func TestE2EPermissionHookAnsweredFromTelegram(t *testing.T) {
	t.Parallel()
	p := newPermWorld(t)
	h := p.startHook(p.worker, "touch from-telegram.txt")
	j := p.pendingPermission(h, "touch from-telegram.txt")
	// Who waits on a person, and why: in the pane list and the questions' JSON.
	panes := p.as("", nil, "panes", "--all")
	requireCode(t, 0, panes)
	assert.Regexp(t, `(?m)^`+p.worker+` .*waits: permission: Bash touch from-telegram.txt$`, panes.stdout)
	list := p.as("", nil, "questions", "--json", "--pending")
	assert.Contains(t, list.stdout, `"waits": "permission: Bash touch from-telegram.txt"`)
	m := p.tgPost("touch from-telegram.txt")
	assert.Contains(t, m.Raw, "<pre>touch from-telegram.txt</pre>", "the command in a block of its own")
	var labels []string
	for _, row := range m.Keyboard {
		for _, b := range row {
			labels = append(labels, b.Text)
		}
	}
	assert.Equal(t, []string{"Allow", "Always", "Deny"}, labels)
	tok := strings.Split(m.Keyboard[0][0].CallbackData, ":")[1]
	assert.Contains(t, m.Text, "/allow_"+tok)
	assert.Contains(t, m.Text, "/deny_"+tok)
	slack := p.slackPost("touch from-telegram.txt")

	p.tg.Press(777, p.tg.Chat, m.ID, m.Keyboard[0][0].CallbackData)
	d := decision(t, h.wait(t, 20*time.Second))
	assert.Equal(t, "allow", d["behavior"])
	got := p.question("permission")
	require.NotNil(t, got.Answer)
	assert.Equal(t, "telegram", got.Answer.Source)
	assert.Equal(t, j.ID, got.ID)
	// The other channel's post says it is decided, and its buttons are gone.
	waitFor(t, 10*time.Second, func() bool {
		_, updates, _ := p.sl.Snapshot()
		return strings.Contains(updates[slack.TS], "allow")
	}, "the Slack post to say the prompt was answered")
}

func TestE2EPermissionHookDeniedFromSlackWithAMessage(t *testing.T) {
	t.Parallel()
	p := newPermWorld(t)
	h := p.startHook(p.worker, "rm -rf build")
	p.pendingPermission(h, "rm -rf build")
	post := p.slackPost("rm -rf build")
	assert.Contains(t, post.Text, "```\nrm -rf build\n```")
	// A reply in the thread may carry the words the model reads.
	p.sl.WaitConnected()
	p.sl.Reply("U777", p.sl.Channel, post.TS, "deny: keep the build folder")
	d := decision(t, h.wait(t, 20*time.Second))
	assert.Equal(t, "deny", d["behavior"])
	assert.Equal(t, "keep the build folder", d["message"])
}

func TestE2EPermissionHookAnsweredByCommandLine(t *testing.T) {
	t.Parallel()
	p := newPermWorld(t)
	for _, tt := range []struct {
		args     []string
		behavior string
		check    func(t *testing.T, d map[string]any)
	}{
		{[]string{"always"}, "allow", func(t *testing.T, d map[string]any) {
			ups, _ := json.Marshal(d["updatedPermissions"])
			assert.JSONEq(t, `[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"make test"}],"behavior":"allow","destination":"session"}]`, string(ups),
				"the exact command, for this session: the agent's broader suggestion (a mode) is not taken")
		}},
		{[]string{"deny", "--message", "run make lint first"}, "deny", func(t *testing.T, d map[string]any) {
			assert.Equal(t, "run make lint first", d["message"])
		}},
	} {
		h := p.startHook(p.worker, "make test")
		j := p.pendingPermission(h, "make test")
		r := p.asPerson(nil, append([]string{"answer", j.ID}, tt.args...)...)
		requireCode(t, 0, r)
		d := decision(t, h.wait(t, 20*time.Second))
		assert.Equal(t, tt.behavior, d["behavior"])
		tt.check(t, d)
		assert.Empty(t, p.pastes(p.workerLog, 0), "nothing typed into the agent's pane")
	}
}

func TestE2EPermissionAnsweredAtTheTerminal(t *testing.T) {
	t.Parallel()
	p := newPermWorld(t)
	// The late press below needs the bridge still running once every post is edited: the world's
	// 2 s idle exit ended it first on a loaded machine, and the press was never read.
	for i, kv := range p.env {
		if strings.HasPrefix(kv, "WCOMM_BRIDGE_IDLE_EXIT=") {
			p.env[i] = "WCOMM_BRIDGE_IDLE_EXIT=15s"
		}
	}
	h := p.startHook(p.worker, "touch at-terminal.txt")
	j := p.pendingPermission(h, "touch at-terminal.txt")
	m := p.tgPost("touch at-terminal.txt")
	slack := p.slackPost("touch at-terminal.txt")

	// The person presses 1 in the pane: the agent runs the tool, its state leaves waiting.
	h.setStatus(t, "busy")
	r := h.wait(t, 10*time.Second)
	requireCode(t, 0, r)
	assert.Empty(t, r.stdout, "the agent took the terminal's answer: the hook says nothing")
	got := p.question("permission")
	require.NotNil(t, got.Answer)
	assert.Equal(t, "terminal", got.Answer.Source)
	assert.Equal(t, "allow", got.Answer.Answer)
	// Every post says so, its buttons gone.
	p.tg.WaitFor("the Telegram post edited", func() bool {
		msg := p.tg.Msgs[m.ID]
		return msg.Edits > 0 && strings.Contains(msg.Text, "answered at the terminal") && len(msg.Keyboard) == 0
	})
	waitFor(t, 10*time.Second, func() bool {
		_, updates, _ := p.sl.Snapshot()
		return strings.Contains(updates[slack.TS], "answered at the terminal")
	}, "the Slack post edited")
	// A chat answer after it is told it came too late.
	p.tg.Press(777, p.tg.Chat, m.ID, m.Keyboard[0][2].CallbackData)
	p.tg.WaitFor("the late press acknowledged", func() bool {
		return len(p.tg.Acks) > 0 && strings.Contains(p.tg.Acks[len(p.tg.Acks)-1], "too late")
	})
	late := p.as("", nil, "answer", j.ID, "deny")
	requireCode(t, 1, late)
	assert.Contains(t, late.stderr, "too late")
}

func TestE2EPermissionRefusedAtTheTerminalAndExpired(t *testing.T) {
	t.Parallel()
	p := newPermWorld(t)
	// No at the terminal: the agent ends its turn and ends the hook.
	h := p.startHook(p.worker, "touch refused.txt")
	p.pendingPermission(h, "touch refused.txt")
	h.setStatus(t, "idle")
	requireCode(t, 0, h.wait(t, 10*time.Second))
	got := p.question("permission")
	require.NotNil(t, got.Answer)
	assert.Equal(t, "deny", got.Answer.Answer)
	assert.Equal(t, "terminal", got.Answer.Source)

	// Nobody answers within the wait: nothing is decided, the dialog stays for the terminal.
	cfg := filepath.Join(p.work, ".wcomm.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("permissions:\n  wait: 1s\n"), 0o600))
	h = p.startHook(p.worker, "touch expired.txt")
	j := p.pendingPermission(h, "touch expired.txt")
	r := h.wait(t, 20*time.Second)
	requireCode(t, 0, r)
	assert.Empty(t, r.stdout, "no decision: the dialog decides")
	for _, q := range p.questions(false) {
		if q.ID == j.ID {
			assert.Equal(t, "resolved", q.State)
			assert.Contains(t, q.Reason, "expired")
		}
	}
}

// An agent answering its own (or another's) permission prompt is refused unless named.
func TestE2EPermissionNotAnsweredByAnAgent(t *testing.T) {
	t.Parallel()
	p := newPermWorld(t)
	h := p.startHook(p.worker, "git push")
	j := p.pendingPermission(h, "git push")
	// 'wcomm answer' run by an agent's tool call: its ancestor is the agent's program. A copy of
	// bash named claude stands in for it (a script of that name would not count as the agent).
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	fake := filepath.Join(t.TempDir(), "claude")
	// Copied by cp, not written from this process: a file this process holds open for writing is
	// inherited by whatever a parallel test forks meanwhile, and exec then fails with "text file
	// busy" (an empty output, an error).
	require.NoError(t, exec.Command("cp", bash, fake).Run())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := p.cmd(ctx, call{pane: p.orch, env: p.env}, p.withSocket([]string{"answer", j.ID, "allow"})...)
	cmd.Args = append([]string{fake, "-c", `"$0" "$@"; exit $?`, p.bin}, cmd.Args[1:]...)
	cmd.Path = fake
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	assert.Contains(t, string(out), "may not answer it")
	assert.False(t, h.exited(), "the hook still waits")
	requireCode(t, 0, p.asPerson(nil, "answer", j.ID, "deny"))
	assert.Equal(t, "deny", decision(t, h.wait(t, 20*time.Second))["behavior"])
}
