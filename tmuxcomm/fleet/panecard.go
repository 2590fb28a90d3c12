package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/proc"
)

// A pane card is what the last lookup of a pane by its id found, kept so that the next send to
// that pane can go without asking tmux again: the lookup is one tmux client, about 2 ms of a
// send's 10. It is only a record, trusted under these checks; when one fails, the sender asks tmux:
//   - the card was written for the same tmux client's socket flags, $TMUX and user
//     (Engine.CardKey), so a card of another server is never read;
//   - before use, in /proc: the pane's process and the server's are the very processes the lookup
//     saw (pid and start time; a pid is never reused by a process started at the same tick), and
//     neither has exited. A closed, dead or respawned pane and a stopped server fail here;
//   - the server's socket file is the one it was (device, inode, mtime): a server started on the
//     same path makes a new one, even while the old one still runs;
//   - at the paste, the server itself checks in the paste's own call that the pane's process and
//     its own pid are still those (paneops.Delivery.Expect). Should anything have changed that the
//     checks above could not see, nothing is pasted and the message waits in the outbox for the
//     deliverer, which looks the pane up again.
//
// Cards live in ROOT/.panes (store.CardsDir), one file per pane (0600, written whole); a
// damaged one is ignored and written again at the next lookup.

// paneCard is one pane's record.
type paneCard struct {
	Key         string             `json:"key"`
	Server      paneops.ServerInfo `json:"server"`
	ServerStart uint64             `json:"server_start"`
	// SocketFile is the server's socket file (socketFile): a server started on the same path
	// makes a new one, even while the old server still runs.
	SocketFile string       `json:"socket_file"`
	Pane       paneops.Pane `json:"pane"`
	PaneStart  uint64       `json:"pane_start"`
	At         time.Time    `json:"at"`
}

// socketFile identifies the file at path by device, inode and modification time ("" when there
// is none). The time tells a new file that was given a freed inode's number; tmux marks attached
// clients by the socket's mode, which changes its ctime, not its mtime.
func socketFile(path string) string {
	var st syscall.Stat_t
	if path == "" || syscall.Stat(path, &st) != nil {
		return ""
	}
	return strconv.FormatUint(uint64(st.Dev), 10) + ":" + strconv.FormatUint(st.Ino, 10) + ":" +
		strconv.FormatInt(st.Mtim.Sec, 10) + "." + strconv.FormatInt(st.Mtim.Nsec, 10)
}

// CardKey names the tmux server a command talks to by what the tmux client is given to find it:
// its -S and -L flags, the socket of $TMUX (used when neither is given), $TMUX_TMPDIR (where -L's
// socket lives) and the user.
func CardKey(socketPath, socketName, tmuxEnv, tmuxTmpdir string) string {
	sock := ""
	if socketPath == "" && socketName == "" {
		sock, _, _ = strings.Cut(tmuxEnv, ",")
	}
	h := sha256.Sum256([]byte(socketPath + "\x00" + socketName + "\x00" + sock + "\x00" + tmuxTmpdir + "\x00" + strconv.Itoa(os.Getuid())))
	return hex.EncodeToString(h[:12])
}

func (f *Finder) CardPath(root string, pane messages.PaneID) string {
	return filepath.Join(root, store.CardsDir, f.CardKey+"-p"+strconv.Itoa(pane.Num())+".json")
}

// cards remembers the cards this process read (store.DirMemo, whose stamp of a file tells a card
// written again: a new file renamed over it): a long-lived sender sends to the same panes again
// and again, and a stat tells it the card it read is still the one there.
var cards store.DirMemo[paneCard]

// CachedPane returns the pane target names and its server from the pane's card, when the target
// is a pane id, cards are on (CardKey) and the card passes its /proc checks.
func (fi *Finder) CachedPane(root, target string) (paneops.Pane, paneops.ServerInfo, bool) {
	if fi.CardKey == "" || fi.NoQueue {
		// Only a strict delivery has the paste check the card: fail-fast mode looks up every time.
		return paneops.Pane{}, paneops.ServerInfo{}, false
	}
	id, err := messages.ParsePaneID(target)
	if err != nil {
		return paneops.Pane{}, paneops.ServerInfo{}, false
	}
	if _, err := store.Dir(root, store.CardsDir, false); err != nil {
		return paneops.Pane{}, paneops.ServerInfo{}, false
	}
	path := fi.CardPath(root, id)
	c, err := cards.Get(path, path, func() (paneCard, error) {
		var c paneCard
		data, err := store.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(data, &c)
		}
		return c, err
	})
	if err != nil || c.Key != fi.CardKey || c.Pane.ID != id || c.Pane.Dead ||
		c.Pane.PID <= 0 || c.Server.PID <= 0 || c.PaneStart == 0 || c.ServerStart == 0 {
		return paneops.Pane{}, paneops.ServerInfo{}, false
	}
	if start, err := proc.ProcStart(c.Server.PID); err != nil || start != c.ServerStart {
		return paneops.Pane{}, paneops.ServerInfo{}, false
	}
	if f := socketFile(c.Server.Socket); f == "" || f != c.SocketFile {
		return paneops.Pane{}, paneops.ServerInfo{}, false
	}
	if start, err := proc.ProcStart(c.Pane.PID); err != nil || start != c.PaneStart {
		return paneops.Pane{}, paneops.ServerInfo{}, false
	}
	return c.Pane, c.Server, true
}

// RecordPane writes what a lookup of a pane found as its card. Best effort: without a card the
// next send asks tmux.
func (f *Finder) RecordPane(root string, p paneops.Pane, srv paneops.ServerInfo) {
	if f.CardKey == "" || p.Dead || p.PID <= 0 || srv.PID <= 0 {
		return
	}
	ps, err1 := proc.ProcStart(p.PID)
	ss, err2 := proc.ProcStart(srv.PID)
	if err1 != nil || err2 != nil {
		return
	}
	sf := socketFile(srv.Socket)
	if sf == "" {
		return
	}
	data, err := json.Marshal(paneCard{Key: f.CardKey, Server: srv, ServerStart: ss, SocketFile: sf, Pane: p, PaneStart: ps, At: f.Now().UTC()})
	if err != nil {
		return
	}
	if _, err := store.Dir(root, store.CardsDir, true); err != nil {
		return
	}
	_ = store.WriteAtomicNoSync(f.CardPath(root, p.ID), data)
}

// CheckPane says whether the pane target names exists, on any session of the server: by its card
// when a send of the last moments looked it up (a pane that never was has none), else by a tmux
// call, whose answer is then carded.
func (f *Finder) CheckPane(ctx context.Context, target string) error {
	root, found, _ := f.ReadRoot()
	if found {
		if _, _, ok := f.CachedPane(root, target); ok {
			return nil
		}
	}
	p, srv, err := f.ResolveWithServer(ctx, target, paneops.Scope{All: true}, false)
	if err != nil {
		return err
	}
	if found {
		f.RecordPane(root, p, srv)
	}
	return nil
}
