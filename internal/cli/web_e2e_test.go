package cli

// End-to-end tests of 'wcomm web' in a real browser: the real binary (which hands over to
// wcomm-ui) against a private tmux server, driven with chromedp through Debian's chromium in
// headless mode. chromedp is a test dependency only: it speaks the DevTools protocol to the
// browser, so the page is tested as a person meets it (its script, the pushed events, the clicks),
// which an HTTP client cannot do.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// webServer is a running 'wcomm web' and the URL it printed.
type webServer struct {
	url  string // the one-time URL with the secret
	base string // http://127.0.0.1:PORT
	err  *syncBuf
}

// syncBuf is a process's stderr, read while it is written.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startWeb runs 'wcomm web' with args until the test ends and returns the URL it printed.
func (q *qWorld) startWeb(args ...string) *webServer {
	q.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := q.cmd(ctx, call{env: q.env}, append([]string{"web", "-S", q.sock}, args...)...)
	out, err := cmd.StdoutPipe()
	require.NoError(q.t, err)
	ws := &webServer{err: &syncBuf{}}
	cmd.Stderr = ws.err
	require.NoError(q.t, cmd.Start())
	q.t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	ws.url, ws.base = readURL(q.t, out, ws.err)
	return ws
}

// startWebAsPerson runs 'wcomm web' with args as the person does, typed into a plain shell pane of
// its own (a permission answered on the page is judged by who started its server), until the
// world ends, and returns the URL it printed.
func (q *qWorld) startWebAsPerson(args ...string) *webServer {
	q.t.Helper()
	pane := q.bashPane("")
	base := filepath.Join(q.t.TempDir(), "web")
	all := append([]string{"WCOMM_ROOT=" + q.root}, q.env...)
	script := personLine(q.bin, q.work, all, q.withSocket(append([]string{"web"}, args...)), base+".out", base+".err", base+".code")
	require.NoError(q.t, os.WriteFile(base+".sh", []byte(script), 0o600))
	q.typeIn(pane, "bash "+shellQuote(base+".sh"))
	ws := &webServer{err: &syncBuf{}}
	var line string
	waitFor(q.t, 30*time.Second, func() bool {
		data, _ := os.ReadFile(base + ".out")
		line, _, _ = strings.Cut(string(data), "\n")
		return strings.Contains(string(data), "\n")
	}, "the URL 'wcomm web' prints")
	m := regexp.MustCompile(`(http://127\.0\.0\.1:\d+)/\?token=[0-9a-f]{64}$`).FindStringSubmatch(line)
	require.NotNil(q.t, m, "the URL line: %q", line)
	ws.url, ws.base = m[0], m[1]
	return ws
}

// readURL reads the URL 'wcomm web' prints first, and its base.
func readURL(t *testing.T, out io.Reader, stderr fmt.Stringer) (string, string) {
	t.Helper()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case l, ok := <-lines:
		require.True(t, ok, "wcomm web printed nothing: %s", stderr)
		m := regexp.MustCompile(`(http://127\.0\.0\.1:\d+)/\?token=[0-9a-f]{64}$`).FindStringSubmatch(l)
		require.NotNil(t, m, "the URL line: %q", l)
		return m[0], m[1]
	case <-time.After(30 * time.Second):
		t.Fatalf("wcomm web printed no URL in 30s: %s", stderr)
	}
	return "", ""
}

// chromiumPath is the browser the tests drive, "" when there is none.
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser is a headless chromium for the test, or the test is skipped (failed with REQUIRE_TMUX=1,
// as CI runs it: make test installs chromium).
func browser(t *testing.T, w, h int) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		if os.Getenv("REQUIRE_TMUX") != "" {
			t.Fatal("no chromium for the browser tests: 'make deps' installs it")
		}
		t.Skip("no chromium: 'make deps' installs it")
	}
	return browserAt(t, path, w, h)
}

// browserAt starts the browser at path, its window w x h, for the rest of the test.
func browserAt(t *testing.T, path string, w, h int) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(w, h),
		chromedp.UserDataDir(t.TempDir()))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	require.NoError(t, chromedp.Do(ctx)) // starts the browser
	return ctx
}

// run runs browser actions with a deadline.
func run(t *testing.T, ctx context.Context, d time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	require.NoError(t, chromedp.Do(c, actions...))
}

// get runs one browser action that returns a value, with a deadline.
func get[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, a)
	require.NoError(t, err)
	return v
}

// textOf is the text of the first element sel (CSS) matches.
func textOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return get(t, ctx, chromedp.Text(chromedp.CSS(sel)))
}

func visible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(sel))
}

func gone(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitNotPresent(chromedp.CSS(sel))
}

func click(sel string) chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(sel)) }

// paneSel is the selector of a pane's row, by its id.
func paneSel(id string) string { return fmt.Sprintf(`li.pane[data-pane=%q]`, id) }

func qSel(id string) string { return fmt.Sprintf(`article[data-q=%q]`, id) }

// shots is where the screenshots go: docs/ when asked (make web-shots), else the test's folder.
func shots(t *testing.T) string {
	if d := os.Getenv("WCOMM_WEB_SHOTS"); d != "" {
		return d
	}
	return t.TempDir()
}

func TestE2EWeb(t *testing.T) {
	t.Parallel()
	p := newPermWorld(t)
	other, otherLog := p.recorderPane()
	ws := p.qWorld.startWebAsPerson("--all")

	// Without the secret: refused, nothing of the fleet shown.
	resp, err := http.Get(ws.base + "/")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.NotContains(t, string(body), p.worker)

	ctx := browser(t, 1440, 900)
	run(t, ctx, 30*time.Second, chromedp.Navigate(ws.url), visible(`#panes`))
	loc := get(t, ctx, chromedp.Location())
	assert.NotContains(t, loc, "token=", "the secret leaves the address bar")

	// Every pane of the server, with its agent.
	ids := strings.Fields(p.tmux("list-panes", "-a", "-F", "#{pane_id}"))
	require.GreaterOrEqual(t, len(ids), 3)
	for _, id := range ids {
		run(t, ctx, 15*time.Second, visible(paneSel(id)))
		assert.NotEmpty(t, strings.TrimSpace(textOf(t, ctx, paneSel(id)+" .agent")), "pane %s's agent", id)
	}
	assert.Equal(t, "generic", textOf(t, ctx, paneSel(other)+" .agent"), "the recorder, a program no profile knows")

	// A worker's ask shows without a reload, and a click answers it.
	{
		b := p.startAs(p.worker, nil, qAskArgs("web-1", "--to", p.orch)...)
		j := p.waitAsking(b, "web-1")
		start := time.Now()
		run(t, ctx, 10*time.Second, visible(qSel(j.ID)+` button[value="B"]`))
		took := time.Since(start)
		assert.Less(t, took, 2*time.Second, "the question shows within 2 s of being asked")
		card := textOf(t, ctx, qSel(j.ID))
		assert.Contains(t, card, "Should the auth module use bcrypt or argon2?")
		assert.Contains(t, card, "Use argon2 (new dep)")

		// A post without the page's token, or from another origin, changes nothing.
		jar := cookieFor(t, ws)
		for _, h := range []map[string]string{{"Origin": ws.base}, {"Origin": "http://evil.example"}} {
			tok := ""
			if h["Origin"] != ws.base {
				tok = "&token=" + pageToken(t, ws, jar)
			}
			r := postForm(t, ws.base+"/answer", jar, h, "id="+url.QueryEscape(j.ID)+"&answer=A"+tok)
			assert.Equal(t, http.StatusForbidden, r, "%v", h)
		}
		r := getWith(t, ws.base+"/", jar, map[string]string{"Host": "rebound.example:" + strings.Split(ws.base, ":")[2]})
		assert.Equal(t, http.StatusForbidden, r, "a foreign Host header")
		assert.Nil(t, p.question("web-1").Answer, "the refused posts answered nothing")

		// The screenshots, with a question waiting.
		dir := shots(t)
		shot(t, ctx, 1440, 900, filepath.Join(dir, "web-desktop.png"))
		shot(t, ctx, 390, 844, filepath.Join(dir, "web-phone.png"))
		run(t, ctx, 10*time.Second, chromedp.EmulateReset())

		run(t, ctx, 10*time.Second, click(qSel(j.ID)+` button[value="B"]`))
		res := b.wait(t, 20*time.Second)
		requireCode(t, 0, res)
		assert.Equal(t, qAnswerBlock("Use argon2 (new dep)", "web-1", "user", j.ID), res.stdout)
		got := p.question("web-1")
		require.NotNil(t, got.Answer)
		assert.Regexp(t, `^web 127\.0\.0\.1:\d+$`, got.Answer.Source, "recorded as the web channel with its address")
		run(t, ctx, 10*time.Second, gone(qSel(j.ID)))
		assert.Contains(t, textOf(t, ctx, `#status`), "Use argon2")
	}

	// A Claude Code permission prompt (its hook) allowed from the page.
	{
		h := p.startHook(p.worker, "touch from-web.txt")
		j := p.pendingPermission(h, "touch from-web.txt")
		run(t, ctx, 10*time.Second, visible(qSel(j.ID)+` button[value="allow"]`))
		assert.Contains(t, textOf(t, ctx, qSel(j.ID)), "touch from-web.txt")
		assert.Contains(t, textOf(t, ctx, paneSel(p.worker)+" .why"), "permission: Bash touch from-web.txt", "why the pane waits")
		run(t, ctx, 10*time.Second, click(qSel(j.ID)+` button[value="allow"]`))
		d := decision(t, h.wait(t, 20*time.Second))
		assert.Equal(t, "allow", d["behavior"])
		assert.Regexp(t, `^web 127\.0\.0\.1:\d+$`, p.question("permission").Answer.Source)
		run(t, ctx, 10*time.Second, gone(qSel(j.ID)))

		// Denied, with the words the model reads.
		h = p.startHook(p.worker, "rm -rf build")
		j = p.pendingPermission(h, "rm -rf build")
		run(t, ctx, 10*time.Second, visible(qSel(j.ID)+` input[name="message"]`),
			chromedp.SendKeys(chromedp.CSS(qSel(j.ID)+` input[name="message"]`), "keep the build folder"),
			// With the keyboard alone: the button focused, then Enter.
			chromedp.Focus(chromedp.CSS(qSel(j.ID)+` button[value="deny"]`)), chromedp.KeyEvent("\r"))
		d = decision(t, h.wait(t, 20*time.Second))
		assert.Equal(t, "deny", d["behavior"])
		assert.Equal(t, "keep the build folder", d["message"])
	}

	// A page whose server an agent's tool (here, this test's process: no terminal) started
	// answers no permission prompt: whoever holds its URL is not the person.
	{
		agents := p.startWeb("--all")
		h := p.startHook(p.worker, "touch not-the-person.txt")
		j := p.pendingPermission(h, "touch not-the-person.txt")
		jar := cookieFor(t, agents)
		r := postForm(t, agents.base+"/answer", jar, map[string]string{"Origin": agents.base},
			"id="+url.QueryEscape(j.ID)+"&answer=allow&token="+url.QueryEscape(pageToken(t, agents, jar)))
		assert.Equal(t, http.StatusForbidden, r, "refused: the caller is not the person, which is no failure of the server")
		assert.Nil(t, p.questionByID(j.ID).Answer, "not answered")
		requireCode(t, 0, p.asPerson(nil, "answer", j.ID, "deny"))
		assert.Equal(t, "deny", decision(t, h.wait(t, 20*time.Second))["behavior"])
	}

	// A pane's screen, on request, its control strings made harmless.
	{
		sh := p.bashPane("")
		p.tmux("send-keys", "-t", sh, "-l", `printf 'on screen \033]2;pwned\007 line\n'`)
		p.tmux("send-keys", "-t", sh, "Enter")
		p.waitScreen(sh, "on screen")
		run(t, ctx, 10*time.Second, visible(paneSel(sh)), click(paneSel(sh)+` details.screen summary`))
		var screen string
		waitFor(t, 10*time.Second, func() bool {
			screen = get(t, ctx, chromedp.Evaluate[string](`document.querySelector('`+paneSel(sh)+` details.screen pre').textContent`))
			return strings.Contains(screen, "on screen")
		}, "the screen of pane %s; the page shows %q", sh, &screen)
		assert.NotContains(t, screen, "\x1b")
		assert.NotContains(t, screen, "\x07")
	}

	// A message from the page reaches its agent once, through the outbox.
	{
		run(t, ctx, 10*time.Second,
			chromedp.SendKeys(chromedp.CSS(`#send-to`), other),
			chromedp.SendKeys(chromedp.CSS(`#send-text`), "Please rebuild the index."),
			click(`#send button[type=submit]`))
		var status string
		waitFor(t, 10*time.Second, func() bool {
			status = textOf(t, ctx, `#status`)
			return strings.Contains(status, "pane "+other+":")
		}, "the page to say where the message went; it says %q", &status)
		assert.Regexp(t, `pane `+regexp.QuoteMeta(other)+`: (delivered now through its outbox|queued in its outbox)`, status, "the route shown")
		got := p.pastes(otherLog, 1)
		require.Len(t, got, 1)
		assert.Contains(t, got[0], "Please rebuild the index.")
		peek := p.as("", nil, "inbox", "--peek", "--pane", other, "--json")
		requireCode(t, 0, peek)
		assert.NotContains(t, peek.stdout, "rebuild the index", "nothing waits to be typed in again")
	}
}

// TestE2EWebReadOnly: --read-only offers no button and refuses every post.
func TestE2EWebReadOnly(t *testing.T) {
	t.Parallel()
	q := newQWorld(t)
	ws := q.startWeb("--all", "--read-only")
	b := q.startAs(q.worker, nil, qAskArgs("web-ro", "--to", q.orch, "--timeout", "60s")...)
	j := q.waitAsking(b, "web-ro")
	ctx := browser(t, 1440, 900)
	run(t, ctx, 30*time.Second, chromedp.Navigate(ws.url), visible(qSel(j.ID)))
	buttons := get(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('button').length`))
	forms := get(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('form, input, textarea').length`))
	assert.Zero(t, buttons, "no button at all")
	assert.Zero(t, forms, "no form at all")
	jar := cookieFor(t, ws)
	for _, path := range []string{"/answer", "/send"} {
		r := postForm(t, ws.base+path, jar, map[string]string{"Origin": ws.base}, "id="+url.QueryEscape(j.ID)+"&answer=A&to="+url.QueryEscape(q.worker)+"&text=x&token=x")
		assert.Equal(t, http.StatusForbidden, r, path)
	}
	assert.Nil(t, q.question("web-ro").Answer)
	requireCode(t, 0, q.as("", nil, "answer", j.ID, "A"))
	requireCode(t, 0, b.wait(t, 20*time.Second))
	run(t, ctx, 10*time.Second, gone(qSel(j.ID)))
}

// TestE2EWebListen: off loopback, the page needs TLS or the word --insecure-http.
func TestE2EWebListen(t *testing.T) {
	t.Parallel()
	q := newQWorld(t)
	r := q.run(call{env: q.env}, "web", "-S", q.sock, "--listen", "0.0.0.0:0")
	requireCode(t, 2, r)
	assert.Contains(t, r.stderr, "--tls-cert and --tls-key, or --insecure-http")
	ws := q.startWeb("--listen", "0.0.0.0:0", "--insecure-http")
	waitFor(t, 10*time.Second, func() bool { return strings.Contains(ws.err.String(), "warning: serving plain HTTP") },
		"the warning about plain HTTP; stderr: %s", ws.err)
}

// shot takes a screenshot of the whole page at w x h.
func shot(t *testing.T, ctx context.Context, w, h int, path string) {
	t.Helper()
	run(t, ctx, 20*time.Second, chromedp.EmulateViewport(int64(w), int64(h)), chromedp.Sleep(300*time.Millisecond)) // a layout pass
	png := get(t, ctx, chromedp.CaptureScreenshot())
	require.NoError(t, os.WriteFile(path, png, 0o644))
}

// cookieFor trades the URL's secret for the cookie, as the browser does.
func cookieFor(t *testing.T, ws *webServer) string {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(ws.url)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	cs := resp.Cookies()
	require.Len(t, cs, 1)
	return cs[0].Name + "=" + cs[0].Value
}

// pageToken reads the page's token from the page.
func pageToken(t *testing.T, ws *webServer, jar string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", ws.base+"/", nil)
	req.Header.Set("Cookie", jar)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="token" value="([0-9a-f]+)"`).FindSubmatch(b)
	require.NotNil(t, m, "the page's token")
	return string(m[1])
}

func postForm(t *testing.T, u, jar string, hdr map[string]string, body string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", jar)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func getWith(t *testing.T, u, jar string, hdr map[string]string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Cookie", jar)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}
