package paneops

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRealLateCallsFenced: a sender killed while its paste, or its Enter, was still on its way (a
// call handed to the resident runs whenever the resident gets to it, after the sender is gone)
// never has it run after recovery has read the pane's marks: Marks fences what the pane does not
// record yet, and what recovery then does itself runs once. Before, the late paste landed after
// recovery had found it missing and pasted the message again: the message arrived twice.
func TestRealLateCallsFenced(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := context.Background()
	rec := s.startRecorder(0)

	// A paste made by a sender that then died, still on its way when recovery looks.
	const mark = "m-late-paste"
	d := s.delivery(rec.pane, "the killed sender's request", true)
	d.Mark = mark
	buffer := newBufferName()
	late := markFenced(guardArgs(rec.pane, buffer, mark, false), mark, fencePaste, time.Now())
	gotPasted, gotEntered, err := s.c.Marks(ctx, rec.pane, mark)
	require.NoError(t, err)
	assert.Empty(t, gotPasted+gotEntered, "nothing recorded: recovery delivers the message again")
	out, err := s.c.Run(ctx, strings.NewReader(string(d.Content)), late...)
	require.NoError(t, err)
	assert.Equal(t, refusedMark(buffer), strings.TrimSpace(out), "the late paste refused")
	// Recovery delivers it again, by calls made after it looked: they run.
	res, err := s.c.Deliver(ctx, d)
	require.NoError(t, err)
	assert.True(t, res.Submitted)

	// An Enter made by a sender that then died, its paste recorded and the Enter not.
	const mark2 = "m-late-enter"
	d2 := s.delivery(rec.pane, "a request whose Enter was on its way", false)
	d2.Mark = mark2
	res, err = s.c.Deliver(ctx, d2)
	require.NoError(t, err)
	require.True(t, res.Pasted)
	lateEnter := markFenced(enterArgs(rec.pane, false, mark2, false, ""), mark2, fenceEnter, time.Now())
	gotPasted, gotEntered, err = s.c.Marks(ctx, rec.pane, mark2)
	require.NoError(t, err)
	assert.Equal(t, mark2, gotPasted)
	assert.Equal(t, mark, gotEntered, "the Enter recorded is the first delivery's")
	out, err = s.c.Run(ctx, nil, lateEnter...)
	require.NoError(t, err)
	assert.Equal(t, enterRefused, strings.TrimSpace(out), "the late Enter refused")
	d2.Submit = true
	res, err = s.c.Resume(ctx, d2)
	require.NoError(t, err)
	assert.True(t, res.Submitted)

	// A last request: once it is recorded, everything before it is.
	_, err = s.c.Deliver(ctx, s.delivery(rec.pane, "the last request", true))
	require.NoError(t, err)
	got := rec.wait(3)
	want := []record{pasted("the killed sender's request", true), pasted("a request whose Enter was on its way", true), pasted("the last request", true)}
	for i := range want {
		assert.Equal(t, want[i].String(), got[i].String())
	}
	assert.Len(t, rec.records(), 3, "each request once, and no stray Enter")
	assert.Empty(t, s.buffers())
}

// TestRealFencedMarks: a fenced call records its token in its mark's record (one record a call);
// Marks reads the mark without the token, takes a recorded Enter for its paste as well, and
// settle finds the token there.
func TestRealFencedMarks(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := context.Background()
	rec := s.startRecorder(0)

	// A paste with its Enter in one call: only the Enter is recorded, and it says both.
	buf := newBufferName()
	_, err := s.c.Run(ctx, strings.NewReader("with its enter"), fenced(guardArgsEnter(rec.pane, buf, "m-1", false, true, ""), rec.pane, "tok1")...)
	require.NoError(t, err)
	// Recorded in the server's hidden environment, not as a pane option: setting one makes the
	// server redraw every attached client.
	opts, err := s.c.Run(ctx, nil, "show-options", "-p", "-t", string(rec.pane))
	require.NoError(t, err)
	assert.NotContains(t, opts, "@wcomm", "the paste set a pane option")
	env, err := s.c.Run(ctx, nil, "show-environment", "-g", "-h", recordName(markEntered, rec.pane))
	require.NoError(t, err)
	assert.Equal(t, recordName(markEntered, rec.pane)+"=m-1.tok1", strings.TrimSpace(env))
	gotPasted, entered, err := s.c.Marks(ctx, rec.pane, "m-1")
	require.NoError(t, err)
	assert.Equal(t, []string{"m-1", "m-1"}, []string{gotPasted, entered})
	ran, err := s.c.settle(ctx, rec.pane, "tok1")
	require.NoError(t, err)
	assert.True(t, ran, "the token recorded with the mark")

	// A paste alone, then its Enter, each fenced.
	buf = newBufferName()
	_, err = s.c.Run(ctx, strings.NewReader("paste, then enter"), fenced(guardArgs(rec.pane, buf, "m-2", false), rec.pane, "tok2")...)
	require.NoError(t, err)
	gotPasted, entered, err = s.c.Marks(ctx, rec.pane, "m-2")
	require.NoError(t, err)
	assert.Equal(t, []string{"m-2", "m-1"}, []string{gotPasted, entered})
	ran, err = s.c.settle(ctx, rec.pane, "tok2")
	require.NoError(t, err)
	assert.True(t, ran)
	// Marks fenced the Enter of m-2, which it found unrecorded: a late one is refused.
	out, err := s.c.Run(ctx, nil, markFenced(enterArgs(rec.pane, false, "m-2", false, ""), "m-2", fenceEnter, time.Now().Add(-time.Second))...)
	require.NoError(t, err)
	assert.Equal(t, enterRefused, strings.TrimSpace(out))
	_, err = s.c.Run(ctx, nil, fenced(enterArgs(rec.pane, false, "m-2", false, ""), rec.pane, "tok3")...)
	require.NoError(t, err)
	_, entered, err = s.c.Marks(ctx, rec.pane, "")
	require.NoError(t, err)
	assert.Equal(t, "m-2", entered)
	ran, err = s.c.settle(ctx, rec.pane, "tok4")
	require.NoError(t, err)
	assert.False(t, ran, "a token never recorded is fenced")

	got := rec.wait(2)
	assert.Equal(t, pasted("with its enter", true).String(), got[0].String())
	assert.Equal(t, pasted("paste, then enter", true).String(), got[1].String())
	assert.Empty(t, s.buffers())
}
