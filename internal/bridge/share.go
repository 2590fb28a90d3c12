package bridge

// One poller per bot. The Bot API serves one getUpdates caller per bot at a time (a second one
// ends the first with 409 Conflict) and confirms every update below the offset it is called
// with, so two bridges that poll one bot (two roots, or two channel configurations naming the
// same bot) take, and confirm, each other's answers. The bridges of one bot therefore meet in a
// folder of their own, in the user's runtime folder (0700, this user's, outside any root), named
// by a digest of the API address and the token. Each listens there on a unix socket (the peer's
// uid checked) named by its own folder. The one that holds the folder's poll.lock polls: for each
// update it asks every bridge of the bot whose the update is (the post a button or a reply is on,
// the token a command names), has that one handle it and waits until it has, and only then moves
// the bot's offset past it. An update no bridge owns is handled once, by one bridge of its chat
// (it answers "no question has the token"); a list of what waits (/pending, /status) by every
// bridge of its chat, each for its own questions. When the poller ends, another bridge of the bot
// takes the lock and goes on from the offset the poller kept.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/lock"
	files "github.com/wcomm/wcomm/tmuxcomm/store"
)

// verdict is how much an update is a bridge's own, from none to most.
type verdict int

const (
	vNo      verdict = iota // another chat's
	vChat                   // its chat's, about no question of its own
	vGlobal                 // a list of what waits (/pending, /status ...): each bridge of the chat tells its own
	vKnown                  // about a decided question of its own
	vPending                // about a pending question of its own
)

// Bounds of the calls between the bridges of one bot: judging reads the bridge's state only;
// handling may record an answer and wake a worker.
const (
	judgeTimeout  = 10 * time.Second
	handleTimeout = 2 * time.Minute
)

// meetDir is the folder where the bridges of the bot at api with token meet: in
// $XDG_RUNTIME_DIR/wcomm when that is set, else in the temporary folder's wcomm-UID.
func meetDir(api, token string, getenv func(string) string) string {
	base := filepath.Join(os.TempDir(), "wcomm-"+strconv.Itoa(os.Getuid()))
	if x := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(x) {
		base = filepath.Join(x, "wcomm")
	}
	return filepath.Join(base, "tg-"+messages.ContentSHA256([]byte(api + "\n" + token))[:16])
}

// shareReq is what the poller asks a bridge of the bot; shareResp its answer.
type shareReq struct {
	Op        string          `json:"op"` // "judge" or "handle"
	Update    json.RawMessage `json:"update"`
	Ambiguous bool            `json:"ambiguous,omitempty"`
}

type shareResp struct {
	Verdict verdict `json:"verdict"`
	Done    bool    `json:"done"`
}

// member is this bridge's place among the bot's bridges while it receives.
type member struct {
	dir  string // the meeting folder
	id   string // this bridge's name there: a digest of its own folder
	sock string
	ln   *net.UnixListener
}

// join makes the meeting folder (and its parent) private and ours, and listens there.
func (t *telegram) join(ctx context.Context) (*member, error) {
	for _, d := range []string{filepath.Dir(t.meet), t.meet} {
		if err := files.EnsureDir(d, true); err != nil {
			return nil, fmt.Errorf("telegram: the folder where the bridges of one bot meet: %w", err)
		}
	}
	m := &member{dir: t.meet, id: messages.ContentSHA256([]byte(t.hub.st.path))[:16]}
	m.sock = filepath.Join(m.dir, m.id+".sock")
	// A socket left by this bridge's last run (killed): no other process runs this bridge, as it
	// holds the bridge's lock.
	if st, err := os.Lstat(m.sock); err == nil && st.Mode()&os.ModeSocket != 0 {
		_ = os.Remove(m.sock)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: m.sock, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("telegram: listen for the other bridges of this bot: %w", err)
	}
	_ = os.Chmod(m.sock, 0o600)
	m.ln = ln
	go t.serve(ctx, ln)
	return m, nil
}

func (m *member) close() { m.ln.Close() }

// serve answers the poller's questions until the listener closes.
func (t *telegram) serve(ctx context.Context, ln *net.UnixListener) {
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			return
		}
		go t.serveConn(ctx, c)
	}
}

func (t *telegram) serveConn(ctx context.Context, c *net.UnixConn) {
	defer c.Close()
	if err := peerIsUs(c); err != nil {
		t.hub.logf("telegram: refused a connection to this bridge's socket: %v", err)
		return
	}
	_ = c.SetDeadline(time.Now().Add(handleTimeout))
	var req shareReq
	if err := json.NewDecoder(io.LimitReader(c, 16<<20)).Decode(&req); err != nil {
		return
	}
	var u tgUpdate
	if err := json.Unmarshal(req.Update, &u); err != nil {
		return
	}
	var resp shareResp
	switch req.Op {
	case "judge":
		resp.Verdict = t.judge(u)
	case "handle":
		t.handle(ctx, u, req.Ambiguous)
		resp.Done = true
	default:
		return
	}
	_ = json.NewEncoder(c).Encode(resp)
}

// ask sends req to the bridge listening on sock and reads its answer.
func ask(ctx context.Context, sock string, req shareReq, bound time.Duration) (shareResp, error) {
	var resp shareResp
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return resp, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if err := peerIsUs(conn.(*net.UnixConn)); err != nil {
		return resp, err
	}
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return resp, err
	}
	err = json.NewDecoder(bufio.NewReader(io.LimitReader(conn, 1<<16))).Decode(&resp)
	return resp, err
}

// judge says how much u is this bridge's own: a button or a reply on one of its posts, a
// command naming one of its tokens, in its chat.
func (t *telegram) judge(u tgUpdate) verdict {
	rank := func(q Question) verdict {
		if t.hub.pending(q.ID) {
			return vPending
		}
		return vKnown
	}
	switch {
	case u.Callback != nil:
		cb := u.Callback
		if cb.Message == nil || cb.Message.Chat.ID != t.cfg.ChatID {
			return vNo
		}
		if q, ok := t.hub.ByRef("telegram", strconv.FormatInt(cb.Message.MessageID, 10)); ok {
			return rank(q)
		}
		return vChat
	case u.Message != nil:
		m := u.Message
		if m.Chat.ID != t.cfg.ChatID {
			return vNo
		}
		if cmd, ok := tgCommand(m); ok {
			mm := tgCommandRe.FindStringSubmatch(cmd)
			switch {
			case mm == nil:
				return vChat
			case mm[2] == "":
				switch strings.ToLower(mm[1]) {
				case "pending", "status", "summary", "timeline":
					return vGlobal
				}
				return vChat
			}
			if q, ok := t.hub.ByToken(mm[2]); ok {
				return rank(q)
			}
			return vChat
		}
		if m.ReplyTo != nil {
			if q, ok := t.hub.ByRef("telegram", strconv.FormatInt(m.ReplyTo.MessageID, 10)); ok {
				return rank(q)
			}
		}
		return vChat
	}
	return vNo
}

// Receive takes the bot's updates: as its poller when no other bridge of the bot polls, else
// from the poller, through this bridge's socket.
func (t *telegram) Receive(ctx context.Context) error {
	// Joined first, before any network call: posting waits for it (Post).
	m, err := t.join(ctx)
	t.joinOnce.Do(func() { close(t.joined) })
	if err != nil {
		return err
	}
	defer m.close()
	if err := t.learnName(ctx); err != nil {
		return err
	}
	lockPath := filepath.Join(m.dir, "poll.lock")
	b := t.hub.newBackoff()
	for ctx.Err() == nil {
		f, err := lock.Try(lockPath, syscall.LOCK_EX)
		if err != nil {
			if !errors.Is(err, syscall.EWOULDBLOCK) {
				return fmt.Errorf("telegram: lock %s: %w", lockPath, err)
			}
			// Another bridge of this bot polls and hands this one its updates; take over
			// when it ends.
			sleepCtx(ctx, t.takeOver)
			continue
		}
		err = t.poll(ctx, m)
		f.Close()
		if err == nil || ctx.Err() != nil {
			return nil
		}
		// Back off without the poll lock, so that another bridge of the bot may poll, and
		// without leaving the meeting: the poller still hands this bridge its updates.
		d := b.next(retryAfter(err))
		t.hub.logf("telegram: receiving failed: %v; trying again in %s", err, d)
		sleepCtx(ctx, d)
	}
	return nil
}

// poll long-polls the bot and has each update handled by the bridge it belongs to, moving the
// bot's offset past an update only once it is handled: an update is never lost, a 409 (another
// program polls the bot) included, and never applied twice.
func (t *telegram) poll(ctx context.Context, m *member) error {
	offPath := filepath.Join(m.dir, "offset")
	offset := readOffset(offPath)
	t.hub.st.view(func(s *State) { offset = max(offset, s.TelegramOffset) })
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, t.wait+15*time.Second)
		ups, raws, err := t.c.getUpdates(pctx, offset, t.wait)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var te *tgError
			if errors.As(err, &te) && te.Code == 409 {
				return fmt.Errorf("%w (another program polls this bot: every bridge of one bot must be this wcomm's)", err)
			}
			return err
		}
		for i, u := range ups {
			// An update below the offset was handled already (the service sent it again, or
			// twice in one batch): it is never applied twice, and the offset never goes back.
			if u.UpdateID < offset {
				continue
			}
			if err := t.dispatch(ctx, m, u, raws[i]); err != nil {
				return err
			}
			offset = u.UpdateID + 1
			if err := files.WriteFile(offPath, []byte(strconv.FormatInt(offset, 10)+"\n"), 0o600); err != nil {
				return fmt.Errorf("telegram: save the offset: %w", err)
			}
		}
	}
	return nil
}

func readOffset(path string) int64 {
	line, err := files.ReadFirstLine(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
	return n
}

// dispatch asks every bridge of the bot (this one directly, the others through their sockets)
// how much u is its own, and has the owner handle it. A bridge that does not answer is not
// running: it is left out. An error (a bridge that took the update and did not say it handled
// it) leaves the offset where it is, so the update comes again.
func (t *telegram) dispatch(ctx context.Context, m *member, u tgUpdate, raw json.RawMessage) error {
	type judged struct {
		sock string // "" for this bridge
		v    verdict
	}
	all := []judged{{"", t.judge(u)}}
	socks, _ := filepath.Glob(filepath.Join(m.dir, "*.sock"))
	sort.Strings(socks)
	for _, s := range socks {
		if s == m.sock {
			continue
		}
		resp, err := ask(ctx, s, shareReq{Op: "judge", Update: raw}, judgeTimeout)
		if err != nil {
			continue
		}
		all = append(all, judged{s, resp.Verdict})
	}
	best := vNo
	for _, j := range all {
		best = max(best, j.v)
	}
	var to []judged
	for _, j := range all {
		if j.v == best {
			to = append(to, j)
		}
	}
	ambiguous := false
	switch best {
	case vNo:
		to = to[:1] // this bridge: it logs that it ignored another chat's update
	case vChat:
		to = to[:1]
	case vKnown, vPending:
		ambiguous = len(to) > 1
		to = to[:1]
	}
	for _, j := range to {
		if j.sock == "" {
			t.handle(ctx, u, ambiguous)
			continue
		}
		resp, err := ask(ctx, j.sock, shareReq{Op: "handle", Update: raw, Ambiguous: ambiguous}, handleTimeout)
		if err == nil && !resp.Done {
			err = errors.New("it did not say it was done")
		}
		if err != nil {
			return fmt.Errorf("telegram: the bridge at %s did not handle update %d: %w", j.sock, u.UpdateID, err)
		}
	}
	return nil
}
