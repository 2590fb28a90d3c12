package tmuxcomm

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
)

// SendOptions are the inputs of one send.
type SendOptions struct {
	To         string // pane id, tmux target or agent name
	Scope      paneops.Scope
	First      bool // take the first of several agent matches
	Capability messages.Capability
	Body       []byte
}

// Send writes the next request file of the caller/worker pair and delivers it into the worker's
// pane. The returned exchange is valid whenever the request file was written, also when delivery
// failed (then the error wraps ErrUndelivered and the delivery log says why).
func (e *Engine) Send(ctx context.Context, o SendOptions) (*Exchange, error) {
	root, err := e.root(true)
	if err != nil {
		return nil, err
	}
	if e.Self == "" {
		return nil, fmt.Errorf("not inside a tmux pane: run send from the orchestrator's pane, or pass --from %%N")
	}
	if _, err := messages.ParsePaneID(string(e.Self)); err != nil {
		return nil, fmt.Errorf("own pane %q: %w", messages.SanitizeField(string(e.Self)), err)
	}
	if len(o.Body) == 0 || strings.TrimSpace(string(o.Body)) == "" {
		return nil, fmt.Errorf("empty message: give the request as arguments, --file F or on stdin with -")
	}
	if o.Capability == "" {
		o.Capability = messages.ReadOnly
	}
	worker, err := e.Resolve(ctx, o.To, o.Scope, o.First)
	if err != nil {
		return nil, err
	}
	if worker.ID == e.Self {
		return nil, fmt.Errorf("target %s is your own pane; send to another pane", worker.ID)
	}
	if worker.Dead {
		return nil, fmt.Errorf("pane %s (%s) is dead; nothing was written: %w", worker.ID, worker.Target(), ErrUndelivered)
	}
	srv, err := e.Tmux.ServerInfo(ctx)
	if err != nil {
		return nil, err
	}
	dir, sess, err := e.openSession(root, e.Self, worker.ID, srv.Key(), srv.Socket)
	if err != nil {
		return nil, err
	}
	id, err := messages.NewID(e.Now(), e.Rand)
	if err != nil {
		return nil, err
	}
	body := string(o.Body)
	size, sum := messages.BodySum(o.Body)
	header := messages.RequestHeader{Capability: o.Capability, ID: id, StartedAt: sess.StartedAt,
		Orchestrator: e.Self, Worker: worker.ID, Bytes: size, Sum: sum}
	n, reqPath, err := claimRequest(dir, func(n int) []byte {
		resp := filepath.Join(dir, messages.SeqFileName(n+1, messages.KindResponse))
		return []byte(messages.FormatRequest(messages.Request{Header: header, Body: body,
			Instructions: messages.Instructions{
				ResponsePath: resp,
				Notify:       e.notifyCommand(resp),
				Fallback:     messages.FallbackCommand(sess, resp),
			}}))
	})
	if err != nil {
		return nil, err
	}
	_ = logEvent(dir, n, StateWritten, map[string]string{"id": id, "bytes": strconv.Itoa(size), "sha256": sum}, e.Now())

	derr := e.deliverRequest(ctx, dir, n, reqPath, worker, srv)
	x := loadExchange(dir, n, false)
	if derr != nil {
		return x, derr
	}
	return x, nil
}

// notifyCommand is the line the instructions give a worker that has wcomm.
func (e *Engine) notifyCommand(responsePath string) string {
	return e.Command + " notify --response " + responsePath + " --file ANSWER.md"
}

// deliverRequest pastes the request (or a pointer to it) into the worker's pane and submits it,
// logging each state with its evidence.
func (e *Engine) deliverRequest(ctx context.Context, dir string, n int, reqPath string, worker paneops.Pane, srv paneops.ServerInfo) error {
	data, err := readFile(reqPath)
	if err != nil {
		return err
	}
	content, form := e.pasteForm(string(data), reqPath)
	res, err := e.Tmux.Deliver(ctx, paneops.Delivery{
		Pane: worker.ID, Content: []byte(content), Submit: true, EnterDelay: e.EnterDelay,
		LockDir: filepath.Join(filepath.Dir(dir), ".locks"), LockKey: srv.Key(), LockTimeout: e.LockTimeout,
	})
	detail := map[string]string{"pane": string(worker.ID), "target": worker.Target(), "form": form,
		"bytes": strconv.Itoa(len(content)), "buffer": res.Buffer}
	if err != nil {
		state := StateUndelivered
		if errors.Is(err, paneops.ErrRefused) {
			state = StateRefused
		}
		detail["error"] = err.Error()
		_ = logEvent(dir, n, state, detail, e.Now())
		return fmt.Errorf("deliver %s to pane %s: %w: %w", filepath.Base(reqPath), worker.ID, ErrUndelivered, err)
	}
	if res.Pasted {
		_ = logEvent(dir, n, StatePasted, detail, res.PastedAt)
	}
	if res.Submitted {
		d := map[string]string{"pane": string(worker.ID), "enter_delay": e.EnterDelay.String(), "form": form}
		_ = logEvent(dir, n, StateSubmitted, d, res.EnterAt)
	}
	return nil
}

// pasteForm decides what reaches the pane: the whole request, sanitized, when it is small enough
// to paste safely, else one pointer line to the file (the file keeps the original bytes either way).
func (e *Engine) pasteForm(request, path string) (content, form string) {
	clean := messages.Sanitize(request, true)
	long := len(clean) > e.PasteLimit
	if !long {
		for _, line := range strings.Split(clean, "\n") {
			if len(line) > e.LineLimit {
				long = true
				break
			}
		}
	}
	if !long && utf8.ValidString(clean) && strings.TrimSpace(clean) != "" {
		return strings.TrimRight(clean, "\n"), "paste"
	}
	header, _, _ := strings.Cut(request, "\n")
	return messages.SanitizeField(header) + " The request is " + strconv.Itoa(len(request)) +
		" bytes, too long to paste: read it whole from " + messages.SanitizeField(path) +
		" and follow its [RESPONSE INSTRUCTIONS].", "pointer"
}
