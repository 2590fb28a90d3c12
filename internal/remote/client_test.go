package remote

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

func TestArgv(t *testing.T) {
	ssh := &Client{Host: settings.HostDef{Name: "gpu1", Via: []string{"ssh", "-F", "cfg", "gpu1"}, Wcomm: "/usr/local/bin/wcomm"}}
	assert.Equal(t, []string{"ssh", "-o", "ControlMaster=no", "-o", "ControlPath=/c/s", "-o", "BatchMode=yes", "-F", "cfg", "gpu1", "/usr/local/bin/wcomm", "__remote"},
		ssh.argv("/c/s"))
	// No master for docker or kubectl: their argv is the via as given.
	docker := &Client{Host: settings.HostDef{Name: "box", Via: []string{"docker", "exec", "-i", "box"}, Wcomm: "wcomm"}}
	assert.False(t, docker.Host.ViaSSH())
	assert.Equal(t, []string{"docker", "exec", "-i", "box", "wcomm", "__remote"}, docker.argv(""))
	assert.True(t, settings.HostDef{Via: []string{"/usr/bin/ssh", "h"}}.ViaSSH())
}

// exitErr runs a shell that exits with code, for an *exec.ExitError of that code.
func exitErr(t *testing.T, code string) error {
	t.Helper()
	err := exec.Command("sh", "-c", "exit "+code).Run()
	require.Error(t, err)
	return err
}

func TestClassify(t *testing.T) {
	c := &Client{Host: settings.HostDef{Name: "gpu1", Via: []string{"ssh", "gpu1"}, Wcomm: "wcomm"}}
	for _, tc := range []struct {
		name, code, stderr string
		want               error
		says               string
	}{
		{"refused key", "255", "root@127.0.0.2: Permission denied (publickey).", ErrRefusedKey, "ssh-copy-id gpu1"},
		{"unknown host key", "255", "No ED25519 host key is known for h1 and you have requested strict checking.\nHost key verification failed.", ErrUnknownHost, "'ssh gpu1 true'"},
		{"changed host key", "255", "@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @", ErrUnknownHost, "accept it once"},
		{"no wcomm", "127", "bash: line 1: wcomm: command not found", ErrNoRemoteWcomm, "set hosts.gpu1.wcomm"},
		{"no such file", "127", "bash: line 1: /opt/wcomm: No such file or directory", ErrNoRemoteWcomm, "install wcomm there"},
		{"refused", "255", "ssh: connect to host 127.0.0.2 port 2222: Connection refused", ErrUnreachable, "host gpu1 is unreachable"},
		{"timeout", "255", "ssh: connect to host 10.0.0.1 port 22: Connection timed out", ErrUnreachable, "Connection timed out"},
		{"old wcomm", "2", "wcomm: unknown command \"__remote\"", ErrWireVersion, "does not know the remote wire"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.classify(exitErr(t, tc.code), tc.stderr)
			assert.True(t, errors.Is(err, tc.want), "%v", err)
			assert.Contains(t, err.Error(), tc.says)
		})
	}
	// A control character in ssh's stderr never reaches the message raw.
	err := c.classify(exitErr(t, "255"), "Connection refused \x1b[31mred")
	assert.NotContains(t, err.Error(), "\x1b")
}

// replyOf feeds out to a replyWriter in pieces of n bytes and returns the reply it kept.
func replyOf(out string, n int) []byte {
	w := &replyWriter{max: 1 << 20, over: func() {}}
	for len(out) > 0 {
		k := min(n, len(out))
		if _, err := w.Write([]byte(out[:k])); err != nil {
			return nil
		}
		out = out[k:]
	}
	return w.reply()
}

func TestReplyLine(t *testing.T) {
	for _, n := range []int{1, 3, 1 << 20} {
		assert.Equal(t, `{"v":1,"ok":true}`, string(replyOf("welcome to gpu1\n{\"v\":1,\"ok\":true}\n", n)), "pieces of %d", n)
		assert.Equal(t, `{"v":1}`, string(replyOf("{\"old\":1}\n  {\"v\":1}  \r\nbye\n\n", n)), "the last reply-like line, trimmed")
		assert.Equal(t, `{"v":1`, string(replyOf("{\"old\":1}\n\t{\"v\":1", n)), "an unterminated last line is the last line")
		assert.Nil(t, replyOf("usage: wcomm ...\n", n))
		assert.Nil(t, replyOf("", n))
	}
}

// Past its bound a reply writer fails, calls over once and keeps nothing; a line that is not
// reply-like is dropped as it comes, whatever its length.
func TestReplyWriterBound(t *testing.T) {
	overs := 0
	w := &replyWriter{max: 1 << 20, over: func() { overs++ }}
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for i := 0; i < 15; i++ {
		_, err := w.Write(chunk)
		require.NoError(t, err)
	}
	assert.Nil(t, w.line, "a line that is not the reply is not kept")
	_, err := w.Write([]byte("\n{" + strings.Repeat("a", 64<<10)))
	assert.ErrorIs(t, err, errTooMuch)
	_, err = w.Write([]byte("}\n"))
	assert.ErrorIs(t, err, errTooMuch)
	assert.Equal(t, 1, overs)
	assert.Nil(t, w.reply())

	b := &boundedBuffer{max: 10, over: func() { overs++ }}
	_, err = b.Write([]byte("0123456789"))
	require.NoError(t, err)
	_, err = b.Write([]byte("a"))
	assert.ErrorIs(t, err, errTooMuch)
	_, err = b.Write([]byte("b"))
	assert.ErrorIs(t, err, errTooMuch)
	assert.Equal(t, 2, overs)
	assert.Equal(t, "0123456789", b.String())
}

func TestBackoff(t *testing.T) {
	assert.Equal(t, []string{"1s", "2s", "4s", "8s", "16s", "32s", "1m0s", "1m0s"},
		func() (out []string) {
			for n := 1; n <= 8; n++ {
				out = append(out, backoff(n).String())
			}
			return
		}())
}
