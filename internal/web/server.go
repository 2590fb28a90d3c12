// Package web is the fleet in a browser, 'wcomm web': the console's view (every pane's agent and
// state and what it waits for, the pending questions and permission prompts, each pane's latest
// exchanges, the live feed) on one page, answered with a click and pushed live (server-sent
// events). It reads and acts through the console's own Source (internal/ui) and hears of changes
// through the same watch feed, so the page and the console show one model.
//
// It is safe by default: it listens on loopback only; every request needs the secret of the URL
// it printed (kept as an HttpOnly, SameSite=Strict cookie), and a Host header that names this
// server (DNS rebinding); a request that changes anything needs the page's own origin and its
// token (CSRF); --read-only serves no action at all. Everything it serves is embedded: no build
// step, nothing fetched from elsewhere.
package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/wcomm/wcomm/internal/ui"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
)

// Source is the console's Source with what the page does besides: answer as the web channel
// with a deny's message, tell an agent the person's words, and read a pane's screen.
// ui.EngineSource implements it over the engine.
type Source interface {
	ui.Source
	AnswerFrom(ctx context.Context, id, raw, message, source string) (string, error)
	Tell(ctx context.Context, target, text, from string) (string, error)
	Screen(ctx context.Context, pane messages.PaneID) (string, error)
}

// Config is how the page is served.
type Config struct {
	// Listen is the address: "" is 127.0.0.1 on Port; a host alone takes Port too.
	Listen string
	// Port is the port when Listen names none (0: a free one).
	Port int
	// TLSCert and TLSKey serve HTTPS; InsecureHTTP allows plain HTTP off loopback.
	TLSCert, TLSKey string
	InsecureHTTP    bool
	// ReadOnly serves the view and no action.
	ReadOnly bool
	// Title names what the page shows (the session, or "all sessions").
	Title string
}

// usagef is a usage error: the command line exits 2 on it.
func usagef(format string, a ...any) error { return tmuxcomm.Usagef(format, a...) }

// Address checks the listening rules and returns the address to listen on and whether it is
// loopback: off loopback, the page needs TLS or the word --insecure-http.
func (c Config) Address() (addr string, loopback bool, err error) {
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return "", false, usagef("give both --tls-cert and --tls-key, or neither")
	}
	host, port := "127.0.0.1", strconv.Itoa(c.Port)
	if c.Listen != "" {
		h, p, err := net.SplitHostPort(c.Listen)
		if err != nil {
			h = strings.Trim(c.Listen, "[]") // a host alone
			p = port
		}
		if h == "" {
			return "", false, usagef("--listen %s names no host: give one, such as 127.0.0.1:8765 or 0.0.0.0:8765 (every address)", c.Listen)
		}
		if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 65535 {
			return "", false, usagef("--listen %s: the port is not a number from 0 to 65535", c.Listen)
		}
		host, port = h, p
	}
	loopback = isLoopback(host)
	if !loopback && c.TLSCert == "" && !c.InsecureHTTP {
		return "", false, usagef("--listen %s is reachable from other machines: give --tls-cert and --tls-key, or --insecure-http to serve the secret and the answers in plain text", c.Listen)
	}
	return net.JoinHostPort(host, port), loopback, nil
}

// isLoopback reports whether host is a loopback address or localhost.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server serves the page over a Source.
type Server struct {
	src    Source
	cfg    Config
	secret string // the URL's secret, then the cookie's value
	token  string // the page's token, asked of every POST
	hub    *hub
	tls    bool
	port   string
	// allowAnyIP lets a Host header name any IP address (off loopback, where the machine's own
	// addresses are not known in advance); a name is never allowed but localhost: a name is what
	// DNS rebinding points at this server.
	allowAnyIP bool
	now        func() time.Time
}

// cookieName is the session cookie's name.
const cookieName = "wcomm_web"

// maxBody bounds a POST's body: an answer or a message, never a file.
const maxBody = 64 << 10

// newSecret is 32 random bytes in hex.
func newSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// New returns a server over src; Run starts the feed behind it.
func New(src Source, cfg Config) (*Server, error) {
	secret, err := newSecret()
	if err != nil {
		return nil, err
	}
	token, err := newSecret()
	if err != nil {
		return nil, err
	}
	return &Server{src: src, cfg: cfg, secret: secret, token: token, hub: newHub(src), tls: cfg.TLSCert != "", now: time.Now}, nil
}

// bind says which port and which Host headers the server answers to, once it listens.
func (s *Server) bind(addr net.Addr, loopback bool) {
	_, s.port, _ = net.SplitHostPort(addr.String())
	s.allowAnyIP = !loopback
}

// URL is the one URL to open: it carries the secret, which the page trades for its cookie.
func (s *Server) URL(host string) string {
	scheme := "http"
	if s.tls {
		scheme = "https"
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return fmt.Sprintf("%s://%s/?token=%s", scheme, net.JoinHostPort(host, s.port), s.secret)
}

// Serve listens as cfg says, prints the URL to out (and a warning to warn when the page goes
// out in plain text off loopback), and serves until ctx ends. feed is the live feed (the
// engine's Watch).
func Serve(ctx context.Context, src Source, feed ui.Watcher, cfg Config, out, warn io.Writer) error {
	addr, loopback, err := cfg.Address()
	if err != nil {
		return err
	}
	s, err := New(src, cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w; choose another with --listen or the settings' web.port", addr, err)
	}
	s.bind(ln.Addr(), loopback)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.hub.run(ctx, feed)
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	if !loopback && !s.tls {
		fmt.Fprintf(warn, "wcomm web: warning: serving plain HTTP on %s: anyone on the network path can read the secret, the page and the answers; use --tls-cert and --tls-key\n", ln.Addr())
	}
	if cfg.ReadOnly {
		fmt.Fprintln(warn, "wcomm web: read-only: the page shows the fleet and takes no action")
	}
	fmt.Fprintf(out, "wcomm web: open %s\n", s.URL(addr))
	if f, ok := out.(interface{ Sync() error }); ok {
		_ = f.Sync()
	}
	errc := make(chan error, 1)
	go func() {
		if s.tls {
			errc <- hs.ServeTLS(ln, cfg.TLSCert, cfg.TLSKey)
		} else {
			errc <- hs.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, stop := context.WithTimeout(context.Background(), 2*time.Second)
		defer stop()
		_ = hs.Shutdown(sctx)
		return ctx.Err()
	}
}

// Handler is the whole site, behind its checks.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /static/{name}", s.static)
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("GET /state", s.stateJSON)
	mux.HandleFunc("GET /screen", s.screen)
	mux.HandleFunc("POST /answer", s.answer)
	mux.HandleFunc("POST /send", s.send)
	return s.guard(mux)
}

// guard refuses, in this order: a Host that is not this server's, a request without the secret,
// and a request that would change something without the page's origin and token (or at all,
// read-only). The URL's secret is traded for the cookie and taken off the address bar.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		if !s.hostOK(r.Host) {
			fail(w, http.StatusForbidden, "this server answers to its own address only (Host %q refused: a page of another site must not reach it)", messages.SanitizeField(r.Host))
			return
		}
		if q := r.URL.Query().Get("token"); q != "" && r.Method == http.MethodGet {
			if !equal(q, s.secret) {
				fail(w, http.StatusUnauthorized, "this link's secret is not this server's: open the URL 'wcomm web' printed when it started")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.secret, Path: "/", HttpOnly: true, Secure: s.tls, SameSite: http.SameSiteStrictMode})
			u := *r.URL
			v := u.Query()
			v.Del("token")
			u.RawQuery = v.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		c, err := r.Cookie(cookieName)
		if err != nil || !equal(c.Value, s.secret) {
			fail(w, http.StatusUnauthorized, "open the URL 'wcomm web' printed when it started: its secret lets this browser in")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if s.cfg.ReadOnly {
				fail(w, http.StatusForbidden, "this page is read-only ('wcomm web --read-only'): it takes no action")
				return
			}
			if !s.sameOrigin(r) {
				fail(w, http.StatusForbidden, "refused: a change must come from this page itself (its origin), not from another site")
				return
			}
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
				fail(w, http.StatusUnsupportedMediaType, "the page posts a form (application/x-www-form-urlencoded), not %q", messages.SanitizeField(ct))
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxBody)
			if err := r.ParseForm(); err != nil {
				var mb *http.MaxBytesError
				if errors.As(err, &mb) {
					fail(w, http.StatusRequestEntityTooLarge, "the request is over %d bytes: an answer or a message is shorter", maxBody)
					return
				}
				fail(w, http.StatusBadRequest, "the form could not be read (%v): reload the page and try again", messages.SanitizeField(err.Error()))
				return
			}
			if !equal(r.PostForm.Get("token"), s.token) {
				fail(w, http.StatusForbidden, "refused: the request lacks this page's token; reload the page and try again")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// hostOK says whether a Host header names this server: its port, and a loopback address,
// localhost or (off loopback) any IP address.
func (s *Server) hostOK(host string) bool {
	h, p, err := net.SplitHostPort(host)
	if err != nil || p != s.port {
		return false
	}
	if isLoopback(h) {
		return true
	}
	return s.allowAnyIP && net.ParseIP(strings.Trim(h, "[]")) != nil
}

// sameOrigin says whether a request comes from this page: its Origin (every browser sends one
// with a POST) is this server's scheme and Host.
func (s *Server) sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" || o == "null" {
		return false
	}
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	scheme := "http"
	if s.tls {
		scheme = "https"
	}
	return u.Scheme == scheme && u.Host == r.Host && u.Path == ""
}

// equal compares secrets in constant time.
func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
