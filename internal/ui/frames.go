package ui

import (
	"reflect"
	"sync"
	"time"
	"unsafe"

	tea "charm.land/bubbletea/v2"
)

// frames stops Bubble Tea's frame ticker while the console is idle and starts it again at the
// next message. Bubble Tea (v2.1.1) draws only at its frames and wakes at every one, changed or
// not: 20 a second, each a wake-up of the process (with the Go runtime's own, five or more
// context switches), the whole of an idle console's cost once the panes and files are heard of
// by their events. The ticker is the Program's own, unexported; it is reached by reflection (the
// version is pinned in go.mod, and TestFramesFindTheTicker fails should an upgrade rename it,
// in which case the console keeps drawing at every frame, as before). A view changes only in
// Update, so a frame ticker stopped idleAfter after the last message has drawn the last view.
type frames struct {
	p     *tea.Program
	every time.Duration

	mu      sync.Mutex
	t       *time.Ticker // nil until found
	looked  bool
	stopped bool
	last    time.Time   // the last message
	timer   *time.Timer // the idle check, pending
}

// idleAfter is how long after the last message the frame ticker stops.
const idleAfter = 300 * time.Millisecond

// busy notes a message: the ticker runs again if it was stopped. It is called from Update, on
// the Program's event loop, which runs after the renderer started.
func (f *frames) busy() {
	if f == nil || f.p == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.looked {
		f.looked = true
		f.t = programTicker(f.p)
	}
	if f.t == nil {
		return
	}
	f.last = time.Now()
	if f.stopped {
		f.stopped = false
		f.t.Reset(f.every)
	}
	if f.timer == nil {
		f.timer = time.AfterFunc(idleAfter, f.idle)
	}
}

// idle stops the ticker when no message came for idleAfter, else looks again then.
func (f *frames) idle() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if quiet := time.Since(f.last); quiet < idleAfter {
		f.timer = time.AfterFunc(idleAfter-quiet, f.idle)
		return
	}
	f.timer = nil
	f.stopped = true
	f.t.Stop()
}

// programTicker is p's frame ticker, nil when this Bubble Tea has none by that name.
func programTicker(p *tea.Program) *time.Ticker {
	if !tickerField() {
		return nil
	}
	v := reflect.ValueOf(p).Elem().FieldByName("ticker")
	return *(**time.Ticker)(unsafe.Pointer(v.UnsafeAddr()))
}

// tickerField says whether tea.Program has its frame ticker where programTicker looks.
func tickerField() bool {
	f, ok := reflect.TypeOf(tea.Program{}).FieldByName("ticker")
	return ok && f.Type == reflect.TypeOf((*time.Ticker)(nil))
}
