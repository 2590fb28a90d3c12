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
