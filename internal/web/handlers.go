package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// reply is what every POST answers: whether it did anything, and the words for the person.
type reply struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// fail answers a refusal: its status and words, as JSON (the page shows the words).
func fail(w http.ResponseWriter, status int, format string, a ...any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(reply{Message: fmt.Sprintf(format, a...)})
}

func ok(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(reply{OK: true, Message: msg})
}

func (s *Server) view() page { return build(s.hub.snapshot(), s.cfg, s.token, s.now()) }

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := tmpl.ExecuteTemplate(w, "page", s.view()); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

func (s *Server) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	b, err := fs.ReadFile(assets, "assets/"+path.Base(name))
	if err != nil || strings.HasSuffix(name, ".html") {
		fail(w, http.StatusNotFound, "no file %q here", messages.SanitizeField(name))
		return
	}
	w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
	_, _ = w.Write(b)
}

// parts are the page's live parts, drawn from one model.
func (s *Server) parts() (map[string]any, error) {
	p := s.view()
	out := map[string]any{"version": p.Version}
	for _, name := range []string{"panes", "questions", "feed", "problems"} {
		h, err := render(name, p)
		if err != nil {
			return nil, err
		}
		out[name] = h
	}
	return out, nil
}

// events streams the page's parts each time the model changes (server-sent events).
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, okf := w.(http.Flusher)
	if !okf {
		fail(w, http.StatusInternalServerError, "this server cannot stream")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	wake, cancel := s.hub.subscribe()
	defer cancel()
	last := -1
	send := func() bool {
		p, err := s.parts()
		if err != nil {
			return false
		}
		if v := p["version"].(int); v == last {
			return true
		} else {
			last = v
		}
		b, _ := json.Marshal(p)
		if _, err := fmt.Fprintf(w, "event: view\ndata: %s\n\n", b); err != nil {
			return false
		}
		fl.Flush()
		return true
	}
	if !send() {
		return
	}
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-wake:
			if !send() {
				return
			}
		case <-keep.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

// stateJSON is the page's model as data, for scripts and tests.
func (s *Server) stateJSON(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(s.view())
}

// screen is one pane's screen now, read-only, its control strings made harmless.
func (s *Server) screen(w http.ResponseWriter, r *http.Request) {
	id, err := messages.ParsePaneID(r.URL.Query().Get("pane"))
	if err != nil {
		fail(w, http.StatusBadRequest, "pane: %v", err)
		return
	}
	if !s.hasPane(id) {
		fail(w, http.StatusNotFound, "no pane %s on this page: it is gone or was never here", id)
		return
	}
	text, err := s.src.Screen(r.Context(), id)
	if err != nil {
		fail(w, statusOf(err), "read the screen of pane %s: %v", id, messages.SanitizeField(err.Error()))
		return
	}
	ok(w, messages.SanitizeTerminal(text))
}

func (s *Server) hasPane(id messages.PaneID) bool {
	for _, p := range s.hub.snapshot().panes {
		if p.ID == id {
			return !p.Dead
		}
	}
	return false
}

// field is a form field, checked: present when need is set, valid UTF-8, at most max bytes.
func field(r *http.Request, name string, max int, need bool) (string, error) {
	vs := r.PostForm[name]
	if len(vs) > 1 {
		return "", fmt.Errorf("%s is given %d times; give it once", name, len(vs))
	}
	v := ""
	if len(vs) == 1 {
		v = vs[0]
	}
	switch {
	case need && strings.TrimSpace(v) == "":
		return "", fmt.Errorf("%s is missing", name)
	case len(v) > max:
		return "", fmt.Errorf("%s is %d bytes; at most %d", name, len(v), max)
	case !utf8.ValidString(v):
		return "", fmt.Errorf("%s is not UTF-8 text", name)
	}
	return v, nil
}

// who is how an answer or a message from this page is recorded: the web channel and the
// address it came from, as every channel records itself.
func who(r *http.Request) string { return "web " + r.RemoteAddr }

// answer answers a pending question as 'wcomm answer' does, from the web channel.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	id, err := field(r, "id", 200, true)
	if err == nil {
		if _, perr := messages.ParseQuestionID(id); perr != nil {
			err = fmt.Errorf("id %q is not a question id", messages.SanitizeField(id))
		}
	}
	var raw, msg string
	if err == nil {
		raw, err = field(r, "answer", 4096, true)
	}
	if err == nil {
		msg, err = field(r, "message", 4096, false)
	}
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	// The question is read again from disk, so an answer to a question that is gone or decided
	// is refused here and writes nothing; the engine's own check under its lock decides a race.
	f, err := s.src.Files(r.Context(), "", nil)
	if err != nil {
		fail(w, http.StatusInternalServerError, "read the questions: %v", messages.SanitizeField(err.Error()))
		return
	}
	var q *questions.QuestionStatus
	for _, x := range f.Questions {
		if x.ID == id {
			q = x
		}
	}
	if q == nil {
		fail(w, http.StatusConflict, "question %s is no longer pending (answered, resolved or stale), or never was: nothing was recorded", id)
		return
	}
	if raw != messages.PermDeny {
		msg = "" // the deny's box was left filled in: the words go with a deny only
	}
	out, err := s.src.AnswerFrom(r.Context(), id, raw, strings.TrimSpace(msg), who(r))
	if err != nil {
		fail(w, statusOf(err), "%s", messages.SanitizeField(err.Error()))
		return
	}
	s.hub.poke()
	ok(w, messages.SanitizeField(out))
}

// send tells an agent (or several, or a group) the person's words through the mailbox.
func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	to, err := field(r, "to", 500, true)
	var text string
	if err == nil {
		text, err = field(r, "text", 16<<10, true)
	}
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	out, err := s.src.Tell(r.Context(), to, text, who(r))
	if err != nil {
		msg := messages.SanitizeField(err.Error())
		if out != "" {
			msg = messages.SanitizeField(out) + "; " + msg
		}
		fail(w, statusOf(err), "%s", msg)
		return
	}
	s.hub.poke()
	ok(w, messages.SanitizeField(out))
}

// statusOf is an engine error's HTTP status.
func statusOf(err error) int {
	switch {
	case errors.Is(err, tmuxcomm.ErrStale), errors.Is(err, tmuxcomm.ErrAnswered):
		return http.StatusConflict
	case errors.Is(err, tmuxcomm.ErrNotPerson):
		return http.StatusForbidden
	}
	switch tmuxcomm.ClassOf(err) {
	case tmuxcomm.ClassUsage:
		return http.StatusBadRequest
	case tmuxcomm.ClassNotFound:
		return http.StatusNotFound
	case tmuxcomm.ClassTimeout:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}
