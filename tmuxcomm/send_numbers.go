package tmuxcomm

import "sync"

// keptNumbers tells a send the next request number of a session folder whose watch the process
// keeps between its awaits (keptWatches), instead of reading the folder's hint and looking for
// the numbers after it (about twenty stats a send: the hint's and the next numbers' request and
// response names, to find a run of free ones). The watch sees every exchange file made or renamed
// into the folder, whoever made it (another sender, a sender of the plain procedure, the
// worker's response); so once a send looked at the files after the watch's events were taken in
// (exchange.Numbers' Mark), the number it claimed and what the same watch saw since say the
// folder's newest file as that look would. A watch that lost an event, or is not the one the
// look began with, tells nothing, and the files are looked at again.
var keptNumbers = &watchedNumbers{known: map[string]knownNumber{}}

// keptNumbersMax bounds the folders remembered (a server sends into a few sessions).
const keptNumbersMax = 16

type watchedNumbers struct {
	mu    sync.Mutex
	known map[string]knownNumber
}

// knownNumber is the request number last claimed in a folder, and the watch it stands on.
type knownNumber struct {
	gen uint64
	n   int
}

// Keep keeps a watch of dir, made now unless one is kept already, for a caller that lives on and
// sends into dir again: the claim that follows marks it (Mark), and the next send's number comes
// from it (Next). Without it, only a caller's await kept one. A watch that cannot be made is
// none: the files are looked at, as before.
func (w *watchedNumbers) Keep(dir string) {
	if _, _, ok := keptWatches.Newest(dir); ok {
		return
	}
	if d, err := keptWatches.Take(dir); err == nil {
		keptWatches.Give(d, true)
	}
}

func (w *watchedNumbers) Mark(dir string) uint64 {
	if _, gen, ok := keptWatches.Newest(dir); ok {
		return gen
	}
	return 0
}

func (w *watchedNumbers) Next(dir string) (int, uint64, bool) {
	w.mu.Lock()
	k, ok := w.known[dir]
	w.mu.Unlock()
	if !ok {
		return 0, 0, false
	}
	newest, gen, ok := keptWatches.Newest(dir)
	if !ok || gen != k.gen {
		return 0, 0, false
	}
	// As the listing ranks them (exchange's nextRequestNumber): the highest number, a request
	// above its number's response; a request's response takes the number after it.
	last, request := k.n, true
	if newest.N > last {
		last, request = newest.N, newest.Request
	}
	if request {
		return last + 2, gen, true
	}
	return last + 1, gen, true
}

func (w *watchedNumbers) Claimed(dir string, n int, mark uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.known[dir]; !ok && len(w.known) >= keptNumbersMax {
		clear(w.known)
	}
	w.known[dir] = knownNumber{gen: mark, n: n}
}
