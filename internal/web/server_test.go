package web

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/ui"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/store"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// fakeSource is the model without tmux or files: what it holds, and what was done through it.
type fakeSource struct {
	mu      sync.Mutex
	panes   []fleet.FleetPane
	qs      []*questions.QuestionStatus
	answers []string // "id raw message source"
	tells   []string // "to text from"
	screen  string
	recent  []*exchange.Exchange
}

func (f *fakeSource) Panes(context.Context) ([]fleet.FleetPane, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fleet.FleetPane(nil), f.panes...), nil
}
func (f *fakeSource) Files(context.Context, string, []messages.PaneID) (ui.Files, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return ui.Files{Questions: append([]*questions.QuestionStatus(nil), f.qs...)}, nil
}
func (f *fakeSource) Waiting(context.Context, string, []messages.PaneID) (*fleet.Waiting, error) {
	return &fleet.Waiting{}, nil
}
func (f *fakeSource) Recent(context.Context, int) ([]*exchange.Exchange, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.recent, nil
}
func (f *fakeSource) Show(context.Context, string) (*exchange.Exchange, error) {
	return nil, store.ErrNotFound
}
func (f *fakeSource) Answer(ctx context.Context, id, raw string) (string, error) {
	return f.AnswerFrom(ctx, id, raw, "", "ui")
}
func (f *fakeSource) Resend(context.Context, string) (string, error) { return "", nil }
func (f *fakeSource) AnswerFrom(_ context.Context, id, raw, message, source string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, strings.Join([]string{id, raw, message, source}, " "))
	f.qs = nil
	return "recorded " + raw, nil
}
func (f *fakeSource) Tell(_ context.Context, to, text, from string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tells = append(f.tells, to+" "+text+" "+from)
	return "pane " + to + ": delivered now through its outbox", nil
}
func (f *fakeSource) Screen(context.Context, messages.PaneID) (string, error) { return f.screen, nil }

func (f *fakeSource) done() (answers, tells []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.answers...), append([]string(nil), f.tells...)
}

func pane(id, agent, state, name string) fleet.FleetPane {
	return fleet.FleetPane{PaneInfo: fleet.PaneInfo{Pane: paneops.Pane{ID: messages.PaneID(id), Session: "work"}, Name: name},
		Server: "1-1", Agent: agent, State: state}
}

const qid = "task-1.q1-a1b2"

func question() *questions.QuestionStatus {
	q := &questions.QuestionStatus{State: questions.QuestionPending}
	q.ID, q.Task, q.Seq, q.Worker = qid, "task-1", 1, "%2"
	q.Text, q.Type, q.Urgency, q.Options = "Which cache?", messages.Numbered, messages.Blocking, []string{"the quick one", "the safe one"}
	q.AskedAt = time.Now()
	return q
}

// site is a server under test on a loopback httptest listener.
type site struct {
	t    *testing.T
	src  *fakeSource
	s    *Server
	ts   *httptest.Server
	base string
	jar  http.Header // the cookie, once logged in
}

func newSite(t *testing.T, cfg Config, recent ...*exchange.Exchange) *site {
	t.Helper()
	src := &fakeSource{recent: recent, panes: []fleet.FleetPane{pane("%1", "claude", "idle", "lead"), pane("%2", "codex", "busy", "")},
		qs: []*questions.QuestionStatus{question()}, screen: "$ ls\x1b[31m red\x1b]2;pwned\x07\n"}
	s, err := New(src, cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go s.hub.run(ctx, nil)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	u, _ := url.Parse(ts.URL)
	s.bind(ts.Listener.Addr(), true)
	st := &site{t: t, src: src, s: s, ts: ts, base: "http://" + u.Host}
	require.Eventually(t, func() bool { return len(s.hub.snapshot().panes) == 2 && s.hub.snapshot().loaded }, 5*time.Second, 10*time.Millisecond)
	return st
}

// client never follows a redirect: the tests look at each answer.
var client = &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (st *site) do(method, path string, body string, hdr map[string]string) (*http.Response, string) {
	st.t.Helper()
	req, err := http.NewRequest(method, st.base+path, strings.NewReader(body))
	require.NoError(st.t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range st.jar {
		req.Header[k] = v
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	require.NoError(st.t, err)
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	return resp, b.String()
}

// login opens the printed URL and keeps the cookie it gets.
func (st *site) login() {
	st.t.Helper()
	u, err := url.Parse(st.s.URL("127.0.0.1"))
	require.NoError(st.t, err)
	resp, _ := st.do("GET", "/?"+u.RawQuery, "", nil)
	require.Equal(st.t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(st.t, "/", resp.Header.Get("Location"), "the secret is taken off the address bar")
	cs := resp.Cookies()
	require.Len(st.t, cs, 1)
	assert.True(st.t, cs[0].HttpOnly)
	assert.Equal(st.t, http.SameSiteStrictMode, cs[0].SameSite)
	st.jar = http.Header{"Cookie": {cs[0].Name + "=" + cs[0].Value}}
}

// post sends a form as the page does: its origin and its token.
func (st *site) post(path string, form url.Values) (*http.Response, string) {
	st.t.Helper()
	form.Set("token", st.s.token)
	return st.do("POST", path, form.Encode(), map[string]string{"Origin": st.base})
}

func TestAddressRules(t *testing.T) {
	cases := []struct {
		cfg      Config
		want     string
		loopback bool
		err      string
	}{
		{Config{}, "127.0.0.1:0", true, ""},
		{Config{Port: 8765}, "127.0.0.1:8765", true, ""},
		{Config{Listen: "localhost:9000"}, "localhost:9000", true, ""},
		{Config{Listen: "[::1]:9000"}, "[::1]:9000", true, ""},
		{Config{Listen: "0.0.0.0:9000"}, "", false, "--tls-cert and --tls-key, or --insecure-http"},
		{Config{Listen: "192.168.1.5"}, "", false, "--insecure-http"},
		{Config{Listen: "0.0.0.0:9000", InsecureHTTP: true}, "0.0.0.0:9000", false, ""},
		{Config{Listen: "0.0.0.0:9000", TLSCert: "c.pem", TLSKey: "k.pem"}, "0.0.0.0:9000", false, ""},
		{Config{TLSCert: "c.pem"}, "", false, "both --tls-cert and --tls-key"},
		{Config{Listen: ":9000", InsecureHTTP: true}, "", false, "names no host"},
		{Config{Listen: "127.0.0.1:99999"}, "", false, "0 to 65535"},
	}
	for _, c := range cases {
		addr, lb, err := c.cfg.Address()
		if c.err != "" {
			require.Error(t, err, "%+v", c.cfg)
			assert.Contains(t, err.Error(), c.err)
			continue
		}
		require.NoError(t, err, "%+v", c.cfg)
		assert.Equal(t, c.want, addr)
		assert.Equal(t, c.loopback, lb, "%+v", c.cfg)
	}
}

func TestSecretCookieAndHost(t *testing.T) {
	st := newSite(t, Config{Title: "work"})
	for _, p := range []string{"/", "/state", "/events", "/static/app.js", "/screen?pane=%251", "/?token=wrong"} {
		resp, body := st.do("GET", p, "", nil)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s without the secret: %s", p, body)
		assert.NotContains(t, body, "%1", "%s shows nothing of the fleet", p)
	}
	st.login()
	resp, body := st.do("GET", "/", "", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	for _, want := range []string{`data-pane="%1"`, "claude", "lead", `data-pane="%2"`, "codex", "its question " + qid + " waits for an answer", "Which cache?", `value="A"`, `value="B"`} {
		assert.Contains(t, body, want)
	}
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'")
	// DNS rebinding: the cookie is there, the Host is another site's.
	for _, h := range []string{"evil.example", "evil.example:" + st.s.port, "127.0.0.1:1", "10.0.0.1:" + st.s.port} {
		resp, body = st.do("GET", "/", "", map[string]string{"Host": h})
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "Host %s: %s", h, body)
	}
	resp, _ = st.do("GET", "/", "", map[string]string{"Host": "localhost:" + st.s.port})
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestPostNeedsOriginAndToken(t *testing.T) {
	st := newSite(t, Config{})
	st.login()
	form := url.Values{"id": {qid}, "answer": {"B"}}
	cases := []struct {
		name string
		hdr  map[string]string
		body string
	}{
		{"no token", map[string]string{"Origin": st.base}, form.Encode()},
		{"a wrong token", map[string]string{"Origin": st.base}, form.Encode() + "&token=00"},
		{"another origin", map[string]string{"Origin": "http://evil.example"}, form.Encode() + "&token=" + st.s.token},
		{"no origin", nil, form.Encode() + "&token=" + st.s.token},
		{"a null origin", map[string]string{"Origin": "null"}, form.Encode() + "&token=" + st.s.token},
	}
	for _, c := range cases {
		resp, body := st.do("POST", "/answer", c.body, c.hdr)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s: %s", c.name, body)
	}
	resp, body := st.do("POST", "/send", "to=%251&text=hi", map[string]string{"Origin": st.base})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, body)
	answers, tells := st.src.done()
	assert.Empty(t, answers, "a refused post answers nothing")
	assert.Empty(t, tells, "a refused post tells nothing")
	// Without the cookie, even with token and origin.
	st.jar = nil
	resp, _ = st.post("/answer", form)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

func TestAnswerFromThePage(t *testing.T) {
	st := newSite(t, Config{})
	st.login()
	resp, body := st.post("/answer", url.Values{"id": {qid}, "answer": {"B"}, "message": {"left filled in"}})
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, "recorded B")
	answers, _ := st.src.done()
	require.Len(t, answers, 1)
	assert.Regexp(t, `^task-1\.q1-a1b2 B  web 127\.0\.0\.1:\d+$`, answers[0], "recorded as the web channel with the address; a message only with a deny")
	// Answered: a second answer is refused before the engine, and nothing is recorded.
	resp, body = st.post("/answer", url.Values{"id": {qid}, "answer": {"A"}})
	assert.Equal(t, http.StatusConflict, resp.StatusCode, body)
	assert.Contains(t, body, "no longer pending")
	answers, _ = st.src.done()
	assert.Len(t, answers, 1)
}

func TestBadInput(t *testing.T) {
	st := newSite(t, Config{})
	st.login()
	big := url.Values{"id": {qid}, "answer": {strings.Repeat("x", maxBody)}}
	cases := []struct {
		name   string
		path   string
		body   string
		ctype  string
		status int
		says   string
	}{
		{"oversized", "/answer", big.Encode() + "&token=" + st.s.token, "", http.StatusRequestEntityTooLarge, "over"},
		{"malformed", "/answer", "id=%zz&token=" + st.s.token, "", http.StatusBadRequest, "could not be read"},
		{"not a form", "/answer", `{"id":"x"}`, "application/json", http.StatusUnsupportedMediaType, "form"},
		{"no id", "/answer", "answer=A&token=" + st.s.token, "", http.StatusBadRequest, "id is missing"},
		{"not an id", "/answer", "id=..%2Fetc&answer=A&token=" + st.s.token, "", http.StatusBadRequest, "not a question id"},
		{"an unknown id", "/answer", "id=other-9.q3-ffff&answer=A&token=" + st.s.token, "", http.StatusConflict, "no longer pending"},
		{"id twice", "/answer", "id=" + qid + "&id=" + qid + "&answer=A&token=" + st.s.token, "", http.StatusBadRequest, "once"},
		{"no text", "/send", "to=%251&token=" + st.s.token, "", http.StatusBadRequest, "text is missing"},
		{"no target", "/send", "text=hi&token=" + st.s.token, "", http.StatusBadRequest, "to is missing"},
		{"bad utf-8", "/send", "to=%251&text=%ff&token=" + st.s.token, "", http.StatusBadRequest, "UTF-8"},
	}
	for _, c := range cases {
		h := map[string]string{"Origin": st.base}
		if c.ctype != "" {
			h["Content-Type"] = c.ctype
		}
		resp, body := st.do("POST", c.path, c.body, h)
		assert.Equal(t, c.status, resp.StatusCode, "%s: %s", c.name, body)
		var r reply
		require.NoError(t, json.Unmarshal([]byte(body), &r), "%s: %s", c.name, body)
		assert.Contains(t, r.Message, c.says, c.name)
	}
	resp, body := st.do("GET", "/screen?pane=%259", "", nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "a pane that is gone: %s", body)
	resp, _ = st.do("GET", "/screen?pane=x", "", nil)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	answers, tells := st.src.done()
	assert.Empty(t, answers, "bad input answers nothing")
	assert.Empty(t, tells, "bad input tells nothing")
}

func TestSendAndScreen(t *testing.T) {
	st := newSite(t, Config{})
	st.login()
	resp, body := st.post("/send", url.Values{"to": {"%1"}, "text": {"look at the log"}})
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, "through its outbox")
	_, tells := st.src.done()
	require.Len(t, tells, 1)
	assert.Regexp(t, `^%1 look at the log web 127\.0\.0\.1:\d+$`, tells[0])
	resp, body = st.do("GET", "/screen?pane=%251", "", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	var r reply
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	assert.Contains(t, r.Message, "$ ls")
	assert.NotContains(t, r.Message, "\x1b", "a screen's control strings never reach the page")
	assert.NotContains(t, r.Message, "\x07")
}

func TestReadOnly(t *testing.T) {
	st := newSite(t, Config{ReadOnly: true})
	st.login()
	resp, body := st.do("GET", "/", "", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "Which cache?", "the questions are shown")
	assert.NotContains(t, body, "<button", "no button at all")
	assert.NotContains(t, body, "<form", "no form at all")
	assert.NotContains(t, body, st.s.token, "no token to post with")
	for _, p := range []string{"/answer", "/send"} {
		resp, body = st.post(p, url.Values{"id": {qid}, "answer": {"A"}, "to": {"%1"}, "text": {"x"}})
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s: %s", p, body)
		assert.Contains(t, body, "read-only")
	}
	answers, tells := st.src.done()
	assert.Empty(t, answers)
	assert.Empty(t, tells)
}

func TestHarmlessText(t *testing.T) {
	st := newSite(t, Config{})
	st.src.mu.Lock()
	st.src.panes[0].Name = "<script>alert(1)</script>\x1b]2;pwned\x07"
	st.src.mu.Unlock()
	require.Eventually(t, func() bool {
		return strings.Contains(st.s.hub.snapshot().panes[0].Name, "script")
	}, 5*time.Second, 20*time.Millisecond)
	st.login()
	_, body := st.do("GET", "/", "", nil)
	assert.NotContains(t, body, "<script>alert")
	assert.Contains(t, body, "&lt;script&gt;alert(1)&lt;/script&gt;")
	assert.NotContains(t, body, "\x1b")
	assert.NotContains(t, body, "\x07")
}

// TestEventsPush: a change of the model reaches an open page as an event, without a reload.
func TestEventsPush(t *testing.T) {
	st := newSite(t, Config{})
	st.login()
	req, _ := http.NewRequest("GET", st.base+"/events", nil)
	req.Header["Cookie"] = st.jar["Cookie"]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := client.Do(req.WithContext(ctx))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	events := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- d
			}
		}
		close(events)
	}()
	first := <-events
	assert.Contains(t, first, "Which cache?")
	start := time.Now()
	st.s.hub.addEvent(watch.WatchEvent{At: time.Now(), Kind: "exchange", ID: "20260101-000000-abcd", Event: "submitted", Detail: map[string]string{"pane": "%2"}})
	for d := range events {
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(d), &v))
		if strings.Contains(v["feed"].(string), "20260101-000000-abcd") {
			assert.Less(t, time.Since(start), time.Second)
			return
		}
	}
	t.Fatal("the event never reached the page")
}

// TestFeedStartsWithRecent: the newest exchanges are on the page before any event comes, each
// beside its panes, as on the console.
func TestFeedStartsWithRecent(t *testing.T) {
	x := &exchange.Exchange{Session: "s", Seq: 3, ID: "20260101-000000-beef", Orchestrator: "%1", Worker: "%2", Host: "gpu1",
		State: "submitted", Summary: "Count the files", SentAt: time.Now()}
	st := newSite(t, Config{}, x)
	require.Eventually(t, func() bool { return len(st.s.hub.snapshot().feed) == 1 }, 5*time.Second, 10*time.Millisecond)
	st.login()
	_, body := st.do("GET", "/", "", nil)
	assert.Contains(t, body, `<span class="fid">20260101-000000-beef</span>`, "the feed's first row")
	assert.Contains(t, body, "#3 %1→%2 on gpu1 submitted: Count the files", "the pane's latest exchange, with its host")
}

// TestTLS: over HTTPS the cookie is Secure and a change needs the https origin.
func TestTLS(t *testing.T) {
	src := &fakeSource{panes: []fleet.FleetPane{pane("%1", "claude", "idle", "")}, qs: []*questions.QuestionStatus{question()}}
	s, err := New(src, Config{TLSCert: "c.pem", TLSKey: "k.pem"})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.hub.run(ctx, nil)
	ts := httptest.NewTLSServer(s.Handler())
	defer ts.Close()
	s.bind(ts.Listener.Addr(), true)
	c := ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	u, err := url.Parse(s.URL("127.0.0.1"))
	require.NoError(t, err)
	assert.Equal(t, "https", u.Scheme)
	resp, err := c.Get(u.String())
	require.NoError(t, err)
	resp.Body.Close()
	require.Len(t, resp.Cookies(), 1)
	ck := resp.Cookies()[0]
	assert.True(t, ck.Secure, "the cookie goes over TLS only")
	post := func(origin string) int {
		req, _ := http.NewRequest("POST", ts.URL+"/answer", strings.NewReader(url.Values{"id": {qid}, "answer": {"A"}, "token": {s.token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		req.AddCookie(ck)
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusForbidden, post(strings.Replace(ts.URL, "https:", "http:", 1)), "the plain-HTTP origin is another origin")
	assert.Equal(t, http.StatusOK, post(ts.URL))
}
