package tmuxcomm

// Tell: a person's own words to an agent, from a face that has no pane of its own (the web page).

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/core"
)

// maxTell bounds a told message: what a person types into a box, not a file.
const maxTell = 16 << 10

// Tell hands text to the agents of target's panes as the person's words, through each pane's
// outbox: a note, delivered once (typed in when the pane is ready, handed over by the agent's
// hook at a turn boundary, or waiting in the outbox until then), as a deny's message is. A send
// needs the sender's pane for the response to come back to; a person at a page has none, and
// wants no response file. target is a pane, a tmux target, an agent's name, @GROUP of the
// settings, or several of these comma-separated; every one is resolved before anything is
// posted, so a target that names no pane posts nothing. from says where the words came from
// ("web 127.0.0.1:50412"), for a shell's one-line summary.
func (e *Engine) Tell(ctx context.Context, target, text, from string) ([]*core.Posted, error) {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return nil, core.Usagef("empty message: type what the agent should read")
	case len(text) > maxTell || !utf8.ValidString(text):
		return nil, core.Usagef("the message is %d bytes or not UTF-8; keep it under %d bytes of text", len(text), maxTell)
	}
	var targets []string
	for _, t := range strings.Split(target, ",") {
		t = strings.TrimSpace(t)
		if name, ok := strings.CutPrefix(t, "@"); ok {
			g, ok := e.Settings.Groups[name]
			if !ok {
				return nil, core.Usagef("no group %q in the settings", messages.SanitizeField(name))
			}
			targets = append(targets, g...)
		} else if t != "" {
			targets = append(targets, t)
		}
	}
	if len(targets) == 0 {
		return nil, core.NeedUsagef(core.NeedTarget, "no target: name the agent's pane, its name or @GROUP")
	}
	root, err := e.cfg.RootDir(true)
	if err != nil {
		return nil, err
	}
	type reached struct {
		p   paneops.Pane
		srv paneops.ServerInfo
	}
	var to []reached
	seen := map[messages.PaneID]bool{}
	for _, t := range targets {
		p, srv, err := e.finder.ResolveWithServer(ctx, t, paneops.Scope{All: true}, false)
		if err != nil {
			return nil, err
		}
		if !seen[p.ID] {
			seen[p.ID] = true
			to = append(to, reached{p, srv})
		}
	}
	var out []*core.Posted
	for _, r := range to {
		m := messages.Mail{Kind: messages.MailNote, Pane: r.p.ID, Server: r.srv.Key(), Socket: r.srv.Socket, Text: text,
			Summary: fmt.Sprintf("[message from the person, %s] %s", messages.SanitizeField(from), messages.SanitizeField(text))}
		p, err := e.office.Post(ctx, root, m, r.p, r.srv)
		if err != nil {
			return out, fmt.Errorf("tell pane %s: %w", r.p.ID, err)
		}
		out = append(out, p)
	}
	return out, nil
}
