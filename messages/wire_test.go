package messages

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWireRoundTrip(t *testing.T) {
	req := WireRequest{Version: WireVersion, Op: WireSend, ID: "20260117-120000-a1b2", To: "%7", From: "%3",
		Capability: ReadOnly, Body: []byte("line one\n\x1b[31m binary \x00 safe"), NoQueue: true}
	line, err := FormatWire(req)
	require.NoError(t, err)
	assert.Equal(t, byte('\n'), line[len(line)-1])
	assert.NotContains(t, string(line[:len(line)-1]), "\n", "one line, whatever the body holds")
	got, err := ParseWireRequest(line)
	require.NoError(t, err)
	assert.Equal(t, req, *got)

	rep := WireReply{Version: 2, OK: false, Error: "this wcomm speaks wire version 2", Code: 1}
	line, err = FormatWire(rep)
	require.NoError(t, err)
	back, err := ParseWireReply(line)
	require.NoError(t, err)
	assert.Equal(t, rep, *back)

	_, err = ParseWireReply([]byte("usage: wcomm COMMAND\n"))
	assert.ErrorContains(t, err, "not a wcomm wire reply")
}

func TestValidHostName(t *testing.T) {
	for _, ok := range []string{"gpu1", "dev.box", "a_b-c", "10.0.0.1"} {
		assert.NoError(t, ValidHostName(ok), ok)
	}
	for _, bad := range []string{"", "-x", "a:b", "a/b", "a b", "é", "x\n"} {
		assert.Error(t, ValidHostName(bad), bad)
	}
}
