package safeout

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTermAndJSON(t *testing.T) {
	var b bytes.Buffer
	n, err := Term{&b}.Write([]byte("ok\x1b]0;owned\x07 \x1b[2J done\n"))
	require.NoError(t, err)
	assert.Equal(t, 23, n, "the bytes given, not those written")
	assert.NotContains(t, b.String(), "\x1b")
	assert.Contains(t, b.String(), "done\n")

	b.Reset()
	_, err = io.WriteString(Term{&b}, "\x1b[31mred")
	require.NoError(t, err)
	assert.NotContains(t, b.String(), "\x1b")

	b.Reset()
	_, err = JSON{&b}.Write([]byte("{\"text\":\"a\u009b2Jb\x7f\"}\n"))
	require.NoError(t, err)
	assert.NotContains(t, b.String(), "\u009b")
	assert.NotContains(t, b.String(), "\x7f")
	assert.Contains(t, b.String(), `\u009b`)
}

func TestBufferedKeepsTheCleaner(t *testing.T) {
	var b bytes.Buffer
	w, flush := Buffered(Term{&b})
	_, isTerm := w.(Term)
	assert.True(t, isTerm)
	_, err := io.WriteString(w, "a\x1b[2Jb")
	require.NoError(t, err)
	assert.Empty(t, b.String(), "held in the buffer until the flush")
	require.NoError(t, flush())
	assert.NotContains(t, b.String(), "\x1b")

	b.Reset()
	w, flush = Buffered(JSON{&b})
	_, isJSON := w.(JSON)
	assert.True(t, isJSON)
	require.NoError(t, flush())

	w, flush = Buffered(&b)
	_, err = io.WriteString(w, "\x1b")
	require.NoError(t, err)
	require.NoError(t, flush())
	assert.Equal(t, "\x1b", b.String(), "a plain writer is only buffered")
}
