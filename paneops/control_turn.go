package paneops

// One wcomm control client at a time in its first moments on a tmux server, across processes.
// tmux 3.3a's server crashes when it tells its control clients of something (a client detached,
// a window opened) while one of them is still being made one: it writes to a state it has not
// made yet (seen here as segfaults at address 0x20, and "no server running" in the tests that
// start a resident while another ends). A wcomm control client that detaches tells the others;
// so a start takes the server's turn and holds it until its client has spoken (the server then
// made it one), and a stop holds it while its client detaches. Other programs' notifications are
// not in wcomm's hands.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/paneops/lock"
)

// controlTurnWait bounds the wait for the turn, and how long a start holds it at most.
const controlTurnWait = 5 * time.Second

// controlTurnDir is the folder of the turns' lock files: this user's, in the temporary folder.
func controlTurnDir() string {
	return filepath.Join(os.TempDir(), "wcomm-ctl-"+strconv.Itoa(os.Getuid()))
}

// socketFile is the socket s names, as tmux finds it: a server named by -L and by -S has one turn,
// and a control client asks that file whether a server listens (serverListens).
func socketFile(s Server) string {
	if s.Socket != "" {
		return s.Socket
	}
	name := s.Name
	if name == "" {
		name = "default"
	}
	tmp := os.Getenv("TMUX_TMPDIR")
	if tmp == "" {
		tmp = "/tmp"
	}
	return filepath.Join(tmp, "tmux-"+strconv.Itoa(os.Getuid()), name)
}

// controlTurn takes the turn of server s, waiting up to controlTurnWait, and returns its release
// (safe to call more than once). Best effort: without a lock folder of this user's own (a link,
// another user's, other permissions) or the turn in time, it goes on without it and release does
// nothing: the turn lowers the odds of a tmux crash, it guards nothing of wcomm's own.
func controlTurn(s Server) (release func()) {
	noop := func() {}
	dir := controlTurnDir()
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return noop
	}
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		return noop
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); !ok || int(sys.Uid) != os.Getuid() {
		return noop
	}
	sum := sha256.Sum256([]byte(socketFile(s)))
	f, err := os.OpenFile(filepath.Join(dir, hex.EncodeToString(sum[:8])+".lock"),
		os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return noop
	}
	ctx, cancel := context.WithTimeout(context.Background(), controlTurnWait)
	defer cancel()
	if err := lock.Flock(ctx, f, syscall.LOCK_EX, nil); err != nil {
		f.Close()
		return noop
	}
	var once sync.Once
	return func() { once.Do(func() { f.Close() }) } // closing the file lets go of the lock
}
