package door

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"
)

// writeTimeout bounds the connect and the write: a session that does not take two lines in this
// time is treated as gone, and the message waits for another route.
const writeTimeout = 5 * time.Second

// authLine and userLine are the two lines of peer protocol 1.
type authLine struct {
	Type  string `json:"type"`
	Token string `json:"token"`
}

type userLine struct {
	Type     string      `json:"type"`
	Message  userMessage `json:"message"`
	Priority string      `json:"priority"`
}

type userMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Write delivers text through the door fd names: Codex's app-server (writeCodex), else the
// Claude Code session's messaging socket: one connection, the auth line and
// the user line, then close. Before it connects it checks again that the session's process is the
// one Find matched (a session that ended since is ErrNotWritten, and nothing is sent). Any error
// before every byte is written wraps ErrNotWritten: the session cannot act on a partial line. The
// socket gives no reply: a nil error means the session has the message; its next turn is the proof.
func (f Finder) Write(ctx context.Context, fd Finding, text string) error {
	if !fd.UsesSocket() {
		return fmt.Errorf("%w: pane has no door of its agent's (%s)", ErrNotWritten, fd.Why)
	}
	if fd.Door == CodexAppServer {
		return f.writeCodex(ctx, fd, text)
	}
	if start, err := f.procStart(fd.PID); err != nil || start != fd.procStart {
		return fmt.Errorf("%w: Claude Code session %d has ended", ErrNotWritten, fd.PID)
	}
	token, err := f.token(fd.dir, fd.PID, fd.procStart)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotWritten, err)
	}
	a, err := json.Marshal(authLine{Type: "auth", Token: token})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotWritten, err)
	}
	u, err := json.Marshal(userLine{Type: "user", Message: userMessage{Role: "user", Content: text}, Priority: "next"})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotWritten, err)
	}
	msg := make([]byte, 0, len(a)+len(u)+2)
	msg = append(append(append(append(msg, a...), '\n'), u...), '\n')

	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", fd.Socket)
	if err != nil {
		// net errors name the socket path, never the token.
		return fmt.Errorf("%w: %w", ErrNotWritten, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetWriteDeadline(dl)
	}
	n, err := conn.Write(msg)
	if err != nil || n != len(msg) {
		if err == nil {
			err = errors.New("short write")
		}
		return fmt.Errorf("%w: wrote %d of %d bytes: %w", ErrNotWritten, n, len(msg), err)
	}
	// Half-close so the session reads the end of the stream after the two lines; a Unix socket
	// keeps written bytes readable after the writer closes.
	if uc, ok := conn.(*net.UnixConn); ok {
		_ = uc.CloseWrite()
	}
	return nil
}
