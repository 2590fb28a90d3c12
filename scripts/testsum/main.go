// Command testsum runs a go test command given with -json and prints what go test prints without
// it (each package's closing line; the whole output of each test that failed; build errors), then
// a closing line that counts the tests run: "N passed, N failed" (", N skipped" when any were).
// It exits with the command's exit code. make test runs the tests through it:
//
//	go run ./scripts/testsum go test -json ./...
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testsum GO test -json [flags] [packages]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(1)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	c := summarize(out, w)
	_ = w.Flush()
	err = cmd.Wait()
	fmt.Println(c)
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		os.Exit(ee.ExitCode())
	case err != nil:
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(1)
	}
}

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// counts are the tests (and subtests) that ended, by how.
type counts struct{ passed, failed, skipped int }

func (c counts) String() string {
	s := fmt.Sprintf("%d passed, %d failed", c.passed, c.failed)
	if c.skipped > 0 {
		s += fmt.Sprintf(", %d skipped", c.skipped)
	}
	return s
}

// summarize reads go test -json from r and writes to w what go test writes without -json: a test's
// output is held until it ends and written only if it failed; the output of no test (a package's
// closing line, a panic outside tests) and build errors are written as they come. Lines that are
// not JSON (go test's own messages) are written as they are.
func summarize(r io.Reader, w io.Writer) counts {
	var c counts
	held := map[string]*strings.Builder{}
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			break
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		key := ev.Package + " " + ev.Test
		switch ev.Action {
		case "build-output":
			io.WriteString(w, ev.Output)
		case "output":
			if ev.Test == "" {
				// A passing package's PASS line is one only -v prints; ok PKG follows it.
				if ev.Output != "PASS\n" {
					io.WriteString(w, ev.Output)
				}
				continue
			}
			if verbose(ev.Output) {
				continue
			}
			b := held[key]
			if b == nil {
				b = &strings.Builder{}
				held[key] = b
			}
			b.WriteString(ev.Output)
		case "pass", "fail", "skip":
			if ev.Test == "" {
				continue
			}
			switch ev.Action {
			case "pass":
				c.passed++
			case "fail":
				c.failed++
				if b := held[key]; b != nil {
					io.WriteString(w, b.String())
				}
			case "skip":
				c.skipped++
			}
			delete(held, key)
		}
	}
	return c
}

// verbose reports the lines only go test -v prints (-json runs the tests verbose): a test's start,
// pause and resumption, and a passing or skipped test's closing line.
func verbose(line string) bool {
	t := strings.TrimLeft(line, " ")
	for _, p := range []string{"=== RUN ", "=== PAUSE ", "=== CONT ", "=== NAME ", "--- PASS: ", "--- SKIP: "} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}
