package lease

import (
	"os"
	"path/filepath"
	"testing"
)

// Benchmarks: `go test -run '^$' -bench . ./paneops/lease`. Timing lives here, never in a test's
// assertion.

// BenchmarkOpenForWriting is await's check that a foreign writer has let go of a response: one
// lease call, whatever the number of processes.
func BenchmarkOpenForWriting(b *testing.B) {
	path := filepath.Join(b.TempDir(), "002-response.md")
	if err := os.WriteFile(path, []byte("x\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if OpenForWriting(path) {
			b.Fatal("nobody writes it")
		}
	}
}
