package tmuxcomm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"
)

func TestZZKitMeasure(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	w := startWatch(t, e, WatchOptions{})
	var lat []time.Duration
	for i := 0; i < 200; i++ {
		x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("x")})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			w.next(t, 1)
		}
		w.next(t, 3)
		t0 := time.Now()
		if _, err := e.as("%2").Notify(context.Background(), NotifyOptions{Ref: x.ID, Body: []byte("y")}); err != nil {
			t.Fatal(err)
		}
		evs := w.next(t, 2)
		_ = evs
		lat = append(lat, time.Since(t0))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	fmt.Println("notify->notified event: p50", lat[len(lat)/2], "p99", lat[len(lat)*99/100], "max", lat[len(lat)-1])
	// a big root: start-up time and memory
	root, _ := e.root(false)
	for s := 0; s < 300; s++ {
		dir := filepath.Join(root, fmt.Sprintf("20260117-1200%02d-o%d-w%d", s%60, s, s+1000))
		os.Mkdir(dir, 0o700)
		for n := 1; n < 40; n += 2 {
			writeSeedRequest(t, dir, n, fmt.Sprintf("20260117-120000-%04x", s*100+n), "task")
		}
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	t0 := time.Now()
	w2 := startWatch(t, e, WatchOptions{})
	fmt.Println("start over", 300*20+200, "requests in 301 folders:", time.Since(t0))
	runtime.GC()
	runtime.ReadMemStats(&m1)
	fmt.Println("heap after start (both watches):", (m1.HeapAlloc-m0.HeapAlloc)/1024, "KiB")
	_ = w2
}
