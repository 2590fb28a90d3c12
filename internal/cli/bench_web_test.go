//go:build bench

package cli

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// benchWeb measures the web page as a person meets it: how long an event (a send between two
// panes) takes to show on an open page in a real browser, from the send's exit, through the
// watch feed, the page's model and its server-sent events, to the element in the page.
func (b *bxBench) benchWeb() {
	path := chromiumPath()
	if path == "" {
		b.params = append(b.params, "web: no row, no chromium ('make deps' installs it)")
		return
	}
	b.session("webb", "bash", "--norc", "--noprofile", "-i")
	for i := 0; i < 2; i++ {
		b.s.tmux("split-window", "-d", "-t", "webb", "--", "bash", "--norc", "--noprofile", "-i")
	}
	panes := strings.Fields(b.s.tmux("list-panes", "-t", "webb", "-F", "#{pane_id}"))
	require.Len(b.t, panes, 3)
	ctx, cancel := context.WithCancel(context.Background())
	argv := b.s.wcommArgv("web", "--all")
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = cleanEnv()
	out, err := cmd.StdoutPipe()
	require.NoError(b.t, err)
	stderr := &syncBuf{}
	cmd.Stderr = stderr
	require.NoError(b.t, cmd.Start())
	defer func() {
		cancel()
		_ = cmd.Wait()
	}()
	url, _ := readURL(b.t, out, stderr)
	page := browserAt(b.t, path, 1440, 900)
	run(b.t, page, time.Minute, chromedp.Navigate(url), visible(paneSel(panes[2])))
	var ds []time.Duration
	measure(b.n(10, 3), 0, func() time.Duration {
		sent := b.must(b.s.wcommIn(panes[1], nil, "send", "--to", panes[2], "--", "a request for the web bench"))
		id := strings.Fields(sent.Stdout)[0]
		start := time.Now()
		js := fmt.Sprintf(`[...document.querySelectorAll('#feed .fid')].some((e) => e.textContent === %q)`, id)
		deadline := start.Add(30 * time.Second)
		shown := false
		for !shown && time.Now().Before(deadline) {
			if shown = get(b.t, page, chromedp.Evaluate[bool](js)); !shown {
				time.Sleep(2 * time.Millisecond) // a poll's interval: each look is a round trip to the browser
			}
		}
		took := time.Since(start)
		require.True(b.t, shown, "exchange %s never showed on the page", id)
		ds = append(ds, took)
		return took
	})
	b.rowFloor("web: an event shows on the page (from send's exit)", "time", bxMedian(ds[1:]), math.NaN(), 1, "the issue's bound", fmt.Sprintf("%d / —", len(ds)-1))
	b.params = append(b.params, "web: 'wcomm web --all' with a headless chromium (chromedp) on its page at 1440x900, 3 idle bash panes; an event is a send between two of them, timed from the send's exit to the page's feed showing its id (looked up in the page every 2 ms, each look a DevTools round trip)")
}
