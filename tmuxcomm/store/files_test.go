package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// ReadFileText and ReadFile return the whole file whatever its size against their buffers: a read
// that stops at the file's size ends the reading, and one that does not reads on to the end.
func TestReadFileWhole(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 511, 512, 513, 64<<10 - 1, 64 << 10, 64<<10 + 1, 200_000} {
		want := bytes.Repeat([]byte("ab\n"), n/3+1)[:n]
		path := filepath.Join(dir, strconv.Itoa(n))
		if err := os.WriteFile(path, want, 0o600); err != nil {
			t.Fatal(err)
		}
		text, _, err := ReadFileText(path)
		if err != nil || text != string(want) {
			t.Fatalf("ReadFileText of %d bytes: %d, %v", n, len(text), err)
		}
		data, err := ReadFile(path)
		if err != nil || !bytes.Equal(data, want) {
			t.Fatalf("ReadFile of %d bytes: %d, %v", n, len(data), err)
		}
	}
}
