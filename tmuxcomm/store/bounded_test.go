package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// settles waits (to a deadline) until no more goroutines run than before: a read given up on
// must end, not stay blocked for the rest of a long-lived process.
func settles(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before: a given-up read is still blocked\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func fifo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	return path
}

func TestReadFileBoundedFIFOWithoutWriterEndsWithCtx(t *testing.T) {
	path := fifo(t)
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	stop := time.AfterFunc(50*time.Millisecond, cancel) // given up on while it waits for a writer, or before
	defer stop.Stop()
	if _, err := ReadFileBounded(ctx, path, 1<<10); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	settles(t, before)
}

func TestReadFileBoundedFIFOWriterSilentEndsWithCtx(t *testing.T) {
	path := fifo(t)
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	held := make(chan *os.File, 1)
	go func() {
		// Blocks until the reader opens, then writes a part and stays: the reader waits in read.
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			held <- nil
			return
		}
		_, _ = w.Write([]byte("part"))
		held <- w
		cancel()
	}()
	if _, err := ReadFileBounded(ctx, path, 1<<10); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	w := <-held
	if w == nil {
		t.Fatal("the writer could not open the FIFO")
	}
	settles(t, before)
	_ = w.Close()
}

func TestReadBoundedPipeEndsWithCtx(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	stop := time.AfterFunc(50*time.Millisecond, cancel)
	defer stop.Stop()
	if _, err := ReadBounded(ctx, r, 1<<10, "the pipe"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	settles(t, before)
}

func TestReadFileBoundedReadsFilesAndFIFOs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, []byte("regular"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFileBounded(ctx, file, 1<<10); err != nil || string(got) != "regular" {
		t.Fatalf("regular file: %q, %v", got, err)
	}
	if _, err := ReadFileBounded(ctx, file, 3); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the limit: %v, want ErrTooLarge", err)
	}
	path := fifo(t)
	go func() {
		if w, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			_, _ = w.Write([]byte("through the fifo"))
			_ = w.Close()
		}
	}()
	if got, err := ReadFileBounded(ctx, path, 1<<10); err != nil || string(got) != "through the fifo" {
		t.Fatalf("FIFO: %q, %v", got, err)
	}
}
