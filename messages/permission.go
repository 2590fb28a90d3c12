package messages

// An agent's own permission prompt as a question: what the agent asks leave for (Permission), the
// three answers a person gives (allow, always, deny), and the JSON Claude Code's PermissionRequest
// hook reads on stdin and takes back on stdout.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Permission is a question's type when an agent asks the person's leave to use a tool: its
// answers are allow, always and deny.
const Permission QuestionType = "permission"

// The answers of a permission question, in the order the person is offered them.
const (
	PermAllow  = "allow"  // once
	PermAlways = "always" // and the agent's session rule for it
	PermDeny   = "deny"   // with an optional message that reaches the model
)

// PermissionOptions are a permission question's options.
func PermissionOptions() []string { return []string{PermAllow, PermAlways, PermDeny} }

// permissionOptionsValid reports whether opts are a permission question's options: all three, or
// allow and deny (an agent that has no session rule to give).
func permissionOptionsValid(opts []string) bool {
	o := strings.Join(opts, ",")
	return o == strings.Join(PermissionOptions(), ",") || o == PermAllow+","+PermDeny
}

// PermissionTask is the task of every permission question: its ids read permission.qN-TAG.
const PermissionTask = "permission"

// MaxPermissionSubject bounds the subject kept in a record (a command of megabytes is cut, and the
// cut said); chat posts fit a much shorter part.
const MaxPermissionSubject = 64 << 10

// PermissionRequest is what an agent asks the person's leave for.
type PermissionRequest struct {
	Agent string `json:"agent"` // the agent's name, "claude"
	Tool  string `json:"tool"`  // "Bash", "Edit", ...
	// Subject is what the tool acts on, whole: the command, the file, else the input as JSON.
	Subject     string `json:"subject"`
	Description string `json:"description,omitempty"`
	// Input is the tool's input as the agent gave it.
	Input json.RawMessage `json:"input,omitempty"`
	// Always is the session rule an "always" answer gives the agent: its own suggestion when it
	// made one that stays within this session and this tool, else the exact call.
	Always    []PermissionUpdate `json:"always,omitempty"`
	SessionID string             `json:"session_id,omitempty"`
	Cwd       string             `json:"cwd,omitempty"`
	// PID is the agent's process, when the hook found it (its session file is watched).
	PID int `json:"pid,omitempty"`
	// Via is how the prompt was seen: "" or ViaHook (the agent's own hook), ViaScreen (its dialog
	// recognised on screen), ViaDoor (its app-server handed the request over).
	Via string `json:"via,omitempty"`
	// Answers are the answers the prompt offers, in PermissionOptions' order; nil: all three. A
	// dialog answered by a key offers "always" only where the program has a choice that narrow.
	Answers []string `json:"answers,omitempty"`
}

// How a permission prompt was seen (PermissionRequest.Via).
const (
	ViaHook   = "hook"
	ViaScreen = "screen"
	ViaDoor   = "door"
)

// Options are the answers the request offers: Answers, or all three.
func (p PermissionRequest) Options() []string {
	if len(p.Answers) == 0 {
		return PermissionOptions()
	}
	return append([]string(nil), p.Answers...)
}

// Summary is the request in a few words: "Bash touch x".
func (p PermissionRequest) Summary(max int) string {
	s := oneLine(p.Tool + " " + p.Subject)
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s = string(r[:max-1]) + "…"
	}
	return s
}

// PermissionUpdate is one entry of Claude Code's permission_suggestions and updatedPermissions.
type PermissionUpdate struct {
	Type        string           `json:"type"` // addRules, addDirectories, setMode, ...
	Rules       []PermissionRule `json:"rules,omitempty"`
	Behavior    string           `json:"behavior,omitempty"`
	Destination string           `json:"destination,omitempty"`
	Directories []string         `json:"directories,omitempty"`
	Mode        string           `json:"mode,omitempty"`
}

// PermissionRule is one rule of an addRules update: Bash(ruleContent).
type PermissionRule struct {
	ToolName    string `json:"toolName"`
	RuleContent string `json:"ruleContent,omitempty"`
}

// Words says the update as the person reads it: "Bash(npm test:*) for this session".
func (u PermissionUpdate) Words() string {
	var parts []string
	for _, r := range u.Rules {
		if r.RuleContent == "" {
			parts = append(parts, r.ToolName)
		} else {
			parts = append(parts, r.ToolName+"("+r.RuleContent+")")
		}
	}
	return strings.Join(parts, ", ") + " for this session"
}

// HookInput is what an agent's hook reads on stdin (Claude Code's fields; Codex and Gemini use
// the same names for those they share).
type HookInput struct {
	SessionID             string             `json:"session_id"`
	Cwd                   string             `json:"cwd"`
	PermissionMode        string             `json:"permission_mode"`
	Event                 string             `json:"hook_event_name"`
	ToolName              string             `json:"tool_name"`
	ToolInput             json.RawMessage    `json:"tool_input"`
	PermissionSuggestions []PermissionUpdate `json:"permission_suggestions"`
	StopHookActive        bool               `json:"stop_hook_active"`
}

// ParsePermissionRequest reads a PermissionRequest hook's input into the request a question
// records. The "always" rule is the agent's own addRules suggestion narrowed to this session and
// this tool; when it made none, the exact call (Bash's exact command). Its other suggestions
// (a new working folder, a mode for the whole session) are broader than the call and never taken.
func ParsePermissionRequest(agent string, in HookInput) (PermissionRequest, error) {
	if in.Event != "PermissionRequest" {
		return PermissionRequest{}, fmt.Errorf("event %q is not a PermissionRequest: %w", SanitizeField(in.Event), ErrSyntax)
	}
	tool := strings.TrimSpace(in.ToolName)
	if tool == "" || len(tool) > 200 || !utf8.ValidString(tool) {
		return PermissionRequest{}, fmt.Errorf("tool_name %q: want the tool's name: %w", SanitizeField(tool), ErrSyntax)
	}
	p := PermissionRequest{Agent: agent, Tool: tool, Input: in.ToolInput, SessionID: in.SessionID, Cwd: in.Cwd}
	var fields struct {
		Command     string `json:"command"`
		FilePath    string `json:"file_path"`
		Path        string `json:"path"`
		URL         string `json:"url"`
		Description string `json:"description"`
	}
	if len(bytes.TrimSpace(in.ToolInput)) > 0 && json.Unmarshal(in.ToolInput, &fields) == nil {
		p.Description = fields.Description
	}
	switch {
	case fields.Command != "":
		p.Subject = fields.Command
	case fields.FilePath != "":
		p.Subject = fields.FilePath
	case fields.Path != "":
		p.Subject = fields.Path
	case fields.URL != "":
		p.Subject = fields.URL
	default:
		p.Subject = string(bytes.TrimSpace(in.ToolInput))
	}
	if len(p.Subject) > MaxPermissionSubject {
		p.Subject = p.Subject[:MaxPermissionSubject] + "\n… (cut: longer than 64 KiB)"
	}
	for _, s := range in.PermissionSuggestions {
		if s.Type != "addRules" || len(s.Rules) == 0 {
			continue
		}
		ok := true
		for _, r := range s.Rules {
			// A rule for another tool, or one with no content (the whole tool), is broader than
			// what was asked.
			if r.ToolName != tool || r.RuleContent == "" {
				ok = false
			}
		}
		if ok {
			p.Always = append(p.Always, PermissionUpdate{Type: "addRules", Rules: s.Rules, Behavior: "allow", Destination: "session"})
		}
	}
	if len(p.Always) == 0 && fields.Command != "" && tool == "Bash" {
		p.Always = []PermissionUpdate{{Type: "addRules", Rules: []PermissionRule{{ToolName: tool, RuleContent: fields.Command}},
			Behavior: "allow", Destination: "session"}}
	}
	return p, nil
}

// PermissionQuestion is the question the person is asked for p: its text says the agent, the
// tool and the subject in one line (fitted); the record keeps p whole.
func PermissionQuestion(p PermissionRequest, pane PaneID) Question {
	who := p.Agent
	if who == "" {
		who = "an agent"
	}
	subject := oneLine(p.Subject)
	if r := []rune(subject); len(r) > MaxQuestionLen-200 {
		subject = string(r[:MaxQuestionLen-201]) + "…"
	}
	text := fmt.Sprintf("%s in pane %s asks to run %s: %s", who, pane, p.Tool, subject)
	ctx := strings.TrimSpace(p.Description)
	if ctx == "" {
		// The context is required of every question; the agent gave no description.
		ctx = "No description given; its dialog waits in the pane as well."
		if p.Cwd != "" {
			ctx = "Working in " + p.Cwd + "; its dialog waits in the pane as well."
		}
	}
	if utf8.RuneCountInString(ctx) > MaxContextLen {
		ctx = string([]rune(ctx)[:MaxContextLen-1]) + "…"
	}
	return Question{Text: text, Task: PermissionTask, Urgency: Blocking, Type: Permission, Options: p.Options(), Context: ctx}
}

// PermissionDecision is the answer handed back to the agent.
type PermissionDecision struct {
	Behavior string // "allow" or "deny"
	Message  string // deny: what the model is told
	Updates  []PermissionUpdate
}

// DecisionOf is the decision for a permission question's answer (allow, always or deny) and the
// deny's message.
func DecisionOf(p PermissionRequest, answer, message string) (PermissionDecision, error) {
	switch answer {
	case PermAllow:
		return PermissionDecision{Behavior: "allow"}, nil
	case PermAlways:
		return PermissionDecision{Behavior: "allow", Updates: p.Always}, nil
	case PermDeny:
		if strings.TrimSpace(message) == "" {
			message = "The person denied this from wcomm."
		}
		return PermissionDecision{Behavior: "deny", Message: message}, nil
	}
	return PermissionDecision{}, fmt.Errorf("permission answer %q: want allow, always or deny: %w", SanitizeField(answer), ErrInvalidAnswer)
}

// The formats a permission hook's decision is printed in, named by an agent's record
// (paneops/profile's Hooks.Decision).
const (
	// DecisionClaudeHook is Claude Code's PermissionRequest hook output.
	DecisionClaudeHook = "claude-hook"
)

// decisionFormats are the formats by name: how a decision is printed, and read back (the record
// test checks that each one round-trips).
var decisionFormats = map[string]struct {
	format func(PermissionDecision) ([]byte, error)
	parse  func([]byte) (PermissionDecision, error)
}{
	DecisionClaudeHook: {formatClaudeDecision, parseClaudeDecision},
}

// DecisionFormats lists the known decision formats' names, sorted.
func DecisionFormats() []string {
	out := make([]string, 0, len(decisionFormats))
	for name := range decisionFormats {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// FormatDecision is d as an agent whose hook answers in format reads it on the hook's stdout.
func FormatDecision(format string, d PermissionDecision) ([]byte, error) {
	f, ok := decisionFormats[format]
	if !ok {
		return nil, fmt.Errorf("permission decision format %q is not known: %w", SanitizeField(format), ErrSyntax)
	}
	return f.format(d)
}

// ParseDecision reads back a decision printed in format.
func ParseDecision(format string, data []byte) (PermissionDecision, error) {
	f, ok := decisionFormats[format]
	if !ok {
		return PermissionDecision{}, fmt.Errorf("permission decision format %q is not known: %w", SanitizeField(format), ErrSyntax)
	}
	return f.parse(data)
}

// claudeDecision is the JSON a PermissionRequest hook prints for Claude Code to decide.
type claudeDecision struct {
	HookSpecificOutput struct {
		HookEventName string `json:"hookEventName"`
		Decision      struct {
			Behavior           string             `json:"behavior"`
			Message            string             `json:"message,omitempty"`
			UpdatedPermissions []PermissionUpdate `json:"updatedPermissions,omitempty"`
		} `json:"decision"`
	} `json:"hookSpecificOutput"`
}

func formatClaudeDecision(d PermissionDecision) ([]byte, error) {
	var out claudeDecision
	o := &out.HookSpecificOutput
	o.HookEventName = "PermissionRequest"
	o.Decision.Behavior, o.Decision.Message, o.Decision.UpdatedPermissions = d.Behavior, d.Message, d.Updates
	return json.Marshal(out)
}

func parseClaudeDecision(data []byte) (PermissionDecision, error) {
	var in claudeDecision
	if err := json.Unmarshal(data, &in); err != nil {
		return PermissionDecision{}, fmt.Errorf("a Claude Code permission decision: %v: %w", err, ErrSyntax)
	}
	o := in.HookSpecificOutput
	if o.HookEventName != "PermissionRequest" {
		return PermissionDecision{}, fmt.Errorf("hookEventName %q is not PermissionRequest: %w", SanitizeField(o.HookEventName), ErrSyntax)
	}
	return PermissionDecision{Behavior: o.Decision.Behavior, Message: o.Decision.Message, Updates: o.Decision.UpdatedPermissions}, nil
}

// matchPermission reads a permission answer: allow (yes, y), always, deny (no, n), or their number
// or letter; a deny may go on with a message for the model ("deny: use the staging database").
func matchPermission(q Question, a string) (Match, bool) {
	word, rest := a, ""
	if i := strings.IndexAny(a, " \t\n:"); i >= 0 {
		word, rest = a[:i], strings.TrimSpace(strings.TrimLeft(a[i:], " \t\n:"))
	}
	switch strings.ToLower(word) {
	case "allow", "yes", "y", "1", "a":
		word = PermAllow
	case "always", "2", "b":
		word = PermAlways
	case "deny", "no", "n", "3", "c":
		word = PermDeny
	default:
		return Match{}, false
	}
	if rest != "" && word != PermDeny {
		return Match{}, false
	}
	for i, o := range q.Options {
		if o == word {
			return Match{Value: word, Option: i + 1, Form: "permission", Note: rest}, true
		}
	}
	return Match{}, false
}
