package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrTooLarge is returned by the bounded readers for input over their limit.
var ErrTooLarge = errors.New("too large")

// readAllBounded reads r to its end, but never more than limit+1 bytes: the limit is checked as
// the bytes stream in, not against a size the source reports (/dev/zero and a pipe report none).
//
// The bytes are held in blocks, not in one slice that doubles as it fills (io.ReadAll): a source
// over the limit (/dev/zero) then costs the limit once, not the two or three times of a doubling
// slice and its copy, and a source within it is copied once into a slice of its exact size.
func readAllBounded(r io.Reader, limit int64, what string) ([]byte, error) {
	lr := io.LimitReader(r, limit+1)
	var blocks [][]byte
	var total int64
	size := 64 << 10
	for {
		buf := make([]byte, size)
		n, err := io.ReadFull(lr, buf)
		if n > 0 {
			blocks = append(blocks, buf[:n])
			total += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
		size = min(size*2, 4<<20)
	}
	if total > limit {
		return nil, Kindf(ErrTooLarge, "%s is larger than %s; write it to a file and send a short message naming it", what, SizeText(limit))
	}
	if len(blocks) == 1 {
		return blocks[0], nil
	}
	data := make([]byte, 0, total)
	for i, b := range blocks {
		data = append(data, b...)
		blocks[i] = nil
	}
	return data, nil
}

// ReadBounded reads r whole, up to limit bytes (more is ErrTooLarge, found while streaming), and
// gives up when ctx ends: a stdin that never closes must not outlive SIGINT or SIGTERM. what names
// the source in errors ("the message on stdin").
//
// Bytes already in memory (a handed command's stdin) are read here, with no goroutine to wait for
// them. A source with read deadlines (a pipe, a socket) has its read ended when ctx ends, so the
// goroutine that waits for it ends too; only a source without them (a terminal in blocking mode,
// read by a command's own process, which is on its way out) is left blocked.
func ReadBounded(ctx context.Context, r io.Reader, limit int64, what string) ([]byte, error) {
	switch r.(type) {
	case *bytes.Reader, *bytes.Buffer, *strings.Reader:
		return readAllBounded(r, limit, what)
	}
	var stop func(<-chan struct{})
	if d, ok := r.(interface{ SetReadDeadline(time.Time) error }); ok {
		stop = func(<-chan struct{}) { _ = d.SetReadDeadline(time.Now()) }
	}
	return interruptible(ctx, what, stop, func() ([]byte, error) { return readAllBounded(r, limit, what) })
}

// ReadFileBounded reads the file at path like ReadBounded. A regular file is opened and read
// here: both end by themselves. Anything else is read by a goroutine that ends when ctx does: a
// FIFO's open blocks until a writer comes and its read until the writer writes or goes, and in a
// long-lived process (wcomm mcp reads a notify's body file) a read left blocked would hold its
// goroutine and file for good.
func ReadFileBounded(ctx context.Context, path string, limit int64) ([]byte, error) {
	what := "file " + path
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		// Opened without waiting all the same: a FIFO put in its place meanwhile opens at once
		// this way, and is then opened again below, as one that waits. (A FIFO is never opened
		// like this at first: a writer could then come, write and go before the reader opens.)
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return nil, err
		}
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			defer f.Close()
			return readFileSized(f, limit, what)
		}
		_ = f.Close()
	}
	var mu sync.Mutex
	var opened *os.File
	read := func() ([]byte, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		mu.Lock()
		opened = f
		mu.Unlock()
		return readFileSized(f, limit, what)
	}
	// stop ends the abandoned read: once open, its file (a FIFO, a terminal: both in Go's poller)
	// takes a deadline already past; a FIFO still opening is woken by a writer that comes and goes
	// at once (nothing else is opened for writing: a device could act on it). It tries again until
	// the read is over, as the goroutine may not have reached its open yet, but for a second at
	// most: a read that neither ends (a device without poll support) must not keep it waking.
	stop := func(finished <-chan struct{}) {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for range 200 {
			mu.Lock()
			f := opened
			mu.Unlock()
			if f != nil {
				_ = f.SetReadDeadline(time.Now())
			} else if st, err := os.Stat(path); err == nil && st.Mode()&fs.ModeNamedPipe != 0 {
				if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					_ = w.Close()
				}
			}
			select {
			case <-finished:
				return
			case <-tick.C:
			}
		}
	}
	return interruptible(ctx, what, stop, read)
}

// readFileSized is readAllBounded for an open file: a regular file within the limit is read into
// a buffer of its size, not one that doubles as it fills (a 10 MB message would otherwise pass
// through buffers of 8 and 16 MB, each of them resident). The limit is still checked on what is
// read, not on the size the file reported.
func readFileSized(f *os.File, limit int64, what string) ([]byte, error) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > limit {
		return readAllBounded(f, limit, what)
	}
	if st.Size() >= BigFile {
		// As readFileText does: what earlier reads of this size left behind is reused.
		runtime.GC()
	}
	buf := bytes.NewBuffer(make([]byte, 0, st.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if int64(buf.Len()) > limit {
		return nil, Kindf(ErrTooLarge, "%s is larger than %s; write it to a file and send a short message naming it", what, SizeText(limit))
	}
	return buf.Bytes(), nil
}

// interruptible runs read and returns its result, or ctx's error as soon as ctx ends. stop, when
// given, is then run on a goroutine of its own to end the read, and told by finished when it is
// over; without it, a read left blocked stays blocked.
func interruptible(ctx context.Context, what string, stop func(finished <-chan struct{}), read func() ([]byte, error)) ([]byte, error) {
	if ctx.Done() == nil {
		return read()
	}
	type result struct {
		data []byte
		Err  error
	}
	ch := make(chan result, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		data, err := read()
		ch <- result{data, err}
	}()
	select {
	case r := <-ch:
		return r.data, r.Err
	case <-ctx.Done():
		if stop != nil {
			go stop(finished)
		}
		return nil, Kindf(ctx.Err(), "interrupted while reading %s", what)
	}
}

// SizeText is a limit in the largest whole unit: "256 MiB", "64 KiB", "100 bytes".
func SizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
