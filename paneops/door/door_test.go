package door

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testToken = "0123456789abcdef0123456789abcdef"

// fakeSession is a session folder with one session file, its key file and a listening socket
// that records what it is sent. Logic only: the real session is tested end to end.
type fakeSession struct {
	home, dir, sock string
	pid             int
	start           uint64
	ln              net.Listener
	got             chan []string
}

func newFakeSession(t *testing.T, mutate func(s map[string]any)) *fakeSession {
	t.Helper()
	// A short folder: a socket path is bounded to about 100 bytes.
	base, err := os.MkdirTemp("", "door")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	f := &fakeSession{home: filepath.Join(base, "h"), pid: 4242, start: 51156, got: make(chan []string, 4)}
	f.dir = filepath.Join(f.home, ".claude", "sessions")
	require.NoError(t, os.MkdirAll(f.dir, 0o700))
	f.sock = filepath.Join(base, "s.sock")
	f.ln, err = net.Listen("unix", f.sock)
	require.NoError(t, err)
	require.NoError(t, os.Chmod(f.sock, 0o600))
	t.Cleanup(func() { f.ln.Close() })
	go func() {
		for {
			c, err := f.ln.Accept()
			if err != nil {
				return
			}
			var lines []string
			sc := bufio.NewScanner(c)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			c.Close()
			f.got <- lines
		}
	}()
	s := map[string]any{"pid": f.pid, "sessionId": "s1", "version": "2.1.331", "peerProtocol": 1,
		"kind": "interactive", "tmux": "main:@1.%7", "messagingSocketPath": f.sock, "status": "busy",
		"procStart": fmt.Sprint(f.start)}
	if mutate != nil {
		mutate(s)
	}
	data, err := json.Marshal(s)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, fmt.Sprintf("%d.json", f.pid)), data, 0o644))
	key := fmt.Sprintf(`{"peerToken":%q,"procStart":"%d","pidDomain":"x"}`, testToken, f.start)
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, fmt.Sprintf("%d.abc.key", f.pid)), []byte(key), 0o600))
	return f
}

func (f *fakeSession) finder() Finder {
	return Finder{
		Environ: func(pid int) ([]string, error) {
			if pid != f.pid {
				return []string{"HOME=/nonexistent-home"}, nil
			}
			return []string{"PATH=/bin", "HOME=" + f.home}, nil
		},
		ProcStart: func(pid int) (uint64, error) { return f.start, nil },
	}
}

func TestFindMatchesSessionOfThePane(t *testing.T) {
	f := newFakeSession(t, nil)
	fd := f.finder().Find("%7", []int{100, f.pid})
	require.Equal(t, RouteSocket, fd.Route, fd.Why)
	assert.Equal(t, StatusBusy, fd.Status)
	assert.Equal(t, f.sock, fd.Socket)
	assert.Equal(t, f.pid, fd.PID)
	assert.NotContains(t, fd.Why, testToken)
}

func TestFindTypedWhenNotThisSession(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(s map[string]any)
		pane     string
		start    uint64
		matched  bool // the session is the pane's (its status counts), though typed
		wantWhy  string
		breakDir func(f *fakeSession)
	}{
		{name: "tmux field names another pane", pane: "%8", wantWhy: "not %8"},
		{name: "file of an earlier process with the same pid", pane: "%7", start: 99, wantWhy: "earlier process"},
		{name: "pid field differs", pane: "%7", mutate: func(s map[string]any) { s["pid"] = 1 }, wantWhy: "names pid 1"},
		{name: "older version", pane: "%7", matched: true, mutate: func(s map[string]any) { s["version"] = "2.1.330" }, wantWhy: "older than"},
		{name: "unknown protocol", pane: "%7", matched: true, mutate: func(s map[string]any) { s["peerProtocol"] = 2 }, wantWhy: "peer protocol 2"},
		{name: "not interactive", pane: "%7", matched: true, mutate: func(s map[string]any) { s["kind"] = "sdk" }, wantWhy: "not interactive"},
		{name: "no socket field", pane: "%7", matched: true, mutate: func(s map[string]any) { delete(s, "messagingSocketPath") }, wantWhy: "no messaging socket"},
		{name: "socket gone", pane: "%7", matched: true, breakDir: func(f *fakeSession) { os.Remove(f.sock) }, wantWhy: "gone"},
		{name: "socket others may use", pane: "%7", matched: true, breakDir: func(f *fakeSession) { os.Chmod(f.sock, 0o666) }, wantWhy: "others may connect"},
		{name: "no key file", pane: "%7", matched: true, breakDir: func(f *fakeSession) {
			m, _ := filepath.Glob(filepath.Join(f.dir, "*.key"))
			for _, k := range m {
				os.Remove(k)
			}
		}, wantWhy: "no key file"},
		{name: "session file others may write", pane: "%7", breakDir: func(f *fakeSession) {
			os.Chmod(filepath.Join(f.dir, fmt.Sprintf("%d.json", f.pid)), 0o666)
		}, wantWhy: "written by others"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeSession(t, tt.mutate)
			if tt.breakDir != nil {
				tt.breakDir(f)
			}
			fn := f.finder()
			if tt.start != 0 {
				fn.ProcStart = func(int) (uint64, error) { return tt.start, nil }
			}
			fd := fn.Find(tt.pane, []int{f.pid})
			assert.Equal(t, RouteTyped, fd.Route)
			assert.Contains(t, fd.Why, tt.wantWhy)
			assert.NotContains(t, fd.Why, testToken)
			if tt.matched {
				assert.Equal(t, StatusBusy, fd.Status, "a session of this pane reports its state")
			} else {
				assert.Empty(t, fd.Status, "a session that is not the pane's says nothing of it")
			}
		})
	}
}

func TestFindNoSessionFile(t *testing.T) {
	f := newFakeSession(t, nil)
	fd := f.finder().Find("%7", []int{100, 101})
	assert.Equal(t, RouteTyped, fd.Route)
	assert.Contains(t, fd.Why, "no Claude Code session file")
	assert.Equal(t, RouteTyped, Finder{}.Find("%7", nil).Route)
}

func TestWriteSendsTheTwoLines(t *testing.T) {
	f := newFakeSession(t, nil)
	fn := f.finder()
	fd := fn.Find("%7", []int{f.pid})
	require.True(t, fd.UsesSocket(), fd.Why)
	text := "RESPONSE line \"quoted\"\nsecond line <b>&"
	require.NoError(t, fn.Write(context.Background(), fd, text))
	var lines []string
	select {
	case lines = <-f.got:
	case <-time.After(10 * time.Second):
		t.Fatal("the socket received nothing")
	}
	require.Len(t, lines, 2)
	var a authLine
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &a))
	assert.Equal(t, authLine{Type: "auth", Token: testToken}, a)
	var u userLine
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &u))
	assert.Equal(t, userLine{Type: "user", Message: userMessage{Role: "user", Content: text}, Priority: "next"}, u)
}

func TestWriteNotWritten(t *testing.T) {
	tests := []struct {
		name  string
		after func(f *fakeSession, fn *Finder)
		want  string
	}{
		{name: "session ended after the check", want: "has ended", after: func(f *fakeSession, fn *Finder) {
			fn.ProcStart = func(int) (uint64, error) { return 0, errors.New("no such process") }
		}},
		{name: "pid reused by another process", want: "has ended", after: func(f *fakeSession, fn *Finder) {
			fn.ProcStart = func(int) (uint64, error) { return f.start + 1, nil }
		}},
		{name: "socket unlinked after the check", want: "connect", after: func(f *fakeSession, fn *Finder) {
			f.ln.Close()
			os.Remove(f.sock)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeSession(t, nil)
			fn := f.finder()
			fd := fn.Find("%7", []int{f.pid})
			require.True(t, fd.UsesSocket(), fd.Why)
			tt.after(f, &fn)
			err := fn.Write(context.Background(), fd, "hello")
			require.ErrorIs(t, err, ErrNotWritten)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), testToken)
			select {
			case lines := <-f.got:
				assert.Empty(t, lines, "nothing reached the session")
			default:
			}
		})
	}
	err := Finder{}.Write(context.Background(), typed("no door"), "x")
	assert.ErrorIs(t, err, ErrNotWritten)
}

func TestVersionAtLeast(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{
		{"2.1.331", true}, {"2.1.332", true}, {"2.2.0", true}, {"3", true}, {"2.1.331.1", true},
		{"2.1.330", false}, {"2.0.999", false}, {"", false}, {"2.1.x", false}, {"2.1.331-beta", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, versionAtLeast(tt.v, MinVersion), tt.v)
	}
	assert.Equal(t, "%1", paneOf("main:@1.%1"))
	assert.Equal(t, "%12", paneOf("a.b:@3.%12"))
	assert.Equal(t, "", paneOf("nopane"))
	assert.False(t, strings.Contains(fmt.Sprint(Finding{}), testToken))
}
